"""Forked map with a shared queue: results in item order whoever took each item, the parent included; every
process takes items while any are left; a failing or dying worker is an error in the parent, never a silent
gap."""

from __future__ import annotations

import os
import time

import pytest

from bot.analyze.parallel import _MAX_TOKENS, WorkerFailed, batches, map_forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def test_the_queue_holds_every_item_once_heaviest_first() -> None:
    weights = [1, 10, 3, 7, 2]
    assert batches(weights) == [[1], [3], [2], [4], [0]]


def test_more_items_than_the_pipe_holds_tokens_for_go_out_in_batches() -> None:
    n = _MAX_TOKENS * 3 + 5
    queue = batches([n - i for i in range(n)])
    assert len(queue) <= _MAX_TOKENS
    assert [i for batch in queue for i in batch] == list(range(n))
    out = map_forked(lambda x: x + 1, list(range(n)), [1] * n, 2)
    assert out == [x + 1 for x in range(n)]


def _slow_square(x: int) -> tuple[int, int]:
    time.sleep(0.005)  # long enough that no process can take the whole queue before the others start
    return x * x, os.getpid()


def test_results_come_back_in_item_order_from_every_process() -> None:
    items = list(range(40))
    out = map_forked(_slow_square, items, [1 + (i % 7) for i in items], 3)
    assert [v for v, _ in out] == [x * x for x in items]
    pids = [pid for _, pid in out]
    assert len(set(pids)) == 3  # the parent and two children each took items
    assert os.getpid() in pids


def test_one_worker_runs_in_this_process() -> None:
    out = map_forked(lambda x: (x, os.getpid()), [1, 2, 3], [1, 1, 1], 1)
    assert out == [(1, os.getpid()), (2, os.getpid()), (3, os.getpid())]


def test_an_exception_in_this_process_is_raised_as_itself() -> None:
    def boom(x: int) -> int:
        if x == 7:
            raise ValueError("bad item")
        return x

    with pytest.raises(ValueError, match="bad item"):
        map_forked(boom, list(range(10)), [1] * 10, 1)


def test_an_exception_in_a_child_is_raised_in_the_parent() -> None:
    parent = os.getpid()

    def boom(x: int) -> int:
        time.sleep(0.005)
        if os.getpid() != parent:
            raise ValueError("bad item")
        return x

    with pytest.raises(WorkerFailed, match="ValueError: bad item"):
        map_forked(boom, list(range(20)), [1] * 20, 2)


def test_a_worker_that_dies_is_reported() -> None:
    parent = os.getpid()

    def die(x: int) -> int:
        time.sleep(0.005)
        if os.getpid() != parent:
            os._exit(3)
        return x

    with pytest.raises(WorkerFailed, match="died"):
        map_forked(die, list(range(20)), [1] * 20, 2)
