"""The shipped pg-bot-status.yml, read as data: triggers, least permissions, pinned actions, one run at a time,
no cache, and a dashboard that never takes over the repository's Pages."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import build_parser

WORKFLOW = (Path(__file__).resolve().parents[1] / "examples" / "deepspeed" / ".github" / "workflows"
            / "pg-bot-status.yml")
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")
PG_BOT = "deepspeedai/pg-bot@PG_BOT_PIN"  # the one pin a maintainer edits (docs/workflows.md)


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
    assert wf["jobs"]["publish"]["permissions"] == {"contents": "write"}
    assert set(wf["jobs"]) == {"status", "publish"}
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")


def test_the_dashboard_never_takes_over_pages(wf: dict[str, Any]) -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "pages" not in str(wf["jobs"]["status"]["permissions"]) and "deploy-pages" not in text
    assert "upload-pages-artifact" not in text
    upload = next(s for s in wf["jobs"]["status"]["steps"] if "upload-artifact@" in s.get("uses", ""))
    assert upload["with"]["name"] == "pg-bot-dashboard"
    publish = wf["jobs"]["publish"]
    assert publish["if"] == "vars.PG_BOT_DASHBOARD_BRANCH != ''"  # only when a branch is configured
    assert publish["needs"] == "status"


def test_no_cache_is_restored(wf: dict[str, Any]) -> None:
    # PR code in the test job shares the default branch's cache scope (docs/security.md)
    uses = [s.get("uses", "") for job in wf["jobs"].values() for s in job["steps"]]
    assert uses and not [u for u in uses if u.startswith("actions/cache")]


def test_the_default_branch_is_counted_and_pg_bot_installed_at_the_pin(wf: dict[str, Any]) -> None:
    steps = wf["jobs"]["status"]["steps"]
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    assert checkout["with"]["fetch-depth"] == 0 and "repository" not in checkout["with"]
    assert steps[1]["uses"] == PG_BOT and steps[1]["with"]["command"] == "install"


def test_actions_pinned_and_no_expressions_in_run(wf: dict[str, Any]) -> None:
    for job in wf["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step.get("name")
            if "uses" in step:
                assert step["uses"] == PG_BOT or PINNED.match(step["uses"]), step["uses"]
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_commands_it_runs_parse(wf: dict[str, Any]) -> None:
    """The workflow's pg-bot command lines are accepted by the real parser (options not misspelt)."""
    runs = [s["run"] for s in wf["jobs"]["status"]["steps"] if s.get("run", "").startswith('"$PG_BOT" ')]
    verbs = []
    for run in runs:
        argv = shlex.split(run.replace("\\\n", " "))[1:]
        args = build_parser(only=argv[0]).parse_args(argv)
        verbs.append(args.verb)
        assert str(args.config) == "$PG_BOT_CONFIG" and str(args.repo_dir) == "tracked"
        if args.verb == "status":
            assert args.update_issue == "$ISSUE" and args.ref == "HEAD" and args.repo == "$GITHUB_REPOSITORY"
        if args.verb == "dashboard":
            assert args.last == 300 and str(args.out) == "site"
    assert verbs == ["status", "dashboard"]
    upload = next(s for s in wf["jobs"]["status"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "site"
