"""Fast textual scans for the prefilter and the hot-line index.

Python's `re` finds a pattern that starts with a literal about fifty times faster than one that starts with
`\\b` or an alternation (it can then skip ahead with a plain string search). So a word list is searched as one
literal-led pattern per word, and the word boundary in front of a hit is checked by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def word_before(data: str | bytes, offset: int) -> bool:
    """Is the character before ``offset`` part of an identifier (so a hit there is not a whole word)?"""
    if offset <= 0:
        return False
    if isinstance(data, bytes):
        return data[offset - 1] in _WORD_BYTES
    ch = data[offset - 1]
    return ch == "_" or ch.isalnum()


def word_start(data: str | bytes, offset: int) -> int:
    """Where the identifier holding ``offset`` begins."""
    while word_before(data, offset):
        offset -= 1
    return offset


def led(pattern: str) -> tuple[re.Pattern[str], re.Pattern[bytes]]:
    """A literal-led pattern compiled for text and for bytes."""
    return re.compile(pattern), re.compile(pattern.encode())


def first_word_hit(patterns: tuple[re.Pattern[str], re.Pattern[bytes]], data: str | bytes) -> bool:
    """Does the literal-led pattern match somewhere with a word boundary in front (like a leading `\\b`)?"""
    pattern: re.Pattern[str] | re.Pattern[bytes] = patterns[1] if isinstance(data, bytes) else patterns[0]
    return any(not word_before(data, m.start()) for m in pattern.finditer(data))  # type: ignore[arg-type]


_AFTER = re.compile(r"[ \t]*(?:[(,)]|\.apply[ \t]*\()")  # `Fn.apply(`: an autograd Function is run


def _used(text: str, start: int, end: int) -> bool:
    if _AFTER.match(text, end):
        return True
    if start > 0 and text[start - 1] == ".":  # `dist.all_reduce` as a value, but not `self.reduce_scatter` (a flag)
        return text[word_start(text, start - 1) : start - 1] not in ("self", "cls")
    return False


def _starts(text: str, hits: Iterable[tuple[int, int]], uses: bool) -> list[int]:
    return sorted({start for start, end in hits if not uses or _used(text, start, end)})


def _bound(text: str, hits: Iterable[tuple[int, int]]) -> set[str]:
    return {name for start, end in hits if not _CALLED.match(text, end) and (name := bound_at(text, start)) is not None}


def bound_at(text: str, offset: int) -> str | None:
    """The name a line binds to a value that names what stands at ``offset`` (`fn = a if sp else b`), if any."""
    m = _BINDING.match(text, text.rfind("\n", 0, offset) + 1)
    return m.group(1) if m is not None and m.end() <= offset else None


class Words:
    """Whole-word occurrences of a fixed set of identifiers, as `\\b(?:a|b|c)\\b` would find them. Only the
    words that contain no other word are searched for (`reduce` finds `all_reduce` and `reduce_scatter` too);
    each hit is widened to its identifier, which must be one of the words."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(sorted(set(words)))
        self._set = frozenset(self.words)
        self._set_bytes = frozenset(w.encode() for w in self.words)
        cores = [w for w in self.words if not any(o != w and o in w for o in self.words)]
        self._cores = [led(re.escape(w)) for w in cores]

    def search(self, data: str | bytes) -> bool:
        return any(True for _ in self._hits(data))

    def offsets(self, text: str, *, uses: bool = False) -> list[int]:
        """Sorted start offsets of every whole-word occurrence; with ``uses``, only where the word is used as a
        function: called (`f(`), passed on (`partial(f, ...)`), or taken from a module (`dist.f`), not an
        attribute of `self`, a keyword argument, a comment or prose in a string."""
        return _starts(text, self._hits(text), uses)

    def uses_and_aliases(self, text: str) -> tuple[list[int], bool, set[str]]:
        """``offsets(text, uses=True)``, whether a word is imported under another name (`... as ws`), and the
        local names bound to a word as a value (`fn = dist.all_reduce`, `reduce_fn = reduce_scatter_raw if sp else
        all_reduce_raw`: calling them runs it), from one search."""
        hits = list(self._hits(text))
        return _starts(text, hits, True), any(_AS.match(text, end) for _, end in hits), _bound(text, hits)

    def _hits(self, data: str | bytes) -> Iterator[tuple[int, int]]:
        words: frozenset[str] | frozenset[bytes] = self._set_bytes if isinstance(data, bytes) else self._set
        tail = _TAIL_BYTES if isinstance(data, bytes) else _TAIL
        for patterns in self._cores:
            pattern: re.Pattern[str] | re.Pattern[bytes] = patterns[1] if isinstance(data, bytes) else patterns[0]
            for m in pattern.finditer(data):  # type: ignore[arg-type]
                start = word_start(data, m.start())
                end = tail.match(data, m.end()).end()  # type: ignore[union-attr, arg-type]
                if data[start:end] in words:
                    yield start, end

    def __contains__(self, word: object) -> bool:
        return word in self._set

    def __or__(self, other: Iterable[str]) -> Words:
        return Words((*self.words, *other))


