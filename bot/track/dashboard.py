"""The static dashboard page: status table, burndown chart, and a link to every remaining site. Pure.

The page has no scripts and no external resources, so it renders the same from a file or from Pages.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from urllib.parse import quote

from bot.track.status import DONE, IN_PROGRESS, NOT_STARTED, Status
from bot.track.table import HEADER, percent_text, remaining_text, top_files

# solid fills that the browser test looks for; none of them is a chart colour
HEADER_BG = "#24292f"
STATE_BG = {DONE: "#1a7f37", IN_PROGRESS: "#9a6700", NOT_STARTED: "#a40e26"}

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
"""


def site_url(repo: str, sha: str, path: str, line: int, server_url: str = "https://github.com") -> str:
    return f"{server_url.rstrip('/')}/{repo}/blob/{sha}/{quote(path)}#L{line}"


def _row(cells: list[tuple[str, str]]) -> str:
    return "<tr>" + "".join(f'<td class="{cls}">{text}</td>' for cls, text in cells) + "</tr>"


def render_html(
    status: Status,
    *,
    repo: str,
    sha: str,
    chart: str | None = "burndown.png",
    generated: datetime | None = None,
    history_note: str = "",
    server_url: str = "https://github.com",
) -> str:
    generated = generated or datetime.now(timezone.utc)
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    rows = []
    for area in status.areas.values():
        shown, more = top_files(area, 3)
        files = ", ".join(f'<a href="#area-{escape(area.name)}">{escape(p)}</a> ({n})' for p, n in shown)
        files += f", +{more} more" if more else ""
        rows.append(
            _row([
                ("area", escape(area.title)),
                ("num", escape(remaining_text(area))),
                ("num", str(area.migrated)),
                ("num", escape(percent_text(area))),
                (f"state state-{area.state.replace(' ', '-')}", escape(area.state)),
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
                    f"<b>{escape(site.code)}</b> {escape(site.message)}</li>"
                )
        sections.append(
            f'<h3 id="area-{escape(area.name)}">{escape(area.title)} ({area.remaining})</h3>'
            f'<ul class="sites">{"".join(items)}</ul>'
        )
    errors = ""
    if status.errors:
        errors = "<h3>Not analysed (does not parse)</h3><ul>" + "".join(
            f"<li>{escape(p)}</li>" for p in status.errors
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
<p>{escape(repo)} at <a href="{escape(commit_url)}"><code>{escape(sha[:12])}</code></a>,
generated {generated.strftime("%Y-%m-%d %H:%M UTC")}.</p>
<table id="status"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>
{chart_html}
<h2>Remaining sites</h2>
{"".join(sections) or "<p>None: the migration is done.</p>"}
{errors}
</body></html>
"""
