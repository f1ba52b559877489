"""`pg-bot migrate-test` and `pg-bot import-check` end to end on the DeepSpeed-shaped fixture.

The fixture (tests/fixtures/deepspeed_like, see its README) runs real torch.distributed on gloo in forked
ranks; each migrate-test run is two pytest runs and an import check, a few seconds.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import bot.migrate.predicate
import bot.migrate.scaffold
from bot.cli import main
from bot.config import Config
from bot.migrate.predicate import Plan

pytest.importorskip("torch")

FIXTURE = Path(__file__).parent / "fixtures" / "deepspeed_like"
MOE = "tests.unit.v1.moe.test_moe.TestExpertAllReduce::"
ZERO = "tests.unit.runtime.zero.test_partition.TestReducePartition::"
PG_UTILS = "tests.unit.comm.test_pg_utils"


def digest(tree: Path) -> str:
    h = hashlib.sha256()
    for file in sorted(p for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(file.relative_to(tree).as_posix().encode() + b"\0" + file.read_bytes())
    return h.hexdigest()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    # A copy outside the repository: only the packaged rules.yaml applies, as for a real DeepSpeed checkout.
    return Path(shutil.copytree(FIXTURE, tmp_path / "deepspeed_like"))


def migrate(checkout: Path, workdir: Path, *args: str) -> tuple[int, str, dict]:
    out = workdir.parent / f"{workdir.name}.json"
    code = main(["migrate-test", str(checkout), "--workdir", str(workdir), "--json", str(out), *args])
    return code, "", json.loads(out.read_text()) if out.exists() else {}


def outcomes(result: dict) -> dict[str, tuple[str, str]]:
    return {row["test"]: (row["before"], row["after"]) for row in result["tests_per_id"]}


def test_the_migration_passes_the_projects_tests_before_and_after(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before_digest = digest(checkout)
    code, _, result = migrate(checkout, tmp_path / "work", "--unsafe-fixes")
    out = capsys.readouterr().out
    assert code == 0, out
    assert digest(checkout) == before_digest  # only the copy is fixed

    assert result["areas"] == ["moe", "zero"]
    assert result["tests"] == ["tests/unit/v1/moe", "tests/unit/runtime/zero", "tests/unit/v1/zero"]
    assert result["fix"]["files"] == [
        "deepspeed/moe/fused_kernels.py", "deepspeed/moe/sharded_moe.py", "deepspeed/runtime/zero/partition.py"
    ]
    assert result["fix"]["applied"] == {"PG101": 2, "PG103": 1}
    assert result["fix"]["created"] == ["deepspeed/comm/pg_utils.py", "tests/unit/comm/test_pg_utils.py"]
    assert result["added_tests"] == ["tests/unit/comm/test_pg_utils.py"]
    fixed = (tmp_path / "work/tree/deepspeed/moe/sharded_moe.py").read_text()
    assert "if pg_utils.is_parallel(ep_group):" in fixed

    # Every touched module imports, from the fixed copy (not from anywhere else on the path), but the one that
    # could not be imported before the fix either: reported, not blamed on the fix.
    assert [(r["module"], r["ok"]) for r in result["imports"]["results"]] == [
        ("deepspeed.moe.fused_kernels", False), ("deepspeed.moe.sharded_moe", True),
        ("deepspeed.runtime.zero.partition", True), ("deepspeed.comm.pg_utils", True),
    ]
    assert [(r["module"], r["ok"]) for r in result["imports"]["before"]] == [
        ("deepspeed.moe.fused_kernels", False), ("deepspeed.moe.sharded_moe", True),
        ("deepspeed.runtime.zero.partition", True),
    ]
    assert result["imports"]["broken_by_fix"] == []
    assert all(r["detail"].startswith(str(tmp_path / "work/tree")) for r in result["imports"]["results"] if r["ok"])

    seen = outcomes(result)
    for test in ("test_no_expert_parallelism", "test_expert_group_of_every_rank", "test_expert_group_that_excludes_a_rank"):
        assert seen[MOE + test] == ("passed", "passed")
    assert seen[ZERO + "test_model_parallel_group"] == ("passed", "passed")
    # Already failing before the fix: reported, not a regression.
    assert seen["tests.unit.v1.zero.test_zero::test_known_failure"] == ("failed", "failed")
    # The created unit test ran after the fix, at world sizes 1 and 2, and passed.
    created = {t: o for t, o in seen.items() if t.startswith(PG_UTILS)}
    assert len(created) == 5 and set(created.values()) == {("missing", "passed")}
    assert result["before"]["counts"] == {"passed": 7, "failed": 1}
    assert result["after"]["counts"] == {"passed": 12, "failed": 1}
    assert result["regressions"] == [] and result["ok"] is True

    assert "tests before: 7 passed, 1 failed" in out and "after: 12 passed, 1 failed" in out
    assert "imports: 3 of 4 touched module(s) import; 1 failed before the fix too (not caused by it)" in out
    assert ("failed before and after the fix: deepspeed.moe.fused_kernels (deepspeed/moe/fused_kernels.py): "
            "ModuleNotFoundError: No module named 'deepspeed_fixture_missing_kernels'") in out
    assert "regressions: 0" in out and out.rstrip().endswith("result: OK")
    assert "failed   failed   tests.unit.v1.zero.test_zero::test_known_failure\n" in out


BROKEN_PREDICATE = textwrap.dedent(
    """\
    import deepspeed.comm as dist


    def is_parallel(group):
        # Broken on purpose: forgets that None is the absent dimension, so None -> world size -> True.
        return dist.get_world_size(group=group) > 1
    """
)


def test_a_broken_fix_is_reported_as_a_regression(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_render = bot.migrate.predicate.render

    def broken(name: str, config: Config) -> str:
        return BROKEN_PREDICATE if name == bot.migrate.predicate.MODULE_TEMPLATE else real_render(name, config)

    monkeypatch.setattr(bot.migrate.predicate, "render", broken)
    code, _, result = migrate(checkout, tmp_path / "work", "--unsafe-fixes")
    out = capsys.readouterr().out
    assert code == 1
    # group=None now runs all_reduce over the world (or, without a process group, raises): exactly the tests
    # of the absent dimension regress.
    assert result["regressions"] == [
        ZERO + "test_no_model_parallelism",
        MOE + "test_no_expert_parallelism",
        "tests.unit.v1.moe.test_moe::test_no_expert_group_needs_no_process_group",
        "tests.unit.v1.zero.test_zero::test_no_model_parallel_group_needs_no_process_group",
    ]
    assert f"{MOE}test_no_expert_parallelism: failed" in out and out.rstrip().endswith("result: FAILED")
    assert "passed   failed   " + MOE + "test_no_expert_parallelism  REGRESSION" in out
    # The created unit test catches it too.
    assert outcomes(result)[PG_UTILS + "::test_none_is_not_parallel"] == ("missing", "failed")
    assert "new tests failing: " in out


def test_a_fixed_tree_without_the_predicate_module_fails_its_import_check(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The state issue #12 found: the fix imports deepspeed.comm.pg_utils, which the tree does not have.
    monkeypatch.setattr(bot.migrate.scaffold, "missing_predicate_files", lambda texts, config: Plan([], []))
    code, _, result = migrate(checkout, tmp_path / "work", "--area", "moe")
    out = capsys.readouterr().out
    assert code == 1
    assert result["imports"]["broken_by_fix"] == ["deepspeed.moe.sharded_moe"]
    [failure] = [r for r in result["imports"]["results"] if r["module"] == "deepspeed.moe.sharded_moe"]
    assert "ImportError: cannot import name 'pg_utils' from 'deepspeed.comm'" in failure["detail"]
    assert "sharded_moe.py:2)" in failure["detail"]  # where the import failed
    assert "FAILED deepspeed.moe.sharded_moe (deepspeed/moe/sharded_moe.py): ImportError" in out
    # The moe test module no longer collects: every test that passed is a regression.
    assert len(result["regressions"]) == 4


def test_one_area_without_local_size_and_with_pytest_arguments(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, result = migrate(checkout, tmp_path / "work", "--area", "moe", "--env", "LOCAL_SIZE",
                              "--pytest-args=-k 'not every_rank'")
    assert code == 0, capsys.readouterr().out
    # Only the moe area is fixed (PG103 in zero is not touched, even with its own area's findings).
    assert result["fix"]["files"] == ["deepspeed/moe/fused_kernels.py", "deepspeed/moe/sharded_moe.py"]
    assert "if mp_group is not None:" in (tmp_path / "work/tree/deepspeed/runtime/zero/partition.py").read_text()
    seen = outcomes(result)
    assert MOE + "test_expert_group_of_every_rank" not in seen  # -k reached pytest
    # Without LOCAL_SIZE the CPU accelerator has no "devices": DistributedTest skips, as DeepSpeed's does.
    assert seen[MOE + "test_no_expert_parallelism"] == ("skipped", "skipped")
    assert seen["tests.unit.v1.moe.test_moe::test_no_expert_group_needs_no_process_group"] == ("passed", "passed")
    assert not any(t.startswith("tests.unit.runtime") for t in seen)


def test_usage_errors(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate-test", str(tmp_path / "nowhere")]) == 2
    assert main(["migrate-test", str(checkout), "--workdir", str(tmp_path / "a"), "--area", "mo"]) == 2
    assert "unknown area(s): mo" in capsys.readouterr().err
    assert main(["migrate-test", str(checkout), "--workdir", str(tmp_path / "b"), "--tests", "tests/unit/moe"]) == 2
    err = capsys.readouterr().err
    assert "test path(s) not in" in err and "tests/unit/moe (check rules.yaml with `pg-bot config check" in err
    assert main(["migrate-test", str(checkout), "--workdir", str(tmp_path / "c"), "--area", "other"]) == 2
    assert "no tests selected" in capsys.readouterr().err
    code = main(["migrate-test", str(checkout), "--workdir", str(tmp_path / "d"), "--python", str(tmp_path / "no-py")])
    assert code == 2 and "cannot run" in capsys.readouterr().err
    # A selection that runs nothing proves nothing.
    code = main(["migrate-test", str(checkout), "--workdir", str(tmp_path / "e"), "--area", "moe",
                 "--pytest-args=-k no_such_test"])
    assert code == 2 and "no test ran before the fix (pytest exited with 5" in capsys.readouterr().err


def test_a_hanging_test_run_is_stopped_at_the_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = Path(shutil.copytree(FIXTURE, tmp_path / "tree"))
    (tree / "tests/unit/v1/moe/test_hang.py").write_text("import time\n\n\ndef test_hang():\n    time.sleep(60)\n")
    code = main(["migrate-test", str(tree), "--workdir", str(tmp_path / "w"), "--timeout", "3",
                 "--tests", "tests/unit/v1/moe/test_hang.py"])
    assert code == 2
    assert "pytest did not finish in 3 s" in capsys.readouterr().err


def test_import_check_alone(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unfixed = Path(shutil.copytree(checkout, tmp_path / "unfixed"))
    monkeypatch.chdir(checkout)
    assert main(["fix", "--write", "deepspeed"]) == 0
    capsys.readouterr()
    # fused_kernels needs a library this machine lacks: without a baseline that counts...
    assert main(["import-check", ".", "--python", sys.executable]) == 1
    assert capsys.readouterr().out.splitlines()[:2] == [
        "imports: 2 of 3 touched module(s) import",
        "  FAILED deepspeed.moe.fused_kernels (deepspeed/moe/fused_kernels.py): ModuleNotFoundError: No module "
        f"named 'deepspeed_fixture_missing_kernels' ({checkout.resolve()}/deepspeed/moe/fused_kernels.py:3)",
    ]
    # ... with the unfixed tree as the baseline it is reported, not counted.
    assert main(["import-check", ".", "--baseline", str(unfixed)]) == 0
    assert "2 of 3 touched module(s) import; 1 failed before the fix too" in capsys.readouterr().out
    (checkout / "deepspeed/comm/pg_utils.py").unlink()
    assert main(["import-check", ".", "--baseline", str(unfixed)]) == 1
    out = capsys.readouterr().out
    assert "imports: 0 of 2 touched module(s) import; 1 failed before the fix too" in out
    assert "FAILED deepspeed.moe.sharded_moe (deepspeed/moe/sharded_moe.py): ImportError" in out
    # Explicit paths; a file outside any package is never run, only listed.
    assert main(["import-check", ".", "deepspeed/runtime", "setup.py"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "imports: 3 of 3 touched module(s) import", "  not checked (not in a package): setup.py"
    ]