class CallSites:
    """Every call spelled `name(` or `owner.name(` in a text (the name a whole word), from one search of the
    reversed text, where the pattern is led by the literal `(` (see the module doc): asking for each imported
    name with `str.find` scanned a large file hundreds of times."""

    def __init__(self, text: str) -> None:
        self._text = text
        # name -> (where the name starts, the name before its dot if any, whether blanks stand before the `(`)
        self._at: dict[str, list[tuple[int, str | None, bool]]] = {}
        self._on: dict[str, set[str]] = {}  # owner -> the names called on it
        size = len(text)
        # (the pattern's names are whole words: `\w+` takes all of one, and its owner's, going backwards)
        for m in _CALL_REVERSED.finditer(text[::-1]):
            name, owner = m.group(2)[::-1], m.group(3)
            if owner:
                owner = owner[::-1]
                self._on.setdefault(owner, set()).add(name)
            self._at.setdefault(name, []).append((size - m.end(2), owner or None, bool(m.group(1))))

    def with_group(self, name: str, owner: str | None = None) -> bool:
        """Is `name(` called (as `owner.name(` when ``owner`` is given) with an argument that names a group
        (``names_group``)? No blanks before the `(`."""
        text = self._text
        for start, before, spaced in self._at.get(name, ()):
            if spaced or (owner is not None and before != owner):
                continue
            at = start if owner is None else start - len(owner) - 1
            # (names_group reads `Fn.apply(` as a call of `Fn`)
            called = frozenset((name,)) if owner is None else frozenset((f"{owner}.{name}", owner))
            if names_group(text, at, called):
                return True
        return False

    def called_on(self, owner: str) -> set[str]:
        """Names called as attributes of ``owner`` (`owner.fn(`, blanks allowed before the `(`), not `apply`."""
        return self._on.get(owner, set()) - {"apply"}


# `name(` and `owner.name(` read backwards: `(`, blanks, the name reversed, then `.` and the owner reversed
_CALL_REVERSED = re.compile(r"\(([ \t]*)(\w+)(?:\.(\w+))?")


_AS = re.compile(r"[ \t]+as\b")
_CALLED = re.compile(r"[ \t]*\(")
_BINDING = re.compile(r"[ \t]*(\w+)[ \t]*=(?!=)")  # `name = ` at the start of a line
_TAIL = re.compile(r"\w*")
_TAIL_BYTES = re.compile(rb"\w*")


_DOT_SIZE = re.compile(r"\.size\([ \t]*\)")
_SIZE_CALL = re.compile(r"_size[ \t]*\(")
# a name that says "process group": `tp_group`, `process_group`, `pg`, `ep_pg_x`, `grp`, `a_grp`, or a device
# mesh, which stands for its group (`sp_mesh.size()`, `group=sp_mesh`; `get_world_size(mesh)` is `mesh.size()`)
PROCESS_GROUP_NAME = re.compile(r"group|(^|_)pg$|(^|_)pg_|(^|_)grp(_|$)", re.I)
GROUP_NAME = re.compile(f"{PROCESS_GROUP_NAME.pattern}|mesh", re.I)
# A line that stores on self a test of a size the class keeps (`self.split = self.n > 1`): a flag reported as a guard
# wherever it is read. Group 1: the size attribute. (Multiline: `finditer` over a method, or `match` on one line.)
SIZE_FLAG = re.compile(r"^[ \t]*self\.\w+[ \t]*(?::[^=\n]*)?=(?!=)[^\n]*?\bself\.(\w+)[ \t]*(?:>=?|<=?|[!=]=)[ \t]*[12]\b",
                       re.M)
# a project's function named for a collective: `all_gather_raw`, `_fsdp_gather_tensors`, `reduce_scatter_coalesced`,
# or for syncing (`sync_shared_params(model, pg)`, called with a group: it broadcasts there); not one named for the
# tensor ops `scatter_add` / `scatter_reduce` (`deterministic_scatter_add`)
WRAPPER_NAME = re.compile(r"(?:^|_)(?:all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|gather|sync"
                          r"|scatter(?!_(?:add|reduce)(?:_|$))|(?<!scatter_)reduce)(?:_|$)", re.I)
