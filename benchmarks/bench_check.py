"""Speed of ``pg-bot check`` against semgrep and ast-grep with equivalent rules, on a real DeepSpeed checkout.

Every run is a fresh process (cold interpreter, no warm caches inside the tool); runs of the tools are
interleaved so all see the same OS file cache. Wall time is measured around the child; CPU time is the
user+sys of the child and all its descendants (``RUSAGE_CHILDREN`` before/after; the child is reaped with
``os.wait4``). On Linux this process is a child subreaper, so a worker a tool forgets to wait for is reparented
here, reaped, and still counted.

    python benchmarks/bench_check.py [TARGET] [--runs 5] [--semgrep PATH] [--ast-grep PATH] [--json OUT]

Semgrep lives in its own venv (it pins many packages): ``--semgrep PATH`` or, by default, one created on
demand at ``benchmarks/.venv-semgrep``. ast-grep is one binary from the PyPI package ``ast-grep-cli``:
``--ast-grep PATH``, else the one next to this interpreter, else ``ast-grep`` on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_TARGET = Path("/work/ds/deepspeed")
DEFAULT_RULES = HERE / "semgrep-rules.yml"
DEFAULT_SEMGREP_VENV = HERE / ".venv-semgrep"
SEMGREP_VERSION = "1.185.0"  # the version the published figures were measured with
DEFAULT_AST_GREP_CONFIG = HERE / "ast-grep" / "sgconfig.yml"
TOOLS = ("pg-bot", "semgrep", "ast-grep")
# One file a PR typically changes, relative to TARGET; timed with pg-bot alone ("a check of one changed file").
DEFAULT_ONE_FILE = "moe/sharded_moe.py"
ONE_FILE_TOOL = "pg-bot 1 file"
# Issue #11's speed targets: semgrep CPU / pg-bot CPU at least this; pg-bot wall / ast-grep wall at most this;
# one changed file well under this many seconds.
SEMGREP_CPU_TARGET = 8.0
AST_GREP_WALL_TARGET = 1.0
ONE_FILE_BUDGET = 1.0


class BenchError(Exception):
    """A setup or run problem the user can fix (missing tool, bad target, tool failure)."""


@dataclass(frozen=True)
class Tool:
    name: str
    argv: list[str]
    ok_codes: frozenset[int]  # exit codes that mean "ran to completion"
    count: Callable[[str], int | None]  # stdout -> number of findings
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Run:
    tool: str
    wall: float
    user: float
    sys: float
    returncode: int
    findings: int | None
    load: float = 0.0  # 1-minute load average when the run started: other work on the machine skews it

    @property
    def cpu(self) -> float:
        return self.user + self.sys


@dataclass(frozen=True)
class Summary:
    tool: str
    runs: int
    wall_median: float
    cpu_median: float
    cpu_min: float
    findings: int | None


# --- pure core -------------------------------------------------------------------------------------------

def count_semgrep(stdout: str) -> int | None:
    try:
        return len(json.loads(stdout)["results"])
    except (ValueError, KeyError, TypeError):
        return None


def count_ast_grep(stdout: str) -> int | None:
    """Matches in ``ast-grep scan --json=compact`` output: one JSON array, one element per match."""
    try:
        data: Any = json.loads(stdout)
    except ValueError:
        return None
    return len(data) if isinstance(data, list) else None


def count_pg_bot(stdout: str) -> int | None:
    """Findings in ``pg-bot check --format json`` output: a list of findings, or an object holding one."""
    try:
        data: Any = json.loads(stdout)
    except ValueError:
        return None
    if isinstance(data, dict):
        if isinstance(data.get("findings"), list):
            return len(data["findings"])
        if isinstance(data.get("files"), list):  # per-file results
            return sum(len(f.get("findings", [])) for f in data["files"] if isinstance(f, dict))
        summary = data.get("summary")
        if isinstance(summary, dict) and isinstance(summary.get("findings"), int):
            return int(summary["findings"])
        return None
    return len(data) if isinstance(data, list) else None


def summarise(runs: Sequence[Run]) -> Summary:
    if not runs:
        raise ValueError("no runs to summarise")
    findings = {r.findings for r in runs}
    return Summary(
        tool=runs[0].tool,
        runs=len(runs),
        wall_median=statistics.median(r.wall for r in runs),
        cpu_median=statistics.median(r.cpu for r in runs),
        cpu_min=min(r.cpu for r in runs),
        findings=findings.pop() if len(findings) == 1 else None,  # differing counts: not deterministic
    )


def ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


def table_rows(summaries: Sequence[Summary], baseline: str) -> list[list[str]]:
    """Rows of the report table; the last column is each tool's CPU time relative to ``baseline``."""
    base = next((s for s in summaries if s.tool == baseline), None)
    rows = []
    for s in summaries:
        rel = ratio(s.cpu_median, base.cpu_median) if base else None
        rows.append([
            s.tool, str(s.runs), f"{s.wall_median:.2f}", f"{s.cpu_median:.2f}", f"{s.cpu_min:.2f}",
            "?" if s.findings is None else str(s.findings), "-" if rel is None else f"{rel:.2f}x",
        ])
    return rows


