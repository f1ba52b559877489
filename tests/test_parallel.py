"""Forked map: results in item order whatever the shares, the parent's own share included; a failing or dying
worker is an error in the parent, never a silent gap."""

from __future__ import annotations

import os

import pytest

from bot.analyze.parallel import WorkerFailed, map_forked, shares

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def test_shares_balance_by_weight_heaviest_first() -> None:
    parts = shares([10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 2)
    assert sorted(i for p in parts for i in p) == list(range(12))
    loads = [sum([10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1][i] for i in p) for p in parts]
    assert loads == [11, 10] or loads == [10, 11]


def test_results_come_back_in_item_order_from_every_process() -> None:
    items = list(range(40))
    out = map_forked(lambda x: (x * x, os.getpid()), items, [1 + (i % 7) for i in items], 3)
    assert [v for v, _ in out] == [x * x for x in items]
    assert len({pid for _, pid in out}) == 3  # the parent and two children each did a share
    assert os.getpid() in {pid for _, pid in out}


def _boom(x: int) -> int:
    if x == 7:
        raise ValueError("bad item")
    return x


def test_a_worker_exception_is_raised_in_the_parent() -> None:
    items = list(range(10))
    weights = [100 if i == 7 else 1 for i in items]  # item 7 goes first, to the parent's share ...
    with pytest.raises(ValueError, match="bad item"):
        map_forked(_boom, items, weights, 2)
    with pytest.raises(WorkerFailed, match="ValueError: bad item"):
        map_forked(_boom, [7, 0], [1, 100], 2)  # ... or to a child's


def test_a_worker_that_dies_is_reported() -> None:
    def die(x: int) -> int:
        if x == 1:
            os._exit(3)
        return x

    with pytest.raises(WorkerFailed, match="died"):
        map_forked(die, [0, 1], [100, 1], 2)
