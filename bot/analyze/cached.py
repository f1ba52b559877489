"""PG106: a world size cached on the instance and later compared with 1 to guard a collective."""

from __future__ import annotations

from bot.analyze.base import RuleInput, operands
from bot.analyze.guarding import consistent
from bot.analyze.walker import CachedSize
from bot.model import Rule

CACHED = Rule(
    code="PG106",
    name="cached-world-size-guard",
    summary="`self.ws = get_world_size(group=g)` and later `if self.ws > 1:` before a collective",
    why=(
        "A cached size carries the same pitfalls as any size-only guard (None reads as the world size; a "
        "non-member reads as -1) and hides them one method away. Hot paths should cache the answer instead: "
        "`self.is_tp_parallel = pg_utils.is_parallel(group)` once at construction."
    ),
    fix="Cache `self.is_<dim>_parallel = pg_utils.is_parallel(g)` where the size is cached and test that.",
    invalid=(
        "import deepspeed.comm as dist\n"
        "class Linear:\n"
        "    def __init__(self, mp_group=None):\n"
        "        self.mp_group = mp_group\n"
        "        self.tp_world_size = dist.get_world_size(group=self.mp_group)\n"
        "    def forward(self, x):\n"
        "        if self.tp_world_size > 1:\n"
        "            dist.all_reduce(x, group=self.mp_group)\n"
        "        return x\n",
    ),
    valid=(
        "import deepspeed.comm as dist\n"
        "class Linear:\n"
        "    def __init__(self, mp_group, tp_world_size):\n"
        "        self.mp_group = mp_group\n"
        "        self.tp_world_size = tp_world_size\n"
        "    def forward(self, x):\n"
        "        if self.tp_world_size > 1:\n"
        "            dist.all_reduce(x, group=self.mp_group)\n",
        "from deepspeed.comm import pg_utils\n"
        "import deepspeed.comm as dist\n"
        "class Linear:\n"
        "    def __init__(self, mp_group=None):\n"
        "        self.mp_group = mp_group\n"
        "        self.is_tp_parallel = pg_utils.is_parallel(mp_group)\n"
        "    def forward(self, x):\n"
        "        if self.is_tp_parallel:\n"
        "            dist.all_reduce(x, group=self.mp_group)\n",
    ),
)

RULES = (CACHED,)


def check(inp: RuleInput) -> None:
    call = inp.ctx.config.predicate_call
    for coll in inp.facts.collectives:
        klass = coll.scope.klass
        if klass is None:
            continue
        cached = inp.facts.cached.get(id(klass), {})
        for guard in coll.guards:
            for node in operands(guard):
                size = inp.ctx.size_check(node, coll.scope.sizes)
                if size is None or size.via not in cached or not consistent(not size.positive, guard.negated):
                    continue
                fact: CachedSize = cached[size.via]
                dim = _dimension(fact.attribute, fact.group)
                inp.report(
                    "PG106",
                    node,
                    f"cached world size `{fact.attribute}` guards `{coll.name}`: cache "
                    f"`self.is_{dim}_parallel = {call}({fact.group})` in {fact.assigned_in} and test that",
                    coll.scope,
                    group=fact.group,
                    kind="positive" if size.positive else "negative",
                    data={
                        "attribute": fact.attribute,
                        "assignment": inp.span(fact.assignment),
                        "assigned_in": fact.assigned_in,
                        "cache_attribute": f"self.is_{dim}_parallel",
                        "collective": coll.name,
                    },
                )


def _dimension(attribute: str, group: str) -> str:
    """`self.tp_world_size` -> `tp`; `self.world_size` of `mp_group` -> `mp`; else `group`."""
    name = attribute.rsplit(".", 1)[-1]
    for suffix in ("_world_size", "_size"):
        stem = name[: -len(suffix)].strip("_") if name.endswith(suffix) else ""
        if stem and stem != "world":
            return stem
    group_name = group.rsplit(".", 1)[-1]
    for suffix in ("_process_group", "_group"):
        stem = group_name[: -len(suffix)].strip("_") if group_name.endswith(suffix) else ""
        if stem:
            return stem
    return "group"
