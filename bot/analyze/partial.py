"""PG103/PG104: a guard that checks only half of the predicate before a collective on an optional group."""

from __future__ import annotations

from bot.analyze.base import RuleInput
from bot.analyze.guarding import consistent, view
from bot.analyze.names import dotted
from bot.model import Rule

NONE_ONLY = Rule(
    code="PG103",
    name="none-only-guard",
    summary="only `g is not None` (or `if g is None: return`, `if g:`) guards a collective on g",
    why=(
        "A None check alone still runs the collective on a single-rank group (wasted work and a sync point) and "
        "on a group that does not contain this rank. `pg_utils.is_parallel(g)` skips both."
    ),
    fix="Replace the None check with `pg_utils.is_parallel(g)` (`not pg_utils.is_parallel(g)` in an early exit).",
    invalid=(
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is not None:\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is None:\n"
        "        return t\n"
        "    dist.all_reduce(t, group=group)\n"
        "    return t\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group == None:\n"
        "        return\n"
        "    dist.broadcast(t, 0, group=group)\n",
        "import deepspeed.comm as dist\n"
        "class L:\n"
        "    def forward(self, x):\n"
        "        if self.tp_group:\n"
        "            dist.all_reduce(x, group=self.tp_group)\n",
    ),
    valid=(
        "from deepspeed.comm import pg_utils\n"
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if pg_utils.is_parallel(group):\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is not None:\n"
        "        print(group)\n",
    ),
)

SIZE_ONLY = Rule(
    code="PG104",
    name="size-only-guard",
    summary="only `get_world_size(group=g) > 1` guards a collective on a g that may be None",
    why=(
        "`get_world_size(group=None)` is the size of the WORLD, so when the parallel dimension is absent "
        "(g is None) a size-only guard passes on any multi-rank job and the collective then runs over the "
        "world. A test like `!= 1` is also True for a group that excludes this rank (size -1)."
    ),
    fix="Replace the size check with `pg_utils.is_parallel(g)` (`not ...` for `== 1` early exits).",
    invalid=(
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if dist.get_world_size(group=group) > 1:\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "class M:\n"
        "    def __init__(self, ep_group=None):\n"
        "        self.ep_group = ep_group\n"
        "    def forward(self, x):\n"
        "        if dist.get_world_size(group=self.ep_group) != 1:\n"
        "            dist.all_to_all_single(x, x, group=self.ep_group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    world_size = dist.get_world_size(group=group)\n"
        "    if world_size == 1:\n"
        "        return t\n"
        "    dist.all_reduce(t, group=group)\n",
    ),
    valid=(
        "import deepspeed.comm as dist\n"
        "def f(t, group):\n"
        "    if dist.get_world_size(group=group) > 1:\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, partition_sizes, group=None):\n"
        "    if len(partition_sizes) > 1:\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, tp_world_size, group=None):\n"
        "    if tp_world_size > 1:\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, mpu):\n"
        "    if dist.get_world_size(group=mpu.get_model_parallel_group()) > 1:\n"
        "        dist.all_reduce(t, group=mpu.get_model_parallel_group())\n",
    ),
)

RULES = (NONE_ONLY, SIZE_ONLY)


def check(inp: RuleInput) -> None:
    call = inp.ctx.config.predicate_call
    for coll in inp.facts.collectives:
        group = dotted(coll.group) if coll.group is not None else None
        if group is None:
            continue
        v = view(inp, coll, group)
        if v.predicate or v.full:
            continue
        for node, none, negated in v.none_checks:
            if not consistent(none.is_none, negated):
                continue
            replacement = f"not {call}({group})" if none.is_none else f"{call}({group})"
            inp.report(
                "PG103",
                node,
                f"`{inp.segment(node)}` only checks for None before `{coll.name}` on `{group}`: a single-rank or "
                f"non-member group still runs it; use `{replacement}`",
                coll.scope,
                group=group,
                kind="negative" if none.is_none else "positive",
                data={"test": inp.segment(node), "collective": coll.name},
            )
        if v.none_checks or not inp.may_be_none(group, coll.scope):
            continue
        for node, size, negated in v.size_checks:
            if not consistent(not size.positive, negated) or (size.via or "").startswith("self."):
                continue  # cached attributes are PG106's
            replacement = f"{call}({group})" if size.positive else f"not {call}({group})"
            message = (
                f"`{inp.segment(node)}` only checks the size of `{group}`, which may be None: "
                f"get_world_size(group=None) is the WORLD size, so `{coll.name}` then runs over the world; "
                f"use `{replacement}`"
            )
            if size.nonmember_bug:
                message += f"; `{size.op} {size.bound}` also misjudges a non-member group (size -1)"
            inp.report(
                "PG104",
                node,
                message,
                coll.scope,
                group=group,
                kind="positive" if size.positive else "negative",
                data={"op": size.op, "bound": size.bound, "nonmember_bug": size.nonmember_bug,
                      "via": size.via, "collective": coll.name},
            )
