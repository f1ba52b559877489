"""pg-bot's own CI and the composite action pass actionlint and zizmor, and keep the security properties that
matter: no PR checkout in a job holding a write token, least permissions, pinned actions, no `${{ }}` in run.
The workflows a consumer adopts are checked in tests/test_workflows_consumer.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
REVIEW = ROOT / "examples" / "deepspeed" / ".github" / "workflows" / "pg-bot-review.yml"
PG_BOT = "deepspeedai/pg-bot@PG_BOT_PIN"  # the one pin a maintainer edits (docs/workflows.md)
SHA_PIN = re.compile(r"^[^@\s]+@[0-9a-f]{40}$")


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        hint = "apt-get install shellcheck" if name == "shellcheck" else "pip install -e '.[test]'"
        pytest.skip(f"{name} is not installed ({hint} provides it)")
    return path


def test_pg_bot_runs_only_its_own_ci_here() -> None:
    # the consumer's workflows are templates (examples/deepspeed/.github/workflows), not run in pg-bot's repo
    assert [p.name for p in WORKFLOWS] == ["ci.yml"]


def test_actionlint_passes_on_every_workflow() -> None:
    proc = subprocess.run([tool("actionlint"), "-no-color", *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_checks_the_action_metadata_through_a_workflow_that_uses_it(tmp_path: Path) -> None:
    # actionlint reads action.yml only when a workflow of a git repository uses it as a local action.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pg-bot").mkdir()
    shutil.copy(ACTION, tmp_path / "pg-bot" / "action.yml")
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "probe.yml").write_text(
        "on: pull_request\npermissions: {}\njobs:\n  probe:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: ./pg-bot\n        with:\n          pr: 1\n          fail-on-findings: 'true'\n"
        "          no-such-input: x\n"
    )
    proc = subprocess.run([tool("actionlint"), "-no-color", str(wf / "probe.yml")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    # the deliberately unknown input proves the metadata was read; nothing else may be reported
    problems = [ln for ln in proc.stdout.splitlines() if re.match(r"^\S+:\d+:\d+: ", ln)]
    assert len(problems) == 1 and 'input "no-such-input" is not defined' in problems[0], proc.stdout


def test_zizmor_passes_on_workflows_and_action() -> None:
    proc = subprocess.run([tool("zizmor"), "--offline", "--no-progress", *map(str, WORKFLOWS), str(ACTION)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_composite_action_scripts_pass_shellcheck(tmp_path: Path) -> None:
    action = yaml.safe_load(ACTION.read_text())
    scripts = [s["run"] for s in action["runs"]["steps"] if "run" in s]
    assert scripts
    for i, script in enumerate(scripts):
        assert "${{" not in script  # inputs reach the shell only through env:
        path = tmp_path / f"step{i}.sh"
        path.write_text("#!/usr/bin/env bash\n" + script)
        proc = subprocess.run([tool("shellcheck"), str(path)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout


def test_review_workflow_never_runs_pr_code_with_its_write_token() -> None:
    wf = yaml.safe_load(REVIEW.read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert "pull_request_target" in on
    assert wf["permissions"] == {}
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    for step in job["steps"]:
        assert "actions/checkout" not in step.get("uses", "")  # no checkout at all, of the PR or anything
        assert "run" not in step
        assert step["uses"] == PG_BOT  # pg-bot itself from the pinned commit
        assert step["with"]["command"] == "review"


def test_every_action_reference_is_pinned_to_a_commit() -> None:
    for path in [*WORKFLOWS, ACTION]:
        for ref in re.findall(r"^\s*(?:-\s*)?uses:\s*(\S+)", path.read_text(), re.MULTILINE):
            assert ref.startswith("./") or SHA_PIN.match(ref), f"{path.name}: {ref} is not pinned to a commit"


def test_ci_workflow_runs_the_ci_script() -> None:
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    assert wf["permissions"] == {"contents": "read"}
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    assert any(s.get("run") == "bash .ci/run" for s in steps)
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_ci_workflow_runs_the_oldest_and_newest_supported_python() -> None:
    from bot.pyproject import tomllib  # (tomli before 3.11)

    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    versions = [v for job in wf["jobs"].values() for v in job.get("strategy", {}).get("matrix", {}).get("python", [])]
    oldest = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"].removeprefix(">=")
    assert oldest in versions and "3.13" in versions
    setup = next(s for job in wf["jobs"].values() for s in job["steps"]
                 if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version"] == "${{ matrix.python }}"