HEADERS = ["tool", "runs", "wall s", "CPU s", "CPU s min", "findings", "CPU / pg-bot"]  # medians but "min"


def target_ratios(summaries: Sequence[Summary]) -> dict[str, float]:
    """The figures issue #11 sets targets for, from whichever tools were measured (medians)."""
    by_name = {s.tool: s for s in summaries}
    pg, sg, ag, one = (by_name.get(n) for n in ("pg-bot", "semgrep", "ast-grep", ONE_FILE_TOOL))
    pairs: dict[str, float | None] = {}
    if pg and sg:
        pairs["semgrep_cpu_over_pg_bot"] = ratio(sg.cpu_median, pg.cpu_median)
        pairs["semgrep_wall_over_pg_bot"] = ratio(sg.wall_median, pg.wall_median)
    if pg and ag:
        pairs["pg_bot_wall_over_ast_grep"] = ratio(pg.wall_median, ag.wall_median)
        pairs["pg_bot_cpu_over_ast_grep"] = ratio(pg.cpu_median, ag.cpu_median)
    if one:
        pairs["one_file_wall"] = one.wall_median
        pairs["one_file_cpu"] = one.cpu_median
    return {k: v for k, v in pairs.items() if v is not None}


def verdict_lines(ratios: dict[str, float]) -> list[str]:
    """One line per target: the measured figure and whether it meets the target."""

    def met(ok: bool) -> str:
        return "met" if ok else "NOT met"

    lines = []
    if "semgrep_cpu_over_pg_bot" in ratios:
        cpu = ratios["semgrep_cpu_over_pg_bot"]
        lines.append(f"semgrep / pg-bot: CPU {cpu:.2f}x (target >= {SEMGREP_CPU_TARGET:g}x: "
                     f"{met(cpu >= SEMGREP_CPU_TARGET)}), wall {ratios['semgrep_wall_over_pg_bot']:.2f}x")
    if "pg_bot_wall_over_ast_grep" in ratios:
        wall = ratios["pg_bot_wall_over_ast_grep"]
        lines.append(f"pg-bot / ast-grep: wall {wall:.2f}x (target <= {AST_GREP_WALL_TARGET:g}x: "
                     f"{met(wall <= AST_GREP_WALL_TARGET)}), CPU {ratios['pg_bot_cpu_over_ast_grep']:.2f}x")
    if "one_file_wall" in ratios:
        wall = ratios["one_file_wall"]
        lines.append(f"pg-bot on one file: wall {wall:.2f}s, CPU {ratios['one_file_cpu']:.2f}s "
                     f"(target well under {ONE_FILE_BUDGET:g}s: {met(wall < ONE_FILE_BUDGET)})")
    return lines


