"""The static dashboard page: status table, burndown chart, a link to every remaining site, the data files. Pure
but for the default rule page (bot.links reads $PG_BOT_DOCS_URL or the package metadata when none is given).

The page has no scripts and no external resources, so it renders the same from a file or from Pages. It carries
no build time: an unchanged status gives a byte-identical page, so the workflow that pushes the dashboard into a
branch commits nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from markdown_it import MarkdownIt

from bot import links
from bot.track.status import DONE, IN_PROGRESS, NO_SITES, NOT_STARTED, AreaStatus, Status
from bot.track.table import HEADER, percent_text, top_files

# solid fills that the browser test looks for; none of them is a chart colour
HEADER_BG = "#24292f"
STATE_BG = {DONE: "#1a7f37", IN_PROGRESS: "#9a6700", NOT_STARTED: "#a40e26", NO_SITES: "#57606a"}

# What the dashboard command writes beside index.html, with what each holds (names as bot.commands.history
# writes them).
DATA_FILES: tuple[tuple[str, str], ...] = (
    ("history.csv", "one row per commit and area, a column per rule"),
    ("history.json", "the whole history; `pg-bot dashboard --history history.json` redraws from it"),
    ("burndown.svg", "the chart as a vector image"),
    ("burndown.png", "the chart as a bitmap"),
    ("status.md", "the status table as the tracking issue shows it"),
)

CSS = f"""
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1f2328;
  background: #ffffff; }}
