"""`flake8 --select=PG` reports what `pg-bot check` reports, under flake8's own noqa, per-file-ignores and output
options: with the flake8 in this environment, and with DeepSpeed's pinned flake8 5.0.4 in a venv of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUARDED = (
    "import deepspeed.comm as dist\n"
    "\n"
    "\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
    "\n"
    "\n"
    "def h(t, g=None):\n"
    "    if g is not None:\n"
    "        dist.all_reduce(t, group=g)\n"
    "\n"
    "\n"
    "def k(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:  # noqa: PG101 kept on purpose\n"
    "        dist.all_reduce(t, group=g)\n"
)


def tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "proj" / "setup.py").write_text("")
    (pkg / "a.py").write_text(GUARDED)
    (pkg / "b.py").write_text(GUARDED)
    return tmp_path / "proj"


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)


def lines(out: str) -> list[str]:
    """The findings (check's closing `Found N findings ...` line is not one)."""
    return sorted(" ".join(line.split()[:2]) for line in out.splitlines() if line.strip() and not line.startswith("Found "))


def test_flake8_reports_what_check_reports_with_flake8_noqa(tmp_path: Path) -> None:
    proj = tree(tmp_path)
    flake8 = run([sys.executable, "-m", "flake8", "--select=PG", "pkg"], proj)
    check = run([sys.executable, "-m", "bot.cli", "check", "pkg"], proj)
    assert flake8.returncode == 1 and check.returncode == 1, flake8.stderr + check.stderr
    assert lines(flake8.stdout) == lines(check.stdout)
    assert lines(flake8.stdout) == [
        "pkg/a.py:10:8: PG103", "pkg/a.py:5:8: PG101", "pkg/b.py:10:8: PG103", "pkg/b.py:5:8: PG101"]


def test_flake8_per_file_ignores_and_output_options(tmp_path: Path) -> None:
    proj = tree(tmp_path)
    (proj / ".flake8").write_text("[flake8]\nper-file-ignores =\n    pkg/b.py: PG101\n")
    out = run([sys.executable, "-m", "flake8", "--select=PG", "--format=%(path)s|%(row)d|%(code)s", "pkg"], proj)
    assert sorted(out.stdout.split()) == ["pkg/a.py|10|PG103", "pkg/a.py|5|PG101", "pkg/b.py|10|PG103"]


def test_no_select_means_no_silent_pass(tmp_path: Path) -> None:
    proj = tree(tmp_path)
    out = run([sys.executable, "-m", "flake8", "--select=PG103", "pkg/a.py"], proj)
    assert out.returncode == 1 and out.stdout.split(":")[:2] == ["pkg/a.py", "10"]


@pytest.mark.skipif(os.environ.get("PG_BOT_OFFLINE") == "1", reason="needs PyPI for flake8==5.0.4")
def test_deepspeeds_flake8_5_0_4(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    install = run([str(py), "-m", "pip", "install", "-q", "flake8==5.0.4", "PyYAML"], tmp_path)
    assert install.returncode == 0, install.stderr[-2000:]
    install = run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(REPO)], tmp_path)
    if install.returncode != 0:  # no setuptools in a bare venv on some Pythons: build with the test env's
        install = run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(REPO)], tmp_path)
    assert install.returncode == 0, install.stderr[-2000:]
    proj = tree(tmp_path)
    version = run([str(py), "-m", "flake8", "--version"], proj)
    assert version.stdout.startswith("5.0.4") and "pg-bot" in version.stdout
    flake8 = run([str(py), "-m", "flake8", "--select=PG", "pkg"], proj)
    check = run([sys.executable, "-m", "bot.cli", "check", "pkg"], proj)
    assert lines(flake8.stdout) == lines(check.stdout) and len(lines(check.stdout)) == 4
