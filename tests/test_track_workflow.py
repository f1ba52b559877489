"""pg-bot-status.yml, read as data: triggers, least permissions, pinned actions, one run at a time."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import build_parser

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "pg-bot-status.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


@pytest.fixture(scope="module")
def wf() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data  # type: ignore[no-any-return]


def test_runs_on_push_and_nightly_one_at_a_time(wf: dict[str, Any]) -> None:
    assert set(wf["on"]) >= {"push", "schedule"}
    assert wf["on"]["schedule"][0]["cron"].split()[2:] == ["*", "*", "*"]  # every day
    assert wf["concurrency"]["cancel-in-progress"] is False
    assert "default_branch" in wf["jobs"]["status"]["if"]


def test_least_permissions(wf: dict[str, Any]) -> None:
    assert wf["permissions"] == {}
    assert wf["jobs"]["status"]["permissions"] == {"contents": "read", "issues": "write"}
    assert wf["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")


def test_actions_pinned_and_no_expressions_in_run(wf: dict[str, Any]) -> None:
    for job in wf["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step.get("name")
            if "uses" in step:
                assert PINNED.match(step["uses"]), step["uses"]
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_commands_it_runs_parse(wf: dict[str, Any]) -> None:
    """The workflow's pg-bot command lines are accepted by the real parser (options not misspelt)."""
    runs = [s["run"] for s in wf["jobs"]["status"]["steps"] if "pg-bot-venv/bin/pg-bot" in s.get("run", "")]
    verbs = []
    for run in runs:
        argv = shlex.split(run.replace("\\\n", " "))[1:]
        args = build_parser(only=argv[0]).parse_args(argv)
        verbs.append(args.verb)
        if args.verb == "status":
            assert args.update_issue == "$ISSUE" and args.ref == "HEAD" and args.repo == "$TRACKED_REPO"
        if args.verb == "dashboard":
            assert args.last == 300 and str(args.out) == "site"
    assert verbs == ["status", "dashboard"]
    upload = next(s for s in wf["jobs"]["status"]["steps"] if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "site"