# --- I/O edges -------------------------------------------------------------------------------------------

def measure(tool: Tool, timeout: float) -> tuple[Run, str, str]:
    """Run ``tool`` once as a fresh process; return the run and its stdout and stderr."""
    env = {**os.environ, **tool.env}
    _become_subreaper()
    deadline = time.monotonic() + timeout
    # Files, not pipes: a chatty child must never block on a full pipe while we sit in wait4.
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(tool.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            raise BenchError(f"cannot start {tool.name} ({tool.argv[0]}): {exc}") from exc
        status = _wait(proc, deadline, tool.name)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; keep Popen from waiting again
        _reap_orphans(deadline, tool.name)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    run = Run(tool.name, wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
              proc.returncode, tool.count(stdout), load)
    return run, stdout, stderr


def _wait(proc: subprocess.Popen[Any], deadline: float, name: str) -> int:
    while True:
        pid, status, _usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return status
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            proc.returncode = -9
            raise BenchError(f"{name} did not finish within the timeout")
        time.sleep(0.01)


_SUBREAPER = False


def _become_subreaper() -> None:
    """Linux: adopt orphaned descendants, so their CPU time lands in our RUSAGE_CHILDREN too."""
    global _SUBREAPER
    if _SUBREAPER or not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_child_subreaper = 36
    _SUBREAPER = ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0


def _reap_orphans(deadline: float, name: str) -> None:
    """Wait for descendants the tool left behind (only possible as a subreaper); they count as its cost."""
    if not _SUBREAPER:
        return
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no children left
        if pid == 0:
            if time.monotonic() > deadline:
                raise BenchError(f"{name} left processes running past the timeout")
            time.sleep(0.01)


def ensure_semgrep(explicit: str | None, venv: Path, version: str) -> Path:
    """The semgrep executable: ``explicit``, else the benchmark venv's (created and filled on demand)."""
    if explicit:
        path = Path(explicit) if os.sep in explicit else Path(shutil.which(explicit) or explicit)
        if not path.is_file():
            raise BenchError(f"--semgrep {explicit}: no such executable")
        return path
    exe = venv / "bin" / "semgrep"
    if exe.is_file():
        return exe
    print(f"creating {venv} and installing semgrep=={version} (one-off) ...", file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"semgrep=={version}"],
                       check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BenchError(f"could not install semgrep into {venv}: {exc}; pass --semgrep PATH") from exc
    if not exe.is_file():
        raise BenchError(f"semgrep was installed but {exe} is missing; pass --semgrep PATH")
    return exe


def find_pg_bot(explicit: str | None) -> str:
    # The console script next to this interpreter first: that is the pg-bot installed in this venv.
    candidates = [explicit] if explicit else [str(Path(sys.executable).parent / "pg-bot"), "pg-bot"]
    for c in candidates:
        found = c if os.sep in c and Path(c).is_file() else shutil.which(c)
        if found:
            return found
    raise BenchError(f"pg-bot not found ({', '.join(candidates)}); install it with `pip install -e .`")


def find_ast_grep(explicit: str | None) -> str:
    # Not `sg`: on Linux that name is also shadow-utils' setgroups command.
    candidates = [explicit] if explicit else [str(Path(sys.executable).parent / "ast-grep"), "ast-grep"]
    for c in candidates:
        found = c if os.sep in c and Path(c).is_file() else shutil.which(c)
        if found:
            return found
    raise BenchError(f"ast-grep not found ({', '.join(candidates)}); `pip install ast-grep-cli` "
                     "or pass --ast-grep PATH")


def one_file(target: Path, requested: str | None) -> Path | None:
    """The file for the one-changed-file timing: ``requested`` (relative to TARGET; must exist; "" turns the
    timing off), else DEFAULT_ONE_FILE when TARGET has it."""
    if requested == "":
        return None
    path = target / (requested or DEFAULT_ONE_FILE)
    if path.is_file():
        return path
    if requested:
        raise BenchError(f"--one-file {requested}: no such file in {target}")
    print(f"bench_check: {path} not found; no one-file timing (pass --one-file PATH)", file=sys.stderr)
    return None


def build_tools(args: argparse.Namespace, target: Path) -> list[Tool]:
    tools = []
    if "pg-bot" in args.tools:
        pg_bot = find_pg_bot(args.pg_bot)
        # Bytecode caching on, as for an installed package (pip compiles it): with PYTHONDONTWRITEBYTECODE
        # set and an editable install, every run would recompile pg-bot's modules, which no user pays.
        env = {"PYTHONDONTWRITEBYTECODE": ""}
        tools.append(Tool("pg-bot", [pg_bot, "check", str(target), "--format", "json"],
                          frozenset({0, 1}), count_pg_bot, env))
        single = one_file(target, args.one_file)
        if single is not None:
            tools.append(Tool(ONE_FILE_TOOL, [pg_bot, "check", str(single), "--format", "json"],
                              frozenset({0, 1}), count_pg_bot, env))
    if "semgrep" in args.tools:
        semgrep = ensure_semgrep(args.semgrep, Path(args.semgrep_venv), args.semgrep_version)
        argv = [str(semgrep), "scan", "--config", str(args.rules), "--metrics=off", "--disable-version-check",
                "--json", "--quiet", "--max-target-bytes", "0", str(target)]
        if args.semgrep_jobs:
            argv[2:2] = ["--jobs", str(args.semgrep_jobs)]
        tools.append(Tool("semgrep", argv, frozenset({0}), count_semgrep,
                          env={"SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}))
    if "ast-grep" in args.tools:
        argv = [find_ast_grep(args.ast_grep), "scan", "--config", str(args.ast_grep_config), "--json=compact",
                str(target)]
        if args.ast_grep_threads:
            argv[2:2] = ["--threads", str(args.ast_grep_threads)]
        # 1: error-severity matches were found (configuration problems exit with other codes)
        tools.append(Tool("ast-grep", argv, frozenset({0, 1}), count_ast_grep))
    return tools


def run_all(tools: Sequence[Tool], runs: int, warmup: int, timeout: float) -> dict[str, list[Run]]:
    results: dict[str, list[Run]] = {t.name: [] for t in tools}
    for i in range(warmup + runs):
        for tool in tools:  # interleaved: all tools see the same OS cache state
            run, stdout, stderr = measure(tool, timeout)
            tail = "\n".join(stderr.strip().splitlines()[-15:])
            if run.returncode not in tool.ok_codes:
                raise BenchError(f"{tool.name} exited with {run.returncode}: {' '.join(tool.argv)}\n{tail}")
            if run.findings is None:  # no report: whatever it timed, it was not the check
                raise BenchError(f"{tool.name} printed no readable JSON report: {' '.join(tool.argv)}\n"
                                 f"stdout: {stdout[:300]!r}\n{tail}")
            label = "warm-up" if i < warmup else f"run {i - warmup + 1}/{runs}"
            print(f"{tool.name:13} {label:10} wall {run.wall:6.2f}s  cpu {run.cpu:6.2f}s  "
                  f"findings {run.findings}  load {run.load:.2f}", file=sys.stderr)
            if i >= warmup:
                results[tool.name].append(run)
    return results


def print_report(target: Path, files: int, summaries: Sequence[Summary], load: Sequence[float]) -> None:
    from rich.console import Console
    from rich.table import Table

    names = " vs ".join(s.tool for s in summaries if s.tool != ONE_FILE_TOOL)
    table = Table(title=f"{names} on {target} ({files} .py files, cpus={os.cpu_count()})",
                  caption="median of the measured runs; CPU = user+sys of the tool and all its processes; "
                          f"load average before/after {load[0]:.2f}/{load[1]:.2f}")
    for h in HEADERS:
        table.add_column(h, justify="left" if h == "tool" else "right")
    for row in table_rows(summaries, baseline="pg-bot"):
        table.add_row(*row)
    console = Console(width=max(100, shutil.get_terminal_size().columns))
    console.print(table)
    for line in verdict_lines(target_ratios(summaries)):
        console.print(line, highlight=False)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("target", nargs="?", type=Path, default=DEFAULT_TARGET,
                   help=f"package folder to check (default {DEFAULT_TARGET})")
    p.add_argument("--runs", type=int, default=5, help="measured runs per tool (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured runs per tool first (default 1)")
    p.add_argument("--tools", default=",".join(TOOLS), type=lambda s: s.split(","),
                   help=f"comma-separated subset of {','.join(TOOLS)} (default all)")
    p.add_argument("--pg-bot", help="pg-bot executable (default: the one in this venv)")
    p.add_argument("--semgrep", help="semgrep executable (default: benchmarks/.venv-semgrep, made on demand)")
    p.add_argument("--semgrep-venv", default=str(DEFAULT_SEMGREP_VENV), help=argparse.SUPPRESS)
    p.add_argument("--semgrep-version", default=SEMGREP_VERSION, help="semgrep version for a new venv")
    p.add_argument("--semgrep-jobs", type=int, help="semgrep --jobs (default: semgrep's own, = CPUs)")
    p.add_argument("--rules", type=Path, default=DEFAULT_RULES, help="semgrep rules file")
    p.add_argument("--ast-grep", help="ast-grep executable (default: the one in this venv, else on PATH)")
    p.add_argument("--ast-grep-config", type=Path, default=DEFAULT_AST_GREP_CONFIG,
                   help="ast-grep sgconfig.yml (default benchmarks/ast-grep/sgconfig.yml)")
    p.add_argument("--ast-grep-threads", type=int, help="ast-grep --threads (default: ast-grep's own)")
    p.add_argument("--one-file", help=f"file under TARGET for pg-bot's one-changed-file timing (default "
                                      f"{DEFAULT_ONE_FILE} when present; '' for none)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per run before it counts as failed")
    p.add_argument("--json", dest="json_out", type=Path, help="also write every run and summary as JSON")
    args = p.parse_args(argv)
    unknown = set(args.tools) - set(TOOLS)
    if unknown or not args.tools:
        p.error(f"--tools: unknown {', '.join(sorted(unknown))}; choose from {','.join(TOOLS)}")
    if args.runs < 1 or args.warmup < 0:
        p.error("--runs must be >= 1 and --warmup >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    target: Path = args.target
    try:
        if not target.is_dir():
            raise BenchError(f"target {target} is not a folder")
        if "semgrep" in args.tools and not args.rules.is_file():
            raise BenchError(f"semgrep rules {args.rules} not found")
        if "ast-grep" in args.tools and not args.ast_grep_config.is_file():
            raise BenchError(f"ast-grep config {args.ast_grep_config} not found")
        files = sum(1 for _ in target.rglob("*.py"))
        tools = build_tools(args, target)
        load_before = os.getloadavg()[0]
        results = run_all(tools, args.runs, args.warmup, args.timeout)
        load = (load_before, os.getloadavg()[0])  # 1-minute averages: other work on the machine skews figures
    except BenchError as exc:
        print(f"bench_check: {exc}", file=sys.stderr)
        return 2
    summaries = [summarise(runs) for runs in results.values()]
    print_report(target, files, summaries, load)
    if args.json_out:
        args.json_out.write_text(json.dumps({
            "target": str(target), "files": files, "cpus": os.cpu_count(), "load_average": load,
            "argv": {t.name: t.argv for t in tools},
            "runs": {name: [asdict(r) | {"cpu": r.cpu} for r in runs] for name, runs in results.items()},
            "summary": [asdict(s) for s in summaries],
            "ratios": target_ratios(summaries),
        }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
