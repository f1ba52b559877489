"""bot/files.py: one walk, one safe read, one project root, used the same way by check, fix and status.

The hang cases carry a timeout marker: a regression fails here instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import files
from bot.cli import main
from bot.files import SourceError, SourcePath, display_path, iter_python_files, project_relative, read_source

GUARDED = (
    "import deepspeed.comm as dist\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (setup.py marks its root) whose pkg/ holds one finding in a.py and in z.py."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "setup.py").write_text("")
    (root / "pkg" / "a.py").write_text(GUARDED)
    (root / "pkg" / "z.py").write_text(GUARDED)
    monkeypatch.chdir(root)
    return root


def unlistable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make listing ``folder`` fail as it would without read permission (tests may run as root, where
    chmod 000 does not stop anything)."""
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(os.fsdecode(path)).resolve() == folder.resolve():
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


# ---------------------------------------------------------------- the walk and the read, as units


def test_walk_is_sorted_skips_tool_folders_and_yields_files_as_given(tmp_path: Path) -> None:
    for rel in ("b.py", "a.py", "sub/c.py", ".hidden/d.py", "venv/e.py", "build/f.py", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    given = tmp_path / "notes.txt"
    walked = [e.path.relative_to(tmp_path).as_posix() for e in iter_python_files([tmp_path, given])]
    assert walked == ["a.py", "b.py", "sub/c.py", "notes.txt"]
    entry = SourcePath(tmp_path / "x.py", "cannot list folder: nope")
    assert list(iter_python_files([entry])) == [entry]  # already walked: passed through


def test_a_folder_that_cannot_be_listed_is_an_entry_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.py").write_text("")
    (tmp_path / "open.py").write_text("")
    unlistable(monkeypatch, tmp_path / "locked")
    entries = list(iter_python_files([tmp_path]))
    assert [(e.path.name, e.problem) for e in entries] == [
        ("open.py", None),
        ("locked", "cannot list folder: Permission denied"),
    ]
    with pytest.raises(SourceError, match="cannot list folder"):
        entries[1].read()


@needs_fifo
@pytest.mark.timeout(10)
def test_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.py")
    with pytest.raises(SourceError, match=r"not a regular file \(a named pipe\)"):
        read_source(tmp_path / "x.py")


@needs_dev_zero
@pytest.mark.timeout(10)
def test_a_link_to_a_device_is_refused_a_link_to_a_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    with pytest.raises(SourceError, match=r"not a regular file \(a character device\)"):
        read_source(tmp_path / "zero.py")
    (tmp_path / "real.py").write_bytes(b"x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    assert read_source(tmp_path / "link.py") == b"x = 1\n"
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    with pytest.raises(SourceError, match="cannot read: No such file"):
        read_source(tmp_path / "dangling.py")


def test_the_size_cap(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"#" * 2048)
    assert read_source(tmp_path / "big.py", max_bytes=2048) == b"#" * 2048
    with pytest.raises(SourceError, match="too large: 2049 bytes, the limit is 2048"):
        (tmp_path / "big.py").write_bytes(b"#" * 2049)
        read_source(tmp_path / "big.py", max_bytes=2048)


def test_a_file_that_grows_after_the_size_check_is_read_on_up_to_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "grows.py"
    file.write_bytes(b"#" * 3000)
    real_stat, real_fstat = os.stat, os.fstat

    def small(st: os.stat_result) -> os.stat_result:  # as if stat ran while the file held 100 bytes
        return os.stat_result((st.st_mode, *st[1:6], 100, *st[7:]))

    monkeypatch.setattr(os, "stat", lambda path, *a, **k: small(real_stat(path, *a, **k)))
    monkeypatch.setattr(os, "fstat", lambda fd: small(real_fstat(fd)))
    assert read_source(file, max_bytes=4096) == b"#" * 3000
    with pytest.raises(SourceError, match="too large: more than 2048 bytes"):
        read_source(file, max_bytes=2048)


def test_display_path_is_relative_below_the_folder_else_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "proj")
    proj = tmp_path / "proj"
    assert display_path(proj / "pkg" / "m.py", proj) == "pkg/m.py"
    assert display_path(proj / "m.py", proj) == "m.py"
    assert display_path(tmp_path / "link" / "pkg" / "m.py", proj) == "pkg/m.py"  # folders are resolved
    assert display_path(proj / "pkg" / "m.py", tmp_path / "link") == "pkg/m.py"
    outside = tmp_path / "elsewhere" / "m.py"
    assert display_path(outside, proj) == outside.as_posix()
    # a sibling whose name starts like the folder's is not below it
    assert display_path(tmp_path / "proj2" / "m.py", proj) == (tmp_path / "proj2" / "m.py").as_posix()
    assert display_path(proj / "m.py") == (proj / "m.py").as_posix()
    monkeypatch.chdir(proj)
    assert display_path(Path("pkg/m.py"), Path.cwd()) == "pkg/m.py"
    assert display_path(Path("m.py"), Path.cwd()) == "m.py"


def test_project_relative_uses_the_nearest_marker_else_the_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / "deepspeed" / "moe").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    file = repo / "deepspeed" / "moe" / "layer.py"
    file.write_text("")
    for cwd in (tmp_path, repo / "deepspeed" / "moe"):
        monkeypatch.chdir(cwd)
        assert project_relative(file) == "deepspeed/moe/layer.py"
    loose = tmp_path / "loose" / "m.py"
    loose.parent.mkdir()
    loose.write_text("")
    monkeypatch.setattr(files, "_ROOTS", {})
    monkeypatch.setattr(files, "ROOT_MARKERS", ("no-such-marker",))  # the test tree may sit in a git checkout
    assert project_relative(loose, fallback=tmp_path) == "loose/m.py"


