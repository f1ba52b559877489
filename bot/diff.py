"""Unified diffs and PR file lists -> what changed per file (unidiff does the parsing). Pure: no I/O.

A ``FileChange`` knows the added lines of the new file (the only lines pg-bot comments on) and the hunks'
new-side line ranges: GitHub accepts a review comment only on a line inside a hunk, and a multi-line comment
only when its whole range lies in one hunk.

Line numbers here are git's: only ``\\n`` ends a line. Python (and so the analyzer and the fixer) also ends one at
a lone ``\\r``; ``LineMap`` translates between the two.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

DEV_NULL = "/dev/null"


class DiffError(ValueError):
    """A patch that cannot be parsed, or that does not apply to the file it names (``path``, when known)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class FileChange:
    path: str  # the new path (the old one for a removed file)
    status: str  # added | removed | modified | renamed
    old_path: str | None = None  # set for renames
    added: frozenset[int] = frozenset()  # new-file line numbers this change adds
    hunks: tuple[tuple[int, int], ...] = ()  # new-side (first, last) line ranges, inclusive
    binary: bool = False
    patch_missing: bool = False  # the API sent no patch (too large, or binary): added lines unknown
    patched: PatchedFile | None = field(default=None, compare=False, repr=False)

    @property
    def is_python(self) -> bool:
        return is_python(self.path)

    def commentable(self, start: int, end: int) -> bool:
        """Whether a review comment may span new-file lines start..end (inclusive): all in one hunk."""
        return any(first <= start and end <= last for first, last in self.hunks)


