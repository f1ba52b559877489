"""Run a scenario on N spawned processes that form a gloo process group on loopback, under hard deadlines.

A scenario runs inside every child and returns JSON-able observations; the tests assert on them in the
parent, so a wrong value is an ordinary pytest failure showing what every rank saw. Spawning (and importing
torch in each child) is the expensive part, so one run should serve several test cases.

Failure modes are bounded: ``init_process_group`` and the store get ``timeout=``, the parent joins with a
deadline and kills whatever is still alive, and one failing rank ends the run at once instead of leaving its
peers blocked in a collective until the deadline.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing as mp
import multiprocessing.connection
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

Observations = dict[str, Any]
HOST = "127.0.0.1"


class DistRunError(RuntimeError):
    """A multi-process run failed: a rank raised, died, or did not finish before the deadline."""


@dataclass
class RankContext:
    """What a scenario gets in its child process: its rank, the world size and a way to join the group."""

    rank: int
    world_size: int
    store_port: int | None
    init_timeout: float

    def init_process_group(self) -> None:
        """Join the gloo group through the parent's TCP store (so no port is ever picked twice)."""
        if self.store_port is None:
            raise DistRunError("this run was started with init=False; it has no process group to join")
        import torch.distributed as dist

        timeout = timedelta(seconds=self.init_timeout)
        store = dist.TCPStore(HOST, self.store_port, is_master=False, timeout=timeout)
        dist.init_process_group(
            "gloo", store=store, rank=self.rank, world_size=self.world_size, timeout=timeout
        )


Scenario = Callable[[RankContext], Observations]


def _target_name(scenario: Scenario) -> str:
    # Children import the scenario by name: a spawned process cannot receive a closure or a lambda.
    name = f"{scenario.__module__}:{scenario.__qualname__}"
    if "<" in name:
        raise DistRunError(f"scenario {name} must be a module-level function")
    return name


def _resolve(target: str) -> Scenario:
    module_name, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


def _child(target: str, rank: int, world_size: int, store_port: int | None, init_timeout: float,
           out_path: str) -> None:
    # Loopback only, one thread per rank (2 CI cores, 3 ranks), and the torch.distributed path of pg_utils:
    # an installed DeepSpeed would need deepspeed.init_distributed, which these scenarios do not call.
    if sys.platform.startswith("linux"):
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    os.environ["OMP_NUM_THREADS"] = "1"
    sys.modules["deepspeed"] = None  # type: ignore[assignment]
    ctx = RankContext(rank, world_size, store_port, init_timeout)
    try:
        payload: dict[str, Any] = {"ok": True, "observations": _resolve(target)(ctx)}
        code = 0
    except BaseException:
        payload = {"ok": False, "traceback": traceback.format_exc()}
        code = 1
    finally:
        _destroy_group()
    tmp = out_path + ".tmp"
    try:
        Path(tmp).write_text(json.dumps(payload))
    except TypeError as exc:  # observations that are not plain data
        Path(tmp).write_text(json.dumps({"ok": False, "traceback": f"observations are not JSON: {exc}"}))
        code = 1
    os.replace(tmp, out_path)  # atomic: the parent never reads half a result
    sys.exit(code)


def _destroy_group() -> None:
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_initialized():
        dist.destroy_process_group()


def run_world(scenario: Scenario, world_size: int, *, deadline: float = 60.0, init_timeout: float = 20.0,
              init: bool = True) -> list[Observations]:
    """Run ``scenario`` on ``world_size`` spawned ranks; return each rank's observations, by rank.

    Raises DistRunError (with every rank's traceback or exit status) when a rank fails or the run outlives
    ``deadline`` seconds. With ``init=False`` no store is created and torch is not needed in the parent.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    target = _target_name(scenario)
    store = None
    if init:
        import torch.distributed as dist

        # The parent owns the rendezvous store on a port the OS picks (port 0) and holds it for the whole
        # run, so no other process can take the port between choosing and binding it.
        store = dist.TCPStore(HOST, 0, is_master=True, wait_for_workers=False,
                              timeout=timedelta(seconds=init_timeout))
    port = store.port if store is not None else None
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="pg-dist-") as tmp:
        outs = [os.path.join(tmp, f"rank{r}.json") for r in range(world_size)]
        procs = [ctx.Process(target=_child, args=(target, r, world_size, port, init_timeout, outs[r]),
                             name=f"rank{r}", daemon=True) for r in range(world_size)]
        timed_out = False
        try:
            for p in procs:
                p.start()
            timed_out = _join(procs, time.monotonic() + deadline)
        finally:
            for p in procs:
                if p.pid is None:  # never started (start() of an earlier rank raised)
                    continue
                if p.is_alive():
                    p.kill()
                p.join(5)
            del store
        results = [_read(path) for path in outs]
    return _collect(scenario, procs, results, timed_out, deadline)


def _join(procs: list[multiprocessing.process.BaseProcess], end: float) -> bool:
    """Wait until all exit, one fails, or ``end`` passes; return True on timeout."""
    while True:
        codes = [p.exitcode for p in procs]  # each read polls waitpid: read once per round
        pending = [p.sentinel for p, c in zip(procs, codes, strict=True) if c is None]
        if not pending or any(c not in (None, 0) for c in codes):
            return False
        remaining = end - time.monotonic()
        if remaining <= 0:
            return True
        # `pending` must come from the same read as `codes`: re-polling here could find the last rank gone
        # and wait on no sentinel at all until the deadline.
        multiprocessing.connection.wait(pending, timeout=remaining)


def _read(path: str) -> dict[str, Any] | None:
    try:
        return json.loads(Path(path).read_text())  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None


def _collect(scenario: Scenario, procs: list[multiprocessing.process.BaseProcess],
             results: list[dict[str, Any] | None], timed_out: bool, deadline: float) -> list[Observations]:
    problems = []
    for rank, (proc, res) in enumerate(zip(procs, results, strict=True)):
        if res is None:
            why = f"killed after the {deadline:g}s deadline" if timed_out else (
                "stopped because another rank failed" if proc.exitcode in (None, -9) else
                f"exited with code {proc.exitcode} without a result")
            problems.append(f"rank {rank}: {why}")
        elif not res["ok"]:
            problems.append(f"rank {rank} raised:\n{res['traceback']}")
    if problems:
        raise DistRunError(f"{scenario.__qualname__} on {len(procs)} ranks failed:\n" + "\n".join(problems))
    return [res["observations"] for res in results if res is not None]