# ---------------------------------------------------------------- every verb: the run goes on, errors are named


@needs_fifo
@pytest.mark.timeout(20)
def test_check_reports_a_fifo_and_keeps_every_other_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(project / "pkg" / "m.py")
    assert main(["check", "pkg"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out if "PG101" in line] == ["pkg/a.py", "pkg/z.py"]
    assert "pkg/m.py:1:1: PG000 could not analyse: not a regular file (a named pipe); not read" in out


@needs_dev_zero
@pytest.mark.timeout(90)
def test_check_refuses_a_link_to_dev_zero_quickly(project: Path) -> None:
    # In a child with 1 GiB of address space: a regression ends in MemoryError there, not in this process.
    resource = pytest.importorskip("resource")
    (project / "pkg" / "m.py").symlink_to("/dev/zero")
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "check", "pkg"], cwd=project, capture_output=True, text=True,
        timeout=60, check=False, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )
    assert proc.returncode == 1, proc.stderr
    assert "pkg/m.py:1:1: PG000 could not analyse: not a regular file (a character device)" in proc.stdout
    assert proc.stdout.count("PG101") == 2


def test_check_applies_max_file_bytes_from_rules_yaml(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = GUARDED + "#" * 2000 + "\n"
    (project / "pkg" / "big.py").write_text(big)
    (project / "rules.yaml").write_text("version: 1\nmax_file_bytes: 2048\n")
    assert main(["check", "pkg", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    message = f"too large: {len(big)} bytes, the limit is 2048 (max_file_bytes in rules.yaml); not read"
    assert report["errors"] == [{"path": "pkg/big.py", "message": message}]
    assert [f["path"] for f in report["findings"]] == ["pkg/a.py", "pkg/z.py"]


def test_check_reports_a_folder_it_cannot_list(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pkg" / "locked").mkdir()
    (project / "pkg" / "locked" / "hidden.py").write_text(GUARDED)
    unlistable(monkeypatch, project / "pkg" / "locked")
    assert main(["check", "pkg"]) == 1
    out = capsys.readouterr().out
    assert "pkg/locked:1:1: PG000 could not analyse: cannot list folder: Permission denied" in out
    assert out.count("PG101") == 2


@needs_fifo
@pytest.mark.timeout(20)
def test_fix_reports_a_fifo_and_an_unlisted_folder_and_fixes_the_rest(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(project / "pkg" / "m.py")
    (project / "pkg" / "locked").mkdir()
    unlistable(monkeypatch, project / "pkg" / "locked")
    assert main(["fix", "pkg"]) == 1  # the rest is fixed; a file not read is not clean (docs/configuration.md)
    out, err = capsys.readouterr()
    assert "+++ b/pkg/a.py" in out and "+++ b/pkg/z.py" in out
    assert "pg-bot: pkg/m.py: not a regular file (a named pipe); not read" in err
    assert "pg-bot: pkg/locked: cannot list folder: Permission denied" in err
    assert "would fix 2 finding(s) in 2 file(s)" in err


def test_fix_matches_exemptions_from_the_project_root_like_check(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "rules.yaml").write_text(
        "version: 1\nexemptions:\n  - path: pkg/a.py\n    reason: reviewed by hand, keeps its own guard\n"
    )
    monkeypatch.chdir(project / "pkg")  # run from below the project root: the exemption must still apply
    assert main(["check", "."]) == 1
    assert "a.py" not in capsys.readouterr().out
    assert main(["fix", "."]) == 0
    out, err = capsys.readouterr()
    assert "+++ b/z.py" in out and "a.py" not in out
    assert "would fix 1 finding(s) in 1 file(s)" in err


@needs_fifo
@pytest.mark.timeout(20)
def test_status_counts_unreadable_entries_as_errors(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(project / "pkg" / "m.py")
    (project / "pkg" / "locked").mkdir()
    unlistable(monkeypatch, project / "pkg" / "locked")
    monkeypatch.chdir(project / "pkg")  # paths are from the project root, not from --source or the cwd
    assert main(["status", "--source", ".", "--no-cache", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == ["pkg/locked", "pkg/m.py"]
    assert report["areas"]["other"]["remaining"] == 2


def test_without_a_project_marker_the_package_names_the_file_from_any_cwd(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A DeepSpeed-like tree with no .git / setup.py / pyproject: exemptions still match, from any folder.
    from bot.analyze import analyze_paths
    from bot.config import load

    target = tmp_path / "x" / "deepspeed" / "ops" / "transformer" / "inference"
    target.mkdir(parents=True)
    for folder in (target, *target.parents):
        if folder == tmp_path / "x":
            break
        (folder / "__init__.py").write_text("")
    (target / "moe_inference.py").write_text(
        "import deepspeed.comm as dist\n"
        "class DeepSpeedMoEInference:\n"
        "    def __init__(self, ep_group=None):\n"
        "        self.ep_group = ep_group\n"
        "    def _alltoall(self, x):\n"
        "        if dist.get_world_size(group=self.ep_group) > 1:\n"
        "            dist.all_to_all_single(x, x, group=self.ep_group)\n"
    )
    seen = set()
    for cwd in (Path("/"), tmp_path, tmp_path / "x" / "deepspeed", target):
        monkeypatch.chdir(cwd)
        results = list(analyze_paths([tmp_path / "x" / "deepspeed"], load(), jobs=1))
        seen.add(tuple(f.code for r in results for f in r.findings))
    assert seen == {()}  # the RFC's exemption (DeepSpeedMoEInference._alltoall) applies every time
