"""Make untrusted text (file names, messages that quote source) safe to print to a terminal or a CI log.

A file name is chosen by whoever wrote the PR. Printed raw, a newline in it starts a new line that can be a
GitHub workflow command (`::error ...`, `::stop-commands::`), an escape sequence drives the terminal, and a
name that cannot be encoded ends the run. GitHub's runner also acts on a line that starts with `::` (after
blanks) and on `##[command]` anywhere in a line. So:

- control characters, format characters (bidi overrides, zero-width), line and paragraph separators and lone
  surrogates (undecodable bytes of a file name) are written as Python-style escapes (\\n, \\x1b, \\u202e);
- `##[` becomes `##\\x5b`, and a `::` that would open a line becomes `\\x3a:`.

A backslash itself is kept as is, so ordinary names print unchanged.
"""

from __future__ import annotations

import unicodedata

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_OLD_STYLE_COMMAND = "##["  # actions/runner's v1 workflow-command prefix, recognised anywhere in a line


def _escape_char(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _unsafe(char: str) -> bool:
    return unicodedata.category(char) in _UNSAFE_CATEGORIES


def printable(text: str, keep: str = "") -> str:
    """``text`` with every unsafe character escaped (except those in ``keep``) and `##[` broken up."""
    if text.isascii() and text.isprintable() and _OLD_STYLE_COMMAND not in text:
        return text  # the common case, without a per-character pass
    escaped = "".join(_escape_char(c) if c not in keep and _unsafe(c) else c for c in text)
    return escaped.replace(_OLD_STYLE_COMMAND, "##\\x5b")


def line_start(text: str) -> str:
    """printable(text) for the start of an output line: a leading `::` (a workflow command) is escaped too."""
    escaped = printable(text)
    blanks = len(escaped) - len(escaped.lstrip())
    if escaped.startswith("::", blanks):
        return f"{escaped[:blanks]}\\x3a{escaped[blanks + 1:]}"
    return escaped


def json_text(dumped: str) -> str:
    """JSON from ``json.dumps`` (ASCII: every control character is already a \\u escape) with `##[` written
    `##\\u005b`: the same value for a JSON reader, nothing a log runner acts on. `#` only occurs inside
    strings in JSON, so the replacement never touches the structure."""
    return dumped.replace(_OLD_STYLE_COMMAND, "##\\u005b")
