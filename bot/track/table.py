"""Render a Status as the Markdown table of the tracking issue. Pure."""

from __future__ import annotations

from urllib.parse import quote

from bot.report.markdown import code_span
from bot.track.status import AreaStatus, Status

HEADER = ("Area", "Remaining", "Migrated", "%", "State", "Files to look at")


def percent_text(area: AreaStatus) -> str:
    pct = area.percent
    return "–" if pct is None else f"{pct:.0f}%"


def remaining_text(area: AreaStatus) -> str:
    if not area.remaining:
        return "0"
    rules = ", ".join(f"{code} {n}" for code, n in sorted(area.remaining_by_rule.items()))
    return f"{area.remaining} ({rules})"


def top_files(area: AreaStatus, limit: int) -> tuple[list[tuple[str, int]], int]:
    """The files with the most remaining sites (ties by path), and how many files are left unnamed."""
    ranked = sorted(area.files.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:limit], max(0, len(ranked) - limit)


def _cell(text: str) -> str:
    # a pipe would end the cell early; newlines would end the row
    return text.replace("|", "\\|").replace("\n", " ")


def files_text(area: AreaStatus, limit: int, link_base: str | None) -> str:
    shown, more = top_files(area, limit)
    parts = []
    for path, n in shown:
        name = code_span(path)  # a backtick in a file name must not end the span
        url = f"{link_base.rstrip('/')}/{quote(path)}" if link_base else ""  # spaces or parens would end the link
        parts.append(f"[{name}]({url}) ({n})" if link_base else f"{name} ({n})")
    if more:
        parts.append(f"+{more} more")
    return ", ".join(parts) if parts else "–"


def render_markdown(status: Status, *, files_limit: int = 3, link_base: str | None = None) -> str:
    """The status table plus a totals row; ``link_base`` (``https://github.com/O/N/blob/master``) links files.

    No timestamp or commit id goes in: the text changes only when the counts do, so an unchanged status is
    an unchanged issue body and no write.
    """
    rows = [
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join(["---", "---:", "---:", "---:", "---", "---"]) + "|",
    ]
    for area in status.areas.values():
        cells = (
            area.title,
            remaining_text(area),
            str(area.migrated),
            percent_text(area),
            area.state,
            files_text(area, files_limit, link_base),
        )
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    total = AreaStatus("total", "Total")
    for area in status.areas.values():
        total.remaining_by_rule.update(area.remaining_by_rule)
        total.migrated += area.migrated
    rows.append(
        f"| **Total** | **{total.remaining}** | **{total.migrated}** | **{percent_text(total)}** "
        f"| {total.state} | |"
    )
    lines = [
        "\n".join(rows),
        "Remaining: sites still to migrate, by rule (`pg-bot rule CODE` explains one). "
        "Migrated: calls of `pg_utils.is_parallel`.",
    ]
    if status.errors:
        shown = ", ".join(code_span(p) for p in status.errors[:5])
        more = f" and {len(status.errors) - 5} more" if len(status.errors) > 5 else ""
        lines.append(f"Not analysed (does not parse): {shown}{more}.")
    return "\n\n".join(lines) + "\n"
