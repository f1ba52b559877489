"""The pure parts of `pg-bot migrate-test`: JUnit outcomes, before/after comparison, environment, options."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands.migrate_test import parse_env
from bot.migrate import junit
from bot.migrate.compare import compare
from bot.migrate.imports import ImportCheck, ImportResult, broken_imports
from bot.migrate.junit import Outcome
from bot.migrate.pipeline import (
    DEFAULT_ENV,
    MigrateError,
    environment_for_tests,
    selected_areas,
    selected_tests,
)
from bot.migrate.pytest_run import command

# What pytest writes (xunit2), trimmed: a pass, a failure, a skip, an xfail, a teardown error on a passing
# test, and a module that failed to collect.
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="2" failures="1" skipped="2" tests="6">
<testcase classname="unit.v1.moe.test_moe.TestMoE" name="test[single]" time="0.1" />
<testcase classname="unit.v1.moe.test_moe.TestMoE" name="test[multi]" time="0.1"><failure message="assert 1 == 2">...</failure></testcase>
<testcase classname="unit.v1.moe.test_moe.TestMoE" name="test_gpu" time="0.0"><skipped type="pytest.skip" message="Skipping test because not enough GPUs are available: 2 required, 0 available">...</skipped></testcase>
<testcase classname="unit.v1.moe.test_moe" name="test_later" time="0.0"><skipped type="pytest.xfail" message="not yet" /></testcase>
<testcase classname="unit.v1.moe.test_moe" name="test_teardown" time="0.0"><error message="failed on teardown">...</error></testcase>
<testcase classname="" name="unit.v1.zero.test_zero" time="0.0"><error message="collection failure">...</error></testcase>
</testsuite></testsuites>
"""


def test_junit_outcomes_per_test() -> None:
    assert junit.parse(JUNIT) == {
        "unit.v1.moe.test_moe.TestMoE::test[single]": Outcome.PASSED,
        "unit.v1.moe.test_moe.TestMoE::test[multi]": Outcome.FAILED,
        "unit.v1.moe.test_moe.TestMoE::test_gpu": Outcome.SKIPPED,
        "unit.v1.moe.test_moe::test_later": Outcome.SKIPPED,
        "unit.v1.moe.test_moe::test_teardown": Outcome.ERROR,
        "unit.v1.zero.test_zero": Outcome.ERROR,
    }


def test_junit_keeps_the_worst_outcome_of_a_repeated_id() -> None:
    text = ('<testsuite><testcase classname="a" name="t"/><testcase classname="a" name="t"><failure/></testcase>'
            '<testcase classname="a" name="t"/></testsuite>')
    assert junit.parse(text) == {"a::t": Outcome.FAILED}


def test_junit_rejects_what_is_not_a_report(tmp_path: Path) -> None:
    with pytest.raises(junit.JUnitError, match="not valid XML"):
        junit.parse("<testsuite>")
    with pytest.raises(junit.JUnitError, match="root element is <html>"):
        junit.parse("<html/>")
    with pytest.raises(junit.JUnitError, match="cannot read"):
        junit.read(tmp_path / "missing.xml")


def test_a_test_that_passed_and_then_fails_errors_or_vanishes_is_a_regression() -> None:
    P, F, E, S = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED
    before = {"ok": P, "breaks": P, "errors": P, "vanishes": P, "was_failing": F, "fixed": F, "skip": S, "unskips": S}
    after = {"ok": P, "breaks": F, "errors": E, "was_failing": F, "fixed": P, "skip": S, "unskips": F,
             "new_ok": P, "new_bad": F}
    result = compare(before, after)
    assert [r.test for r in result.regressions] == ["breaks", "errors", "vanishes"]
    assert [r.test for r in result.new_failures] == ["new_bad"]
    assert [r.test for r in result.rows if r.fixed] == ["fixed"]
    assert result.counts("before") == {"passed": 4, "failed": 2, "skipped": 2}
    assert result.counts("after") == {"passed": 3, "failed": 4, "error": 1, "skipped": 1}


def test_the_tests_environment_defaults_to_cpu_and_puts_the_tree_first(tmp_path: Path) -> None:
    env = environment_for_tests({"PATH": "/bin", "PYTHONPATH": "/elsewhere"}, {}, tmp_path)
    assert env == {"PATH": "/bin", **DEFAULT_ENV, "PYTHONPATH": f"{tmp_path}:/elsewhere"}
    # The caller's environment wins over the defaults, --env over both; KEY alone unsets.
    env = environment_for_tests({"LOCAL_SIZE": "8"}, parse_env(["DS_ACCELERATOR=xpu", "LOCAL_SIZE", "EXTRA=a=b"]), tmp_path)
    assert env == {"DS_ACCELERATOR": "xpu", "EXTRA": "a=b", "PYTHONPATH": str(tmp_path)}
    with pytest.raises(MigrateError, match="expected KEY=VALUE"):
        parse_env(["=1"])
    with pytest.raises(MigrateError, match="expected KEY=VALUE"):
        parse_env(["A B=1"])


def test_areas_and_tests_selection() -> None:
    from bot import config as config_module

    config = config_module.load()
    changed = ["deepspeed/moe/sharded_moe.py", "deepspeed/ops/transformer/inference/ds_mlp.py", "setup.py"]
    assert selected_areas(config, (), changed) == ["moe", "inference", "other"]
    assert selected_areas(config, ("zero", "moe"), changed) == ["moe", "zero"]  # rules.yaml's order
    with pytest.raises(MigrateError, match="unknown area"):
        selected_areas(config, ("mo",), changed)
    assert selected_tests(config, ["moe", "other"], ()) == ["tests/unit/v1/moe"]
    assert selected_tests(config, ["moe"], ("tests/x.py::T",)) == ["tests/x.py::T"]


def test_pytest_command_keeps_paths_after_the_double_dash(tmp_path: Path) -> None:
    cmd = command("py", ["-x.py"], tmp_path / "r.xml", ["-k", "moe"])
    assert cmd[:3] == ["py", "-m", "pytest"] and f"--junitxml={tmp_path / 'r.xml'}" in cmd
    assert cmd[-4:] == ["-k", "moe", "--", "-x.py"]
    assert cmd[cmd.index("no:randomly") - 1] == "-p"  # same order and seeds in both runs


def test_only_imports_that_worked_before_the_fix_are_blamed_on_it() -> None:
    def check(*results: tuple[str, bool]) -> ImportCheck:
        return ImportCheck([ImportResult(m, m, ok, "") for m, ok in results], [])

    before = check(("a", True), ("triton_op", False), ("b", True))
    after = check(("a", False), ("triton_op", False), ("b", True), ("pkg.pg_utils", False))
    assert [r.module for r in broken_imports(before, after)] == ["a", "pkg.pg_utils"]
    unknown = ImportCheck([], [], error="python exited with 1")
    assert [r.module for r in broken_imports(unknown, after)] == ["a", "triton_op", "pkg.pg_utils"]
