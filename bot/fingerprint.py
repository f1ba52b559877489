"""One identity per finding, shared by the PR reviewer (its comment markers), SARIF (``partialFingerprints``) and
anything else that must recognise a finding again after the code around it moved.

The fingerprint hashes what the finding is: its rule, file, function and group, the flagged source text with
its whitespace collapsed, and its occurrence among findings that agree on all of these. The line number is left
out, so code added above a finding keeps its fingerprint; the flagged text is in, so two findings on the same
group in one function (two different guards) are told apart, and re-indenting a guard changes nothing.

The value is the one the reviewer has always written into ``<!-- pg-bot:finding ... -->`` markers: changing it
would orphan every comment already on open pull requests, so the formula is frozen (tests/test_fingerprint.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from bot.diff import LineMap
from bot.model import Finding

LENGTH = 12  # hex digits: the marker's field width


def flagged_text(lines: LineMap, finding: Finding) -> str:
    """The finding's lines (Python's numbering, as findings use), whitespace collapsed to single spaces."""
    last = min(finding.span.end_line, lines.python_line_count)
    return " ".join(" ".join(lines.python_line(n) for n in range(finding.span.line, last + 1)).split())


def fingerprints(findings: Sequence[Finding], source: str | None, path: str | None = None) -> list[str]:
    """One fingerprint per finding of one file, in order. ``source`` is the file's text (None when it cannot be
    read: the occurrence order alone then tells twins apart); ``path`` overrides the findings' own path (SARIF
    names files from the repository root, whatever the folder ``check`` ran in)."""
    lines = LineMap(source) if source is not None else None
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        text = flagged_text(lines, f) if lines is not None else ""
        base = "|".join((f.code, path if path is not None else f.path, f.function or "", f.group or "", text))
        seen[base] = seen.get(base, 0) + 1
        # a file name holding undecodable bytes (lone surrogates) hashes as those bytes; other text as UTF-8
        out.append(hashlib.sha1(f"{base}|{seen[base]}".encode("utf-8", "surrogateescape")).hexdigest()[:LENGTH])
    return out
