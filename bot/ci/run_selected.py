"""The one run step both distributed-test jobs (XPU and its CPU twin) call: re-validate, then run pytest.

``check_inputs`` re-validates the workflow inputs (the job never trusts its dispatcher) and ``run_tests``
checks that the checkout is the exact commit asked for, then runs pytest on the selected paths with only
multi-rank tests kept. The two jobs differ only in runner, install step and backend environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.ci.validate import DispatchInputs, ValidationError
from bot.config import CIConfig

PLUGIN = "pg_bot_world_size"
PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_plugin"


class RunError(Exception):
    """The checkout or the selection does not allow a run; the message says why."""


@dataclass(frozen=True)
class Plan:
    """What ``run_tests`` would execute; pure data so it can be shown (``--dry-run``) and tested."""

    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str]


def check_inputs(raw: Mapping[str, object], ci: CIConfig) -> DispatchInputs:
    return DispatchInputs.from_inputs(raw, ci.test_root, ci.max_test_paths)


def github_output_lines(inputs: DispatchInputs) -> str:
    """``key=value`` lines for ``$GITHUB_OUTPUT``; safe because every value is allow-listed (no newline)."""
    return "".join(f"{k}={v}\n" for k, v in inputs.as_inputs().items())


def plan(inputs: DispatchInputs, workdir: Path, *, python: str = sys.executable, min_world_size: int = 2,
         base_env: Mapping[str, str] | None = None, extra_pytest_args: Sequence[str] = ()) -> Plan:
    """The pytest command for ``inputs`` in ``workdir``; checks the commit and that every path exists."""
    if min_world_size < 1:
        raise RunError(f"min world size must be >= 1, got {min_world_size}")
    head = _git_head(workdir)
    if head != inputs.sha:
        raise RunError(f"{workdir} is at {head}, not at the commit to test {inputs.sha}")
    root = workdir.resolve()
    for test in inputs.tests:
        target = (root / test).resolve()
        if not target.is_relative_to(root):  # a symlink in the checkout pointing outside it
            raise RunError(f"test path {test} resolves outside the checkout")
        if not target.exists():
            raise RunError(f"test path {test} does not exist at {inputs.sha[:12]}")
    env = dict(os.environ if base_env is None else base_env)
    env["PG_BOT_MIN_WORLD_SIZE"] = str(min_world_size)
    # Only the plugin folder goes on the path, so the tested repo's own packages are not shadowed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PLUGIN_DIR), env.get("PYTHONPATH", "")) if p)
    # `--` ends pytest's options: even a path that slipped past validation could not become one.
    argv = (python, "-m", "pytest", "-p", PLUGIN, "-rA", *extra_pytest_args, "--", *inputs.tests)
    return Plan(argv=argv, cwd=root, env=env)


def run_tests(p: Plan) -> int:
    """Run the plan; pytest's exit code, except that "no test ran" (5) is reported as a failure too."""
    code = subprocess.run(p.argv, cwd=p.cwd, env=p.env, check=False).returncode
    if code == 5:
        print("pg-bot: no multi-rank test was selected or collected; failing rather than passing empty",
              file=sys.stderr)
    return code


def _git_head(workdir: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(workdir), "rev-parse", "--verify", "HEAD^{commit}"],
                             capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RunError(f"cannot run git: {exc}") from exc
    if out.returncode != 0:
        raise RunError(f"{workdir} is not a git checkout: {out.stderr.strip()[:200]}")
    return out.stdout.strip()


__all__ = ["Plan", "RunError", "ValidationError", "check_inputs", "github_output_lines", "plan", "run_tests"]
