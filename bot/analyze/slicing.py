"""Which functions of a file the analysis can do without, so they are never parsed.

Parsing is a third of a check. Most of a large module is methods that touch no collective, no world size and
no helper that does, and that hold nothing the analysis reads elsewhere. Those are blanked out (every line kept,
emptied) before `ast.parse`, so every node that is kept has its own line and column.

Kept, besides everything that is not a function: the hot functions and their callers a few levels up (as
`bot.analyze.module` walks them), `__init__`, short functions that may be local predicates (they name None, a
size, a group or the world), properties, everything in a
class that may be an autograd Function, and functions that import a comm module, assign a group-like attribute
of `self`, assign an attribute that some line caches a world size in, or declare a `global` (which may bind a
module-level instance, bot.analyze.env). The cut is found from indentation
alone; a wrong cut (a string or a bracket continued at the margin) makes the sliced text fail to parse, and then
the whole file is parsed as before.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from typing import NamedTuple

from bot.analyze.scan import GROUP_NAME, SIZE_FLAG, global_statements

_TRIPLE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_TOP = re.compile(r"^[^ \t\n#)\]}]", re.M)  # a line at the margin that can start a statement
_CLASS = re.compile(r"class[ \t]+(\w+)")
_DEF = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
_SELF_ASSIGN = re.compile(r"self\.(\w+)\s*(?::[^=\n]*)?=(?!=)")
_SIZE_ATTR = re.compile(r"self\.(\w+)\s*(?::[^=\n]*)?=[^=\n][^\n]*get_world_size")
_IMPORT_COMM = re.compile(r"^\s*(?:from|import)\s[^\n]*(?:distributed|comm)", re.M)
_INSTANCE_ASSIGN = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*_*[A-Z]\w*[ \t]*\(", re.M)  # `X = Cls(`
_SHORT = 6  # code lines: a local predicate or a tiny helper costs nothing to parse
# what a local predicate or a size/group helper is made of (None tests, sizes, groups, the world)
_MAY_MATTER = re.compile(r"None|size|world|group|grp|pg|mesh|parallel", re.I)
# How far the callers of hot functions are followed, here and in bot.analyze.module: callers of callers of callers,
# as the verdicts follow helpers three deep (their callers are the third level).
HELPER_LEVELS = 3


def callable_name(name: str) -> bool:
    """Can a call in this file name this function (not `__init__`, which runs as `Cls(...)`)?"""
    return not (name.startswith("__") and name.endswith("__"))


class Chunk(NamedTuple):
    """A top-level function or a method of a top-level class, decorators included (1-based, inclusive)."""

    start: int
    end: int
    name: str
    indent: str  # the method's indentation ("" at top level)
    keep_always: bool  # in a possible autograd Function, a property, `__init__`, or short
    apply: str | None = None  # `Fn.apply` when this is a method of a possible autograd Function `Fn`


def sliced(text: str, lines: list[str], hot: list[int], call_lines: Callable[[set[str]], set[int]],
           starts: list[int] | None = None) -> str | None:
    """``lines`` with the functions the analysis does not need blanked, joined; None when nothing is cut.
    ``text`` is ``lines`` joined with newlines; ``hot`` the sorted hot lines; ``starts`` (when known) the offset
    where each line starts, and the text's length."""
    chunks = _chunks(text, lines, starts)
    if not chunks:
        return None
    hot_lines = list(hot)
    keep = {c for c in chunks if c.keep_always}
    names: set[str] = set()
    for _ in range(HELPER_LEVELS):
        hit = {c for c in chunks if _spans(hot_lines, c)}
        keep |= hit
        new = {c.name for c in hit if callable_name(c.name)}
        new = (new | {c.apply for c in hit if c.apply is not None}) - names
        if not new:
            break
        names |= new
        hot_lines = sorted(set(hot_lines) | call_lines(new))
    size_attrs = {a for line in lines if "get_world_size" in line for a in _SIZE_ATTR.findall(line)}
    cut = [c for c in chunks if c not in keep and not _holds_facts(lines[c.start - 1 : c.end], size_attrs)]
    if not cut:
        return None
    out = list(lines)
    for c in cut:
        out[c.start - 1 : c.end] = [""] * (c.end - c.start + 1)
        if c.indent:  # a class body must keep a statement; `pass` where the method ended keeps its extent
            out[c.end - 1] = c.indent + "pass"
    return "\n".join(out)


def _spans(hot: list[int], c: Chunk) -> bool:
    i = bisect.bisect_left(hot, c.start)
    return i < len(hot) and hot[i] <= c.end


