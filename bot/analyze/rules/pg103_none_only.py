"""PG103: only a None test guards a collective on a group that can be absent."""

from __future__ import annotations

import ast

from bot.analyze.rules.base import Reporter, code_span
from bot.analyze.terms import none_test, presence
from bot.model import Invalid, NoneOnlyPayload, Rule

RULE = Rule(
    code="PG103",
    name="none-only-guard",
    summary=(
        "Only `g is not None` (or `if g is None: return`, `g == None`, `if g:`, `getattr(o, 'g', None) is not "
        "None`) holds on every path to a collective on g, and neither g's size nor a separately supplied size "
        "is tested."
    ),
    why=(
        "A None check alone still runs the collective on a single-rank group (wasted work and a sync point) and "
        "on a group that does not contain this rank. `pg_utils.is_parallel(g)` skips both."
    ),
    fix="`pg_utils.is_parallel(g)` (`not pg_utils.is_parallel(g)` in an early exit).",
    fix_safety="Needs `--unsafe-fixes`: it skips single-rank and non-member groups, which is the point.",
    invalid=(
        Invalid(  # c10d's own spelling of a group's collective: a list of tensors and options
            "import torch.distributed as dist\n"
            "def stamp(t, group=None):\n"
            "    if group is not None:\n"
            "        group.broadcast([t], dist.BroadcastOptions())\n",
            flagged="group is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "def stamp(t, group=None):\n"
            "    if pg_utils.is_parallel(group):\n"
            "        group.broadcast([t], dist.BroadcastOptions())\n",
            unsafe=True,
        ),
        Invalid(  # a lambda's default binds the group where the hook is made
            "import torch.distributed as dist\n"
            "def attach(ties):\n"
            "    for param, group in ties:\n"
            "        if group is not None:\n"
            "            param.register_hook(lambda g, pg=group: dist.all_reduce(g, group=pg))\n",
            flagged="group is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "def attach(ties):\n"
            "    for param, group in ties:\n"
            "        if pg_utils.is_parallel(group):\n"
            "            param.register_hook(lambda g, pg=group: dist.all_reduce(g, group=pg))\n",
            unsafe=True,
        ),
        Invalid(  # another library's function named for syncing, handed the group: it communicates on it
            "import torch.distributed as dist\n"
            "from flash_attn.utils.distributed import sync_shared_params\n"
            "class LM:\n"
            "    def __init__(self, process_group=None):\n"
            "        self.process_group = process_group\n"
            "        self.world = dist.get_world_size(process_group) if process_group is not None else 1\n"
            "    def tie_weights(self):\n"
            "        if self.process_group is not None:\n"
            "            sync_shared_params(self, self.process_group)\n",
            flagged="self.process_group is not None",
            fixed="import torch.distributed as dist\n"
            "from flash_attn.utils.distributed import sync_shared_params\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "class LM:\n"
            "    def __init__(self, process_group=None):\n"
            "        self.process_group = process_group\n"
            "        self.world = dist.get_world_size(process_group) if process_group is not None else 1\n"
            "    def tie_weights(self):\n"
            "        if pg_utils.is_parallel(self.process_group):\n"
            "            sync_shared_params(self, self.process_group)\n",
            unsafe=True,
        ),
        Invalid(  # a hook registered under the None test runs its collective under it
            "import torch.distributed as dist\n"
            "def attach(params, sp_group=None):\n"
            "    if sp_group is not None:\n"
            "        for p in params:\n"
            "            p.register_hook(lambda g: dist.all_reduce(g, group=sp_group))\n",
            flagged="sp_group is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "def attach(params, sp_group=None):\n"
            "    if pg_utils.is_parallel(sp_group):\n"
            "        for p in params:\n"
            "            p.register_hook(lambda g: dist.all_reduce(g, group=sp_group))\n",
            unsafe=True,
        ),
        Invalid(  # tested through an alias: the finding and its fix name what the test reads
            "import torch.distributed as dist\n"
            "def backward(ctx, grad):\n"
            "    pg = ctx.process_group\n"
            "    if pg is not None:\n"
            "        dist.all_reduce(grad, group=pg)\n"
            "    return grad\n",
            flagged="pg is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def backward(ctx, grad):\n"
            "    pg = ctx.process_group\n"
            "    if pg_utils.is_parallel(pg):\n"
            "        dist.all_reduce(grad, group=pg)\n"
            "    return grad\n",
            unsafe=True,
        ),
        Invalid(  # `case None:` tests the subject for None as `if group is None:` does; no expression replaces a
            # pattern, so the fix is left to a person
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    match group:\n"
            "        case None:\n"
            "            return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="case None",
            unsafe=True,
        ),
        Invalid(  # a file that communicates only through its project: a module's function named for a collective,
            # and an imported autograd Function named for one, run with `.apply`
            "from mypkg.distributed import utils as distributed_utils\n"
            "from mypkg.functions import AllGather\n"
            "def load(t, group=None):\n"
            "    if group is not None:\n"
            "        distributed_utils.broadcast(t, 0, group)\n"
            "    return AllGather.apply(t, group) if group is not None else t\n",
            flagged="group is not None",
        ),
        Invalid(  # a project's function named for a collective, imported and called with the group (its body is
            # elsewhere: the guard around it is judged, the call itself never reported)
            "import deepspeed.comm as dist\n"
            "from deepspeed.runtime.comm.coalesced_collectives import reduce_scatter_coalesced\n"
            "def f(ts, dp_group=None):\n"
            "    if dp_group is not None:\n"
            "        reduce_scatter_coalesced(ts, dp_group)\n",
            flagged="dp_group is not None",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.runtime.comm.coalesced_collectives import reduce_scatter_coalesced\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(ts, dp_group=None):\n"
            "    if pg_utils.is_parallel(dp_group):\n"
            "        reduce_scatter_coalesced(ts, dp_group)\n",
            unsafe=True,
        ),
        Invalid(  # an in-file helper called through a local that picks one (or a module-level alias of an
            # autograd Function's apply): the call is the helper's, and the helper communicates on the group
            "import torch.distributed as dist\n"
            "def _scatter(t, grp):\n"
            "    out = t.new_empty(t.shape[0] // dist.get_world_size(grp))\n"
            "    dist.reduce_scatter_tensor(out, t, group=grp)\n"
            "    return out\n"
            "def _reduce(t, grp):\n"
            "    dist.all_reduce(t, group=grp)\n"
            "    return t\n"
            "def finish(y, grp=None, seq=False):\n"
            "    if grp is not None:\n"
            "        fn = _scatter if seq else _reduce\n"
            "        y = fn(y, grp)\n"
            "    return y\n",
            flagged="grp is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def _scatter(t, grp):\n"
            "    out = t.new_empty(t.shape[0] // dist.get_world_size(grp))\n"
            "    dist.reduce_scatter_tensor(out, t, group=grp)\n"
            "    return out\n"
            "def _reduce(t, grp):\n"
            "    dist.all_reduce(t, group=grp)\n"
            "    return t\n"
            "def finish(y, grp=None, seq=False):\n"
            "    if pg_utils.is_parallel(grp):\n"
            "        fn = _scatter if seq else _reduce\n"
            "        y = fn(y, grp)\n"
            "    return y\n",
            unsafe=True,
        ),
        Invalid(
            "import torch\n"
            "import torch.distributed as dist\n"
            "class _Sum(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, t, grp):\n"
            "        dist.all_reduce(t, group=grp)\n"
            "        return t\n"
            "sum_over = _Sum.apply\n"
            "def out(y, grp=None):\n"
            "    if grp is not None:\n"
            "        y = sum_over(y, grp)\n"
            "    return y\n",
            flagged="grp is not None",
            fixed="import torch\n"
            "import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class _Sum(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, t, grp):\n"
            "        dist.all_reduce(t, group=grp)\n"
            "        return t\n"
            "sum_over = _Sum.apply\n"
            "def out(y, grp=None):\n"
            "    if pg_utils.is_parallel(grp):\n"
            "        y = sum_over(y, grp)\n"
            "    return y\n",
            unsafe=True,
        ),
        Invalid(  # a fresh tensor whose reduced value is read is no warm-up: it carries a result
            "import torch\n"
            "import torch.distributed as dist\n"
            "def any_rank(flag, pg=None):\n"
            "    found = torch.zeros(1)\n"
            "    found[0] = flag\n"
            "    if pg is not None:\n"
            "        dist.all_reduce(found, group=pg)\n"
            "    return bool(found.item())\n",
            flagged="pg is not None",
            fixed="import torch\n"
            "import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def any_rank(flag, pg=None):\n"
            "    found = torch.zeros(1)\n"
            "    found[0] = flag\n"
            "    if pg_utils.is_parallel(pg):\n"
            "        dist.all_reduce(found, group=pg)\n"
            "    return bool(found.item())\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    if group is not None:\n"
            "        dist.all_reduce(t, group=group)\n",
            flagged="group is not None",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if pg_utils.is_parallel(group):\n"
            "        dist.all_reduce(t, group=group)\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    if group is None:\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="group is None",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if not pg_utils.is_parallel(group):\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    if group == None:\n"
            "        return\n"
            "    dist.broadcast(t, 0, group=group)\n",
            flagged="group == None",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if not pg_utils.is_parallel(group):\n"
            "        return\n"
            "    dist.broadcast(t, 0, group=group)\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "class L:\n"
            "    def forward(self, x):\n"
            "        if self.tp_group:\n"
            "            dist.all_reduce(x, group=self.tp_group)\n",
            flagged="self.tp_group",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class L:\n"
            "    def forward(self, x):\n"
            "        if pg_utils.is_parallel(self.tp_group):\n"
            "            dist.all_reduce(x, group=self.tp_group)\n",
            unsafe=True,
        ),
        Invalid(  # an alias of the attribute, narrowed by an early exit
            "import torch.distributed as dist\n"
            "class L:\n"
            "    def forward(self, x):\n"
            "        grp = self.ep_group\n"
            "        if grp is None:\n"
            "            return x\n"
            "        dist.all_reduce(x, group=grp)\n",
            flagged="grp is None",
        ),
    ),
    valid=(
        # a parallel-state getter's group (None where the dimension is not built): out of scope by design
        "import torch.distributed as dist\n"
        "from pkg.core.parallel_state_patch import get_pipeline_group_for_cross_cloud\n"
        "def reduce(t):\n"
        "    g = get_pipeline_group_for_cross_cloud()\n"
        "    if g is not None:\n"
        "        dist.all_reduce(t, group=g)\n",
        # a separately supplied count beside the None test, in a loop's `continue`: out of scope
        "import torch.distributed as dist\n"
        "def reduce_shards(shards, replicas_per_shard, shard_group=None):\n"
        "    if shard_group is None:\n"
        "        return\n"
        "    for shard, replicas in zip(shards, replicas_per_shard):\n"
        "        if replicas <= 1:\n"
        "            continue\n"
        "        dist.all_reduce(shard, group=shard_group)\n",
        # the world group under another name: its None test asks whether the default group exists yet
        "import torch.distributed as dist\n"
        "def bench(t):\n"
        "    tp_group = dist.group.WORLD\n"
        "    if tp_group is not None:\n"
        "        dist.barrier(group=tp_group)\n",
        # a type test dispatches between a group and a stand-in for one: no None test, nothing absent is skipped
        "import torch.distributed as dist\n"
        "from torch.distributed import ProcessGroup\n"
        "def count(pg=None, flag=0):\n"
        "    t = torch.tensor([flag])\n"
        "    if isinstance(pg, ProcessGroup):\n"
        "        dist.all_reduce(t, group=pg)\n"
        "    else:\n"
        "        t = pg.sum_all(t)\n"
        "    return t\n",
        # a warm-up: a throwaway tensor reduced on every group there is (a one-rank group included), its result
        # never read; skipping single-rank groups is not what it wants
        "import torch\n"
        "import torch.distributed as dist\n"
        "def warm_up(getters, dev):\n"
        "    dummy = torch.zeros(1, device=dev)\n"
        "    for get in getters:\n"
        "        pg = get()\n"
        "        if pg is not None:\n"
        "            dist.all_reduce(dummy, group=pg)\n",
        "import torch\n"
        "import torch.distributed as dist\n"
        "def warm_up(groups):\n"
        "    for pg in groups:\n"
        "        if pg is None:\n"
        "            continue\n"
        "        dist.all_reduce(torch.ones(1).cuda(), group=pg)\n",
        # a tensor's mesh: its None test asks whether the tensor is a DTensor, which it is on one rank too
        "import torch.distributed as dist\n"
        "def replicate(steps, x):\n"
        "    mesh = getattr(x, 'device_mesh', None)\n"
        "    if mesh is None:\n"
        "        return steps\n"
        "    dist.broadcast(steps, src=0, group=mesh)\n"
        "    return steps\n",
        # `case None: raise ...` is a precondition, as `if g is None: raise ...` is
        "import torch.distributed as dist\n"
        "def f(x, g=None):\n"
        "    match g:\n"
        "        case None:\n"
        "            raise ValueError('needs a group')\n"
        "    dist.all_reduce(x, group=g)\n",
        # an error told to the caller is a precondition too: None is a mistake here, not an absent dimension
        "import torch.distributed as dist\n"
        "def pull(links, name, buf):\n"
        "    link = links.get(name)\n"
        "    if link is None:\n"
        "        return False, f\"link {name} was never opened\"\n"
        "    dist.broadcast(buf, src=0, group=link)\n"
        "    return True, \"\"\n",
        # a precondition is no guard: None stops the program instead of skipping the collective
        "import torch.distributed as dist\n"
        "def f(x, g=None):\n"
        "    assert g is not None\n"
        "    dist.all_reduce(x, group=g)\n",
        "import torch.distributed as dist\n"
        "def f(x, g=None):\n"
        "    if g is None:\n"
        "        raise ValueError('needs a group')\n"
        "    dist.all_reduce(x, group=g)\n",
        "from deepspeed.comm import pg_utils\n"
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if pg_utils.is_parallel(group):\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is not None:\n"
        "        print(group)\n",
        "import deepspeed.comm as dist\n"
        "def f(t, sizes, group=None):\n"
        "    if group is None or len(sizes) == 1:\n"
        "        return t\n"
        "    dist.all_reduce(t, group=group)\n"
        "    return t\n",
    ),
)


def check(r: Reporter) -> None:
    for n in r.verdicts.none_only:
        check, site = n.check, n.site
        target, present = presence(check.node)
        absent = not present
        group = n.key
        if isinstance(target, ast.Name | ast.Attribute) or \
                (isinstance(target, ast.Call) and none_test(check.node) is not None):
            # the name the test reads (an alias, `pg = ctx.group`, or `getattr(self, "g", None)`, whose missing
            # attribute must stay None, not raise): the rewrite replaces that test, in its own words
            group = r.text(target)
        replacement = f"not {r.predicate}({group})" if absent else f"{r.predicate}({group})"
        where = (f"{code_span(site.collective.name)} on {code_span(group)}" if n.call is None else
                 f"{code_span(r.text(n.call.call.func))}, which runs {code_span(site.collective.name)} on it")
        why = ("the size is tested only further down, on the way to it: one test here states both" if n.sized_below
               else "a single-rank or non-member group still runs it")
        r.report(
            RULE, r.span(check.node),
            f"{code_span(r.text(check.node))} only checks for None before {where}: {why}; use {code_span(replacement)}",
            n.function, group=group, kind="negative" if absent else "positive",
            payload=NoneOnlyPayload(test=r.text(check.node), collective=site.collective.name),
        )
