"""The shipped dispatch workflows keep their security properties, and the XPU job and its CPU twin cannot drift.

These read the YAML of examples/deepspeed/.github/workflows as data; actionlint and zizmor run over them in
tests/test_workflows_consumer.py, laid into a DeepSpeed-shaped repository.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

WORKFLOWS = Path(__file__).resolve().parents[1] / "examples" / "deepspeed" / ".github" / "workflows"
DISPATCHER, XPU, CPU = "pg-bot-dispatch.yml", "xpu-distributed.yml", "cpu-distributed.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")
PG_BOT = "deepspeedai/pg-bot@PG_BOT_PIN"  # the one pin a maintainer edits (docs/workflows.md)


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
            assert step["uses"] == PG_BOT or PINNED.match(step["uses"]), f"{name}: {step['uses']} is not pinned"
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
    # no checkout of its own: the action checks out the policy file from the default branch, nothing else
    assert not [s for _, s in steps(wf) if s.get("uses", "").startswith("actions/checkout@")]
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read", "actions": "write", "issues": "write",
                                  "pull-requests": "write"}
    first, dispatch = job["steps"]
    assert first["uses"] == PG_BOT and first["with"]["command"] == "install"
    assert dispatch["run"] == '"$PG_BOT" dispatch --config="$PG_BOT_CONFIG"'


def test_the_action_checks_out_only_the_policy_file_of_the_default_branch() -> None:
    action = yaml.safe_load((WORKFLOWS.parents[3] / "action.yml").read_text(encoding="utf-8"))
    (checkout,) = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    with_ = checkout["with"]
    assert with_["ref"] == "${{ github.event.repository.default_branch }}"
    assert "repository" not in with_  # this repository, never a PR head's
    assert with_["sparse-checkout"].startswith("/${{ inputs.config || ")  # one file, anchored at the root
    assert with_["sparse-checkout-cone-mode"] is False and with_["persist-credentials"] is False
    assert with_.get("allow-unsafe-pr-checkout", False) is False


@pytest.mark.parametrize("name, runner", [(XPU, ["self-hosted", "intel", "xpu"]), (CPU, "ubuntu-24.04")])
def test_test_job_shape(name: str, runner: Any) -> None:
    wf = load(name)
    assert set(wf["on"]) == {"workflow_dispatch"}
    assert set(wf["on"]["workflow_dispatch"]["inputs"]) == {"repo", "sha", "pr", "tests"}
    test = wf["jobs"]["test"]
    assert test["runs-on"] == runner
    assert test["permissions"] == {"contents": "read"}
    ids = [s.get("id") for s in test["steps"]]
    # trusted pg-bot first, then validation, and only then the PR's code
    install_pg_bot, validate = ids.index("pg-bot"), ids.index("inputs")
    assert test["steps"][install_pg_bot]["uses"] == PG_BOT
    assert test["steps"][install_pg_bot]["with"]["python"] == "python3"  # not setup-python: PATH stays the test's
    checkouts = [i for i, s in enumerate(test["steps"]) if s.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 1 and install_pg_bot < validate < checkouts[0] < ids.index("install")
    pr_checkout = test["steps"][checkouts[0]]["with"]
    assert pr_checkout["repository"] == "${{ steps.inputs.outputs.repo }}"
    assert pr_checkout["ref"] == "${{ steps.inputs.outputs.sha }}"
    assert "check-inputs" in test["steps"][validate]["run"]
    run_step = test["steps"][-1]
    assert '"$PG_BOT" dispatch run-tests' in run_step["run"] and "--min-world-size=2" in run_step["run"]
    assert run_step["env"]["SHA"] == "${{ steps.inputs.outputs.sha }}"  # validated values only
    assert run_step["env"]["TEST_PYTHON"] == "${{ steps.install.outputs.python }}"


@pytest.mark.parametrize("name", [XPU, CPU])
def test_status_jobs_hold_only_statuses_write_and_run_no_pr_code(name: str) -> None:
    wf = load(name)
    for job_name in ("pending", "status"):
        job = wf["jobs"][job_name]
        assert job["permissions"] == {"statuses": "write"}
        assert all("uses" not in s for s in job["steps"])  # no checkout, no action
        assert all("./pr" not in s.get("run", "") for s in job["steps"])
    assert wf["jobs"]["status"]["needs"] == "test" and wf["jobs"]["status"]["if"] == "always()"


BACKEND_ENV = ("DS_ACCELERATOR", "FI_PROVIDER", "I_MPI_SHM", "GLOO_SOCKET_IFNAME", "LOCAL_SIZE")
ENVIRONMENT_STEPS = ("Prepare the test environment", "Install the code under test")


def _normalised(wf: dict[str, Any]) -> dict[str, Any]:
    """The workflow with the differences the twins may have blanked out: names, runner and container, the two
    steps that set up DeepSpeed's environment (their place and id stay), backend variables."""
    wf = copy.deepcopy(wf)
    for key in ("name", "run-name"):
        wf.pop(key, None)
    wf["concurrency"]["group"] = re.sub(r"^\w+-distributed", "X", wf["concurrency"]["group"])
    wf["jobs"]["test"].pop("runs-on")
    wf["jobs"]["test"].pop("container", None)
    for job in wf["jobs"].values():
        job.pop("name", None)
        job.pop("timeout-minutes", None)
        for step in job.get("steps", []):
            if step.get("name", "").startswith(ENVIRONMENT_STEPS):
                step["name"] = next(p for p in ENVIRONMENT_STEPS if step["name"].startswith(p))
                step["run"] = "<environment>"
            env = step.get("env", {})
            for backend_key in BACKEND_ENV:
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
    assert xpu["jobs"]["test"]["container"]["image"].startswith("intel/oneapi-basekit:")
    assert "container" not in cpu["jobs"]["test"]
    assert "whl/xpu" in str(xpu["jobs"]["test"]) and "whl/cpu" in str(cpu["jobs"]["test"])


@pytest.mark.parametrize("drift", [
    lambda wf: wf["jobs"]["test"]["steps"][-1].update(run="pytest tests"),
    lambda wf: wf["jobs"]["test"]["permissions"].update(actions="write"),
    lambda wf: wf["jobs"]["status"]["steps"][0]["env"].update(SHA="${{ github.sha }}"),
    lambda wf: wf["jobs"]["test"]["steps"].insert(0, {"run": "echo extra"}),
    lambda wf: wf["jobs"]["test"]["steps"][1]["with"].update(version="0.1.0"),  # the pg-bot install
    lambda wf: wf["jobs"]["test"]["steps"][-1]["env"].update(TEST_PYTHON="python3"),
    lambda wf: wf["jobs"]["test"]["steps"].reverse(),  # environment steps keep their places
])
def test_a_drifted_twin_is_detected(drift: Any) -> None:
    cpu = load(CPU)
    drift(cpu)
    assert _normalised(load(XPU)) != _normalised(cpu)
