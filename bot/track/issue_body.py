"""The tracking issue's body: replace only the text between the status markers. Pure.

Every byte outside ``<!-- pg-bot:status:start -->`` ... ``<!-- pg-bot:status:end -->`` stays as it was,
including CRLF line endings (bodies edited in a browser come back with CRLF). When the markers are absent
they are inserted under a heading: right below an existing heading line with that text, else at the end.
"""

from __future__ import annotations

import re

START = "<!-- pg-bot:status:start -->"
END = "<!-- pg-bot:status:end -->"
DEFAULT_HEADING = "## Migration status"

# tolerate the spacing a human might use when retyping a marker
_START_RE = re.compile(r"<!--\s*pg-bot:status:start\s*-->")
_END_RE = re.compile(r"<!--\s*pg-bot:status:end\s*-->")


class MarkerError(ValueError):
    """The markers are there but unusable (unpaired, reversed, repeated); nothing is written."""


def line_ending(body: str) -> str:
    return "\r\n" if "\r\n" in body else "\n"


def section_bounds(body: str) -> tuple[int, int] | None:
    """(start, end) of the text between the markers, or None when there are no markers at all."""
    starts = list(_START_RE.finditer(body))
    ends = list(_END_RE.finditer(body))
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1:
        raise MarkerError(
            f"the issue body has {len(starts)} start and {len(ends)} end status markers; expected one of each "
            f"({START} ... {END})"
        )
    start, end = starts[0], ends[0]
    if end.start() < start.end():
        raise MarkerError(f"the end status marker comes before the start marker ({START} ... {END})")
    return start.end(), end.start()


def current_section(body: str) -> str | None:
    bounds = section_bounds(body)
    return None if bounds is None else body[bounds[0] : bounds[1]]


def _inner(content: str, nl: str) -> str:
    text = content.replace("\r\n", "\n").strip("\n").replace("\n", nl)
    return f"{nl}{text}{nl}"


def with_section(body: str | None, content: str, heading: str = DEFAULT_HEADING) -> str:
    """``body`` with ``content`` between the markers (inserted under ``heading`` when absent)."""
    body = body or ""
    nl = line_ending(body)
    inner = _inner(content, nl)
    bounds = section_bounds(body)
    if bounds is not None:
        return body[: bounds[0]] + inner + body[bounds[1] :]
    block = f"{START}{inner}{END}{nl}"
    heading_at = _heading_line_end(body, heading)
    if heading_at is not None:
        # below the existing heading: insert only, the heading line and all after it stay byte-identical
        head = body[:heading_at]
        lead = nl if head.endswith(("\n", "\r")) else nl + nl  # a heading on the last line has no break yet
        return head + lead + block + body[heading_at:]
    if not body:
        return f"{heading}{nl}{nl}{block}"
    sep = "" if body.endswith(("\n", "\r")) else nl
    return f"{body}{sep}{nl}{heading}{nl}{nl}{block}"


def _heading_line_end(body: str, heading: str) -> int | None:
    """Offset just after the first line whose text is ``heading`` (and its line break), or None."""
    want = heading.strip()
    offset = 0
    for line in body.splitlines(keepends=True):
        offset += len(line)
        if line.strip() == want:
            return offset
    return None


def needs_update(body: str | None, content: str, heading: str = DEFAULT_HEADING) -> bool:
    return with_section(body, content, heading) != (body or "")
