"""Examples for semgrep-rules.yml, checked by `semgrep --test` (rule-id annotations in comments)."""

import deepspeed.comm as dist
from deepspeed.comm import get_world_size


def full_guards(t, g, h, cfg):
    # ruleid: pg-full-guard
    if g is not None and dist.get_world_size(g) > 1:
        dist.all_reduce(t, group=g)
    # ruleid: pg-full-guard
    if g is not None and dist.get_world_size(group=g) >= 2:
        dist.all_reduce(t, group=g)
    # ruleid: pg-full-guard
    if g is not None and 1 < get_world_size(group=g):  # noqa: SIM300 (the spelling under test)
        dist.all_reduce(t, group=g)
    # ruleid: pg-full-guard
    if cfg.enabled and h is not None and dist.get_world_size(group=h) > 1:
        dist.all_reduce(t, group=h)
    # ok: pg-full-guard
    if dist.get_world_size() > 1:
        dist.all_reduce(t)


def negated_early_exit(t, g=None):
    # ruleid: pg-negated-early-exit
    if g is None or dist.get_world_size(group=g) == 1:
        return t
    # ruleid: pg-negated-early-exit
    if g is None or get_world_size(g) < 2:
        return t
    # ok: pg-negated-early-exit
    if g is None:
        return t
    dist.all_reduce(t, group=g)
    return t


def size_only(t, group):
    # ruleid: pg-size-only-guard
    if dist.get_world_size(group=group) > 1:
        dist.all_reduce(t, group=group)


def size_only_nonmember_bug(t, group):
    # ruleid: pg-size-only-guard
    if dist.get_world_size(group) != 1:
        dist.all_reduce(t, group=group)


def size_after_none_check(t, group):
    if group is None:
        return t
    # ok: pg-size-only-guard
    if dist.get_world_size(group=group) > 1:
        dist.all_reduce(t, group=group)
    return t


def unguarded(t, group=None):
    # ruleid: pg-unguarded-optional-collective
    dist.all_reduce(t, group=group)


def unguarded_typed(t, ep_group: "dist.ProcessGroup | None" = None):
    # ruleid: pg-unguarded-optional-collective
    dist.all_to_all_single(t, t, group=ep_group)


def guarded(t, group=None):
    from deepspeed.comm import pg_utils

    # ok: pg-unguarded-optional-collective
    if pg_utils.is_parallel(group):
        dist.all_reduce(t, group=group)


def early_exit(t, group=None):
    if group is None:
        return t
    # ok: pg-unguarded-optional-collective
    dist.all_reduce(t, group=group)
    return t


def required_group(t, group):
    # ok: pg-unguarded-optional-collective
    dist.all_reduce(t, group=group)


def contiguous(x, group):
    # ruleid: pg-discarded-contiguous
    dist.all_reduce(x.contiguous(), group=group)
    # ok: pg-discarded-contiguous
    handle = dist.all_reduce(x.contiguous(), group=group, async_op=True)
    y = x.contiguous()
    # ok: pg-discarded-contiguous
    dist.all_reduce(y, group=group)
    x.copy_(y)
    return handle


def chains(t, g, ok):
    # ruleid: pg-full-guard
    if g is not None and dist.get_world_size(group=g) > 1 and ok:
        dist.all_reduce(t, group=g)
    # ruleid: pg-negated-early-exit
    if not ok or g is None or dist.get_world_size(group=g) <= 1:
        return t
    dist.all_reduce(t, group=g)
    return t
