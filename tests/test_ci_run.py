"""The shared run step (``pg-bot dispatch check-inputs`` / ``run-tests``) of the XPU job and its CPU twin."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot import cli
from bot.ci.run_selected import PLUGIN, RunError, check_inputs, plan
from bot.config import CIConfig

ROOT = Path(__file__).resolve().parents[1]
CI = CIConfig(test_root="tests", full_suite=("tests",), max_test_paths=8)

DIST_TESTS = textwrap.dedent("""
    import pytest

    class TestSingle:
        world_size = 1
        def test_single(self):
            pass

    class TestSome:
        world_size = [1, 2]
        def test_some(self):
            pass

    @pytest.mark.world_size(4)
    def test_marked_four():
        pass

    @pytest.mark.world_size(1)
    def test_marked_one():
        pass

    @pytest.mark.parametrize("world_size", [1, 3])
    def test_param(world_size):
        pass

    def test_undeclared():
        pass
""")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "pr"
    (repo / "tests" / "dist").mkdir(parents=True)
    (repo / "tests" / "dist" / "test_dist.py").write_text(DIST_TESTS)
    (repo / "tests" / "dist" / "test_all_single.py").write_text(
        "class TestOnly:\n    world_size = 1\n    def test_one(self):\n        pass\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x")
    return repo, git(repo, "rev-parse", "HEAD")


def inputs(sha: str, tests: str = "tests/dist/test_dist.py") -> dict[str, object]:
    return {"repo": "o/r", "sha": sha, "pr": "3", "tests": tests}


def test_plan_runs_pytest_on_exactly_the_validated_paths_after_an_end_of_options(checkout: tuple[Path, str]) -> None:
    repo, sha = checkout
    p = plan(check_inputs(inputs(sha, "tests/dist tests/dist/test_dist.py"), CI), repo, python="/py",
             base_env={"PYTHONPATH": "/keep"})
    assert p.argv[:5] == ("/py", "-m", "pytest", "-p", PLUGIN)
    assert p.argv[p.argv.index("--") + 1:] == ("tests/dist", "tests/dist/test_dist.py")
    assert p.cwd == repo.resolve()
    assert p.env["PG_BOT_MIN_WORLD_SIZE"] == "2"
    plugin_dir, keep = p.env["PYTHONPATH"].split(":")
    assert keep == "/keep" and (Path(plugin_dir) / f"{PLUGIN}.py").is_file()
    assert sorted(p.name for p in Path(plugin_dir).glob("*.py")) == ["__init__.py", f"{PLUGIN}.py"]


def test_plan_refuses_another_commit_missing_paths_and_escapes(checkout: tuple[Path, str],
                                                               tmp_path: Path) -> None:
    repo, sha = checkout
    with pytest.raises(RunError, match="not at the commit"):
        plan(check_inputs(inputs("f" * 40), CI), repo)
    with pytest.raises(RunError, match="does not exist"):
        plan(check_inputs(inputs(sha, "tests/nope.py"), CI), repo)
    (tmp_path / "outside").mkdir()
    (repo / "tests" / "escape").symlink_to(tmp_path / "outside")
    with pytest.raises(RunError, match="outside the checkout"):
        plan(check_inputs(inputs(sha, "tests/escape"), CI), repo)
    with pytest.raises(RunError, match="not a git checkout"):
        plan(check_inputs(inputs(sha), CI), tmp_path / "outside")


def test_run_tests_keeps_only_multi_rank_tests(checkout: tuple[Path, str], capfd: pytest.CaptureFixture[str]) -> None:
    repo, sha = checkout
    code = cli.main(["dispatch", "run-tests", "--repo=o/r", f"--sha={sha}", "--pr=3",
                     "--tests=tests/dist/test_dist.py", f"--workdir={repo}", f"--python={sys.executable}"])
    out = capfd.readouterr().out
    assert code == 0, out
    passed = {line.split("::", 1)[1] for line in out.splitlines() if line.startswith("PASSED ")}
    assert passed == {"TestSome::test_some", "test_marked_four", "test_param[3]", "test_undeclared"}
    assert "4 passed, 3 deselected" in out


def test_min_world_size_one_keeps_everything(checkout: tuple[Path, str], capfd: pytest.CaptureFixture[str]) -> None:
    repo, sha = checkout
    code = cli.main(["dispatch", "run-tests", "--repo=o/r", f"--sha={sha}", "--pr=3",
                     "--tests=tests/dist/test_dist.py", f"--workdir={repo}", "--min-world-size=1"])
    assert code == 0 and "7 passed" in capfd.readouterr().out


def test_no_multi_rank_test_left_is_a_failure(checkout: tuple[Path, str], capfd: pytest.CaptureFixture[str]) -> None:
    repo, sha = checkout
    code = cli.main(["dispatch", "run-tests", "--repo=o/r", f"--sha={sha}", "--pr=3",
                     "--tests=tests/dist/test_all_single.py", f"--workdir={repo}"])
    assert code == 1  # pytest's 5 ("nothing ran") is a failure; pg-bot's codes stay pg-bot's
    err = capfd.readouterr().err
    assert "no multi-rank test" in err and "pytest exited 5" in err


@pytest.mark.parametrize("tests", ["--pdb", "tests/dist;id", "tests/../../etc", "tests/a\ntests/b", "/etc"])
def test_run_tests_refuses_hostile_inputs_before_running_anything(checkout: tuple[Path, str], tests: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo, sha = checkout
    code = cli.main(["dispatch", "run-tests", "--repo=o/r", f"--sha={sha}", "--pr=3", f"--tests={tests}",
                     f"--workdir={repo}", "--python=/definitely/not/run"])
    assert code == 2
    assert "not running the tests" in capsys.readouterr().err


def test_check_inputs_writes_validated_values_to_github_output(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "github_output"
    out.write_text("earlier=1\n")
    sha = "a" * 40
    code = cli.main(["dispatch", "check-inputs", "--repo=o/r", f"--sha={sha}", "--pr=3",
                     "--tests=tests/unit/moe tests/unit/moe", f"--github-output={out}"])
    assert code == 0
    assert out.read_text() == f"earlier=1\nrepo=o/r\nsha={sha}\npr=3\ntests=tests/unit/moe\n"


@pytest.mark.parametrize("arg", ["--sha=HEAD", "--repo=o/r;id", "--pr=1 2", "--tests=tests/x\nsha=evil"])
def test_check_inputs_rejects_and_writes_nothing(tmp_path: Path, arg: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "github_output"
    good = {"--repo": "--repo=o/r", "--sha": f"--sha={'a' * 40}", "--pr": "--pr=3", "--tests": "--tests=tests/x"}
    good[arg.split("=")[0]] = arg
    assert cli.main(["dispatch", "check-inputs", *good.values(), f"--github-output={out}"]) == 2
    assert not out.exists()
    assert "refusing the workflow inputs" in capsys.readouterr().err


def test_cpu_twin_command_plans_the_pg_utils_distributed_tests() -> None:
    """The command the CPU twin runs, on this repo's pg_utils tests (the full run is slow; see README)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    sha = git(ROOT, "rev-parse", "HEAD")
    tests = " ".join(sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_pg_utils*.py")))
    assert tests, "the pg_utils tests are missing"
    p = plan(check_inputs(inputs(sha, tests), CI), ROOT)
    assert p.argv[p.argv.index("--") + 1:] == tuple(tests.split())
