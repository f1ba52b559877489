"""bot.diff: changed lines per file from git patches and from the PR files API; applying a patch."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from bot.diff import (
    DiffError,
    LineMap,
    apply,
    blob_ids,
    from_api_file,
    from_api_files,
    from_texts,
    git_blob_id,
    git_lines,
    holds_new_side,
    parse_patch,
)
from bot.github import PullFile


def ApiFile(filename: str, status: str, patch: str | None, previous_filename: str | None = None) -> PullFile:
    """An entry of GET /pulls/{n}/files, as bot.github hands it to bot.diff."""
    return PullFile(filename=filename, status=status, previous_filename=previous_filename, patch=patch, sha=None)


def git_patch(tmp_path: Path, before: dict[str, bytes], after: dict[str, bytes]) -> str:
    """A real `git diff` between two trees (renames detected), so the parser is tested on git's own output."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    for tree in (before, after):
        for p in repo.iterdir():
            if p.name != ".git":
                p.unlink()
        for name, data in tree.items():
            (repo / name).write_bytes(data)
        git("add", "-A")
        git("commit", "-q", "--allow-empty", "-m", "c")
    return git("diff", "-M", "HEAD~1", "HEAD")


BEFORE = {
    "a.py": b"".join(b"line %d\n" % i for i in range(1, 21)),
    "old_name.py": b"".join(b"keep %d\n" % i for i in range(1, 11)),
    "gone.py": b"x = 1\n",
    "img.png": b"\x89PNG\x00\x01",
}
AFTER = {
    "a.py": BEFORE["a.py"].replace(b"line 3\n", b"line 3\nnew A\n").replace(b"line 18\n", b"changed 18\n"),
    "new_name.py": BEFORE["old_name.py"].replace(b"keep 5\n", b"kept 5\n"),
    "img.png": b"\x89PNG\x00\x02",
    "added.py": b"one\ntwo",
    "notes.md": b"# hi\n",
}


def test_git_patch_added_lines_renames_deletions_binary(tmp_path: Path) -> None:
    changes = {c.path: c for c in parse_patch(git_patch(tmp_path, BEFORE, AFTER))}
    assert set(changes) == {"a.py", "new_name.py", "gone.py", "img.png", "added.py", "notes.md"}
    assert changes["a.py"].status == "modified" and changes["a.py"].added == {4, 19}
    assert changes["new_name.py"].status == "renamed" and changes["new_name.py"].old_path == "old_name.py"
    assert changes["new_name.py"].added == {5}
    assert changes["gone.py"].status == "removed" and changes["gone.py"].added == frozenset()
    assert changes["img.png"].binary
    assert changes["added.py"].status == "added" and changes["added.py"].added == {1, 2}
    assert changes["notes.md"].is_python is False and changes["a.py"].is_python


def test_commentable_ranges_are_within_one_hunk(tmp_path: Path) -> None:
    a = next(c for c in parse_patch(git_patch(tmp_path, BEFORE, AFTER)) if c.path == "a.py")
    assert a.hunks == ((1, 7), (16, 21))
    assert a.commentable(4, 4) and a.commentable(2, 6) and a.commentable(19, 21)
    assert not a.commentable(10, 10)  # between hunks
    assert not a.commentable(6, 17)  # spans two hunks


def test_apply_reproduces_the_new_tree(tmp_path: Path) -> None:
    for change in parse_patch(git_patch(tmp_path, BEFORE, AFTER)):
        if change.binary or change.status == "removed":
            continue
        old = BEFORE.get(change.old_path or change.path, b"").decode()
        assert apply(old, change) == AFTER[change.path].decode(), change.path


def test_apply_refuses_a_patch_for_another_file(tmp_path: Path) -> None:
    change = next(c for c in parse_patch(git_patch(tmp_path, BEFORE, AFTER)) if c.path == "a.py")
    with pytest.raises(DiffError, match=r"a\.py:\d+: patch does not apply"):
        apply("something else\n" * 20, change)


def test_api_file_entries() -> None:
    mod = from_api_file(ApiFile("p/m.py", "modified", "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c"))
    assert mod.added == {2, 3} and mod.hunks == ((1, 4),)
    assert apply("a\nb\nc\n", mod) == "a\nB\nC\nc\n"
    new = from_api_file(ApiFile("n.py", "added", "@@ -0,0 +1,2 @@\n+x\n+y"))
    assert new.status == "added" and new.added == {1, 2}
    ren = from_api_file(ApiFile("to.py", "renamed", None, previous_filename="from.py"))
    assert ren.patch_missing and ren.old_path == "from.py" and ren.added == frozenset()
    big = from_api_file(ApiFile("big.py", "modified", None))
    assert big.patch_missing


def test_from_texts_for_files_the_api_would_not_diff() -> None:
    old = "".join(f"v{i}\n" for i in range(1000))
    new = old.replace("v500\n", "v500\nadded\n") + "tail"
    change = from_texts("big.py", old, new)
    assert change.added == {502, 1002}
    assert apply(old, change) == new
    assert from_texts("same.py", "x\n", "x\n").added == frozenset()
    assert from_texts("fresh.py", None, "a\nb\n", status="added").added == {1, 2}


