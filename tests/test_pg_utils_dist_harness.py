"""The multi-process harness itself: a hung or failing rank fails the run within bounds, never hangs CI."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from dist_helpers import DistRunError, RankContext, _join, run_world


def scenario_hang(ctx: RankContext) -> dict[str, Any]:
    if ctx.rank == 1:
        time.sleep(600)
    return {"rank": ctx.rank}


def scenario_rank0_fails_rank1_hangs(ctx: RankContext) -> dict[str, Any]:
    if ctx.rank == 0:
        raise ValueError("rank 0 broke")
    time.sleep(600)  # like a peer blocked in a collective that rank 0 will never join
    return {}


def scenario_ok(ctx: RankContext) -> dict[str, Any]:
    return {"rank": ctx.rank, "world_size": ctx.world_size}


def scenario_not_json(ctx: RankContext) -> dict[str, Any]:
    return {"value": object()}


def test_results_come_back_by_rank() -> None:
    assert run_world(scenario_ok, 2, init=False) == [{"rank": 0, "world_size": 2}, {"rank": 1, "world_size": 2}]


def test_hung_rank_fails_at_the_deadline() -> None:
    start = time.monotonic()
    with pytest.raises(DistRunError, match=r"rank 1: killed after the 2s deadline"):
        run_world(scenario_hang, 2, deadline=2, init=False)
    assert time.monotonic() - start < 20


def test_failing_rank_ends_the_run_at_once() -> None:
    start = time.monotonic()
    with pytest.raises(DistRunError) as info:
        run_world(scenario_rank0_fails_rank1_hangs, 2, deadline=60, init=False)
    assert time.monotonic() - start < 20  # not the 60 s deadline
    message = str(info.value)
    assert "rank 0 raised" in message and "ValueError: rank 0 broke" in message
    assert "rank 1: stopped because another rank failed" in message


def test_observations_must_be_plain_data() -> None:
    with pytest.raises(DistRunError, match="not JSON"):
        run_world(scenario_not_json, 1, init=False)


def test_init_without_store_is_an_error() -> None:
    with pytest.raises(DistRunError, match="init=False"):
        RankContext(0, 1, None, 1.0).init_process_group()


def test_world_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="world_size"):
        run_world(scenario_ok, 0, init=False)


class _ExitsBetweenReads:
    """A process that is still running at the first look at its exit code and gone at every later one."""

    def __init__(self) -> None:
        self.reads = 0
        read_end, write_end = os.pipe()
        os.close(write_end)  # like a dead child's sentinel: readable (EOF) at once
        self.sentinel = read_end

    @property
    def exitcode(self) -> int | None:
        self.reads += 1
        return None if self.reads == 1 else 0


def test_join_does_not_wait_on_nothing_when_the_last_rank_exits_mid_check() -> None:
    # Regression: the pending list was re-read after the exit codes, so a rank exiting in between left
    # nothing to wait on and the join slept until the deadline (a passing run took 60 s).
    proc = _ExitsBetweenReads()
    start = time.monotonic()
    try:
        assert _join([proc], time.monotonic() + 5) is False  # type: ignore[list-item]
    finally:
        os.close(proc.sentinel)
    assert time.monotonic() - start < 2
