"""PG101: the full hand-rolled guard `g is not None and get_world_size(g) > 1`, in any spelling."""

from __future__ import annotations

from bot.analyze.rules._guard import report_pair, report_split
from bot.analyze.rules.base import Reporter
from bot.model import Invalid, Rule

RULE = Rule(
    code="PG101",
    name="hand-rolled-guard",
    summary=(
        "A guard that establishes both `g is not None` and `get_world_size(g) > 1` before the code it protects: "
        "one `and` chain in any spelling (`group=` or positional, `>= 2`, `1 <`, `!= 1`, `g != None`, `if g and "
        "...`, inside a longer chain, a size cached in a local or on the instance, a conditional expression with a "
        "constant branch: `ws(g) > 1 if g is not None else False`, the early exit under `not`: `not (g is None or ws(g) "
        "<= 1)`), or split over nested ifs, an "
        "early exit and a later test, or a flag variable; also one test of a size that is 1 when the group is None "
        "(`n = get_world_size(g) if g is not None else 1`, or an attribute set to 1 and to `get_world_size(g)` "
        "only where g is present), before the collective, before building an object handed the group, or stored "
        "as a flag for code that communicates elsewhere (`self.use_sp = n > 1`, as `self.use_sp = g is not None "
        "and get_world_size(g) > 1` is)."
    ),
    why=(
        "Hand-rolled guards differ subtly from module to module (some forget the None check, some the size, some "
        "mishandle a non-member's size of -1). One predicate, `pg_utils.is_parallel(g)`, states the convention "
        "once: None means the parallel dimension is absent, and a group is parallel iff its world size is "
        "greater than one."
    ),
    fix="`pg_utils.is_parallel(g)`; the other operands of the chain stay where they are.",
    fix_safety=(
        "Safe (applied by `pg-bot fix`) when the rewrite is proven equivalent in all five group states (None, "
        "non-member, single rank, multi-rank, a large group) by interpreting the allow-listed AST; `!= 1` differs for a "
        "non-member and needs `--unsafe-fixes`, as `g.size() > 1` does (it raises there). A guard split over "
        "nested ifs (`if g is not None:` holding only `if ws(g) > 1:`, neither with an `else`) becomes one `if pg_utils.is_parallel(g):` on the same terms, its "
        "body moved up a level; a test of a local size that is 1 when the group is None (`n = ws(g) if g is not None "
        "else 1`, then `if n > 1:`) becomes the predicate, the size kept; other split guards (an early exit then a test, a flag, an `elif`) are reported "
        "with no automatic fix: merge them by hand into one `is_parallel` test."
    ),
    invalid=(
        Invalid(  # the size moved clear of a constant is the same test (`ws(g) - 1 > 0` is `ws(g) > 1`)
            "import torch.distributed as dist\n"
            "def scatter_grads(out, parts, dp_group=None):\n"
            "    if dp_group is not None and dist.get_world_size(dp_group) - 1 > 0:\n"
            "        dist.reduce_scatter(out, parts, group=dp_group)\n"
            "    return out\n",
            flagged="dp_group is not None and dist.get_world_size(dp_group) - 1 > 0",
        ),
        Invalid(  # a chain with a bound of its own (`<= 8`) tests the size too; the rewrite would drop the bound
            # (a group of 1024 ranks passes the predicate, not the old test), so it is never applied
            "import torch.distributed as dist\n"
            "def node_reduce(t, node_group=None):\n"
            "    if node_group is not None and 1 < dist.get_world_size(node_group) <= 8:\n"
            "        dist.all_reduce(t, group=node_group)\n"
            "    return t\n",
            flagged="node_group is not None and 1 < dist.get_world_size(node_group) <= 8",
        ),
        Invalid(  # tested through an alias: the finding and its fix name what the chain reads
            "import torch.distributed as dist\n"
            "def gather(x, ctx):\n"
            "    pg = ctx.sp_group\n"
            "    if pg is not None and dist.get_world_size(pg) > 1:\n"
            "        dist.all_reduce(x, group=ctx.sp_group)\n"
            "    return x\n",
            flagged="pg is not None and dist.get_world_size(pg) > 1",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def gather(x, ctx):\n"
            "    pg = ctx.sp_group\n"
            "    if pg_utils.is_parallel(pg):\n"
            "        dist.all_reduce(x, group=ctx.sp_group)\n"
            "    return x\n",
        ),
        Invalid(  # the group's own size: the same number, but it raises on a rank outside the group, which the
            # predicate skips instead (so the fix needs --unsafe-fixes)
            "import torch.distributed as dist\n"
            "def f(t, g=None):\n"
            "    if g is not None and g.size() > 1:\n"
            "        dist.all_reduce(t, group=g)\n",
            flagged="g is not None and g.size() > 1",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, g=None):\n"
            "    if pg_utils.is_parallel(g):\n"
            "        dist.all_reduce(t, group=g)\n",
            unsafe=True,
        ),
        Invalid(  # a `match` split the same way: `case None` first, the size in the next case's guard
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    match group:\n"
            "        case None:\n"
            "            return t\n"
            "        case _ if dist.get_world_size(group) > 1:\n"
            "            dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="case None",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, tp_group=None):\n"
            "    if tp_group is not None and dist.get_world_size(tp_group) > 1:\n"
            "        dist.all_reduce(t, group=tp_group)\n",
            flagged="tp_group is not None and dist.get_world_size(tp_group) > 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, tp_group=None):\n"
            "    if pg_utils.is_parallel(tp_group):\n"
            "        dist.all_reduce(t, group=tp_group)\n",
        ),
        Invalid(
            "from deepspeed import comm as dist\n"
            "class A:\n"
            "    def forward(self, x):\n"
            "        if self.config.mlp_after_attn and self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1:\n"
            "            dist.all_reduce(x, group=self.mp_group)\n",
            flagged="self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1",
            fixed="from deepspeed import comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class A:\n"
            "    def forward(self, x):\n"
            "        if self.config.mlp_after_attn and pg_utils.is_parallel(self.mp_group):\n"
            "            dist.all_reduce(x, group=self.mp_group)\n",
        ),
        Invalid(
            "import torch.distributed as dist\n"
            "def f(t, g):\n"
            "    if g is not None and 1 < dist.get_world_size(group=g):\n"
            "        dist.all_reduce(t, group=g)\n",
            flagged="g is not None and 1 < dist.get_world_size(group=g)",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, g):\n"
            "    if pg_utils.is_parallel(g):\n"
            "        dist.all_reduce(t, group=g)\n",
        ),
        Invalid(
            "from deepspeed.comm import get_world_size\n"
            "def f(t, g):\n"
            "    active = g is not None and get_world_size(g) >= 2\n"
            "    return t if not active else t * 2\n",
            flagged="g is not None and get_world_size(g) >= 2",
            fixed="from deepspeed.comm import pg_utils\n"
            "def f(t, g):\n"
            "    active = pg_utils.is_parallel(g)\n"
            "    return t if not active else t * 2\n",
        ),
        Invalid(  # a flag spelled as a conditional expression with a constant branch: the `and` it is
            "import torch.distributed as dist\n"
            "def f(t, g=None):\n"
            "    use = dist.get_world_size(g) > 1 if g is not None else False\n"
            "    if use:\n"
            "        dist.all_reduce(t, group=g)\n",
            flagged="dist.get_world_size(g) > 1 if g is not None else False",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, g=None):\n"
            "    use = pg_utils.is_parallel(g)\n"
            "    if use:\n"
            "        dist.all_reduce(t, group=g)\n",
        ),
        Invalid(  # the negated early exit, negated again: the guard, replaced with its `not`
            "import torch.distributed as dist\n"
            "def f(t, g=None):\n"
            "    if not (g is None or dist.get_world_size(g) <= 1):\n"
            "        dist.all_reduce(t, group=g)\n",
            flagged="not (g is None or dist.get_world_size(g) <= 1)",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, g=None):\n"
            "    if pg_utils.is_parallel(g):\n"
            "        dist.all_reduce(t, group=g)\n",
        ),
        Invalid(  # nested ifs: the guard is split over two statements
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    if group is not None:\n"
            "        if dist.get_world_size(group) > 1:\n"
            "            dist.all_reduce(t, group=group)\n",
            flagged="group is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if pg_utils.is_parallel(group):\n"
            "        dist.all_reduce(t, group=group)\n",
        ),
        Invalid(  # a flag variable carries the guard to the collective
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    use_tp = group is not None\n"
            "    if use_tp and dist.get_world_size(group) > 1:\n"
            "        dist.all_reduce(t, group=group)\n",
            flagged="group is not None",
        ),
        Invalid(  # the size is a local cached from the group, narrowed by an early exit
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    if group is None:\n"
            "        return t\n"
            "    ws = dist.get_world_size(group=group)\n"
            "    if ws > 1:\n"
            "        dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="group is None",
        ),
        Invalid(  # a size that is 1 when the group is None: its one test is the whole guard
            "import torch.distributed as dist\n"
            "class Opt:\n"
            "    def __init__(self):\n"
            "        self.tp_size = 1\n"
            "    def setup(self, tp_group=None):\n"
            "        self.tp_group = tp_group\n"
            "        if tp_group is not None:\n"
            "            self.tp_size = dist.get_world_size(tp_group)\n"
            "    def step(self, t):\n"
            "        if self.tp_size > 1:\n"
            "            dist.all_reduce(t, group=self.tp_group)\n",
            flagged="self.tp_size > 1",
        ),
        Invalid(  # that test stored as a flag: the layer it builds communicates out of sight
            "import torch.distributed as dist\n"
            "class Attention:\n"
            "    def __init__(self, sp_group=None):\n"
            "        if sp_group is None:\n"
            "            sp_n = 1\n"
            "        else:\n"
            "            sp_n = dist.get_world_size(sp_group)\n"
            "        if sp_n > 1:\n"
            "            self.use_ulysses = True\n"
            "        else:\n"
            "            self.use_ulysses = False\n",
            flagged="sp_n > 1",
            # the test becomes the predicate; the size stays for whatever else reads it
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class Attention:\n"
            "    def __init__(self, sp_group=None):\n"
            "        if sp_group is None:\n"
            "            sp_n = 1\n"
            "        else:\n"
            "            sp_n = dist.get_world_size(sp_group)\n"
            "        if pg_utils.is_parallel(sp_group):\n"
            "            self.use_ulysses = True\n"
            "        else:\n"
            "            self.use_ulysses = False\n",
        ),
        Invalid(  # the guard in front of a call into a helper that communicates on what it is given
            "import torch.distributed as dist\n"
            "def _reduce(t, group):\n"
            "    dist.all_reduce(t, group=group)\n"
            "def f(t, g=None):\n"
            "    if g is not None:\n"
            "        if dist.get_world_size(g) > 1:\n"
            "            _reduce(t, g)\n",
            flagged="g is not None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def _reduce(t, group):\n"
            "    dist.all_reduce(t, group=group)\n"
            "def f(t, g=None):\n"
            "    if pg_utils.is_parallel(g):\n"
            "        _reduce(t, g)\n",
        ),
        Invalid(  # an autograd Function's forward leaves a None-safe size and its group on ctx for backward
            "import torch\n"
            "import torch.distributed as dist\n"
            "class _Mix(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, groups):\n"
            "        sub, n = None, 1\n"
            "        if isinstance(groups, list):\n"
            "            sub = groups[0]\n"
            "            n = dist.get_world_size(sub)\n"
            "        ctx.sub, ctx.n = sub, n\n"
            "        return x\n"
            "    @staticmethod\n"
            "    def backward(ctx, g):\n"
            "        if ctx.n > 1:\n"
            "            dist.all_reduce(g, group=ctx.sub)\n"
            "        return g, None\n",
            flagged="ctx.n > 1",
        ),
    ),
    valid=(
        # a project's own copy of the predicate, imported from elsewhere, guards as the predicate does
        "import torch.distributed as dist\n"
        "from mytrain.parallel import is_parallel\n"
        "def reduce(x, tp_group=None):\n"
        "    if is_parallel(tp_group):\n"
        "        dist.all_reduce(x, group=tp_group)\n"
        "def norm(x, tp_group=None):\n"
        "    if tp_group is not None:\n"
        "        dist.all_reduce(x, group=tp_group)\n",
        # the group of a parallel-state getter: its guards are out of scope by design (the RFC's mpu sizes)
        "import torch.distributed as dist\n"
        "from megatron.core import parallel_state as ps\n"
        "class VocabMax:\n"
        "    def __init__(self):\n"
        "        self.tp_group = ps.get_tensor_model_parallel_group()\n"
        "    def __call__(self, m):\n"
        "        if self.tp_group is not None and dist.get_world_size(self.tp_group) > 1:\n"
        "            dist.all_reduce(m, op=dist.ReduceOp.MAX, group=self.tp_group)\n"
        "        return m\n",
        # a size the predicate itself decided: its test repeats the predicate, nothing to migrate
        "import torch.distributed as dist\n"
        "from deepspeed.comm import pg_utils\n"
        "def gather(x, ep_group=None):\n"
        "    n = dist.get_world_size(ep_group) if pg_utils.is_parallel(ep_group) else 1\n"
        "    if n > 1:\n"
        "        out = [x.new_empty(x.shape) for _ in range(n)]\n"
        "        dist.all_gather(out, x, group=ep_group)\n"
        "        return out\n"
        "    return [x]\n",
        "from deepspeed.comm import pg_utils\n"
        "import deepspeed.comm as dist\n"
        "def f(t, g=None):\n"
        "    if pg_utils.is_parallel(g):\n"
        "        dist.all_reduce(t, group=g)\n",
        "import somewhere_else as dist\n"
        "def f(g):\n"
        "    return g is not None and dist.get_world_size(g) > 1\n",
        "import deepspeed.comm as dist\n"
        "def f(mpu):\n"
        "    return mpu is not None and dist.get_world_size(group=mpu.get_model_parallel_group()) > 1\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group, sizes):\n"
        "    if group is not None and len(sizes) > 1:\n"
        "        dist.all_reduce(t, group=group)\n",
    ),
)


def check(r: Reporter) -> None:
    v = r.verdicts
    for pair in v.pairs:
        if not pair.exits and not v.in_copy(pair.chain.node):
            report_pair(r, RULE, pair)
    for split in v.splits:
        if not split.negated:
            report_split(r, RULE, split)