class ApiFile(Protocol):  # bot.github.PullFile, structurally; read-only, as that frozen dataclass's fields are
    @property
    def filename(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def previous_filename(self) -> str | None: ...
    @property
    def patch(self) -> str | None: ...


def git_lines(text: str) -> list[str]:
    """``text`` split as git splits it: only ``\\n`` ends a line (kept); a last line without one is kept too.
    (``str.splitlines`` also breaks at ``\\r``, form feeds, ``\\x85``, ``\\u2028``...)"""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


_PY_LINE_END = re.compile(r"\r\n|\r|\n")


class LineMap:
    """One text's lines as Python counts them (``\\n``, ``\\r\\n`` or a lone ``\\r`` ends a line: the analyzer's
    and the fixer's numbering) against git's (only ``\\n`` does: the diff's, GitHub's review comments' and its
    suggestions'). They differ only after a lone ``\\r``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._start = [0]  # character offset where each Python line starts
        self._end: list[int] = []  # ... and where its content ends (before its line ending)
        self._git = [1]  # git's number for the line each Python line starts on
        git = 1
        for m in _PY_LINE_END.finditer(text):
            self._end.append(m.start())
            if m.end() == len(text):
                break
            git += "\n" in m.group()
            self._start.append(m.end())
            self._git.append(git)
        if len(self._end) < len(self._start):
            self._end.append(len(text))
        self.identical = "\r" not in text.replace("\r\n", "")  # no lone CR: both numberings agree

    @property
    def python_line_count(self) -> int:
        return len(self._start) if self.text else 0

    def python_line(self, n: int) -> str:
        """Python line ``n`` (1-based), without its line ending."""
        return self.text[self._start[n - 1]:self._end[n - 1]]

    def to_git(self, n: int) -> int:
        """The git line on which Python line ``n`` lies."""
        if self.identical or n < 1:
            return n
        return self._git[min(n, len(self._git)) - 1] + max(n - len(self._git), 0)

    def git_span(self, first: int, last: int) -> tuple[list[str], list[str]]:
        """For Python lines first..last: the Python lines that share their git lines but lie before ``first``
        and after ``last`` (what a suggestion replacing those whole git lines must keep), without endings."""
        g1, g2 = self.to_git(first), self.to_git(last)
        lo, hi = first, last  # widened while the neighbour lies on the same git line (git numbers only grow)
        while lo > 1 and self._git[lo - 2] == g1:
            lo -= 1
        while hi < len(self._git) and self._git[hi] == g2:
            hi += 1
        return ([self.python_line(n) for n in range(lo, first)], [self.python_line(n) for n in range(last + 1, hi + 1)])


def is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _strip_prefix(name: str) -> str | None:
    if name == DEV_NULL:
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _from_patched(pf: PatchedFile, status: str | None = None, path: str | None = None) -> FileChange:
    # unidiff sets target_line_no on every added (and context) line; only removed lines have None.
    added = frozenset(
        line.target_line_no for hunk in pf for line in hunk if line.is_added and line.target_line_no is not None
    )
    hunks = tuple(
        (hunk.target_start, hunk.target_start + hunk.target_length - 1) for hunk in pf if hunk.target_length > 0
    )
    source, target = _strip_prefix(pf.source_file), _strip_prefix(pf.target_file)
    if status is None:
        status = ("added" if pf.is_added_file else "removed" if pf.is_removed_file
                  else "renamed" if pf.is_rename or (source and target and source != target) else "modified")
    new_path = path or (target if status != "removed" else source) or pf.path
    old_path = source if status == "renamed" else None
    return FileChange(path=new_path, status=status, old_path=old_path, added=added, hunks=hunks,
                      binary=pf.is_binary_file, patched=pf)


def parse_patch(text: str) -> list[FileChange]:
    """A `git diff` / `git format-patch` text -> one FileChange per file."""
    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        raise DiffError(f"not a unified diff: {exc}") from exc
    if not patch and text.strip():
        raise DiffError("not a unified diff: no file headers (`--- a/...` / `+++ b/...`) found")
    return [_from_patched(pf) for pf in patch]


def from_api_file(f: ApiFile) -> FileChange:
    """One entry of GET /pulls/{n}/files. Its `patch` holds hunks only, so headers are added before parsing.
    A patch that does not parse raises DiffError naming the file (the caller reports that file and goes on)."""
    status = {"copied": "added", "changed": "modified", "unchanged": "modified"}.get(f.status, f.status)
    if f.patch is None:
        return FileChange(path=f.filename, status=status, old_path=f.previous_filename, patch_missing=True)
    # The headers name a placeholder: the real names are known already, and a name holding a newline, a tab or
    # a `+++` must not become diff syntax.
    old = DEV_NULL if status == "added" else "a/file"
    new = DEV_NULL if status == "removed" else "b/file"
    text = f"--- {old}\n+++ {new}\n{f.patch}\n"
    try:
        patched = PatchSet(text)
    except (UnidiffParseError, ValueError) as exc:
        raise DiffError(f"{f.filename}: the API's patch does not parse: {exc}", f.filename) from exc
    if len(patched) != 1:
        raise DiffError(f"{f.filename}: the API's patch does not parse as one file", f.filename)
    change = _from_patched(patched[0], status=status, path=f.filename)
    return FileChange(path=f.filename, status=status, old_path=f.previous_filename, added=change.added,
                      hunks=change.hunks, patched=change.patched)


def from_api_files(files: Iterable[ApiFile]) -> list[FileChange | DiffError]:
    """One FileChange per entry, or the DiffError that entry raised: one bad patch never hides the others."""
    out: list[FileChange | DiffError] = []
    for f in files:
        try:
            out.append(from_api_file(f))
        except DiffError as exc:
            out.append(exc)
    return out


def from_texts(path: str, old: str | None, new: str, *, status: str = "modified",
               old_path: str | None = None) -> FileChange:
    """The change between two whole texts: for files whose patch the API left out (too large)."""
    a, b = git_lines(old or ""), git_lines(new)
    # placeholder names in the headers, as in from_api_file: the real ones are known
    lines = list(difflib.unified_diff(a, b, "a/file" if old is not None else DEV_NULL, "b/file", n=3))
    text = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
    if not text:
        return FileChange(path=path, status=status, old_path=old_path)
    change = _from_patched(PatchSet(text)[0], status=status, path=path)
    return FileChange(path=path, status=status, old_path=old_path, added=change.added, hunks=change.hunks,
                      patched=change.patched)


def apply(old: str, change: FileChange) -> str:
    """The new text of a file: ``change``'s hunks applied to ``old``. Context and removed lines must match."""
    pf = change.patched
    if pf is None:
        raise DiffError(f"{change.path}: no hunks to apply")
    src = git_lines(old)
    out: list[str] = []
    pos = 0  # 0-based index of the next unconsumed line of ``src``
    for hunk in pf:
        start = max(hunk.source_start - 1, 0) if hunk.source_length else hunk.source_start
        if start < pos or start > len(src):
            raise DiffError(f"{change.path}: hunk at line {hunk.source_start} does not apply (file has {len(src)} lines)")
        out.extend(src[pos:start])
        pos = start
        lines = list(hunk)
        for i, line in enumerate(lines):
            no_eol = i + 1 < len(lines) and lines[i + 1].line_type == "\\"
            value = line.value[:-1] if no_eol and line.value.endswith("\n") else line.value
            if line.is_added:
                out.append(value)
            elif line.is_context or line.is_removed:
                have = src[pos] if pos < len(src) else None
                if have is None or have.rstrip("\r\n") != line.value.rstrip("\r\n"):
                    raise DiffError(f"{change.path}:{pos + 1}: patch does not apply: expected {line.value.rstrip()!r},"
                                    f" found {(have or '<end of file>').rstrip()!r}")
                if line.is_context:
                    out.append(have)
                pos += 1
    out.extend(src[pos:])
    return "".join(out)


_INDEX = re.compile(r"^index ([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})\b")


def blob_ids(change: FileChange) -> tuple[str, str] | None:
    """The (old, new) blob ids from the patch's `index OLD..NEW` header line (git diff and format-patch write
    one, abbreviated to 7 digits or more), or None."""
    if change.patched is None:
        return None
    for line in change.patched.patch_info or ():
        if m := _INDEX.match(line):
            return m.group(1), m.group(2)
    return None


def git_blob_id(data: bytes) -> str:
    """What git names a file's content: sha1 of ``blob <size>\\0<content>``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def holds_new_side(data: bytes, change: FileChange) -> bool:
    """Whether a file's content is already the patch's new side, so the patch must not be applied to it again.

    A patch that appends code still applies to the patched file (its context lines are there too), so trying it
    first would apply it twice. Instead: git's blob ids in the `index` line say it exactly when they match; else
    (no index line, or line endings converted on checkout) every added and context line must stand at its
    new-side line number, i.e. the patch's post-image is there. That is the reverse patch applying."""
    ids = blob_ids(change)
    if ids is not None:
        blob = git_blob_id(data)
        if blob.startswith(ids[1]):
            return True
        if blob.startswith(ids[0]):
            return False
    pf = change.patched
    if pf is None or not any(hunk.target_length for hunk in pf):
        return False  # nothing on the new side to compare with (a deletion only): the patch says nothing
    try:
        lines = [line.removesuffix("\n").rstrip("\r") for line in git_lines(data.decode("utf-8"))]
    except UnicodeDecodeError:
        return False
    return all(
        # unidiff gives every added and context line a target_line_no; the None check only narrows the type
        ln.target_line_no is not None
        and 0 < ln.target_line_no <= len(lines)
        and lines[ln.target_line_no - 1] == ln.value.rstrip("\r\n")
        for hunk in pf for ln in hunk if ln.is_added or ln.is_context
    )
