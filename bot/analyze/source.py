"""Decode and parse one file; map byte columns to character columns; read ignore comments.

Everything that can make a file unreadable is turned into a ``FileError`` here, so one bad file never stops
a run.
"""

from __future__ import annotations

import ast
import bisect
import io
import itertools
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bot.analyze.newer_syntax import readable_on_older_python
from bot.analyze.scan import (
    Words,
    bound_at,
    group_sizes,
    imported_wrappers,
    p2p_without_group,
    word_before,
    word_start,
)
from bot.analyze.slicing import sliced
from bot.model import Span

_IGNORE = re.compile(r"#\s*pg-bot:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s]+)\])?(?P<reason>.*)$")
# flake8's own suppression comment: bare `noqa` (every code) or `noqa: PG101,E501` (those codes only)
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)


class UnreadableSource(Exception):
    """The file cannot be analysed; the message says why in words a user can act on."""


@dataclass
class ParsedSource:
    text: str
    tree: ast.Module
    lines: list[str]
    # line -> codes ignored there (an empty frozenset means every code)
    ignores: dict[int, frozenset[str]] = field(default_factory=dict)
    # sorted line numbers that mention a name any rule cares about; statements elsewhere are not walked
    hot_lines: list[int] = field(default_factory=list)
    trimmed: bool = False  # functions the analysis did not need were left out of ``tree``
    wrappers: Sequence[str] = ()  # whose calls with a group were hot when it was trimmed

    _ends: list[int] | None = None
    _called: dict[str, set[int]] = field(default_factory=dict)

    def find_hot(self, words: Words, wrappers: Sequence[str] = ()) -> bool:
        """Set ``hot_lines``: where a hot word is used as a function (or a local bound to one is called), a group's
        size is asked, or a wrapper (bot.analyze.context) is called with a group. Returns whether a hot word is imported under another name
        (then its lines are found by that name)."""
        offsets, aliased, bound = words.uses_and_aliases(self.text)
        # a send with no group is the world's, unless its peer may be a group's member as a global rank
        ranked = "get_process_group_ranks" in self.text or "get_global_rank" in self.text
        found = {*(o for o in offsets if ranked or not p2p_without_group(self.text, o)), *group_sizes(self.text)}
        if wrappers:  # with a group it is that group's collective; without, the world's (a None branch's fallback)
            called, _, bound_too = Words(wrappers).uses_and_aliases(self.text)
            found.update(called)
            bound |= bound_too
        self.hot_lines = self.lines_at(sorted(found))
        if bound:  # `reduce_fn = reduce_scatter_raw if sp else all_reduce_raw`, then `reduce_fn(x, group)`
            self.hot_lines = sorted({*self.hot_lines, *self.call_lines(bound)})
        return aliased

    def lines_at(self, offsets: Iterable[int]) -> list[int]:
        """Sorted distinct 1-based line numbers of sorted text offsets."""
        ends = self._line_ends()
        found: list[int] = []
        for offset in offsets:
            line = bisect.bisect_right(ends, offset) + 1
            if not found or found[-1] != line:
                found.append(line)
        return found

    def call_lines(self, names: set[str]) -> set[int]:
        """Lines that call one of ``names`` as bot.analyze.env.ModuleEnv.callee resolves calls: `f(`, `self.f(`,
        `cls.f(`, `Cls.f(`, and `Fn.apply` only as `Fn.apply(`; not `obj.f(`, some other object's method. One literal-led
        search per name (bot.analyze.scan): a handful of names per helper level is the rule."""
        ends = self._line_ends()
        out: set[int] = set()
        text = self.text
        for name in names:
            known = self._called.get(name)
            if known is not None:  # asked before slicing and again by the analysis
                out |= known
                continue
            mine = self._called[name] = set()
            owner, _, leaf = name.rpartition(".")
            for offset, called in _uses_of(text, leaf):
                if word_before(text, offset):
                    continue
                if owner:
                    start = offset - len(owner) - 1
                    if not text.endswith(f"{owner}.", 0, offset) or word_before(text, start):
                        continue
                elif offset > 0 and text[offset - 1] == "." and not _resolvable_owner(text, offset - 1):
                    continue  # `obj.f(`: a call env.callee never resolves to a function of this file
                if called or _HANDED_TO_LATER.search(text, max(0, offset - 40), offset):
                    # (`partial(f, group=g)`: f is called later, with what the partial binds)
                    mine.add(bisect.bisect_right(ends, offset) + 1)
                elif (alias := bound_at(text, offset)) is not None:
                    mine |= self.call_lines({alias})  # `fn = _rs if sp else _ar`, `sum_over = _Sum.apply`
            out |= mine
        return out

    def _line_ends(self) -> list[int]:
        """Offsets just past each line end in ``text`` (ast's line ends: CRLF, CR, LF)."""
        if self._ends is None:
            if "\r" in self.text:
                self._ends = [m.end() for m in _NEWLINE.finditer(self.text)]
            else:  # the common case, from the lines already split
                self._ends = list(itertools.accumulate(len(line) + 1 for line in self.lines[:-1]))
        return self._ends

    def hot(self, node: ast.stmt) -> bool:
        i = bisect.bisect_left(self.hot_lines, node.lineno)
        return i < len(self.hot_lines) and self.hot_lines[i] <= (node.end_lineno or node.lineno)

    def span(self, node: ast.AST) -> Span:
        """The node's span with character (not UTF-8 byte) columns."""
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return Span(
            line,
            self._char_col(line, node.col_offset),  # type: ignore[attr-defined]
            end_line,
            self._char_col(end_line, node.end_col_offset or 0),  # type: ignore[attr-defined]
        )

    def _char_col(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def segment(self, node: ast.AST) -> str:
        """The node's source text (ast.get_source_segment re-splits the whole file on every call)."""
        s = self.span(node)
        if s.line == s.end_line:
            return self.lines[s.line - 1][s.col : s.end_col]
        chunk = [self.lines[s.line - 1][s.col :], *self.lines[s.line : s.end_line - 1], self.lines[s.end_line - 1][: s.end_col]]
        return "\n".join(chunk)

    def ignored(self, code: str, span: Span) -> bool:
        for line in range(span.line, span.end_line + 1):
            codes = self.ignores.get(line)
            if codes is not None and (not codes or code in codes):
                return True
        return False


def decode(data: str | bytes) -> str:
    if isinstance(data, str):
        if "\0" in data:
            raise UnreadableSource("contains NUL bytes; not a Python source file")
        return data
    if b"\0" in data:
        raise UnreadableSource("contains NUL bytes; not a Python source file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError) as exc:  # bad coding cookie
        raise UnreadableSource(f"bad source encoding: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise UnreadableSource(f"not valid {exc.encoding} (byte {exc.start}): bad encoding") from exc
    return text[1:] if text.startswith("\ufeff") else text


def parse(data: str | bytes, hot: Words | None = None, wrappers: Sequence[str] = ()) -> ParsedSource:
    """Decode and parse; with ``hot`` (and ``wrappers``: ParsedSource.find_hot), the hot lines are found and
    functions the analysis does not need are left out of the tree (bot.analyze.slicing): ``text`` and
    ``lines`` stay whole."""
    text = decode(data)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # as ast counts lines
    parsed = ParsedSource(text=text, tree=_EMPTY, lines=lines)
    tree = None
    if hot is None:
        parsed.hot_lines = list(range(1, len(lines) + 1))
    else:
        wrappers = sorted({*wrappers, *imported_wrappers(text)})
        parsed.wrappers = wrappers
        aliased = parsed.find_hot(hot, wrappers)
        joined = text if "\r" not in text else "\n".join(lines)
        starts = [0, *parsed._line_ends(), len(text) + 1] if joined is text else None
        cut = None if aliased or len(text) < _SLICE_MIN_CHARS else sliced(joined, lines, parsed.hot_lines,
                                                                          parsed.call_lines, starts)
        if cut is not None:  # (an alias is found by name after the parse: no cut then)
            try:
                tree = ast.parse(cut)
                parsed.trimmed = True
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None  # cut in the wrong place (a string or bracket at the margin): parse it all
    if tree is None:
        tree = _parse_all(text)
    parsed.tree = tree
    parsed.ignores = _ignores(lines)
    return parsed


def parse_module(text: str) -> ast.Module:
    """`ast.parse` of a whole file, also on a Python older than the file's syntax where that can be done with every
    node in its place (bot.analyze.newer_syntax). Raises as `ast.parse` does."""
    try:
        return ast.parse(text)
    except SyntaxError:
        bare = readable_on_older_python(text) if sys.version_info < (3, 12) else None
        if bare is None:
            raise
        try:
            return ast.parse(bare)
        except (SyntaxError, ValueError):
            pass
        raise


def _parse_all(text: str) -> ast.Module:
    try:
        return parse_module(text)
    except SyntaxError as exc:
        hint = ""
        if exc.msg and ("Missing parentheses in call to" in exc.msg or "print" in (exc.text or "")[:6]):
            hint = " (this looks like Python 2 source)"
        elif sys.version_info < (3, 12) and ((exc.msg or "").startswith("f-string") or _F_STRING.search(exc.text or "")):
            # PEP 701: the file may be fine on the project's Python, and pg-bot parses with the one it runs on
            hint = (" (an f-string that nests quotes or backslashes needs Python 3.12 or newer; pg-bot is running on "
                    f"Python {sys.version_info.major}.{sys.version_info.minor})")
        raise UnreadableSource(f"syntax error at line {exc.lineno}: {exc.msg}{hint}") from exc
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UnreadableSource(f"cannot parse: {exc}") from exc


_EMPTY = ast.Module(body=[], type_ignores=[])
_HANDED_TO_LATER = re.compile(r"\b(?:partial|to_thread)\(\s*$")  # right before a name: `functools.partial(f, ...)`
# Below this size, finding what to cut costs more than parsing it (measured on DeepSpeed's files: 10 KB)
_SLICE_MIN_CHARS = 10_000
_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line ends ast counts
_F_STRING = re.compile(r"(?<!\w)[rR]?[fF][rR]?['\"]")  # an f-string's opening
_SPACE = frozenset(" \t\n\r\f\v")


def _uses_of(text: str, name: str) -> Iterator[tuple[int, bool]]:
    r"""Offsets where ``name`` stands as a whole word, and whether `(` follows (whitespace between allowed), as
    `re.finditer(name + r"\b\s*\(?")` finds them, by plain string search: a pattern compiled per name cost more
    than the search itself."""
    at, size = text.find(name), len(text)
    while at >= 0:
        j = at + len(name)
        if j < size and (text[j].isalnum() or text[j] == "_"):  # a longer name
            at = text.find(name, j)
            continue
        while j < size and text[j] in _SPACE:
            j += 1
        called = j < size and text[j] == "("
        yield at, called
        at = text.find(name, j + 1 if called else at + 1)


def _resolvable_owner(text: str, dot: int) -> bool:
    """`self.f(`, `cls.f(`, `Cls.f(` (a static or class method called through its class, named as classes are),
    the name before the dot at ``dot`` standing alone (not `x.self.f(`)."""
    start = word_start(text, dot)
    if start == dot or (start > 0 and text[start - 1] == "."):
        return False
    owner = text[start:dot]
    return owner in ("self", "cls") or owner.lstrip("_")[:1].isupper()


COMPOUND = (  # statements that hold blocks of statements (and the block holders within them)
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
    ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try), ast.Match, ast.ExceptHandler, ast.match_case,
)


def after_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    """A function's statements without its docstring."""
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def child_blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists directly inside ``stmt`` (bodies, else, finally, handlers, match cases)."""
    if not isinstance(stmt, COMPOUND):
        return  # simple statements (most of them) hold no block
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(stmt, "handlers", []) or []:
        yield handler.body
    for case in getattr(stmt, "cases", []) or []:
        yield case.body


def statements(body: Sequence[ast.AST], only: ParsedSource | None = None) -> Iterator[ast.AST]:
    """Every statement below ``body``, nested ones included, without descending into expressions; with
    ``only``, statements (and everything below them) that span no hot line are skipped."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        if only is not None and isinstance(stmt, ast.stmt) and not only.hot(stmt):
            continue
        yield stmt
        if isinstance(stmt, COMPOUND):
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(stmt, name, None)
                if children:
                    stack.extend(reversed(children))


def _ignores(lines: list[str]) -> dict[int, frozenset[str]]:
    """Lines with `# pg-bot: ignore[CODE, ...] reason` or flake8's `# noqa[: CODE, ...]` -> the codes they
    silence (an empty set: every code)."""
    found: dict[int, frozenset[str]] = {}
    for number, line in enumerate(lines, start=1):
        if "#" not in line or ("pg-bot" not in line and "noqa" not in line.lower()):
            continue
        for pattern in (_IGNORE, _NOQA):
            match = pattern.search(line)
            if match:
                codes = match.group("codes")
                found[number] = frozenset(c.upper() for c in re.split(r"[,\s]+", codes) if c) if codes else frozenset()
                break
    return found
