"""The README's two set-up commands and .ci/run must not drift apart."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands), "each set-up command is one line a user can copy"
    assert "pip install" in commands[0] and "pg-bot" in commands[0]
    assert "torch==2.13.0" in commands[1] and ".[test]" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    test_step = setup_commands()[1].rsplit("&&", 1)[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_step in ci.splitlines(), f"{test_step!r} not run by .ci/run"
    assert "torch==2.13.0" in ci and "-e '.[test]'" in ci
