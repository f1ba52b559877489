"""End to end on a real DeepSpeed checkout (set PG_BOT_DEEPSPEED=/path/to/DeepSpeed; skipped otherwise).

The checkout is copied first; the copy is fixed with --unsafe-fixes, must compile, and must then hold only the
findings the fixer refuses (a second `fix --check` changes nothing).
"""

from __future__ import annotations

import compileall
import os
import shutil
from pathlib import Path

import pytest

from bot.cli import main

CHECKOUT = os.environ.get("PG_BOT_DEEPSPEED")


@pytest.mark.skipif(not CHECKOUT, reason="PG_BOT_DEEPSPEED is not set")
@pytest.mark.timeout(600)
def test_fix_write_on_deepspeed_compiles_and_is_idempotent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(Path(str(CHECKOUT)) / "deepspeed", tmp_path / "deepspeed", symlinks=True)
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--write", "--unsafe-fixes", "deepspeed"]) == 0
    assert "fixed " in capsys.readouterr().err
    assert compileall.compile_dir("deepspeed", quiet=2, force=True)
    assert main(["fix", "--check", "--unsafe-fixes", "deepspeed"]) == 0