table {{ border-collapse: collapse; margin: 12px 0 24px; }}
th, td {{ border: 1px solid #d0d7de; padding: 6px 10px; font-size: 14px; vertical-align: top; }}
th {{ background: {HEADER_BG}; color: #ffffff; text-align: left; }}
td.num {{ text-align: right; }}
td.state {{ color: #ffffff; font-weight: 600; white-space: nowrap; }}
{"".join(f"td.state-{k.replace(' ', '-')} {{ background: {v}; }}" for k, v in STATE_BG.items())}
tr.total td {{ font-weight: 700; }}
img.chart {{ display: block; width: 1000px; max-width: 100%; border: 1px solid #d0d7de; }}
ul.sites {{ font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; }}
code {{ background: #eff1f3; padding: 0 3px; border-radius: 3px; }}
"""

# Messages quote source and PR text in backticks. Only inline code is rendered: the "zero" preset has no links,
# emphasis, entities, backslash escapes or autolinks, and html=False escapes any tag, so everything else in a
# message is shown as the text it is.
_INLINE_CODE = MarkdownIt("zero", {"html": False}).enable("backticks")


def message_html(message: str) -> str:
    """A finding's message as HTML: its backtick spans as <code>, every other character escaped."""
    return _INLINE_CODE.renderInline(message)


def site_url(repo: str, sha: str, path: str, line: int, server_url: str = "https://github.com") -> str:
    return f"{file_url(repo, sha, path, server_url)}#L{line}"


def file_url(repo: str, sha: str, path: str, server_url: str = "https://github.com") -> str:
    return f"{server_url.rstrip('/')}/{repo}/blob/{sha}/{quote(path)}"


def rule_link(code: str, rules_page: str) -> str:
    return f'<a class="rule" href="{escape(links.rule_url(code, rules_page))}">{escape(code)}</a>'


def _row(cells: list[tuple[str, str]]) -> str:
    return "<tr>" + "".join(f'<td class="{cls}">{text}</td>' for cls, text in cells) + "</tr>"


def _remaining_html(area: AreaStatus, rules_page: str) -> str:
    # the text of table.remaining_text, with each rule code linked to its documentation
    if not area.remaining:
        return "0"
    rules = ", ".join(f"{rule_link(code, rules_page)} {n}" for code, n in sorted(area.remaining_by_rule.items()))
    return f"{area.remaining} ({rules})"


def _state_class(state: str) -> str:
    return f"state state-{state.replace(' ', '-')}"


def _data_html(data_files: Sequence[tuple[str, str]]) -> str:
    if not data_files:
        return ""
    items = "".join(
        f'<li><a href="{escape(quote(name))}">{escape(name)}</a>: {message_html(what)}</li>' for name, what in data_files
    )
    return f'<h2>Data</h2><ul id="data">{items}</ul>'


def render_html(
    status: Status,
    *,
    repo: str,
    sha: str,
    chart: str | None = "burndown.png",
    history_note: str = "",
    server_url: str = "https://github.com",
    rules_page: str | None = None,
    data_files: Sequence[tuple[str, str]] = DATA_FILES,
) -> str:
    """The page for ``status`` at commit ``sha`` of ``repo``; ``chart`` and ``data_files`` are paths relative to
    the page. ``rules_page``: where rule codes link (default: bot.links.rules_page())."""
    page = links.rules_page() if rules_page is None else rules_page
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    rows = []
    for area in status.areas.values():
        shown, more = top_files(area, 3)
        files = ", ".join(f'<a href="#area-{escape(area.name)}">{escape(p)}</a> ({n})' for p, n in shown)
        files += f", +{more} more" if more else ""
        rows.append(
            _row([
                ("area", escape(area.title)),
                ("num", _remaining_html(area, page)),
                ("num", str(area.migrated)),
                ("num", escape(percent_text(area))),
                (_state_class(area.state), escape(area.state)),
                ("files", files or "–"),
            ])
        )
    total_rem, total_mig = status.remaining, status.migrated
    pct = "–" if total_rem + total_mig == 0 else f"{100 * total_mig / (total_rem + total_mig):.0f}%"
    rows.append(
        f'<tr class="total"><td>Total</td><td class="num">{total_rem}</td><td class="num">{total_mig}</td>'
        f'<td class="num">{pct}</td><td></td><td></td></tr>'
    )

    sections = []
    for area in status.areas.values():
        paths = sorted(p for p in status.sites if p in area.files)
        if not paths:
            continue
        items = []
        for path in paths:
            for site in status.sites[path].sites:
                url = site_url(repo, sha, path, site.line, server_url)
                items.append(
                    f'<li><a href="{escape(url)}">{escape(path)}:{site.line}</a> '
                    f"<b>{rule_link(site.code, page)}</b> {message_html(site.message)}</li>"
                )
        sections.append(
            f'<h3 id="area-{escape(area.name)}">{escape(area.title)} ({area.remaining})</h3>'
            f'<ul class="sites">{"".join(items)}</ul>'
        )
    if sections:
        remaining = "".join(sections)
    elif total_mig:
        remaining = "<p>None: the migration is done.</p>"
    else:
        remaining = "<p>None: no sites were found, migrated or not.</p>"
    errors = ""
    if status.errors:
        errors = "<h3>Not analysed (does not parse)</h3><ul>" + "".join(
            f'<li><a href="{escape(file_url(repo, sha, p, server_url))}">{escape(p)}</a></li>' for p in status.errors
        ) + "</ul>"
    commit_url = f"{server_url.rstrip('/')}/{repo}/commit/{sha}"
    chart_html = (
        f'<h2>Burndown</h2><img class="chart" id="burndown" src="{escape(chart)}" '
        f'alt="Remaining sites per area over the first-parent history"><p>{escape(history_note)}</p>'
        if chart
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pg-bot: is_parallel migration status</title>
<style>{CSS}</style></head>
<body>
<h1>pg-bot: <code>is_parallel</code> migration status</h1>
<p>{escape(repo)} at <a href="{escape(commit_url)}"><code>{escape(sha[:12])}</code></a>.
Rule codes link to <a href="{escape(page)}">the rule reference</a>.</p>
<table id="status"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>
{chart_html}
<h2>Remaining sites</h2>
{remaining}
{errors}
{_data_html(data_files)}
</body></html>
"""
