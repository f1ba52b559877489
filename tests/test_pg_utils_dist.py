"""``pg_utils.is_parallel`` on real multi-process torch.distributed (gloo on loopback).

Two spawned runs cover every case: a world of 1 and a world of 3 with a 2-rank subgroup and a 1-rank group.
Each child records what it saw (before and after ``init_process_group``); the tests below assert on that.
"""

from __future__ import annotations

from typing import Any

import pytest
from dist_helpers import RankContext, run_world

pytest.importorskip("torch")

PAIR = [0, 1]  # the 2-rank subgroup of the world of 3; rank 2 is the non-member
SINGLE = [2]  # a 1-rank group


def _value(rank: int) -> float:
    return float(rank + 1)


def _reduce(group: Any, *, guarded: bool) -> float:
    """all_reduce this rank's value over ``group``, behind ``is_parallel(group)`` when ``guarded``."""
    import torch
    import torch.distributed as dist

    from pg_utils import is_parallel

    t = torch.tensor([_value(dist.get_rank())])
    if not guarded or is_parallel(group):
        dist.all_reduce(t, group=group)
    return float(t.item())


def _before_init() -> dict[str, Any]:
    import torch.distributed as dist

    from pg_utils import is_parallel

    return {"initialized": dist.is_initialized(), "none": is_parallel(None)}


def scenario_world1(ctx: RankContext) -> dict[str, Any]:
    import torch.distributed as dist

    from pg_utils import is_parallel

    obs: dict[str, Any] = {"before": _before_init()}
    ctx.init_process_group()
    single = dist.new_group([0])
    obs.update(
        none=is_parallel(None),
        world_size=dist.get_world_size(),
        world=is_parallel(dist.group.WORLD),
        single_size=dist.get_world_size(single),
        single=is_parallel(single),
        guarded_world=_reduce(dist.group.WORLD, guarded=True),
        unguarded_world=_reduce(None, guarded=False),
    )
    return obs


def scenario_world3(ctx: RankContext) -> dict[str, Any]:
    import torch.distributed as dist

    from pg_utils import is_parallel

    obs: dict[str, Any] = {"before": _before_init()}
    ctx.init_process_group()
    # new_group is itself collective: every rank calls it, members or not, in the same order.
    pair = dist.new_group(PAIR)
    single = dist.new_group(SINGLE)
    obs.update(
        rank=dist.get_rank(),
        none=is_parallel(None),
        none_size=dist.get_world_size(None),  # to torch.distributed, None is the world
        world=is_parallel(dist.group.WORLD),
        pair_size=dist.get_world_size(pair),
        pair=is_parallel(pair),
        single_size=dist.get_world_size(single),
        single=is_parallel(single),
        guarded_none=_reduce(None, guarded=True),
        unguarded_none=_reduce(None, guarded=False),
        # Only members may take part in a collective over pair; the guard is what keeps rank 2 out.
        guarded_pair=_reduce(pair, guarded=True),
    )
    return obs


@pytest.fixture(scope="module")
def world1() -> dict[str, Any]:
    (obs,) = run_world(scenario_world1, 1)
    return obs


@pytest.fixture(scope="module")
def world3() -> list[dict[str, Any]]:
    return run_world(scenario_world3, 3)


def test_none_before_init_is_false_and_touches_no_group(world1: dict[str, Any],
                                                        world3: list[dict[str, Any]]) -> None:
    for before in [world1["before"]] + [obs["before"] for obs in world3]:
        assert before == {"initialized": False, "none": False}


def test_world_of_one_is_not_parallel(world1: dict[str, Any]) -> None:
    assert world1["world_size"] == 1
    assert world1["world"] is False
    assert world1["none"] is False
    assert (world1["single_size"], world1["single"]) == (1, False)
    # a world of 1 reduces to itself: guarded or not, the value is unchanged
    assert world1["guarded_world"] == world1["unguarded_world"] == _value(0)


def test_world_group_of_three_is_parallel(world3: list[dict[str, Any]]) -> None:
    assert [obs["rank"] for obs in world3] == [0, 1, 2]
    assert all(obs["world"] is True for obs in world3)


def test_none_after_init_is_false_although_none_means_world_to_collectives(
        world3: list[dict[str, Any]]) -> None:
    for obs in world3:
        assert obs["none_size"] == len(world3)
        assert obs["none"] is False


def test_subgroup_members_true_non_member_false(world3: list[dict[str, Any]]) -> None:
    for obs in world3:
        if obs["rank"] in PAIR:
            assert (obs["pair_size"], obs["pair"]) == (len(PAIR), True)
        else:
            # the non-member sees size -1: `size != 1` would wrongly call it parallel, `> 1` does not
            assert (obs["pair_size"], obs["pair"]) == (-1, False)


def test_single_rank_group_is_not_parallel_for_member_or_non_member(world3: list[dict[str, Any]]) -> None:
    for obs in world3:
        expected_size = 1 if obs["rank"] in SINGLE else -1
        assert (obs["single_size"], obs["single"]) == (expected_size, False)


def test_guard_skips_reduction_for_none_while_unguarded_call_reduces_over_world(
        world3: list[dict[str, Any]]) -> None:
    world_sum = sum(_value(r) for r in range(len(world3)))
    for obs in world3:
        assert obs["guarded_none"] == _value(obs["rank"])  # dimension absent: nothing reduced
        assert obs["unguarded_none"] == world_sum  # the bug: a silent world reduction


def test_guarded_subgroup_reduction_runs_on_members_only(world3: list[dict[str, Any]]) -> None:
    pair_sum = sum(_value(r) for r in PAIR)
    for obs in world3:
        expected = pair_sum if obs["rank"] in PAIR else _value(obs["rank"])
        assert obs["guarded_pair"] == expected
