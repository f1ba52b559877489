"""Git plumbing on a real repository: odd paths, symlinks, big blobs through one cat-file process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_track_history import Repo

from bot.track import gitread
from bot.track.cache import blob_id

ODD = ["a b.py", "ünï/cödé.py", "commit 1234 5678.py", "tab\there.py"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    r = Repo(tmp_path_factory.mktemp("gitread") / "repo")
    r.commit("odd paths", {p: f"x = {i}\n" for i, p in enumerate(ODD)})
    os.symlink("a b.py", r.path / "link.py")
    r.git("add", "link.py")
    r.commit("big file and a symlink", {"big.py": "y = 1\n" * 400_000})
    r.commit("change one, delete one", {"a b.py": "x = 10\n", "tab\there.py": None})
    return r


def test_ls_tree_keeps_odd_paths_and_leaves_symlinks_out(repo: Repo) -> None:
    tree = gitread.ls_tree(repo.path, "HEAD")
    assert set(tree) == {"a b.py", "ünï/cödé.py", "commit 1234 5678.py", "big.py"}
    assert tree["a b.py"] == blob_id(b"x = 10\n")  # git's blob id, computed the same way


def test_raw_log_parses_each_change(repo: Repo) -> None:
    first = repo.git("rev-list", "--max-parents=0", "HEAD")
    commits = gitread.first_parent_commits(repo.path, first, "HEAD")
    assert [c.subject for c in commits] == ["big file and a symlink", "change one, delete one"]
    big, last = commits
    assert {(c.status, c.path, c.mode) for c in big.changes} == {("A", "big.py", "100644"), ("A", "link.py", "120000")}
    assert [c.is_file for c in big.changes if c.path == "link.py"] == [False]
    assert {(c.status, c.path) for c in last.changes} == {("M", "a b.py"), ("D", "tab\there.py")}
    assert last.parents == (big.sha,)
    assert all(not c.is_file for c in last.changes if c.status == "D")


def test_read_blobs_streams_many_and_big_blobs_in_order(repo: Repo) -> None:
    tree = gitread.ls_tree(repo.path, "HEAD~1")
    shas = [tree[p] for p in sorted(tree)] * 200  # repeats are read once
    got = dict(gitread.read_blobs(repo.path, shas))
    assert set(got) == set(tree.values())
    assert got[tree["big.py"]] == b"y = 1\n" * 400_000
    for path, sha in tree.items():
        expected = subprocess.run(["git", "-C", str(repo.path), "cat-file", "blob", sha], capture_output=True,
                                  check=True).stdout
        assert got[sha] == expected, path


def test_missing_blob_and_bad_rev_are_clear_errors(repo: Repo) -> None:
    with pytest.raises(gitread.GitError, match="0123456789012345678901234567890123456789"):
        list(gitread.read_blobs(repo.path, ["0123456789012345678901234567890123456789"]))
    with pytest.raises(gitread.GitError, match="nope"):
        gitread.rev_parse(repo.path, "nope")
    with pytest.raises(gitread.GitError):
        gitread.ls_tree(Path("/nonexistent-dir"), "HEAD")


def test_default_branch_of_a_clone_is_origins_head(repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "-b", "topic"], check=True)
    assert gitread.default_branch(clone) == "origin/main"
    assert gitread.default_branch(repo.path) == "main"
