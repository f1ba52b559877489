"""`pg-bot review --diff --source --dry-run` on the bundled example PR, with the real analyzer and fixer: the
README's command works, and what it prints is exactly what an online run posts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_github import FakeGitHub

from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "pr"
DRY_RUN = ["review", "--diff", "examples/pr/change.patch", "--source", "examples/pr/base", "--dry-run"]


def test_readme_dry_run_command_prints_the_review() -> None:
    proc = subprocess.run([sys.executable, "-m", "bot.cli", *DRY_RUN], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr  # findings on added lines
    out = proc.stdout
    assert "4 inline comments" in out  # and a medium-confidence note (the unguarded `ep_group`) in the summary
    assert out.count("```suggestion") == 4
    assert "--- inline comment: deepspeed/moe/expert_reduce.py line 25-26 ---" in out  # the two-line guard
    for code in ("PG101", "PG103", "PG104"):
        assert f"<!-- pg-bot:finding {code} " in out
    assert "<!-- pg-bot:finding PG105 " not in out and "- `deepspeed/moe/expert_reduce.py:32` **PG105**" in out
    assert "if pg_utils.is_parallel(self.mp_group):" in out and "if pg_utils.is_parallel(ep_group):" in out
    assert "<!-- pg-bot:summary -->" in out and "**1** pre-existing" in out and "Skipped: 1 non-Python" in out
    assert proc.stderr == ""
    readme = (ROOT / "README.md").read_text()
    assert "pg-bot " + " ".join(DRY_RUN) in readme


def test_dry_run_matches_what_the_online_run_posts(fake_github: FakeGitHub, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*DRY_RUN, "--format", "json"]) == 1
    planned = json.loads(capsys.readouterr().out)
    head = tmp_path / "head"
    shutil.copytree(EXAMPLE / "base", head)
    subprocess.run(["git", "apply", str(EXAMPLE / "change.patch")], cwd=head, check=True)

    def tree(root: Path) -> dict[str, str]:
        return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}

    fake_github.add_pull("o/r", number=1, base=tree(EXAMPLE / "base"), head=tree(head))
    assert main(["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url]) == 1
    (posted,) = fake_github.requests("POST", r"/reviews$")
    assert posted.body["comments"] == planned["review"]["comments"]
    (summary,) = fake_github.pull("o/r", 1).comments
    sha = fake_github.pull("o/r", 1).head_sha
    assert summary["body"].replace(sha[:7], "HEAD") == planned["summary"].replace(
        planned["review"]["commit_id"][:7], "HEAD")


def test_dry_run_on_an_already_patched_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The example appends code, so its context lines match the patched file too: applying it there again
    # doubled the appended code (5 phantom pre-existing findings). The after-tree review is the same review.
    head = tmp_path / "head"
    shutil.copytree(EXAMPLE / "base", head)
    subprocess.run(["git", "apply", str(EXAMPLE / "change.patch")], cwd=head, check=True)
    reviews = []
    for tree in (EXAMPLE / "base", head):
        assert main(["review", "--diff", str(EXAMPLE / "change.patch"), "--source", str(tree), "--dry-run",
                     "--format", "json"]) == 1
        reviews.append(json.loads(capsys.readouterr().out))
    assert reviews[0] == reviews[1]
    assert len(reviews[1]["review"]["comments"]) == 4 and "**1** pre-existing" in reviews[1]["summary"]


APPENDED = """import deepspeed.comm as dist


def reduce(t, group=None):
    if group is not None and dist.get_world_size(group=group) > 1:
        dist.all_reduce(t, group=group)
    return t
"""
MORE = """

def gather(t, ep_group=None):
    if ep_group is not None:
        dist.all_reduce(t, group=ep_group)
    return t
