"""`pg-bot fix`: diff by default, --write, --check, --select/--ignore, --unsafe-fixes, --config, bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.cli import main

FIX = Path(__file__).parent / "fixtures" / "fix"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name in ("early_exit.py", "partial.py", "with_import.py"):
        shutil.copy(FIX / name, pkg / name)
    monkeypatch.chdir(tmp_path)
    return pkg


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.py"))}


def test_default_prints_a_unified_diff_and_writes_nothing(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(tree)
    assert main(["fix", "pkg"]) == 0
    out, err = capsys.readouterr()
    assert "--- a/pkg/early_exit.py\n+++ b/pkg/early_exit.py\n" in out
    assert "-    if group is None or dist.get_world_size(group=group) <= 1:\n+    if not pg_utils.is_parallel(group):\n" in out
    assert "partial.py" not in out  # only unsafe fixes there
    assert "would fix 3 finding(s) in 2 file(s) (PG101 1, PG102 2)" in err and "--unsafe-fixes" in err
    assert snapshot(tree) == before


def test_an_absolute_path_gets_git_style_headers(tree: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    target = (tree / "early_exit.py").resolve()
    (tree.parent / "elsewhere").mkdir()
    monkeypatch.chdir(tree.parent / "elsewhere")  # the file is not under the current folder: shown absolute
    assert main(["fix", str(target)]) == 0
    out = capsys.readouterr().out
    name = str(target).lstrip("/")
    assert f"--- a/{name}\n+++ b/{name}\n" in out and "a//" not in out


def test_write_applies_and_check_then_passes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fix", "--check", "pkg"]) == 1
    assert main(["fix", "--write", "pkg"]) == 0
    assert "pg_utils.is_parallel(ep_group)" in (tree / "with_import.py").read_text()
    capsys.readouterr()
    assert main(["fix", "--check", "pkg"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "would fix 0 finding(s) in 0 file(s)" in err


def test_unsafe_fixes_and_select_ignore(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fix", "--unsafe-fixes", "--select", "PG103", "pkg"]) == 0
    out, err = capsys.readouterr()
    assert "+    if pg_utils.is_parallel(group):\n" in out and "early_exit.py" not in out
    assert "(PG103 2)" in err
    assert main(["fix", "--unsafe-fixes", "--ignore", "PG101,PG102,PG103", "pkg"]) == 0
    out, err = capsys.readouterr()
    assert "(PG104 2)" in err and "with_import.py" not in out


def test_show_refused_lists_each_reason(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["fix", "--show-refused", "pkg"])
    err = capsys.readouterr().err
    assert "pkg/early_exit.py:20:8: PG102 not fixed: unsafe fix" in err and "non-member group (size -1)" in err


def test_crlf_file_written_back_crlf(tree: Path) -> None:
    path = tree / "early_exit.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert main(["fix", "--write", str(path)]) == 0
    data = path.read_bytes()
    assert b"pg_utils.is_parallel(group)" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_config_predicate_is_used(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "custom.yaml"
    cfg.write_text("version: 1\npredicate: {module: mylib.comm, name: pgu, function: active}\n")
    assert main(["fix", "--config", str(cfg), "pkg/early_exit.py"]) == 0
    out = capsys.readouterr().out
    assert "+from mylib.comm import pgu\n" in out and "+    if not pgu.active(group):\n" in out


def test_bad_input_is_reported_and_the_run_goes_on(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "broken.py").write_text("import deepspeed.comm as dist\ndef f(:\n    dist.all_reduce(t, group=g)\n")
    assert main(["fix", "pkg"]) == 1  # the other files are fixed, but a file that cannot be parsed is not clean
    out, err = capsys.readouterr()
    assert "pkg/broken.py" in err and "early_exit.py" in out
    assert main(["fix", "pkg", "--exit-zero"]) == 0
    assert main(["fix", "no/such/dir"]) == 2
    assert main(["fix", "--select", "PG999", "pkg"]) == 2
    bad = tree.parent / "bad.yaml"
    bad.write_text("version: 1\nbogus: 1\n")
    assert main(["fix", "--config", str(bad), "pkg"]) == 2
    assert "bogus" in capsys.readouterr().err
