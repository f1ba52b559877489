"""The dispatch workflows keep their security properties, and the XPU job and its CPU twin cannot drift.

These read the YAML as data; actionlint and zizmor themselves run over every workflow in a separate test.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
DISPATCHER, XPU, CPU = "pg-bot-dispatch.yml", "xpu-distributed.yml", "cpu-distributed.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data  # type: ignore[no-any-return]


def steps(wf: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(job, s) for job, j in wf["jobs"].items() for s in j.get("steps", [])]


@pytest.mark.parametrize("name", [DISPATCHER, XPU, CPU])
def test_no_expression_inside_run_and_every_action_pinned(name: str) -> None:
    for _, step in steps(load(name)):
        assert "${{" not in step.get("run", ""), f"{name}: template expression in run: {step.get('name')}"
        if "uses" in step:
            assert PINNED.match(step["uses"]), f"{name}: {step['uses']} is not pinned to a commit"
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


@pytest.mark.parametrize("name", [DISPATCHER, XPU, CPU])
def test_default_permissions_are_none_and_no_secrets(name: str) -> None:
    wf = load(name)
    assert wf["permissions"] == {}
    assert not re.search(r"\$\{\{[^}]*secrets\.", (WORKFLOWS / name).read_text(encoding="utf-8"))


def test_dispatcher_never_checks_out_pr_code() -> None:
    wf = load(DISPATCHER)
    assert wf["on"] == {"pull_request_target": {"types": ["labeled", "synchronize"]}}
    for _, step in steps(wf):
        if step.get("uses", "").startswith("actions/checkout@"):
            with_ = step.get("with", {})
            assert "ref" not in with_ and "repository" not in with_  # the base branch, the default
            assert with_.get("allow-unsafe-pr-checkout", False) is False
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read", "actions": "write", "issues": "write",
                                  "pull-requests": "write"}
    assert any("pg-bot dispatch" in s.get("run", "") for _, s in steps(wf))


@pytest.mark.parametrize("name, runner", [(XPU, ["self-hosted", "intel", "xpu"]), (CPU, "ubuntu-latest")])
def test_test_job_shape(name: str, runner: Any) -> None:
    wf = load(name)
    assert set(wf["on"]) == {"workflow_dispatch"}
    assert set(wf["on"]["workflow_dispatch"]["inputs"]) == {"repo", "sha", "pr", "tests"}
    test = wf["jobs"]["test"]
    assert test["runs-on"] == runner
    assert test["permissions"] == {"contents": "read"}
    names = [s.get("id") or s.get("uses", "").split("@")[0] or s["run"].split()[0] for s in test["steps"]]
    # trusted pg-bot first, then validation, and only then the PR's code
    validate = names.index("inputs")
    checkouts = [i for i, s in enumerate(test["steps"]) if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts[0] < validate < checkouts[1]
    pr_checkout = test["steps"][checkouts[1]]["with"]
    assert pr_checkout["repository"] == "${{ steps.inputs.outputs.repo }}"
    assert pr_checkout["ref"] == "${{ steps.inputs.outputs.sha }}"
    assert "check-inputs" in test["steps"][validate]["run"]
    run_step = test["steps"][-1]
    assert "pg-bot\" dispatch run-tests" in run_step["run"] and "--min-world-size=2" in run_step["run"]
    assert run_step["env"]["SHA"] == "${{ steps.inputs.outputs.sha }}"  # validated values only


@pytest.mark.parametrize("name", [XPU, CPU])
def test_status_jobs_hold_only_statuses_write_and_run_no_pr_code(name: str) -> None:
    wf = load(name)
    for job_name in ("pending", "status"):
        job = wf["jobs"][job_name]
        assert job["permissions"] == {"statuses": "write"}
        assert all("uses" not in s for s in job["steps"])  # no checkout, no action
        assert all("./pr" not in s.get("run", "") for s in job["steps"])
    assert wf["jobs"]["status"]["needs"] == "test" and wf["jobs"]["status"]["if"] == "always()"


def _normalised(wf: dict[str, Any]) -> dict[str, Any]:
    """The workflow with the differences the twins may have blanked out: names, runner, install, backend."""
    wf = copy.deepcopy(wf)
    for key in ("name", "run-name"):
        wf.pop(key, None)
    wf["concurrency"]["group"] = re.sub(r"^\w+-distributed", "X", wf["concurrency"]["group"])
    wf["jobs"]["test"].pop("runs-on")
    for job in wf["jobs"].values():
        job.pop("name", None)
        job.pop("timeout-minutes", None)
        for step in job.get("steps", []):
            if step.get("name", "").startswith("Install the code under test"):
                step.pop("name")
                step["run"] = "<install>"
            env = step.get("env", {})
            for backend_key in ("DS_ACCELERATOR", "FI_PROVIDER", "I_MPI_SHM", "GLOO_SOCKET_IFNAME"):
                env.pop(backend_key, None)
            if "run" in step:
                step["run"] = re.sub(r"(pg-bot/)(xpu|cpu)(-distributed)|distributed (XPU|CPU) tests",
                                     "<ctx>", step["run"])
    return wf


def test_cpu_twin_matches_the_xpu_job_except_runner_install_and_backend() -> None:
    xpu, cpu = _normalised(load(XPU)), _normalised(load(CPU))
    assert xpu == cpu


def test_twins_differ_where_they_must() -> None:
    xpu, cpu = load(XPU), load(CPU)
    assert "pg-bot/xpu-distributed" in str(xpu) and "pg-bot/cpu-distributed" in str(cpu)
    assert xpu["jobs"]["test"]["steps"][-1]["env"]["DS_ACCELERATOR"] == "xpu"
    assert cpu["jobs"]["test"]["steps"][-1]["env"]["DS_ACCELERATOR"] == "cpu"


@pytest.mark.parametrize("drift", [
    lambda wf: wf["jobs"]["test"]["steps"][-1].update(run="pytest tests"),
    lambda wf: wf["jobs"]["test"]["permissions"].update(actions="write"),
    lambda wf: wf["jobs"]["status"]["steps"][0]["env"].update(SHA="${{ github.sha }}"),
    lambda wf: wf["jobs"]["test"]["steps"].insert(0, {"run": "echo extra"}),
])
def test_a_drifted_twin_is_detected(drift: Any) -> None:
    cpu = load(CPU)
    drift(cpu)
    assert _normalised(load(XPU)) != _normalised(cpu)
