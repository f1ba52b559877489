"""Run the target project's tests in its own Python and read per-test outcomes from JUnit XML."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.migrate import junit
from bot.migrate.junit import Outcome

# Comparable runs: no random test order or seeds (pytest-randomly, in DeepSpeed's dev requirements), and no
# cache written into the tree between the two runs. `-p no:NAME` is harmless when the plugin is absent.
FIXED_ARGS = ("-p", "no:randomly", "-p", "no:cacheprovider", "-rA")
# pytest exit codes that still come with a complete report: all passed, some failed, none collected.
_REPORTED = {0, 1, 5}


class PytestError(Exception):
    """pytest could not run the tests (usage error, crash, timeout): no per-test outcomes."""


@dataclass(frozen=True)
class PytestRun:
    outcomes: dict[str, Outcome]
    returncode: int
    seconds: float
    log: Path
    command: tuple[str, ...]


def command(python: str, tests: Sequence[str], junit_xml: Path, extra: Sequence[str]) -> list[str]:
    # Test paths go after `--`, so a path can never be read as an option.
    return [python, "-m", "pytest", *FIXED_ARGS, f"--junitxml={junit_xml}", *extra, "--", *tests]


def run_tests(
    python: str,
    tree: Path,
    tests: Sequence[str],
    *,
    junit_xml: Path,
    log: Path,
    env: Mapping[str, str],
    extra: Sequence[str] = (),
    timeout: float | None = None,
) -> PytestRun:
    cmd = command(python, tests, junit_xml, extra)
    junit_xml.unlink(missing_ok=True)
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        try:
            # Its own session, so a timeout ends the test processes it forked too, not just pytest.
            proc = subprocess.Popen(cmd, cwd=tree, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise PytestError(f"cannot run {python}: {exc.strerror or exc}") from exc
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise PytestError(f"pytest did not finish in {timeout:g} s (log: {log})") from None
    seconds = time.monotonic() - started
    if code not in _REPORTED and not junit_xml.is_file():
        raise PytestError(f"pytest exited with {code} and wrote no report:\n{_tail(log)}\n(log: {log})")
    try:
        outcomes = junit.read(junit_xml)
    except junit.JUnitError as exc:
        raise PytestError(f"{exc} (pytest exited with {code}; log: {log})") from exc
    return PytestRun(outcomes, code, seconds, log, tuple(cmd))


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
