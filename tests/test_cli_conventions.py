"""CLI conventions shared by every verb (docs/configuration.md): exit codes, --exit-zero, --output-file, the
closing line, --statistics, colour, the verb's usage on an unknown option, the GitHub token, lazy imports,
the dashboard's repository from the git remote, the cache's .gitignore."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_github import FakeGitHub
from test_ci_dispatch import event, open_pr
from test_track_history import Repo, module

from bot.cli import main

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
GUARDED = (
    "import deepspeed.comm as dist\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"  # PG101, fixed by `pg-bot fix`
    "        dist.all_reduce(t, group=g)\n"
    "    dist.all_reduce(t, group=g)\n"  # PG105, fixed only with --unsafe-fixes
    "def h(t, g=None):\n"
    "    if g is None or dist.get_world_size(g) == 1:\n"  # PG102 with `== 1`: unsafe (wrong for a non-member)
    "        return\n"
    "    dist.all_reduce(t, group=g)\n"
)
BROKEN = "import deepspeed.comm as dist\ndist.barrier(group=g\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(GUARDED)
    (tmp_path / "pkg" / "clean.py").write_text("x = 1\n")
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


# ---------------------------------------------------------------- lazy imports


HEAVY = {"matplotlib", "github", "libcst", "jsonschema"}


def imported(*argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `python -X importtime -m bot.cli ARGV`; the top-level packages it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "bot.cli", *argv], capture_output=True,
                          text=True, env=child_env(), cwd=ROOT, check=False, timeout=120)
    names = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return proc, names


def test_version_imports_no_verb() -> None:
    proc, names = imported("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("pg-bot ")
    assert "bot" in names  # the measurement works
    assert not names & HEAVY, names & HEAVY


@pytest.mark.parametrize("verb", ["check", "fix", "rule", "status", "history", "dashboard", "dispatch"])
def test_a_verbs_help_imports_only_what_that_verb_needs(verb: str) -> None:
    proc, names = imported(verb, "--help")
    assert proc.returncode == 0 and f"usage: pg-bot {verb}" in proc.stdout
    assert not names & HEAVY, names & HEAVY


def test_check_for_a_machine_never_loads_the_fixer(tmp_path: Path) -> None:
    """The fixer's planner only counts what is fixable for the text report's closing line."""
    (tmp_path / "mod.py").write_text(GUARDED)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "bot.cli", "check", str(tmp_path / "mod.py"),
                           "--format", "json"], capture_output=True, text=True, env=child_env(), cwd=ROOT,
                          check=False, timeout=120)
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert proc.returncode == 1 and json.loads(proc.stdout)["findings"]
    assert "bot.analyze" in modules  # the measurement works
    assert not {m for m in modules if m == "bot.fix" or m.startswith("bot.fix.")}, modules


# ---------------------------------------------------------------- usage errors


def test_an_unknown_option_prints_the_verbs_usage(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check", "pkg", "--bogus"])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith("usage: pg-bot check ") and "pg-bot check: error: unrecognized arguments: --bogus" in err


def test_an_unknown_option_of_a_dispatch_mode_prints_that_modes_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["dispatch", "check-inputs", "--repo=o/r", "--sha=" + "a" * 40, "--pr=1", "--tests=tests", "--bogus"])
    assert info.value.code == 2
    assert capsys.readouterr().err.startswith("usage: pg-bot dispatch check-inputs ")


# ---------------------------------------------------------------- check: exit codes, outputs


def test_a_file_that_cannot_be_parsed_fails_the_check(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pkg" / "broken.py").write_text(BROKEN)
    assert main(["check", "pkg/broken.py"]) == 1
    out = capsys.readouterr().out
    assert "pkg/broken.py:1:1: PG000 could not analyse" in out
    assert out.rstrip().endswith("Found 0 findings; 1 file that could not be analysed (PG000).")


def test_exit_zero(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pkg" / "broken.py").write_text(BROKEN)
    assert main(["check", "pkg", "--exit-zero"]) == 0
    assert "PG101" in capsys.readouterr().out  # the report is unchanged
    assert main(["check", "pkg", "--exit-zero", "--select", "PG999"]) == 2  # a usage error stays one


def fix_counts(*extra: str) -> int:
    """How many findings `pg-bot fix` says it would apply."""
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "fix", "pkg", *extra], capture_output=True, text=True,
                          env=child_env(), check=False)
    m = re.search(r"would fix (\d+) finding", proc.stderr)
    assert m, proc.stderr
    return int(m.group(1))


def test_closing_line_counts_what_fix_applies(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "pkg"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1].split()[0] for line in lines[:-1]] == ["PG101", "PG105", "PG102"]
    m = re.fullmatch(r"Found 3 findings \((\d+) fixable with `pg-bot fix`, (\d+) more with `--unsafe-fixes`\)\.",
                     lines[-1])
    assert m, lines[-1]
    safe, unsafe = int(m.group(1)), int(m.group(2))
    assert (safe, unsafe) == (fix_counts(), fix_counts("--unsafe-fixes") - fix_counts()) == (1, 2)


def test_no_closing_line_when_clean_or_for_machine_formats(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "pkg/clean.py"]) == 0
    assert capsys.readouterr().out == ""
    main(["check", "pkg", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["findings"]  # nothing after the document


def test_closing_line_for_stdin(tree: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "check", "-", "--stdin-filename", "x/y.py"],
                          input=GUARDED, capture_output=True, text=True, env=child_env(), check=False)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "Found 3 findings (1 fixable with `pg-bot fix`, 2 more with `--unsafe-fixes`)."


def test_check_leaves_quickly_with_all_its_output_written(tree: Path) -> None:
    """`check` skips the interpreter's teardown (bot.cli.entry): a large report through a pipe still arrives
    whole, with the exit code main() returned; other verbs exit as usual."""
    for i in range(300):
        (tree / "pkg" / f"m{i}.py").write_text(GUARDED)
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "check", "pkg", "--format", "json"], capture_output=True,
                          text=True, env=child_env(), check=False)
    assert proc.returncode == 1
    assert len(json.loads(proc.stdout)["findings"]) == 3 * 301
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "rule", "PG101"], capture_output=True, text=True,
                          env=child_env(), check=False)
    assert proc.returncode == 0 and "PG101" in proc.stdout


def test_statistics_prints_the_counts_only(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pkg" / "broken.py").write_text(BROKEN)
    assert main(["check", "pkg", "--statistics"]) == 1
    out = capsys.readouterr().out
    assert "pkg/mod.py" not in out and "Found" not in out
    assert re.search(r"^1  PG101  ", out, re.MULTILINE) and "could not be analysed" in out
    assert main(["check", "pkg", "--statistics", "--format", "json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert {r["code"]: r["count"] for r in rows} == {"PG101": 1, "PG102": 1, "PG105": 1, "PG000": 1}
    assert main(["check", "pkg", "--statistics", "--format", "sarif"]) == 2


@pytest.mark.parametrize("fmt", ["text", "sarif"])
def test_output_file(tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                     fmt: str) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # a file is never coloured
    target = tree / "reports" / "deep" / f"check.{fmt}"
    assert main(["check", "pkg", "--format", fmt, "--output-file", str(target)]) == 1
    assert capsys.readouterr().out == ""
    written = target.read_text(encoding="utf-8")
    assert not ANSI.search(written)
    if fmt == "sarif":
        assert len(json.loads(written)["runs"][0]["results"]) == 3
    else:
        assert written.startswith("pkg/mod.py:3:8: PG101 ") and written.rstrip().endswith("`--unsafe-fixes`).")


def test_output_file_that_cannot_be_written_is_a_usage_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "pkg", "--output-file", "pkg/mod.py/x.txt"]) == 2
    assert "cannot write --output-file" in capsys.readouterr().err


# ---------------------------------------------------------------- colour


class Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": "0"}, False, False),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),  # the user's "no" wins
        ({"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value counts
    ],
)
def test_when_to_colour(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], tty: bool, expected: bool) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from bot.commands import colour

    assert colour.wanted(Stream(tty)) is expected  # type: ignore[arg-type]


def test_coloured_report_is_the_plain_report_plus_styles(tree: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    main(["check", "pkg"])
    plain = capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")
    main(["check", "pkg"])
    coloured = capsys.readouterr().out
    assert "\x1b[1;31mPG101\x1b[0m" in coloured
    assert ANSI.sub("", coloured) == plain


def test_coloured_diff_is_the_plain_diff_plus_styles(tree: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    main(["fix", "pkg"])
    plain = capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")
    main(["fix", "pkg"])
    coloured = capsys.readouterr().out
    assert "\x1b[32m+" in coloured and "\x1b[31m-" in coloured
    assert ANSI.sub("", coloured) == plain


# ---------------------------------------------------------------- fix: --output-file, --exit-zero


def test_fix_check_writes_the_patch_to_the_output_file(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (tree / "pkg" / "mod.py").read_text()
    assert main(["fix", "--check", "pkg", "-o", "out/fix.patch"]) == 1
    assert capsys.readouterr().out == ""
    patch = (tree / "out" / "fix.patch").read_text()
    assert patch.startswith("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n") and "+    if pg_utils.is_parallel(g):" in patch
    assert (tree / "pkg" / "mod.py").read_text() == before
    assert main(["fix", "--check", "pkg", "--exit-zero"]) == 0


# ---------------------------------------------------------------- the GitHub token


@pytest.fixture
def no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def event_file(fake: FakeGitHub, tmp_path: Path) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event(fake, open_pr(fake), "labeled", "alice")))
    return path


def github_verbs(fake: FakeGitHub, tmp_path: Path) -> dict[str, list[str]]:
    return {
        "review": ["review", "--repo", "org/ds", "--pr", "1", "--api-url", fake.url, "--dry-run"],
        "status": ["status", "--source", str(tmp_path), "--no-cache", "--update-issue", "org/ds#7",
                   "--api-url", fake.url],
        "dispatch": ["dispatch", "--event", str(event_file(fake, tmp_path)), "--event-name",
                     "pull_request_target", "--api-url", fake.url, "--dry-run"],
    }


@pytest.mark.parametrize("verb", ["review", "status", "dispatch"])
def test_no_token_is_a_usage_error_before_any_request(fake_github: FakeGitHub, tmp_path: Path, no_token: None,
                                                      capsys: pytest.CaptureFixture[str], verb: str) -> None:
    fake_github.add_repo("org/ds")
    command = github_verbs(fake_github, tmp_path)[verb]
    fake_github.log.clear()  # what setting the scene asked of the fake does not count
    assert main(command) == 2
    assert "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN" in capsys.readouterr().err
    assert fake_github.requests() == []


@pytest.mark.parametrize("verb", ["review", "status", "dispatch"])
def test_gh_token_is_taken_when_github_token_is_not_set(fake_github: FakeGitHub, tmp_path: Path, no_token: None,
                                                        monkeypatch: pytest.MonkeyPatch, verb: str) -> None:
    fake_github.add_repo("org/ds")
    command = github_verbs(fake_github, tmp_path)[verb]  # opens pull request #1
    fake_github.add_issue("org/ds", number=7, body="tracking\n")
    monkeypatch.setenv("GH_TOKEN", "gh-t0ken")
    assert main(command) in (0, 1)  # the review finds what it finds
    assert {r.authorization for r in fake_github.requests()} == {"token gh-t0ken"}
    monkeypatch.setenv("GITHUB_TOKEN", "actions-t0ken")  # both set: GITHUB_TOKEN, as in a workflow
    fake_github.log.clear()
    main(command)
    assert {r.authorization for r in fake_github.requests()} == {"token actions-t0ken"}


def test_review_bad_repo_is_a_usage_error_not_a_github_failure(fake_github: FakeGitHub, no_token: None,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    assert main(["review", "--repo", "not-a-repo", "--pr", "1", "--api-url", fake_github.url]) == 2
    assert fake_github.requests() == []


def test_github_failures_exit_3(fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    fake_github.add_repo("org/ds")
    verbs = github_verbs(fake_github, tmp_path)
    fake_github.fail(401, times=1000, message="Bad credentials")  # not retried
    assert main([*verbs["review"], "--retries", "0"]) == 3
    assert main(verbs["status"]) == 3
    assert main(verbs["dispatch"]) == 3


# ---------------------------------------------------------------- dashboard: the repository from the remote


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/deepspeedai/DeepSpeed.git", "deepspeedai/DeepSpeed"),
        ("https://github.com/deepspeedai/DeepSpeed\n", "deepspeedai/DeepSpeed"),
        ("https://x-access-token:s3cret@github.com/o/n.git", "o/n"),
        ("git@github.com:deepspeedai/DeepSpeed.git", "deepspeedai/DeepSpeed"),
        ("ssh://git@github.com/o/n.git", "o/n"),
        ("ssh://git@ghe.example.com:2222/o/n", "o/n"),
        ("work-alias:o/n.git", "o/n"),
        ("/srv/git/o/n", None),
        ("../n", None),
        ("file:///o/n", None),
        ("https://github.com/o/n/tree/main", None),
    ],
)
def test_repo_from_remote(url: str, expected: str | None) -> None:
    from bot.commands.dashboard import repo_from_remote

    assert repo_from_remote(url) == expected


def dashboard(repo: Repo, out: Path) -> int:
    return main(["dashboard", "--out", str(out), "--repo-dir", str(repo.path), "--no-cache", "--last", "1"])


def test_dashboard_takes_the_repository_from_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    repo = Repo(tmp_path / "repo")
    repo.commit("a", {"deepspeed/moe/layer.py": module(1, 0)})
    assert dashboard(repo, tmp_path / "none") == 2
    assert "pass --repo OWNER/NAME" in capsys.readouterr().err
    repo.git("remote", "add", "origin", "https://x-access-token:s3cret@example.com/some/where/deeper")
    assert dashboard(repo, tmp_path / "deep") == 2
    assert "s3cret" not in capsys.readouterr().err  # a URL may carry a token: never printed
    repo.git("remote", "set-url", "origin", "git@github.com:org/ds.git")
    assert dashboard(repo, tmp_path / "site") == 0
    assert "https://github.com/org/ds/blob/" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the cache keeps itself out of git


def test_the_cache_folder_ignores_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit("a", {"deepspeed/moe/layer.py": module(1, 0)})
    monkeypatch.chdir(repo.path)
    assert main(["status", "--source", "."]) == 0
    assert (repo.path / ".pg-bot-cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""


def test_no_gitignore_in_a_folder_that_is_not_only_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit("a", {"deepspeed/moe/layer.py": module(1, 0)})
    monkeypatch.chdir(repo.path)
    assert main(["status", "--source", ".", "--cache-dir", "."]) == 0  # the project itself: hide nothing
    assert not (repo.path / ".gitignore").exists()
    assert list(repo.path.glob("analysis-*.json"))