def _holds_facts(body: list[str], size_attrs: set[str]) -> bool:
    text = "\n".join(body)
    if _IMPORT_COMM.search(text) or _binds_instance(text):
        return True
    if any(GROUP_NAME.search(a) or a in size_attrs for a in _SELF_ASSIGN.findall(text)):
        return True
    # a flag on self over a size the class keeps (`self.split = self.n > 1`), reported as a guard wherever it is
    # (a None test stored as a flag, `self.on = pg is not None`, is kept only where `__init__` is: keeping every
    # such method of a large file cost a tenth of a check's time)
    return bool(size_attrs) and any(m.group(1) in size_attrs for m in SIZE_FLAG.finditer(text))


def _binds_instance(text: str) -> bool:
    """`global LAYOUT` then `LAYOUT = Layout(...)`: the function binds a module-level instance of a class (named
    as classes are), which bot.analyze.env reads as that instance."""
    names = {n for _, declared in global_statements(text) for n in declared}
    return bool(names) and any(m.group(1) in names for m in _INSTANCE_ASSIGN.finditer(text))


def _chunks(text: str, lines: list[str], starts: list[int] | None) -> list[Chunk]:
    offsets = starts if starts is not None else [0, *itertools.accumulate(len(line) + 1 for line in lines)]
    strings = _string_lines(text, offsets)

    def line_of(offset: int) -> int:  # 0-based
        return bisect.bisect_right(offsets, offset) - 1

    top = [i for i in (line_of(m.start()) for m in _TOP.finditer(text)) if not _in(strings, i)]
    out: list[Chunk] = []
    for start, end in _items(lines, top, len(lines)):
        head = lines[start]
        if head.startswith("class "):
            body = _body_lines(text, lines, offsets, strings, start, end)
            if body:
                header = "".join(lines[start : body[0][0]])
                apply = f"{_CLASS.match(head).group(1)}.apply" if "Function" in header else None  # type: ignore[union-attr]
                out.extend(c for s, e in _items(lines, [i for i, _ in body], end + 1)
                           if (c := _chunk(lines, s, e, body[0][1], apply)) is not None)
        elif head.startswith(("def ", "async ", "@")):
            chunk = _chunk(lines, start, end, "", None)
            if chunk is not None:
                out.append(chunk)
    return out


def _body_lines(text: str, lines: list[str], offsets: list[int], strings: list[tuple[int, int]], start: int,
                end: int) -> list[tuple[int, str]]:
    """0-based lines of a class body that can start a statement at the body's own indentation."""
    first = next((i for i in range(start + 1, end + 1)
                  if lines[i].strip() and not lines[i].lstrip().startswith("#") and not _in(strings, i)), None)
    if first is None:
        return []
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    if not indent:
        return []
    pattern = re.compile(rf"^{re.escape(indent)}[^ \t\n#)\]}}]", re.M)
    found = []
    for m in pattern.finditer(text, offsets[start + 1], offsets[end + 1]):
        i = bisect.bisect_right(offsets, m.start()) - 1
        if not _in(strings, i):
            found.append((i, indent))
    return found


def _items(lines: list[str], starts: list[int], stop: int) -> list[tuple[int, int]]:
    """(first, last) 0-based line of each statement; decorators stay with what they decorate."""
    merged = [s for n, s in enumerate(starts) if n == 0 or not lines[starts[n - 1]].lstrip().startswith("@")]
    return [(s, (merged[n + 1] if n + 1 < len(merged) else stop) - 1) for n, s in enumerate(merged)]


def _chunk(lines: list[str], first: int, last: int, indent: str, apply: str | None) -> Chunk | None:
    while last > first and not lines[last].strip():
        last -= 1
    i = first
    while i <= last and lines[i].lstrip().startswith("@"):
        i += 1
    if i > last:
        return None
    match = _DEF.match(lines[i])
    if match is None:
        return None
    name = match.group(1)
    decorators = "".join(lines[first:i])
    short = last - first < _SHORT or next(
        (False for n, _ in enumerate(line for line in lines[first : last + 1] if line.strip()) if n >= _SHORT), True)
    if short and not _MAY_MATTER.search("".join(lines[first : last + 1])):
        short = False  # a tiny function that tests nothing a guard is made of: a cold one like any other
    always = apply is not None or short or name == "__init__" or "property" in decorators
    return Chunk(first + 1, last + 1, name, indent, always, apply)


def _string_lines(text: str, offsets: list[int]) -> list[tuple[int, int]]:
    """0-based (first, last) lines that continue a triple-quoted string (its opening line excluded)."""
    if '"""' not in text and "'''" not in text:
        return []
    out = []
    for m in _TRIPLE.finditer(text):
        a = bisect.bisect_right(offsets, m.start()) - 1
        b = bisect.bisect_right(offsets, m.end() - 1) - 1
        if b > a:
            out.append((a + 1, b))
    return out


def _in(ranges: list[tuple[int, int]], line: int) -> bool:
    i = bisect.bisect_right(ranges, (line, 1 << 60)) - 1
    return i >= 0 and ranges[i][0] <= line <= ranges[i][1]