"""


@pytest.mark.parametrize("index_line", [True, False], ids=["git-index-line", "no-index-line"])
@pytest.mark.parametrize("edit", ["append", "append-twice", "change-and-append"])
def test_the_after_tree_review_equals_the_before_tree_review(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            edit: str, index_line: bool) -> None:
    before = APPENDED
    after = {"append": APPENDED + MORE, "append-twice": APPENDED + MORE + MORE.replace("gather", "gather2"),
             "change-and-append": APPENDED.replace("    return t\n", "    t = t + 1\n    return t + 0\n") + MORE}[edit]
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                              check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (repo / "pkg" / "m.py").write_text(before)
    git("add", "-A")
    git("commit", "-qm", "base")
    (repo / "pkg" / "m.py").write_text(after)
    patch = git("diff")
    if not index_line:
        patch = "".join(line for line in patch.splitlines(keepends=True) if not line.startswith("index "))
    (tmp_path / "change.patch").write_text(patch)
    outputs = []
    for content in (before, after):
        (repo / "pkg" / "m.py").write_text(content)
        main(["review", "--diff", str(tmp_path / "change.patch"), "--source", str(repo), "--dry-run", "--format", "json"])
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert "could not be analysed" not in outputs[1]["summary"]
    lines = {"append": [11], "append-twice": [11, 17], "change-and-append": [12]}[edit]
    assert [c["line"] for c in outputs[1]["review"]["comments"]] == lines


def test_dry_run_reports_a_patch_that_does_not_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    (other / "deepspeed" / "moe").mkdir(parents=True)
    (other / "deepspeed" / "moe" / "expert_reduce.py").write_text("something else entirely\n")
    assert main(["review", "--diff", str(EXAMPLE / "change.patch"), "--source", str(other), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "No findings in the 0 Python file(s) analysed; 2 could not be analysed" in out
    assert "- `deepspeed/moe/expert_reduce.py`: hunk at line 15 does not apply" in out
    assert "- `deepspeed/runtime/grad_sync.py`: " in out and "is not in --source" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["review"], "give --repo OWNER/NAME --pr N"),
        (["review", "--diff", "examples/pr/change.patch", "--source", "examples/pr/base"], "add --dry-run"),
        (["review", "--diff", "examples/pr/change.patch", "--dry-run"], "needs --source"),
        (["review", "--diff", "missing.patch", "--source", "examples/pr/base", "--dry-run"], "cannot read"),
        (["review", "--diff", "README.md", "--source", "examples/pr/base", "--dry-run"], "not a unified diff"),
    ],
)
def test_usage_errors_are_clear(argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_fixer_crash_costs_the_suggestion_not_the_review(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import bot.commands.review as review_cmd

    def broken(*_: object) -> None:
        raise RuntimeError("fixer bug")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(review_cmd, "suggestion_for", broken)
    assert main(DRY_RUN) == 1
    captured = capsys.readouterr()
    assert "4 inline comments" in captured.out and "```suggestion" not in captured.out
    assert captured.out.count("No automatic rewrite for this one") == 4
    assert "fixer bug" in captured.err


def test_an_unexpected_exception_exits_4_never_1(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from bot.commands import review

    def boom(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(review, "plan_review", boom)
    monkeypatch.chdir(ROOT)
    assert main(DRY_RUN) == 4
    err = capsys.readouterr().err
    assert "KeyError: 'a bug'" in err and "internal error in `review` (exit 4)" in err


def test_offline_review_numbers_lines_as_git_after_a_lone_cr(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    base = "import deepspeed.comm as dist\n\n\ndef f(t, g=None):\n    x = 1\r    y = 2\n    dist.all_reduce(t, group=g)\n"
    head = base.replace("    dist.all_reduce", "    if g is not None and dist.get_world_size(group=g) > 1:\n"
                                              "        dist.all_reduce")
    tree = tmp_path / "tree"
    tree.mkdir()

    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.com",
                               *args], check=True, capture_output=True).stdout

    git("init", "-q")
    (tree / "m.py").write_bytes(base.encode())
    git("add", "m.py")
    git("commit", "-qm", "base")
    (tree / "m.py").write_bytes(head.encode())
    patch = git("diff")  # git's own numbering
    (tree / "m.py").write_bytes(base.encode())
    (tmp_path / "change.patch").write_bytes(patch)
    assert main(["review", "--diff", str(tmp_path / "change.patch"), "--source", str(tree), "--dry-run",
                 "--format", "json"]) == 1
    (comment,) = json.loads(capsys.readouterr().out)["review"]["comments"]
    guard = next(i for i, text in enumerate(head.split("\n"), 1) if "get_world_size" in text)
    assert comment["line"] == guard and comment["path"] == "m.py"


def test_each_file_is_parsed_once_for_all_its_suggestions(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import libcst

    parsed: list[str] = []
    real = libcst.parse_module

    def counting(text: str, *args: object, **kwargs: object) -> libcst.Module:
        parsed.append(text)
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(libcst, "parse_module", counting)
    monkeypatch.chdir(ROOT)
    assert main(DRY_RUN) == 1
    assert capsys.readouterr().out.count("```suggestion") == 4  # 3 of them in expert_reduce.py
    assert len(parsed) == len(set(parsed)) == 2


def test_the_summarys_fix_commands_fix_every_finding_they_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import re
    import shlex

    from bot.analyze import analyze_source
    from bot.config import load

    head = tmp_path / "head"
    shutil.copytree(EXAMPLE / "base", head)
    subprocess.run(["git", "apply", str(EXAMPLE / "change.patch")], cwd=head, check=True)
    assert main(["review", "--diff", str(EXAMPLE / "change.patch"), "--source", str(head), "--dry-run",
                 "--format", "json"]) == 1
    text = json.loads(capsys.readouterr().out)["summary"]
    block = re.search(r"```bash\n(.*?)\n```", text, re.DOTALL)
    assert block is not None
    commands = [shlex.split(line.split("  # ")[0]) for line in block.group(1).splitlines()]
    assert [c[:3] for c in commands] == [["pg-bot", "fix", "--write"], ["pg-bot", "fix", "--write"]]
    assert "--unsafe-fixes" in commands[1]
    monkeypatch.chdir(head)
    for argv in commands:
        assert main(argv[1:]) == 0
    config = load()
    left = [f for path in ("deepspeed/moe/expert_reduce.py", "deepspeed/runtime/grad_sync.py")
            for f in analyze_source(path, (head / path).read_text(), config).findings]
    assert left == []  # each finding was listed as fixable, and each is fixed (the pre-existing one too)
    for path in ("deepspeed/moe/expert_reduce.py", "deepspeed/runtime/grad_sync.py"):
        assert "from deepspeed.comm import pg_utils" in (head / path).read_text()
