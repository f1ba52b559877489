"""The workflows a consumer adopts (examples/deepspeed/.github), laid into a DeepSpeed-shaped repository.

There actionlint (with shellcheck) and zizmor pass, and every path, input, output, variable and reference the
workflows name exists: the action's inputs and outputs, the step outputs they read, the inputs the dispatcher
sends, the pg-bot command lines, the folders they hand each other, the policy and its test paths, the extras of
the install command. The shell steps that decide something (the action's checks, the policy resolution, the
dashboard push) are run here on real files and a local git remote.
With PG_BOT_DEEPSPEED=/path/to/DeepSpeed, the XPU job and its CPU twin are also compared with DeepSpeed's own
xpu-max1100.yml and cpu-torch-latest.yml.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import config as config_module
from bot.ci.validate import DispatchInputs
from bot.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "examples" / "deepspeed" / ".github"
ACTION = ROOT / "action.yml"
DOCS = ROOT / "docs" / "workflows.md"
PIN = "deepspeedai/pg-bot@PG_BOT_PIN"
NAMES = ("pg-bot-review.yml", "pg-bot-dispatch.yml", "pg-bot-status.yml", "xpu-distributed.yml",
         "cpu-distributed.yml")
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")
LOCAL_ACTION = "./.github/actions/pg-bot"
FAKE_SHA = "0123456789abcdef0123456789abcdef01234567"
DEEPSPEED = os.environ.get("PG_BOT_DEEPSPEED")


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        hint = "apt-get install shellcheck" if name == "shellcheck" else "pip install -e '.[test]'"
        pytest.skip(f"{name} is not installed ({hint} provides it)")
    return path


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:
        data["on"] = data.pop(True)  # YAML 1.1 reads the key `on` as True
    return data  # type: ignore[no-any-return]


def template(name: str) -> dict[str, Any]:
    return load(TEMPLATES / "workflows" / name)


def action() -> dict[str, Any]:
    return load(ACTION)


def steps_of(wf: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    return [(job, i, s) for job, j in wf["jobs"].items() for i, s in enumerate(j.get("steps", []))]


# ------------------------------------------------------------------ the DeepSpeed-shaped repository

POLICY = """\
version: 1
areas:
  - name: moe
    title: MoE
    paths: [deepspeed/moe/**]
    tests: [tests/unit/v1/moe]
  - name: zero
    title: ZeRO
    paths: [deepspeed/runtime/zero/**]
    tests: [tests/unit/runtime/zero]
ci:
  label: ci/xpu-distributed
  workflow: xpu-distributed.yml
  workflow_ref: master
  test_root: tests
  full_suite: [tests/unit]
  run_all_when: [deepspeed/comm/**, .github/**]
"""

FILES = {
    "setup.py": "from setuptools import setup\n\nextras_require = {\n    'dev': ['pytest'],\n"
                "    'autotuning': ['tabulate'],\n}\nsetup(name='deepspeed', extras_require=extras_require)\n",
    "deepspeed/__init__.py": "",
    "deepspeed/comm/__init__.py": "",
    "deepspeed/moe/layer.py": "import deepspeed.comm as dist\n\n\ndef reduce(t, ep_group=None):\n"
                              "    dist.all_reduce(t, group=ep_group)\n",
    "deepspeed/runtime/zero/stage3.py": "",
    "tests/unit/common.py": "class DistributedTest:\n    world_size = 2\n",
    "tests/unit/v1/moe/test_moe.py": "from unit.common import DistributedTest\n\n\nclass TestMoE(DistributedTest):\n"
                                     "    world_size = 2\n\n    def test(self):\n        pass\n",
    "tests/unit/runtime/zero/test_zero.py": "def test_zero():\n    pass\n",
    ".pg-bot.yaml": POLICY,
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


def lay(root: Path, pin: str) -> Path:
    """A DeepSpeed-shaped repository with the shipped workflows in it, the pg-bot pin replaced by ``pin``."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "master")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    shutil.copytree(TEMPLATES, root / ".github")
    (root / ".github" / "actions" / "pg-bot").mkdir(parents=True)
    shutil.copy(ACTION, root / ".github" / "actions" / "pg-bot" / "action.yml")
    for name in NAMES:
        path = root / ".github" / "workflows" / name
        path.write_text(path.read_text(encoding="utf-8").replace(PIN, pin), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "DeepSpeed-shaped")
    return root


@pytest.fixture(scope="module")
def local_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # actionlint reads an action's metadata (inputs, outputs) only for a local action
    return lay(tmp_path_factory.mktemp("ds") / "local", LOCAL_ACTION)


@pytest.fixture(scope="module")
def pinned_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lay(tmp_path_factory.mktemp("ds") / "pinned", f"deepspeedai/pg-bot@{FAKE_SHA}")


def workflow_paths(repo: Path) -> list[str]:
    return [str(repo / ".github" / "workflows" / n) for n in NAMES]


def test_the_templates_are_the_five_workflows_and_nothing_else() -> None:
    assert sorted(p.name for p in (TEMPLATES / "workflows").iterdir()) == sorted(NAMES)


def test_actionlint_passes_there_and_reads_the_action_inputs(local_repo: Path) -> None:
    tool("shellcheck")  # actionlint checks every run: script with shellcheck when it is on PATH
    lint = [tool("actionlint"), "-no-color", *workflow_paths(local_repo)]
    proc = subprocess.run(lint, cwd=local_repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the same run with one unknown action input must fail: actionlint did check the inputs against action.yml
    review = local_repo / ".github" / "workflows" / "pg-bot-review.yml"
    original = review.read_text(encoding="utf-8")
    review.write_text(original.replace("          command: review\n", "          command: review\n"
                                       "          no-such-input: x\n"), encoding="utf-8")
    try:
        proc = subprocess.run(lint, cwd=local_repo, capture_output=True, text=True, timeout=120)
    finally:
        review.write_text(original, encoding="utf-8")
    assert 'input "no-such-input" is not defined' in proc.stdout, proc.stdout


def test_zizmor_passes_there(pinned_repo: Path) -> None:
    action_copy = pinned_repo / ".github" / "actions" / "pg-bot" / "action.yml"
    proc = subprocess.run([tool("zizmor"), "--offline", "--no-progress", *workflow_paths(pinned_repo),
                           str(action_copy)], cwd=pinned_repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ pins, inputs, outputs


def test_pg_bot_comes_from_one_pin_and_every_other_action_from_a_commit() -> None:
    pg_bot_steps = []
    for name in NAMES:
        for ref in re.findall(r"^\s*(?:-\s*)?uses:\s*(\S+)", (TEMPLATES / "workflows" / name).read_text(),
                              re.MULTILINE):
            if "pg-bot@" in ref:
                pg_bot_steps.append((name, ref))
            else:
                assert SHA_PIN.match(ref), f"{name}: {ref} is not pinned to a commit"
    # one pg-bot step per workflow, all at the one pin the maintainer edits
    assert sorted(n for n, _ in pg_bot_steps) == sorted(NAMES)
    assert {ref for _, ref in pg_bot_steps} == {PIN}


def test_the_action_is_given_only_inputs_it_declares() -> None:
    declared = action()["inputs"]
    required = {k for k, v in declared.items() if v.get("required")}
    for name in NAMES:
        for job, _, step in steps_of(template(name)):
            if step.get("uses") == PIN:
                given = set(step.get("with", {}))
                assert given <= set(declared), f"{name}/{job}: {given - set(declared)}"
                assert required <= given
                assert step["with"]["command"] in ("review", "install")


def test_every_step_output_read_is_written_by_an_earlier_step_of_the_job() -> None:
    action_outputs = set(action()["outputs"])
    check_inputs_outputs = set(DispatchInputs(repo="o/r", sha="0" * 40, pr=1, tests=("tests/a",)).as_inputs())
    for name in NAMES:
        wf = template(name)
        for job_name, job in wf["jobs"].items():
            ids = {s["id"]: i for i, s in enumerate(job.get("steps", [])) if "id" in s}
            for i, step in enumerate(job.get("steps", [])):
                for sid, out in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", yaml.safe_dump(step)):
                    assert sid in ids and ids[sid] < i, f"{name}/{job_name}: steps.{sid} is not an earlier step"
                    writer = job["steps"][ids[sid]]
                    if writer.get("uses") == PIN:
                        assert out in action_outputs, f"{name}: the action has no output {out}"
                    elif "dispatch check-inputs" in writer.get("run", ""):
                        assert out in check_inputs_outputs
                    else:
                        assert f'echo "{out}=' in writer["run"], f"{name}: step {sid} does not write {out}"


def test_the_action_reads_only_inputs_it_declares_and_uses_every_one() -> None:
    meta = action()
    text = ACTION.read_text(encoding="utf-8")
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used == set(meta["inputs"])
    step_ids = {s["id"] for s in meta["runs"]["steps"] if "id" in s}
    for out in meta["outputs"].values():
        (sid,) = re.findall(r"steps\.([\w-]+)\.outputs", out["value"])
        assert sid in step_ids


def test_the_dispatcher_sends_exactly_the_inputs_the_test_workflows_take() -> None:
    sent = set(DispatchInputs(repo="o/r", sha="0" * 40, pr=1, tests=("tests/a",)).as_inputs())
    for name in ("xpu-distributed.yml", "cpu-distributed.yml"):
        wf = template(name)
        declared = wf["on"]["workflow_dispatch"]["inputs"]
        assert set(declared) == sent and all(v["required"] for v in declared.values())
        read = set(re.findall(r"(?<![\w.])inputs\.([\w-]+)", (TEMPLATES / "workflows" / name).read_text()))
        assert read <= sent


@pytest.mark.parametrize("policy", ["laid", "packaged"])
def test_the_policy_dispatches_a_shipped_workflow(policy: str, tmp_path: Path) -> None:
    if policy == "laid":
        (tmp_path / ".pg-bot.yaml").write_text(POLICY, encoding="utf-8")
        ci = config_module.load(tmp_path / ".pg-bot.yaml").ci
    else:
        ci = config_module.load().ci
    assert ci.workflow in NAMES
    assert "workflow_dispatch" in template(ci.workflow)["on"]
    assert ci.workflow_ref == "master"  # DeepSpeed's default branch


# ------------------------------------------------------------------ command lines, variables, paths

RUNNER_VARS = re.compile(r"^(GITHUB_\w+|RUNNER_\w+|HOME|PATH)$")


def _assigned(script: str) -> set[str]:
    names = set(re.findall(r"(?:^|[\s;(])([A-Za-z_]\w*)=", script, re.MULTILINE))
    names |= set(re.findall(r"\bfor\s+([A-Za-z_]\w*)\s+in\b", script))
    return names


def _shell_steps() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(where, step, env visible to it) for every run: step of the templates and of the action."""
    out = []
    for name in NAMES:
        wf = template(name)
        for job_name, job in wf["jobs"].items():
            for step in job.get("steps", []):
                if "run" in step:
                    env = {**wf.get("env", {}), **job.get("env", {}), **step.get("env", {})}
                    out.append((f"{name}/{job_name}", step, env))
    for step in action()["runs"]["steps"]:
        if "run" in step:
            out.append(("action.yml", step, step.get("env", {})))
    return out


def test_every_shell_variable_is_set_by_the_step_the_runner_or_the_script() -> None:
    for where, step, env in _shell_steps():
        script = step["run"]
        assert "${{" not in script, f"{where}: expression inside run: (inputs reach the shell through env:)"
        used = set(re.findall(r"\$\{?([A-Za-z_]\w*)", script))
        unknown = {v for v in used if v not in env and not RUNNER_VARS.match(v)} - _assigned(script)
        assert not unknown, f"{where} ({step.get('name')}): {sorted(unknown)} never set"


def _pg_bot_commands() -> list[tuple[str, dict[str, Any], list[str]]]:
    found = []
    for where, step, env in _shell_steps():
        joined = step["run"].replace("\\\n", " ")
        for line in joined.splitlines():
            if line.strip().startswith('"$PG_BOT" '):
                lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
                lexer.whitespace_split = True
                words = list(lexer)
                ends = [i for i, w in enumerate(words) if set(w) <= set("();<>|&")]
                found.append((where, env, words[1:ends[0] if ends else None]))
    return found


def test_every_pg_bot_command_line_parses_and_gets_the_resolved_policy() -> None:
    commands = _pg_bot_commands()
    verbs = set()
    for where, env, argv in commands:
        verb = argv[0]
        # a variable stands for its value: where the option is typed, give the parser a value of that type
        args = build_parser(only=verb).parse_args([a.replace("$PG_BOT_PR", "1") for a in argv])
        verbs.add(verb if verb != "dispatch" else f"dispatch {args.mode or ''}".strip())
        configs = [a for a in argv if a.startswith("--config")]
        if where == "action.yml" and verb == "check":  # the action's own validation of the file it resolved
            assert configs == ["--config=$config"]
            continue
        assert configs == ["--config=$PG_BOT_CONFIG"], f"{where}: {argv}"
        if where != "action.yml":
            assert env["PG_BOT"] == "${{ steps.pg-bot.outputs.executable }}"
            assert env["PG_BOT_CONFIG"] == "${{ steps.pg-bot.outputs.config }}"
    assert verbs == {"check", "review", "status", "dashboard", "dispatch", "dispatch check-inputs",
                     "dispatch run-tests"}


def test_folders_handed_between_steps_agree() -> None:
    for name in ("xpu-distributed.yml", "cpu-distributed.yml"):
        test = template(name)["jobs"]["test"]
        checkout = next(s for s in test["steps"] if s.get("uses", "").startswith("actions/checkout@"))
        install = next(s for s in test["steps"] if s.get("id") == "install")
        run = test["steps"][-1]["run"]
        assert checkout["with"]["path"] == install["working-directory"] == "pr"
        assert "--workdir=pr " in run.replace("\\\n", " ")
    status = template("pg-bot-status.yml")["jobs"]
    steps = status["status"]["steps"]
    tracked = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))["with"]["path"]
    dashboard = next(s["run"] for s in steps if "dashboard" in s.get("run", ""))
    upload = next(s for s in steps if "upload-artifact" in s.get("uses", ""))["with"]
    download = status["publish"]["steps"][0]["with"]
    assert tracked == "tracked" and "--repo-dir=tracked" in dashboard
    assert "--out=site" in dashboard and upload["path"] == "site" == download["path"]
    assert upload["name"] == download["name"] == "pg-bot-dashboard"
    assert "cp -R ../site/." in status["publish"]["steps"][1]["run"]  # run from publish/, beside site/


def test_the_policy_the_action_finds_is_in_the_repository_with_its_test_paths(local_repo: Path) -> None:
    checkout = next(s for s in action()["runs"]["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    default = re.search(r"inputs\.config \|\| '([^']+)'", checkout["with"]["sparse-checkout"])
    assert default is not None
    policy = local_repo / default.group(1)
    config = config_module.load(policy)
    for area in config.areas:
        for test in area.tests:
            assert (local_repo / test).exists(), f"{policy}: area {area.name}: {test} does not exist"
    for test in (config.ci.test_root, *config.ci.full_suite):
        assert (local_repo / test).is_dir()


def _extras(setup_py: Path) -> set[str]:
    """Keys of the dict literal assigned to `extras_require` in setup.py: read as a syntax tree, never run."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(setup_py.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Name) and t.id == "extras_require" for t in node.targets):
            keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return keys


def _install_extras() -> set[str]:
    extras = set()
    for name in ("xpu-distributed.yml", "cpu-distributed.yml"):
        run = next(s for s in template(name)["jobs"]["test"]["steps"] if s.get("id") == "install")["run"]
        (spec,) = re.findall(r'"?\.\[([\w,-]+)\]"?', run)
        extras |= set(spec.split(","))
    return extras


def test_the_install_command_names_extras_the_repository_has(local_repo: Path) -> None:
    assert _install_extras() == {"dev", "autotuning"} <= _extras(local_repo / "setup.py")


def test_status_contexts_name_their_workflow() -> None:
    for name in ("xpu-distributed.yml", "cpu-distributed.yml"):
        wf = template(name)
        contexts = set(re.findall(r"context=(\S+)", (TEMPLATES / "workflows" / name).read_text()))
        assert contexts == {f"pg-bot/{wf['name']}"}


def test_every_variable_input_and_template_is_documented() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    variables = {v for n in NAMES for v in re.findall(r"vars\.(\w+)", (TEMPLATES / "workflows" / n).read_text())}
    assert variables == set(re.findall(r"^\| `(PG_BOT_\w+)` \|", docs, re.MULTILINE))
    documented_inputs = set(re.findall(r"^\| `([\w-]+)` \|", docs, re.MULTILINE)) - variables
    assert documented_inputs == set(action()["inputs"])
    for name in NAMES:
        assert f"`{name}`" in docs
    assert "PG_BOT_PIN" in docs


# ------------------------------------------------------------------ the shell steps, run


def _run_script(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd,
                          env={**base, **env}, capture_output=True, text=True, timeout=120)


def _action_step(name_start: str) -> str:
    return next(s["run"] for s in action()["runs"]["steps"] if s.get("name", "").startswith(name_start))


@pytest.mark.parametrize("env, ok", [
    ({"COMMAND": "install", "VERSION": "", "CONFIG": "", "FAIL_ON_FINDINGS": "false"}, True),
    ({"COMMAND": "review", "VERSION": "0.1.0", "CONFIG": ".github/pg-bot.yaml", "FAIL_ON_FINDINGS": "true"}, True),
    ({"COMMAND": "status", "VERSION": "", "CONFIG": "", "FAIL_ON_FINDINGS": "false"}, False),
    ({"COMMAND": "install", "VERSION": "0.1; rm -rf /", "CONFIG": "", "FAIL_ON_FINDINGS": "false"}, False),
    ({"COMMAND": "install", "VERSION": "", "CONFIG": "../etc/x.yaml", "FAIL_ON_FINDINGS": "false"}, False),
    ({"COMMAND": "install", "VERSION": "", "CONFIG": "/etc/x.yaml", "FAIL_ON_FINDINGS": "false"}, False),
    ({"COMMAND": "install", "VERSION": "", "CONFIG": "", "FAIL_ON_FINDINGS": "yes"}, False),
])
def test_the_action_checks_its_inputs(env: dict[str, str], ok: bool, tmp_path: Path) -> None:
    proc = _run_script(_action_step("Check the action's inputs"), env, tmp_path)
    assert (proc.returncode == 0) is ok, proc.stdout + proc.stderr
    if not ok:
        assert "::error title=pg-bot action::" in proc.stdout


@pytest.fixture()
def pg_bot(tmp_path: Path) -> Path:
    """A `pg-bot` executable running this checkout's bot (as the action's venv would)."""
    exe = tmp_path / "bin" / "pg-bot"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} exec {shlex.quote(sys.executable)} '
                   '-m bot.cli "$@"\n', encoding="utf-8")
    exe.chmod(0o755)
    return exe


def _resolve(tmp_path: Path, pg_bot: Path, config: str, files: dict[str, str]) -> tuple[
        subprocess.CompletedProcess[str], Path]:
    workspace, temp = tmp_path / "ws", tmp_path / "temp"
    temp.mkdir()
    for rel, text in files.items():
        (workspace / ".pg-bot-policy" / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / ".pg-bot-policy" / rel).write_text(text, encoding="utf-8")
    (workspace / ".pg-bot-policy").mkdir(parents=True, exist_ok=True)
    output = tmp_path / "output"
    output.touch()
    env = {"CONFIG": config, "PG_BOT": str(pg_bot), "PG_BOT_PYTHON": sys.executable, "GITHUB_WORKSPACE":
           str(workspace), "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(output),
           "PYTHONPATH": str(ROOT)}
    proc = _run_script(_action_step("Resolve and validate the policy"), env, workspace)
    return proc, output


def test_policy_given_and_present_is_used_and_the_workspace_left_clean(tmp_path: Path, pg_bot: Path) -> None:
    proc, output = _resolve(tmp_path, pg_bot, "ci/pg.yaml", {"ci/pg.yaml": POLICY})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (line,) = output.read_text().splitlines()
    resolved = Path(line.removeprefix("config="))
    assert resolved.read_text(encoding="utf-8") == POLICY and resolved.is_relative_to(tmp_path / "temp")
    assert not (tmp_path / "ws" / ".pg-bot-policy").exists()


def test_policy_given_but_absent_is_an_error(tmp_path: Path, pg_bot: Path) -> None:
    proc, output = _resolve(tmp_path, pg_bot, "ci/pg.yaml", {".pg-bot.yaml": POLICY})
    assert proc.returncode == 1 and "ci/pg.yaml is not a file on the default branch" in proc.stdout
    assert output.read_text() == ""


def test_without_a_setting_the_default_branch_pg_bot_yaml_is_used(tmp_path: Path, pg_bot: Path) -> None:
    proc, output = _resolve(tmp_path, pg_bot, "", {".pg-bot.yaml": POLICY})
    assert proc.returncode == 0, proc.stderr
    assert Path(output.read_text().strip().removeprefix("config=")).name == ".pg-bot.yaml"


def test_without_any_policy_file_the_packaged_one_applies_and_says_so(tmp_path: Path, pg_bot: Path) -> None:
    proc, output = _resolve(tmp_path, pg_bot, "", {})
    assert proc.returncode == 0, proc.stderr
    assert "pg-bot's packaged policy applies" in proc.stdout
    resolved = Path(output.read_text().strip().removeprefix("config="))
    assert resolved.read_text(encoding="utf-8") == config_module.default_path().read_text(encoding="utf-8")


def test_a_policy_pg_bot_cannot_read_fails_the_step_naming_its_line(tmp_path: Path, pg_bot: Path) -> None:
    proc, output = _resolve(tmp_path, pg_bot, "", {".pg-bot.yaml": "version: 1\nareas: 3\n"})
    assert proc.returncode == 2 and ".pg-bot.yaml:2:" in proc.stderr
    assert output.read_text() == ""


# ------------------------------------------------------------------ the dashboard push


def _publish_script() -> str:
    return template("pg-bot-status.yml")["jobs"]["publish"]["steps"][1]["run"]  # type: ignore[no-any-return]


@pytest.fixture()
def origin(tmp_path: Path) -> Path:
    """A bare remote whose gh-pages branch already serves a website."""
    work = tmp_path / "seed"
    work.mkdir()
    git(work, "init", "-q", "-b", "master")
    (work / "README.md").write_text("code\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "code")
    git(work, "checkout", "-q", "--orphan", "gh-pages")
    git(work, "rm", "-rfq", ".")
    (work / "index.html").write_text("<p>the project's website</p>\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "site")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def _publish(tmp_path: Path, origin: Path, branch: str, folder: str = "") -> subprocess.CompletedProcess[str]:
    job = tmp_path / "job"
    shutil.rmtree(job, ignore_errors=True)
    (job / "site").mkdir(parents=True)
    (job / "site" / "index.html").write_text("<p>dashboard</p>\n")
    (job / "site" / "history.json").write_text("{}\n")
    env = {"GH_TOKEN": "", "BRANCH": branch, "FOLDER": folder or "pg-bot", "DEFAULT_BRANCH": "master",
           "REMOTE": str(origin), "GITHUB_SHA": "f" * 40, "GITHUB_REPOSITORY": "o/r",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    return _run_script(_publish_script(), env, job)


def _tree(origin: Path, branch: str) -> dict[str, str]:
    names = git(origin, "ls-tree", "-r", "--name-only", branch).split()
    return {n: git(origin, "show", f"{branch}:{n}") for n in names}


def test_the_dashboard_goes_into_its_folder_and_the_website_stays(tmp_path: Path, origin: Path) -> None:
    proc = _publish(tmp_path, origin, "gh-pages")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _tree(origin, "gh-pages") == {"index.html": "<p>the project's website</p>\n",
                                         "pg-bot/index.html": "<p>dashboard</p>\n", "pg-bot/history.json": "{}\n"}
    head = git(origin, "rev-parse", "gh-pages")
    proc = _publish(tmp_path, origin, "gh-pages")  # the same dashboard again: no new commit
    assert proc.returncode == 0 and "dashboard unchanged" in proc.stdout
    assert git(origin, "rev-parse", "gh-pages") == head


def test_a_new_branch_holds_only_the_dashboard_folder(tmp_path: Path, origin: Path) -> None:
    proc = _publish(tmp_path, origin, "pg-bot-dashboard", "status/latest")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(_tree(origin, "pg-bot-dashboard")) == {"status/latest/index.html", "status/latest/history.json"}


@pytest.mark.parametrize("branch, folder, message", [
    ("master", "", "refusing to push the dashboard to the default branch"),
    ("gh-pages", "../x", "must be a relative folder"),
    ("gh-pages", ".", "must be a relative folder"),
    ("bad..name", "", "not a branch name"),
])
def test_the_push_refuses_what_could_overwrite_other_content(tmp_path: Path, origin: Path, branch: str,
                                                             folder: str, message: str) -> None:
    before = git(origin, "for-each-ref")
    proc = _publish(tmp_path, origin, branch, folder)
    assert proc.returncode == 1 and message in proc.stdout
    assert git(origin, "for-each-ref") == before


# ------------------------------------------------------------------ DeepSpeed's own environment (opt-in)


def _run_tokens(steps: list[dict[str, Any]]) -> list[list[str]]:
    lines = []
    for step in steps:
        for line in step.get("run", "").replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            if tokens:
                lines.append(tokens)
    return lines


def _is_subsequence(needles: list[list[str]], haystack: list[list[str]]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@pytest.mark.skipif(not DEEPSPEED, reason="PG_BOT_DEEPSPEED is not set")
def test_the_xpu_job_mirrors_deepspeeds_xpu_workflow() -> None:
    ds = load(Path(str(DEEPSPEED)) / ".github" / "workflows" / "xpu-max1100.yml")
    (ds_job,) = ds["jobs"].values()
    ours = template("xpu-distributed.yml")["jobs"]["test"]
    assert ours["runs-on"] == ds_job["runs-on"]
    assert ours["container"] == ds_job["container"]
    prerequisite = next(s for s in ds_job["steps"] if ".[dev,autotuning]" in s.get("run", ""))
    assert _is_subsequence(_run_tokens([prerequisite]), _run_tokens(ours["steps"]))
    exported = [m for s in ds_job["steps"] for m in re.findall(r'export (\w+)="?([^"\s]+?)"?$', s.get("run", ""),
                                                               re.MULTILINE)]
    assert exported  # DeepSpeed's backend settings (FI_PROVIDER, I_MPI_SHM) reach our run step
    env = ours["steps"][-1]["env"]
    for name, value in exported:
        assert env[name] == value, name


@pytest.mark.skipif(not DEEPSPEED, reason="PG_BOT_DEEPSPEED is not set")
def test_the_cpu_twin_mirrors_deepspeeds_cpu_workflow() -> None:
    path = Path(str(DEEPSPEED)) / ".github" / "workflows" / "cpu-torch-latest.yml"
    ds_job = load(path)["jobs"]["unit-tests"]
    text = path.read_text(encoding="utf-8")
    ours = template("cpu-distributed.yml")["jobs"]["test"]
    tokens = _run_tokens(ours["steps"])
    assert ours["runs-on"] == ds_job["runs-on"]
    torch = ds_job["env"]["DEFAULT_TORCH_PRESET"].removesuffix("-cpu")
    vision = re.search(rf"'{re.escape(torch)}-cpu'\)\s+torch_install_version='[^']+'\s+"
                       r"torchvision_install_version='([^']+)'", text)
    assert vision is not None
    index = re.search(r"PYTORCH_INDEX_URL=(\S+)\"", text)
    assert index is not None
    assert ["pip", "install", f"torch=={torch}", f"torchvision=={vision.group(1)}", "--index-url",
            index.group(1)] in tokens
    assert ["pip", "install", ".[dev,autotuning]"] in tokens
    assert ["sudo", "apt-get", "install", "-y", "numactl", "pdsh"] in tokens
    assert _install_extras() <= _extras(Path(str(DEEPSPEED)) / "setup.py")
