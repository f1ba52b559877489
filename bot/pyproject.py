"""`[tool.pg-bot]` in pyproject.toml: the table, hardened like rules.yaml, and the line each key was written on.

tomllib keeps no line numbers, so ``key_lines`` finds them by scanning the text for table headers and
``key =`` lines. Keys written inside an inline table (``rules = { PG101 = { enabled = false } }``) or an array
of inline tables have no line of their own: an error about one of them names the line of the nearest enclosing
key that has one. The scan is only made when there is an error to report.

Hardening (the rules of rules.yaml's loader, for TOML): the file is read with the same size limit by the caller;
a dotted key or table header of more than MAX_DEPTH parts is refused *before* tomllib sees it (tomllib's cost
grows with the square of a dotted key's length: one 1 MB header takes minutes); nesting that makes tomllib
recurse too deep, and a table nested deeper than MAX_DEPTH, are errors with a line, never a traceback.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from bot.config import MAX_DEPTH, ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (pyproject: tomli on < 3.11)
    import tomli as tomllib

TABLE = ("tool", "pg-bot")
NAME = "tool.pg-bot"

_KEY = r"""[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'"""
_SEP = r"[ \t]*\.[ \t]*"
_CHAIN = rf"(?:{_KEY})(?:{_SEP}(?:{_KEY}))*"
# MAX_DEPTH + 1 parts or more, starting where no bare-key character precedes (so a long run is tried once).
_TOO_LONG = re.compile(rf"(?<![A-Za-z0-9_-])(?:(?:{_KEY}){_SEP}){{{MAX_DEPTH}}}(?:{_KEY})")
_HEADER = re.compile(rf"[ \t]*\[(?P<array>\[)?[ \t]*(?P<key>{_CHAIN})[ \t]*\]")
_ASSIGN = re.compile(rf"[ \t]*(?P<key>{_CHAIN})[ \t]*=")
_PART = re.compile(_KEY)
_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")

Lines = dict[tuple[Any, ...], int]


def mentions_table(data: bytes) -> bool:
    """A cheap test before parsing: a file that never says `pg-bot` has no such table."""
    return b"pg-bot" in data


def table(text: str, source: str) -> dict[str, Any] | None:
    """The `[tool.pg-bot]` table of a pyproject.toml's text, or None when it has none. Raises ConfigError
    (`source:line: message`) for text that is not TOML, or that is hostile as described above."""
    _refuse_long_keys(text, source)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _line_in_message(str(exc), text)
        message = _AT_LINE.sub("", str(exc)).strip()
        raise ConfigError(f"{source}:{line}: not valid TOML: {message}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{source}:1: nested too deeply to read (arrays or inline tables within each other)") from exc
    tool = document.get("tool")
    value = tool.get("pg-bot") if isinstance(tool, dict) else None
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(f"{source}:{table_line(text)}: `{NAME}` must be a table ([{NAME}]), not {type(value).__name__}")
    if _depth(value) > MAX_DEPTH:
        raise ConfigError(f"{source}:{table_line(text)}: `{NAME}` is nested more than {MAX_DEPTH} levels deep")
    return value


def _line_in_message(message: str, text: str) -> int:
    """tomllib (before 3.14) puts the place in the message: `(at line 3, column 5)` or `(at end of document)`."""
    m = _AT_LINE.search(message)
    if m and m.group(1):
        return int(m.group(1))
    return text.count("\n") + 1 if "end of document" in message else 1


def _refuse_long_keys(text: str, source: str) -> None:
    for number, line in enumerate(text.split("\n"), 1):
        # Counting dots is cheap and rules out nearly every line; the pattern runs only on the rest.
        if line.count(".") >= MAX_DEPTH and _TOO_LONG.search(line):
            raise ConfigError(f"{source}:{number}: a dotted key or table header of more than {MAX_DEPTH} parts; "
                              "pg-bot's keys need at most 5")


def _depth(value: Any) -> int:
    """How deeply tables and arrays nest (iteratively: the value may be deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def table_line(text: str) -> int:
    full = _all_key_lines(text)
    return full.get(TABLE) or full.get(TABLE[:1]) or 1


def key_lines(text: str) -> Lines:
    """Key path inside `[tool.pg-bot]` (as jsonschema names it: names and array indices) -> 1-based line."""
    full = _all_key_lines(text)
    lines = {path[len(TABLE):]: line for path, line in full.items() if path[: len(TABLE)] == TABLE}
    lines[()] = table_line(text)
    return lines


def _all_key_lines(text: str) -> Lines:
    lines: Lines = {}
    arrays: dict[tuple[Any, ...], int] = {}  # array-of-tables path -> index of its last element
    current: tuple[Any, ...] = ()
    in_string: str | None = None  # the delimiter of the multi-line string being skipped
    for number, line in enumerate(text.split("\n"), 1):
        if in_string is not None:
            if line.count(in_string) % 2:
                in_string = None
            continue
        header = _HEADER.match(line)
        if header:
            parts = _parts(header["key"])
            if header["array"]:
                arrays[tuple(parts)] = arrays.get(tuple(parts), -1) + 1
            current = _with_indices(parts, arrays)
            _record(lines, current, number)
        else:
            assign = _ASSIGN.match(line)
            if assign:
                _record(lines, (*current, *_parts(assign["key"])), number)
        for delimiter in ('"""', "'''"):
            if line.count(delimiter) % 2:  # a multi-line string opens here and goes on below
                in_string = delimiter
                break
    return lines


def _with_indices(parts: list[str], arrays: dict[tuple[Any, ...], int]) -> tuple[Any, ...]:
    """`a.b.c` where `a.b` is an array of tables: `a.b.<its last index>.c`, as TOML means it."""
    path: list[Any] = []
    for i, part in enumerate(parts):
        path.append(part)
        index = arrays.get(tuple(parts[: i + 1]))
        if index is not None:
            path.append(index)
    return tuple(path)


def _record(lines: Lines, path: tuple[Any, ...], number: int) -> None:
    for end in range(1, len(path) + 1):
        lines.setdefault(path[:end], number)


def _parts(chain: str) -> list[str]:
    return [_unquote(m.group()) for m in _PART.finditer(chain)]


def _unquote(part: str) -> str:
    if part.startswith("'"):
        return part[1:-1]
    if part.startswith('"'):
        try:  # escapes (\u00e9, \") decoded exactly as TOML does
            return str(tomllib.loads(f"k = {part}")["k"])
        except tomllib.TOMLDecodeError:
            return part[1:-1]
    return part
