"""The one file walk, safe read and project root that every verb uses (check, fix, status).

Files named on the command line are taken as given; folders are walked in a fixed order, skipping VCS,
virtualenv and build folders. Only regular files are read (a FIFO named ``x.py`` would block forever,
a link to ``/dev/zero`` never ends), and at most ``max_bytes`` of them. A folder that cannot be listed is
reported, never skipped silently. Nothing here decodes, parses or runs what it reads.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_BYTES = 2 * 1024 * 1024
SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", ".tox", "build", "dist"})
ROOT_MARKERS = (".git", "rules.yaml", ".pg-bot.yaml", "setup.py", "pyproject.toml")


class SourceError(Exception):
    """This path cannot be read as a source file; the message says why (without the path)."""


@dataclass(frozen=True)
class SourcePath:
    """One entry of the walk: a file to read, or (``problem`` set) a folder the walk could not list."""

    path: Path
    problem: str | None = None

    def read(self, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
        """The file's bytes (see read_source); raises SourceError for a folder that could not be listed."""
        if self.problem is not None:
            raise SourceError(self.problem)
        return read_source(self.path, max_bytes)


def iter_python_files(paths: Iterable[Path | SourcePath]) -> Iterator[SourcePath]:
    """Files as given, folders walked (sorted; VCS, virtualenv and build folders and dot-folders skipped) for
    ``*.py``. Entries already walked pass through unchanged, so a caller can walk once and count."""
    for path in paths:
        if isinstance(path, SourcePath):
            yield path
        elif path.is_dir():
            yield from _walk(path)
        else:
            yield SourcePath(path)


def _walk(top: Path) -> Iterator[SourcePath]:
    failed: list[OSError] = []  # os.walk reports a folder it cannot list here, just before moving on
    for folder, dirs, files in os.walk(top, onerror=failed.append):
        yield from _unlisted(failed)
        # Links to folders are not followed (os.walk's default): no cycles, no walking out of the tree.
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                yield SourcePath(Path(folder) / name)
    yield from _unlisted(failed)


def _unlisted(failed: list[OSError]) -> Iterator[SourcePath]:
    while failed:
        exc = failed.pop(0)
        yield SourcePath(Path(os.fsdecode(exc.filename)), f"cannot list folder: {exc.strerror or exc}")


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
LIMIT_HINT = "max_file_bytes in rules.yaml"


def _check(st: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "an unknown kind of file")
        raise SourceError(f"not a regular file ({kind}); not read")
    if st.st_size > max_bytes:
        raise SourceError(f"too large: {st.st_size} bytes, the limit is {max_bytes} ({LIMIT_HINT}); not read")


def read_source(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a regular file (a symlink counts when it leads to one) of at most ``max_bytes``.

    Raises SourceError otherwise. The type is checked before opening (opening a device can have effects)
    and again on the open file (the path may have been swapped in between); a file that grows past the
    limit while being read is refused too."""
    try:
        _check(os.stat(path), max_bytes)
        # O_NONBLOCK: should a FIFO be swapped in after the check, opening it must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from exc
    with open(fd, "rb", closefd=True) as file:
        try:
            st = os.fstat(file.fileno())
            _check(st, max_bytes)
            # Ask for the size stat gave (asking for max_bytes would allocate that much for every file); a file
            # that grew since is read on, up to the limit.
            data = file.read(st.st_size + 1)
            if len(data) > st.st_size:
                data += file.read(max_bytes + 1 - len(data))
        except OSError as exc:
            raise SourceError(f"cannot read: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise SourceError(f"too large: more than {max_bytes} bytes ({LIMIT_HINT}); not read")
    return data


# ---------------------------------------------------------------- project root and display paths

_ROOTS: dict[Path, Path | None] = {}


def project_root(file: Path) -> Path | None:
    """The nearest folder at or above the file's folder holding a .git, rules.yaml, .pg-bot.yaml, setup.py or
    pyproject.toml; None when there is none."""
    return _root_of(file.parent.resolve())


def _root_of(folder: Path) -> Path | None:
    if folder not in _ROOTS:
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            _ROOTS[folder] = folder
        else:
            _ROOTS[folder] = None if folder.parent == folder else _root_of(folder.parent)
    return _ROOTS[folder]


def project_reader(file: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[Path, Callable[[str], str | None]] | None:
    """The file's project root (or package base) and a reader of '/'-separated paths below it, for the files
    an analysis reads beside the one it checks (bot.analyze.elsewhere): read like any other (regular files,
    at most ``max_bytes``), decoded, never run; None for a path that leaves the root or cannot be read."""
    root = project_root(file) or package_base(file)
    if root is None:
        return None

    def read(path: str) -> str | None:
        if path.startswith("/") or ".." in path.split("/"):
            return None
        try:
            return read_source(root / path, max_bytes).decode("utf-8", "replace")
        except SourceError:
            return None

    return root, read


def package_base(file: Path) -> Path | None:
    """Without a project marker: the folder above the outermost package holding the file (the folders with an
    `__init__.py` going up), so `deepspeed/moe/x.py` is named the same from any current folder."""
    folder = file.parent.resolve()
    if not (folder / "__init__.py").is_file():
        return None
    while folder.parent != folder and (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder.parent


def project_relative(file: Path, fallback: Path | None = None) -> str:
    """The file's '/'-separated path from its project root, which rules.yaml's globs are written against, so
    results never depend on the current folder. Without a project root: the path from the folder above the
    file's outermost package; else from ``fallback`` when the file is below it, else the path as given. A linked file keeps its own name (only folders are resolved)."""
    absolute = file.parent.resolve() / file.name
    root = project_root(file) or package_base(file)
    for base in (root, fallback.resolve() if fallback is not None else None):
        if base is not None:
            try:
                return absolute.relative_to(base).as_posix()
            except ValueError:
                continue
    return file.as_posix()


def display_path(file: Path, relative_to: Path | None = None) -> str:
    """How a file is named in output: from ``relative_to`` (usually the current folder) when below it."""
    if relative_to is not None:
        if os.sep != "/":  # pathlib knows each system's rules (case, drives)
            try:
                return (_resolved(str(file.parent)) / file.name).relative_to(_resolved(str(relative_to))).as_posix()
            except ValueError:
                return file.as_posix()
        # Plain strings: every file of a run asks, twice (pathlib's relative_to, raising for each file outside
        # the folder, was a twentieth of a whole-package check).
        folder, name = os.path.split(os.fspath(file))
        below, base = _real(folder), _real(os.fspath(relative_to))
        if below == base:
            return name
        prefix = base if base.endswith("/") else f"{base}/"
        if below.startswith(prefix):
            return f"{below[len(prefix):]}/{name}"
    return file.as_posix()


@functools.lru_cache(maxsize=4096)
def _real(folder: str) -> str:
    """A folder resolved once per run: every file in it asks (two realpath walks per file were a tenth of a
    whole-package check)."""
    return os.path.realpath(folder)


@functools.lru_cache(maxsize=4096)
def _resolved(folder: str) -> Path:
    return Path(_real(folder))
