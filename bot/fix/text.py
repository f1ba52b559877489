"""Source text by Span, with the same line model as the tokenizer and LibCST (\\n, \\r\\n or \\r)."""

from __future__ import annotations

import re

from bot.analyze.rules.base import code_span
from bot.model import Span

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(source: str) -> list[str]:
    """Lines with their endings kept; a final line without an ending is kept too."""
    return _LINE.findall(source)


def slice_span(lines: list[str], span: Span) -> str:
    """The text of ``span`` (1-based lines, 0-based character columns, end exclusive)."""
    if not (1 <= span.line <= span.end_line <= len(lines)):
        raise ValueError(f"span {span} is outside the file ({len(lines)} lines)")
    if span.line == span.end_line:
        return lines[span.line - 1][span.col : span.end_col]
    parts = [lines[span.line - 1][span.col :]]
    parts.extend(lines[span.line : span.end_line - 1])
    parts.append(lines[span.end_line - 1][: span.end_col])
    return "".join(parts)


def newline_of(source: str) -> str:
    """The file's line ending, judged by its first line (LibCST does the same)."""
    match = re.search(r"\r\n|\r|\n", source)
    return match.group(0) if match else "\n"


# Inline code that no backtick inside can close (notes quote PR code into reviews): the analyzer's messages
# and the fixer's notes spell code the same way.
code = code_span


def error_text(exc: BaseException) -> str:
    """``Type: message`` for a report line, without calling an exception's own ``__str__`` on arbitrary
    arguments: a KeyError holding a LibCST node would print the whole tree (and may recurse until it fails)."""
    args = [a for a in exc.args if isinstance(a, str | int)]
    message = " ".join(str(a) for a in args)[:200] if len(args) == len(exc.args) else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
