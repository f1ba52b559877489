"""PG102: the negated guard `g is None or get_world_size(g) == 1` as an early exit or else branch."""

from __future__ import annotations

from bot.analyze.rules._guard import report_pair, report_split
from bot.analyze.rules.base import Reporter
from bot.model import Invalid, Rule

RULE = Rule(
    code="PG102",
    name="hand-rolled-early-exit",
    summary=(
        "`g is None or get_world_size(g) == 1` (`<= 1`, `< 2`, `not g or ...`, or the guard under `not`: `not (g is "
        "not None and get_world_size(g) > 1)`), in one chain or as consecutive "
        "early exits (`if g is None: return` then `if get_world_size(g) == 1: return`), including sizes cached "
        "with a None fallback (`self.ws = get_world_size(g) if g is not None else 1`), also tested alone (`if n == "
        "1: return`, the None test being in the size's definition)."
    ),
    why=(
        "The negated guard is the same hand-rolled check turned around, with the same pitfalls: `== 1` lets a "
        "non-member group (size -1) through to the collective."
    ),
    fix="`not pg_utils.is_parallel(g)`.",
    fix_safety=(
        "Safe when proven equivalent in all five group states; `== 1` differs for a non-member and needs "
        "`--unsafe-fixes`. Consecutive early exits (`if g is None: return t` then `if ws(g) == 1: return t`, the same "
        "body, nothing between them) become one `if not pg_utils.is_parallel(g):` on the same terms; other split "
        "guards are reported with no automatic fix."
    ),
    invalid=(
        Invalid(  # exits before a hook that is a partial of an in-file helper communicating on the group
            "import functools\n"
            "import torch.distributed as dist\n"
            "def _sync(param, group):\n"
            "    dist.all_reduce(param.grad, group=group)\n"
            "def attach(params, grp=None):\n"
            "    if grp is None or dist.get_world_size(grp) == 1:\n"
            "        return\n"
            "    for p in params:\n"
            "        p.register_post_accumulate_grad_hook(functools.partial(_sync, group=grp))\n",
            flagged="grp is None or dist.get_world_size(grp) == 1",
            fixed="import functools\n"
            "import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n"
            "\n"
            "def _sync(param, group):\n"
            "    dist.all_reduce(param.grad, group=group)\n"
            "def attach(params, grp=None):\n"
            "    if not pg_utils.is_parallel(grp):\n"
            "        return\n"
            "    for p in params:\n"
            "        p.register_post_accumulate_grad_hook(functools.partial(_sync, group=grp))\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    if group is None or dist.get_world_size(group=group) == 1:\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="group is None or dist.get_world_size(group=group) == 1",
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
            "    if group is None or dist.get_world_size(group) <= 1:\n"
            "        return t\n"
            "    return t\n",
            flagged="group is None or dist.get_world_size(group) <= 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if not pg_utils.is_parallel(group):\n"
            "        return t\n"
            "    return t\n",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def f(t, group=None):\n"
            "    if group is None or dist.get_world_size(group) < 2:\n"
            "        return t\n"
            "    return t\n",
            flagged="group is None or dist.get_world_size(group) < 2",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if not pg_utils.is_parallel(group):\n"
            "        return t\n"
            "    return t\n",
        ),
        Invalid(  # the guard under `not` is the early exit
            "import torch.distributed as dist\n"
            "def f(t, group=None):\n"
            "    if not (group is not None and dist.get_world_size(group) > 1):\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="not (group is not None and dist.get_world_size(group) > 1)",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if not pg_utils.is_parallel(group):\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
        ),
        Invalid(  # two consecutive early exits
            "import torch.distributed as dist\n"
            "def reduce(t, group=None):\n"
            "    if group is None:\n"
            "        return t\n"
            "    if dist.get_world_size(group) == 1:\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            flagged="group is None",
            fixed="import torch.distributed as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def reduce(t, group=None):\n"
            "    if not pg_utils.is_parallel(group):\n"
            "        return t\n"
            "    dist.all_reduce(t, group=group)\n"
            "    return t\n",
            unsafe=True,
        ),
        Invalid(  # a size cached in the constructor with a None fallback (annotated, in if/else)
            "from typing import Optional\n"
            "import deepspeed.comm as dist\n"
            "class Layer:\n"
            "    def __init__(self, mp_group: Optional[object]):\n"
            "        self.mp_group = mp_group\n"
            "        if mp_group is not None:\n"
            "            self.tp_world_size: int = dist.get_world_size(self.mp_group)\n"
            "        else:\n"
            "            self.tp_world_size: int = 1\n"
            "    def gather(self, x, out):\n"
            "        if self.mp_group is None or self.tp_world_size == 1:\n"
            "            return x\n"
            "        dist.all_gather_into_tensor(out, x, group=self.mp_group)\n"
            "        return out\n",
            flagged="self.mp_group is None or self.tp_world_size == 1",
            fixed="from typing import Optional\n"
            "import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class Layer:\n"
            "    def __init__(self, mp_group: Optional[object]):\n"
            "        self.mp_group = mp_group\n"
            "        if mp_group is not None:\n"
            "            self.tp_world_size: int = dist.get_world_size(self.mp_group)\n"
            "        else:\n"
            "            self.tp_world_size: int = 1\n"
            "    def gather(self, x, out):\n"
            "        if not pg_utils.is_parallel(self.mp_group):\n"
            "            return x\n"
            "        dist.all_gather_into_tensor(out, x, group=self.mp_group)\n"
            "        return out\n",
            unsafe=True,  # `== 1` lets a non-member group (size -1) through today; the predicate does not
        ),
        Invalid(  # a size that is 1 when the group is None: the early exit on it alone is the whole guard, from
            # the definition that holds its None test to the test
            "import torch.distributed as dist\n"
            "def f(t, g=None):\n"
            "    n = dist.get_world_size(g) if g is not None else 1\n"
            "    if n == 1:\n"
            "        return t\n"
            "    dist.all_reduce(t, group=g)\n",
            flagged="n = dist.get_world_size(g) if g is not None else 1\n    if n == 1",
        ),
    ),
    valid=(
        "from deepspeed.comm import pg_utils\n"
        "def f(t, group=None):\n"
        "    if not pg_utils.is_parallel(group):\n"
        "        return t\n"
        "    return t\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is None or dist.get_world_size() == 1:\n"
        "        return t\n"
        "    return t\n",
        "import deepspeed.comm as dist\n"
        "def gather(x, out, group, partition_sizes):\n"
        "    tp_world_size = len(partition_sizes)\n"
        "    if group is None or tp_world_size == 1:\n"
        "        return x\n"
        "    dist.all_gather_into_tensor(out, x, group=group)\n"
        "    return out\n",
        "import deepspeed.comm as dist\n"
        "def gather(x, out, group, tp_world_size):\n"
        "    if group is None or tp_world_size == 1:\n"
        "        return x\n"
        "    dist.all_gather_into_tensor(out, x, group=group)\n"
        "    return out\n",
    ),
)


def check(r: Reporter) -> None:
    v = r.verdicts
    for pair in v.pairs:
        if pair.exits and not v.in_copy(pair.chain.node):
            report_pair(r, RULE, pair)
    for split in v.splits:
        if split.negated:
            report_split(r, RULE, split)
