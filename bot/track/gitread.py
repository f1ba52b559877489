"""Read a git repository as data: commits, trees and blobs, without a checkout.

Few processes: one ``git log --raw`` for a whole history, one ``git ls-tree`` per tree, and one
``git cat-file --batch`` streaming every blob needed.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ZERO = "0" * 40


class GitError(RuntimeError):
    """A git command failed; the message has git's own explanation."""


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, T (renames are reported as D + A: --no-renames)
    path: str
    blob: str  # the new blob id; ZERO for a deletion
    mode: str = "100644"  # the new mode: 120000 is a symlink, 160000 a submodule

    @property
    def is_file(self) -> bool:
        return self.status != "D" and self.blob != ZERO and self.mode not in ("120000", "160000")


@dataclass(frozen=True)
class Commit:
    sha: str
    time: int  # committer date, seconds since the epoch
    subject: str
    changes: tuple[Change, ...] = field(default=())
    parents: tuple[str, ...] = ()


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input, capture_output=True, check=False
    )
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args)}: {msg}")
    return proc.stdout


def rev_parse(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").decode().strip()


def commit_info(repo: Path, rev: str) -> Commit:
    out = git(repo, "show", "-s", "--format=%H%x00%ct%x00%s", rev_parse(repo, rev)).decode("utf-8", "replace")
    sha, ts, subject = out.rstrip("\n").split("\0", 2)
    return Commit(sha=sha, time=int(ts), subject=subject)


def default_branch(repo: Path) -> str:
    """origin's HEAD when known, else the current branch (a bare mirror's HEAD names its default branch)."""
    for args in (("symbolic-ref", "--short", "refs/remotes/origin/HEAD"), ("symbolic-ref", "--short", "HEAD")):
        try:
            return git(repo, *args).decode().strip()
        except GitError:
            continue
    return "HEAD"


def ls_tree(repo: Path, rev: str) -> dict[str, str]:
    """path -> blob id of every file in the tree of ``rev`` (submodules and symlinks left out)."""
    out = git(repo, "ls-tree", "-r", "-z", "--full-tree", rev_parse(repo, rev))
    files: dict[str, str] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split(b" ")
        if kind == b"blob" and mode != b"120000":
            files[path.decode("utf-8", "surrogateescape")] = sha.decode()
    return files


def first_parent_commits(repo: Path, base: str, tip: str) -> list[Commit]:
    """Commits after ``base`` up to ``tip`` on tip's first-parent line, oldest first, each with its diff
    against its first parent (merges included: --first-parent diffs a merge against its first parent)."""
    out = git(
        repo, "log", "-z", "--first-parent", "--reverse", "--raw", "--no-abbrev", "--no-renames",
        "--format=commit %H %ct %P%n%s", f"{rev_parse(repo, base)}..{rev_parse(repo, tip)}", "--",
    )
    return parse_raw_log(out)


def parse_raw_log(out: bytes) -> list[Commit]:
    commits: list[Commit] = []
    header: tuple[str, int, str, tuple[str, ...]] | None = None
    changes: list[Change] = []
    tokens = iter(out.split(b"\0"))
    for token in tokens:
        text = token.lstrip(b"\n")
        if not text:
            continue
        if text.startswith(b":"):
            # ":old_mode new_mode old_sha new_sha status" then the path as the next token
            _, new_mode, _, new_sha, status = text[1:].split(b" ")
            path = next(tokens).decode("utf-8", "surrogateescape")
            changes.append(
                Change(status=status.decode()[:1], path=path, blob=new_sha.decode(), mode=new_mode.decode())
            )
            continue
        if header is not None:
            commits.append(_commit(header, changes))
        first, _, subject = text.decode("utf-8", "replace").partition("\n")
        _, sha, ts, *parents = first.split()
        header, changes = (sha, int(ts), subject, tuple(parents)), []
    if header is not None:
        commits.append(_commit(header, changes))
    return commits


def _commit(header: tuple[str, int, str, tuple[str, ...]], changes: list[Change]) -> Commit:
    sha, ts, subject, parents = header
    return Commit(sha=sha, time=ts, subject=subject, changes=tuple(changes), parents=parents)


def read_blobs(repo: Path, shas: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    """(sha, content) for each blob, in order, from one ``git cat-file --batch`` process.

    A thread feeds the ids while this generator reads the answers, so neither pipe fills up and blocks.
    """
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return
    proc = subprocess.Popen(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        try:
            for sha in wanted:
                proc.stdin.write(sha.encode() + b"\n")  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass  # git died; the reader reports why

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for sha in wanted:
            header = proc.stdout.readline()
            parts = header.split()
            if len(parts) != 3:
                err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
                raise GitError(f"git cat-file --batch: {sha}: {header.decode().strip() or err or 'no answer'}")
            size = int(parts[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after each object
            yield parts[0].decode(), data
    finally:
        writer.join(timeout=5)
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()  # stopped early (error or the caller broke off): no one reads the rest
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
