"""The migration proved on a real DeepSpeed checkout (opt-in: set PG_BOT_DEEPSPEED=/path/to/DeepSpeed).

PG_BOT_DEEPSPEED_PYTHON: an interpreter with that DeepSpeed's dependencies (`DS_BUILD_OPS=0 pip install` of the
checkout on a CPU torch; default: this one). PG_BOT_DEEPSPEED_TESTS: the selection (default: TestMoESingleton,
whose world-size-2 cases run on gloo in a few minutes on 2 cores). See docs/migration.md for a recorded run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bot.cli import main

CHECKOUT = os.environ.get("PG_BOT_DEEPSPEED")
PYTHON = os.environ.get("PG_BOT_DEEPSPEED_PYTHON", sys.executable)
TESTS = os.environ.get("PG_BOT_DEEPSPEED_TESTS", "tests/unit/v1/moe/test_moe.py::TestMoESingleton")


@pytest.mark.skipif(not CHECKOUT, reason="PG_BOT_DEEPSPEED is not set")
@pytest.mark.timeout(7200)
def test_fixed_deepspeed_imports_and_passes_its_tests_before_and_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "result.json"
    code = main(["migrate-test", str(CHECKOUT), "--python", PYTHON, "--workdir", str(tmp_path / "work"),
                 "--json", str(out), *(arg for test in TESTS.split() for arg in ("--tests", test))])
    report = capsys.readouterr().out
    assert code == 0, report
    result = json.loads(out.read_text())
    assert "deepspeed/comm/pg_utils.py" in result["fix"]["created"]
    assert "deepspeed/moe/sharded_moe.py" in result["fix"]["files"]
    # Every touched module imports, but those that could not be imported before the fix either (DeepSpeed's
    # triton ops on a machine without triton).
    assert result["imports"]["error"] is None and result["imports"]["broken_by_fix"] == []
    imported = {r["module"]: r["ok"] for r in result["imports"]["results"]}
    assert imported["deepspeed.comm.pg_utils"] and imported["deepspeed.moe.sharded_moe"]
    assert result["before"]["counts"].get("passed", 0) > 0
    assert result["regressions"] == [] and result["ok"] is True