def test_garbage_is_a_clear_error() -> None:
    with pytest.raises(DiffError, match="not a unified diff"):
        parse_patch("this is not a patch\n")
    with pytest.raises(DiffError, match=r"m\.py"):
        from_api_file(ApiFile("m.py", "modified", "@@ -1,3 +1,4 @@\n a"))


# ---------------------------------------------------------------- git's line numbering; hostile names


def test_lines_are_counted_as_git_counts_them() -> None:
    text = "a\rb\nc\x0cd\ne\x85f\r\ng"  # a lone CR, a form feed, NEL: none of them ends a line for git
    assert git_lines(text) == ["a\rb\n", "c\x0cd\n", "e\x85f\r\n", "g"]
    old = text
    new = text.replace("c\x0cd\n", "c\x0cd\nadded\n")
    change = from_texts("m.py", old, new)
    assert change.added == {3}  # str.splitlines would say 4 (it splits at \r and \x85 too)
    assert apply(old, change) == new


def test_line_map_from_pythons_lines_to_gits() -> None:
    source = "x = 1\r    y = 2\nif a:\r\n    b()\rc()\n"  # Python: 5 lines; git: 3
    lines = LineMap(source)
    assert not lines.identical and lines.python_line_count == 5
    assert [lines.to_git(n) for n in range(1, 6)] == [1, 1, 2, 3, 3]
    assert [lines.python_line(n) for n in range(1, 6)] == ["x = 1", "    y = 2", "if a:", "    b()", "c()"]
    assert lines.git_span(4, 4) == ([], ["c()"]) and lines.git_span(2, 3) == (["x = 1"], [])
    crlf = LineMap("a\r\nb\r\n")
    assert crlf.identical and crlf.to_git(2) == 2


def test_a_newline_or_diff_syntax_in_a_file_name_is_just_a_name() -> None:
    for name in ("a\nb.py", "x.py\n+++ b/y.py", "tab\there.py", "sp ace.py"):
        change = from_api_file(ApiFile(name, "modified", "@@ -1,2 +1,3 @@\n a\n+b\n c"))
        assert change.path == name and change.added == {2}


def test_one_bad_patch_is_reported_for_its_file_only() -> None:
    good, bad = ApiFile("g.py", "added", "@@ -0,0 +1 @@\n+x"), ApiFile("b.py", "modified", "@@ -1,3 +1,4 @@\n a")
    first, second = from_api_files([bad, good])
    assert isinstance(first, DiffError) and first.path == "b.py" and "b.py" in str(first)
    assert not isinstance(second, DiffError) and second.added == {1}


def test_the_new_side_is_recognised_where_the_patch_would_apply_again(tmp_path: Path) -> None:
    before = {"m.py": b"a = 1\nb = 2\nc = 3\n"}
    after = {"m.py": b"a = 1\nb = 2\nc = 3\nd = 4\n"}  # appended: the context matches both sides
    (change,) = parse_patch(git_patch(tmp_path, before, after))
    assert apply(after["m.py"].decode(), change) != after["m.py"].decode()  # what used to happen
    assert holds_new_side(after["m.py"], change) and not holds_new_side(before["m.py"], change)
    ids = blob_ids(change)
    assert ids is not None and git_blob_id(after["m.py"]).startswith(ids[1])
    assert subprocess.run(["git", "hash-object", "--stdin"], input=after["m.py"], capture_output=True,
                          check=True).stdout.decode().strip() == git_blob_id(after["m.py"])
    bare = dataclasses.replace(change, patched=parse_patch(
        "".join(line for line in git_patch(_mkdir(tmp_path / "2"), before, after).splitlines(keepends=True)
                if not line.startswith("index ")))[0].patched)
    assert blob_ids(bare) is None  # then the post-image decides
    assert holds_new_side(after["m.py"], bare) and not holds_new_side(before["m.py"], bare)
    assert not holds_new_side(b"\xff\xfe", bare)


def test_the_blob_ids_decide_where_the_post_image_cannot() -> None:
    # A line inserted early in a run of equal lines (git puts it last; other tools may not): the old file
    # shows the post-image at every new-side line number too. Only the blob ids can tell the two sides apart.
    before, after = b"a\n" + b"x\n" * 12, b"a\n" + b"x\n" * 13
    hunk = "@@ -2,3 +2,4 @@\n x\n x\n x\n+x\n"
    ids = f"index {git_blob_id(before)[:7]}..{git_blob_id(after)[:9]} 100644\n"
    header = "diff --git a/m.py b/m.py\n{}--- a/m.py\n+++ b/m.py\n"
    (bare,) = parse_patch(header.format("") + hunk)
    (change,) = parse_patch(header.format(ids) + hunk)
    assert blob_ids(bare) is None and holds_new_side(before, bare)  # ambiguous (then harmless: the same lines)
    assert not holds_new_side(before, change) and holds_new_side(after, change)
    assert apply(before.decode(), change) == after.decode()


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path
