"""PG104: only the group's world size guards a collective on a group that can be None."""

from __future__ import annotations

from bot.analyze.rules.base import Reporter, code_span
from bot.analyze.terms import SizeOf
from bot.model import Invalid, Rule, SizeOnlyPayload

RULE = Rule(
    code="PG104",
    name="size-only-guard",
    summary=(
        "Only `get_world_size(group=g) > 1` (or `g.size()`, or a local holding it; `!= 1`; an `== 1` early exit) "
        "holds on the path to a collective on a g that can be None there."
    ),
    why=(
        "`get_world_size(group=None)` is the size of the WORLD, so when the parallel dimension is absent (g is "
        "None) a size-only guard passes on any multi-rank job and the collective then runs over the world. A test "
        "like `!= 1` is also True for a group that excludes this rank (size -1)."
    ),
    fix="`pg_utils.is_parallel(g)` (`not pg_utils.is_parallel(g)` for `== 1` early exits).",
    fix_safety="Needs `--unsafe-fixes`: it changes what happens when g is None, which is the bug being fixed.",
    invalid=(
        Invalid(  # `cls.group` in a classmethod is the class-level optional attribute
            "from typing import Optional\n"
            "import torch.distributed as dist\n"
            "class EmbeddingComm:\n"
            "    group: Optional[dist.ProcessGroup] = None\n"
            "    @classmethod\n"
            "    def reduce(cls, t):\n"
            "        if dist.get_world_size(cls.group) > 1:\n"
            "            dist.all_reduce(t, group=cls.group)\n",
            flagged="dist.get_world_size(cls.group) > 1",
            fixed="from typing import Optional\n"
            "import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "class EmbeddingComm:\n"
            "    group: Optional[dist.ProcessGroup] = None\n"
            "    @classmethod\n"
            "    def reduce(cls, t):\n"
            "        if pg_utils.is_parallel(cls.group):\n"
            "            dist.all_reduce(t, group=cls.group)\n",
            unsafe=True,
        ),
        Invalid(  # an optional field of a config object typed with a class of the file
            "from dataclasses import dataclass\n"
            "from typing import Optional\n"
            "import torch.distributed as dist\n"
            "@dataclass\n"
            "class MoEConfig:\n"
            "    ep_group: Optional[dist.ProcessGroup] = None  # None: every expert is local\n"
            "def combine(x, cfg: MoEConfig):\n"
            "    if dist.get_world_size(cfg.ep_group) > 1:\n"
            "        dist.all_reduce(x, group=cfg.ep_group)\n",
            flagged="dist.get_world_size(cfg.ep_group) > 1",
            fixed="from dataclasses import dataclass\n"
            "from typing import Optional\n"
            "import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "@dataclass\n"
            "class MoEConfig:\n"
            "    ep_group: Optional[dist.ProcessGroup] = None  # None: every expert is local\n"
            "def combine(x, cfg: MoEConfig):\n"
            "    if pg_utils.is_parallel(cfg.ep_group):\n"
            "        dist.all_reduce(x, group=cfg.ep_group)\n",
            unsafe=True,
        ),
        Invalid(  # a mapping's `.get` answers None for a missing key
            "import torch.distributed as dist\n"
            "def combine(x, groups):\n"
            "    ep = groups.get('ep')\n"
            "    if dist.get_world_size(group=ep) > 1:\n"
            "        dist.all_reduce(x, group=ep)\n",
            flagged="dist.get_world_size(group=ep) > 1",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "def combine(x, groups):\n"
            "    ep = groups.get('ep')\n"
            "    if pg_utils.is_parallel(ep):\n"
            "        dist.all_reduce(x, group=ep)\n",
            unsafe=True,
        ),
        Invalid(  # a size that shapes data before its second test still tests an absent group where the docs say
            # None means not partitioned
            "import torch.distributed as dist\n"
            "def sync(a, b, group=None):\n"
            "    \"\"\"group: the partition group, or None when the optimizer is not partitioned.\"\"\"\n"
            "    n = dist.get_world_size(group=group)\n"
            "    if n > 1:\n"
            "        dist.all_reduce(a, group=group)\n"
            "    a.div_(n)\n"
            "    if n > 1:\n"
            "        dist.all_reduce(b, group=group)\n"
            "    return a, b\n",
            flagged="n > 1",
        ),
        Invalid(  # an in-file size helper read as a project's is: this one is get_world_size itself (None: the world)
            "import torch.distributed as dist\n"
            "def get_pg_size(group=None):\n"
            "    return dist.get_world_size(group)\n"
            "def gather_seq(x, sp_group=None):\n"
            "    if get_pg_size(sp_group) == 1:\n"
            "        return x\n"
            "    out = x.new_empty((x.shape[0] * 2, *x.shape[1:]))\n"
            "    dist.all_gather_into_tensor(out, x, group=sp_group)\n"
            "    return out\n",
            flagged="get_pg_size(sp_group) == 1",
        ),
        Invalid(  # a property that asks the size afresh at each read is a size test, not a cache (PG106)
            "import torch.distributed as dist\n"
            "class Row:\n"
            "    def __init__(self, w, tp_group=None):\n"
            "        self.w = w\n"
            "        self.tp_group = tp_group\n"
            "    @property\n"
            "    def tp_world(self):\n"
            "        return dist.get_world_size(group=self.tp_group)\n"
            "    def forward(self, x):\n"
            "        out = x @ self.w\n"
            "        if self.tp_world > 1:\n"
            "            dist.all_reduce(out, group=self.tp_group)\n"
            "        return out\n",
            flagged="self.tp_world > 1",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    if dist.get_world_size(group=group) > 1:\n"
            "        dist.all_reduce(t, group=group)\n",
            flagged="dist.get_world_size(group=group) > 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if pg_utils.is_parallel(group):\n"
            "        dist.all_reduce(t, group=group)\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "class M:\n"
            "    def __init__(self, ep_group=None):\n"
            "        self.ep_group = ep_group\n"
            "    def forward(self, x):\n"
            "        if dist.get_world_size(group=self.ep_group) != 1:\n"
            "            dist.all_to_all_single(x, x, group=self.ep_group)\n",
            flagged="dist.get_world_size(group=self.ep_group) != 1",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    world_size = dist.get_world_size(group=group)\n"
            "    if world_size == 1:\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n",
            flagged="world_size == 1",
        ),
        Invalid(  # a plain getter hands back a module global that is None until its setter runs
            "import torch.distributed as dist\n"
            "_RING_GROUP = None\n"
            "def set_ring_group(group):\n"
            "    global _RING_GROUP\n"
            "    _RING_GROUP = group\n"
            "def get_ring_group():\n"
            "    return _RING_GROUP\n"
            "def gather_kv(kv, out):\n"
            "    group = get_ring_group()\n"
            "    if dist.get_world_size(group=group) > 1:\n"
            "        dist.all_gather(out, kv, group=group)\n",
            flagged="dist.get_world_size(group=group) > 1",
        ),
        Invalid(  # a property over an optional attribute may be None as the attribute may
            "import torch.distributed as dist\n"
            "class Head:\n"
            "    def __init__(self, tp_group=None):\n"
            "        self._tp_group = tp_group\n"
            "    @property\n"
            "    def tp_group(self):\n"
            "        return self._tp_group\n"
            "    def forward(self, x):\n"
            "        if dist.get_world_size(self.tp_group) > 1:\n"
            "            dist.all_reduce(x, group=self.tp_group)\n"
            "        return x\n",
            flagged="dist.get_world_size(self.tp_group) > 1",
        ),
        Invalid(  # a walrus caches the size in the test itself
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    if (n := dist.get_world_size(group)) > 1:\n"
            "        dist.all_reduce(t, group=group)\n"
            "    return n\n",
            flagged="(n := dist.get_world_size(group)) > 1",
        ),
    ),
    valid=(
        # an in-file helper that falls back to the world: None meant the world
        "import torch.distributed as dist\n"
        "def _resolve(group):\n"
        "    return group if group is not None else dist.group.WORLD\n"
        "def total(t, group=None):\n"
        "    group = _resolve(group)\n"
        "    if dist.get_world_size(group) > 1:\n"
        "        dist.all_reduce(t, group=group)\n"
        "    return t\n",
        # the file's comment block says None is the world, as in torch.distributed
        "import torch.distributed as dist\n"
        "\n"
        "# group=None in this file means the default (world) process group, as in torch.distributed.\n"
        "\n"
        "def mean_across(t, group=None):\n"
        "    if dist.get_world_size(group) > 1:\n"
        "        dist.all_reduce(t, group=group)\n"
        "    return t\n",
        # a getter that asserts first hands back a group that is there
        "import torch.distributed as dist\n"
        "_RING_GROUP = None\n"
        "def get_ring_group():\n"
        "    assert _RING_GROUP is not None, 'ring group is not initialized'\n"
        "    return _RING_GROUP\n"
        "def gather_kv(kv, out):\n"
        "    group = get_ring_group()\n"
        "    if dist.get_world_size(group=group) > 1:\n"
        "        dist.all_gather(out, kv, group=group)\n",
        # every caller has returned on None already: the helper's size test is on a group that is there
        "import deepspeed.comm as dist\n"
        "class Shards:\n"
        "    def __init__(self, shard_group=None):\n"
        "        self.shard_group = shard_group\n"
        "    def consolidate(self, flat):\n"
        "        if self.shard_group is None:\n"
        "            return flat\n"
        "        return self._gather(flat)\n"
        "    def _gather(self, flat):\n"
        "        n = dist.get_world_size(group=self.shard_group)\n"
        "        if n == 1:\n"
        "            return flat\n"
        "        out = flat.new_empty(n * flat.numel())\n"
        "        dist.all_gather_into_tensor(out, flat, group=self.shard_group)\n"
        "        return out\n",
        # the docs say None is the world (an abbreviation's dots do not end the sentence)
        "import torch.distributed as dist\n"
        "def average(buf, dp_group=None):\n"
        "    \"\"\"dp_group defaults to None, i.e. the global (world) process group.\"\"\"\n"
        "    if dist.get_world_size(group=dp_group) > 1:\n"
        "        dist.all_reduce(buf, group=dp_group)\n"
        "    return buf\n",
        # a class-level `group = None` that `__init__` always replaces is a default no instance keeps
        "import torch.distributed as dist\n"
        "class Stage:\n"
        "    group = None\n"
        "    def __init__(self, ranks):\n"
        "        self.group = dist.new_group(ranks)\n"
        "    def sync(self, t):\n"
        "        if dist.get_world_size(self.group) > 1:\n"
        "            dist.broadcast(t, 0, group=self.group)\n",
        # the type test says the group is there: its size is all that is left to ask
        "import torch.distributed as dist\n"
        "def f(t, g=None):\n"
        "    if isinstance(g, dist.ProcessGroup) and dist.get_world_size(g) > 1:\n"
        "        dist.all_reduce(t, group=g)\n",
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
        # None is documented as the world (numpy style, in the class): `get_world_size(None) > 1` is meant
        "import deepspeed.comm as dist\n"
        "class AllReduce:\n"
        "    \"\"\"Sum over ranks.\n\n"
        "    Parameters\n"
        "    ----------\n"
        "    process_group : ProcessGroup, default = world group\n"
        "    \"\"\"\n"
        "    def __init__(self, process_group=None):\n"
        "        self.process_group = process_group\n"
        "    def forward(self, x):\n"
        "        if dist.get_world_size(self.process_group) == 1:\n"
        "            return x\n"
        "        dist.all_reduce(x, group=self.process_group)\n"
        "        return x\n",
        # a caller here leaves the group at None, for a gather over every rank: None is the world
        "import torch.distributed as dist\n"
        "def gather_rows(x, group=None):\n"
        "    if dist.get_world_size(group) == 1:\n"
        "        return x\n"
        "    dist.all_gather([x], x, group=group)\n"
        "def lengths_everywhere(xs):\n"
        "    return gather_rows(len(xs))\n",
        # the cached size shapes data before its test: those shapes are the world's when the group is None
        "import torch.distributed as dist\n"
        "def all_to_all_4d(x, group=None):\n"
        "    n = dist.get_world_size(group)\n"
        "    out = x.reshape(x.shape[0], n, -1)\n"
        "    if n > 1:\n"
        "        dist.all_to_all_single(out, out, group=group)\n"
        "    return out\n",
        # the group communicates whichever way the size test goes: it picks how, not whether
        "import torch.distributed as dist\n"
        "def dispatch(x, overlap, ep_group=None):\n"
        "    if not overlap or dist.get_world_size(ep_group) == 1:\n"
        "        dist.all_to_all_single(x, x, group=ep_group)\n"
        "    else:\n"
        "        for c in x.chunk(2):\n"
        "            dist.all_to_all_single(c, c, group=ep_group)\n",
        # the group is asserted to be the default one
        "import torch.distributed as dist\n"
        "def sizes(t, group=None):\n"
        "    assert group is None, \"only the default group\"\n"
        "    if dist.get_world_size(group) == 1:\n"
        "        return [t]\n"
        "    dist.all_gather([t], t, group=group)\n",
    ),
)


def check(r: Reporter) -> None:
    for site, check in r.verdicts.size_only:
        compare = check.compare
        assert compare is not None and site.key is not None
        group = site.key
        multi_when_true = compare.positive
        replacement = f"{r.predicate}({group})" if multi_when_true else f"not {r.predicate}({group})"
        message = (
            f"{code_span(r.text(check.node))} only checks the size of {code_span(group)}, which may be None: "
            f"get_world_size(group=None) is the WORLD size, so {code_span(site.collective.name)} then runs over the "
            f"world; use {code_span(replacement)}"
        )
        if compare.nonmember_bug:
            message += f"; {code_span(f'{compare.op} {compare.bound}')} also misjudges a non-member group (size -1)"
        via = check.term.via if isinstance(check.term, SizeOf) else None
        r.report(
            RULE, r.span(check.node), message, site.function, group=group,
            kind="positive" if multi_when_true else "negative",
            payload=SizeOnlyPayload(op=compare.op, bound=compare.bound, nonmember_bug=compare.nonmember_bug,
                                    collective=site.collective.name, via=via),
        )