# a helper measuring a group by its name: `get_pg_size(g)`, `group_size(g)`, `_get_process_group_size(g)`,
# `get_distributed_world_size(g)` (a project's wrapper of get_world_size, imported from another file)
SIZE_HELPER = re.compile(r"^_?(?:get_)?(?:\w*_)?(?:pg|group|process_group|world)_size$")


def group_sizes(text: str) -> list[int]:
    """Offsets where a group's size is asked without a comm module's `get_world_size`: `tp_group.size()` and
    size helpers named for groups (`get_pg_size(g)`); their lines are hot too."""
    found = []
    for m in _DOT_SIZE.finditer(text):
        start = word_start(text, m.start())
        if GROUP_NAME.search(text[start : m.start()]):
            found.append(start)
    for m in _SIZE_CALL.finditer(text):
        start = word_start(text, m.start())
        name = text[start : m.start() + 5]
        if SIZE_HELPER.match(name) and (not name.endswith("world_size") or _ONE_ARGUMENT.match(text, m.end())):
            found.append(start)  # (a `*world_size()` getter with no group, or `(with_cp=True)`, measures no group)
    return found


def calls_with_group(text: str, words: Words) -> list[int]:
    """Offsets of calls of ``words`` whose arguments name a group (`all_gather_raw(t, self.process_group)`,
    `f(x, tp_group=g)`): the call text up to its closing bracket (at most a few lines)."""
    return [start for start in words.offsets(text, uses=True) if names_group(text, start, words)]


_GLOBAL = re.compile(r"global[ \t]+([\w \t,]+)")


def global_statements(text: str) -> list[tuple[int, list[str]]]:
    """`global a, b` statements: (offset, names). Literal-led; a hit counts when it starts a line (after its
    indentation), as a statement does."""
    if "global" not in text:
        return []
    return [(m.start(), [n.strip() for n in m.group(1).split(",") if n.strip()]) for m in _GLOBAL.finditer(text)
            if text[text.rfind("\n", 0, m.start()) + 1 : m.start()].isspace()]


# Point-to-point calls (rules.yaml `collectives`) are used all over pipelines with global ranks and no group:
# only a call that names a group can be a site, so only such calls make a line hot.
POINT_TO_POINT = frozenset({"send", "recv", "isend", "irecv", "P2POp"})
_IDENT_AT = re.compile(r"\w+")


def p2p_without_group(text: str, start: int) -> bool:
    """Is the word at ``start`` a point-to-point call that names no group?"""
    m = _IDENT_AT.match(text, start)
    return m is not None and m.group() in POINT_TO_POINT and not names_group(text, start, POINT_TO_POINT)


def names_group(text: str, start: int, words: Words | frozenset[str]) -> bool:
    """Is the word at ``start`` (one of ``words``) called with an argument that names a group?"""
    depth, i, end = 0, text.find("(", start), min(len(text), start + 600)
    if i < 0 or i >= end or text[start:i].strip(" \t").removesuffix(".apply").rstrip(" \t") not in words:
        return False
    j = i
    while j < end:
        c = text[j]
        depth += (c == "(") - (c == ")")
        if depth == 0:
            break
        j += 1
    return any(GROUP_NAME.search(w) for w in _IDENT.findall(text, i, j))


_IDENT = re.compile(r"[A-Za-z_]\w*")
_IMPORTED = re.compile(r"import[ \t]+(\([^)]*\)|[^\n]*)")


def imported_wrappers(text: str) -> list[str]:
    """Names an import binds that are named for a collective (WRAPPER_NAME), read off the text before the
    parse, so that the lines calling them are hot when functions are left out (bot.analyze.slicing). A
    superset of what the parsed imports give (bot.analyze.names): it may keep a function too many, never one
    too few."""
    return sorted({local for name, local in _imported(text) if WRAPPER_NAME.search(name) and not name.isupper()})


def imported_names(text: str) -> list[str]:
    """Every plain name an import binds, read off the text as ``imported_wrappers`` reads them."""
    return sorted({local for _, local in _imported(text)})


def _imported(text: str) -> Iterator[tuple[str, str]]:
    """(the name imported, the local it is bound to) of each `import a`, `from m import a as b, c`."""
    for m in _IMPORTED.finditer(text):
        if word_before(text, m.start()):
            continue
        for part in m.group(1).strip("()").split(","):
            words = part.replace("\\", " ").split()  # `name` or `name as local`: named for what it is
            if words and "." not in words[0]:
                yield words[0], words[-1]


_ONE_ARGUMENT = re.compile(r"[ \t]*(?:group[ \t]*=[ \t]*)?[A-Za-z_][\w.]*[ \t]*[,)]")
