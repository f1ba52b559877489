"""PG105: a collective on a group that may be None, with no guard on the path to it."""

from __future__ import annotations

from bot.analyze.base import RuleInput
from bot.analyze.guarding import view
from bot.analyze.names import dotted
from bot.model import Rule

UNGUARDED = Rule(
    code="PG105",
    name="unguarded-optional-collective",
    summary="a collective with `group=g` where g may be None and nothing checks it",
    why=(
        "When the parallel dimension is absent, g is None, and `dist.all_reduce(t, group=None)` reduces over the "
        "WORLD group: the tensor is summed across data-parallel ranks instead of left alone. That is silently "
        "wrong whenever data-parallel size > 1."
    ),
    fix="Wrap the statement in `if pg_utils.is_parallel(g):` (suggested only where the result is not used).",
    fixable=True,
    invalid=(
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_group=None):\n"
        "    dist.all_reduce(t, group=tp_group)\n"
        "    return t\n",
        "from typing import Optional\n"
        "import torch.distributed as dist\n"
        "def gather(out, t, group: Optional[object]):\n"
        "    dist.all_gather_into_tensor(out, t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "class Layer:\n"
        "    def __init__(self):\n"
        "        self.mp_group = None\n"
        "    def forward(self, x):\n"
        "        dist.inference_all_reduce(x, group=self.mp_group)\n",
    ),
    valid=(
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_group):\n"
        "    dist.all_reduce(t, group=tp_group)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t):\n"
        "    dist.all_reduce(t, group=None)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_world_size, tp_group=None):\n"
        "    if tp_world_size == 1:\n"
        "        return t\n"
        "    dist.all_reduce(t, group=tp_group)\n",
        "import deepspeed.comm as dist\n"
        "def reduce(t, tp_group=None):\n"
        "    dist.all_reduce(t, group=tp_group)  # pg-bot: ignore[PG105] None means the world here\n",
    ),
)

RULES = (UNGUARDED,)


def check(inp: RuleInput) -> None:
    call = inp.ctx.config.predicate_call
    for coll in inp.facts.collectives:
        group = dotted(coll.group) if coll.group is not None else None
        if group is None or not inp.may_be_none(group, coll.scope):
            continue
        v = view(inp, coll, group)
        if v.predicate or v.none_checks or v.size_checks or v.other:
            continue
        inp.report(
            "PG105",
            coll.call,
            f"`{coll.name}(..., group={group})` runs with `{group}`, which may be None, and group=None means "
            f"the WORLD group: guard it with `if {call}({group}):`",
            coll.scope,
            group=group,
            kind="call",
            data={
                "statement": inp.span(coll.statement),
                "result_used": coll.result_used,
                "collective": coll.name,
            },
        )
