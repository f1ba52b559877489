"""PG107: a local function, method or property whose whole body is the predicate (one `return`, or early
returns of True/False that fold into it)."""

from __future__ import annotations

import ast

from bot.analyze.rules.base import Reporter, code_span
from bot.model import CopyPayload, Invalid, Rule

RULE = Rule(
    code="PG107",
    name="predicate-copy",
    summary=(
        "A function, method, property or assigned lambda that re-implements `pg_utils.is_parallel` "
        "(`return g is not None and get_world_size(g) > 1` on a parameter or an attribute of self, or the same "
        "spelled as early returns: `if g is None: return False` then `return get_world_size(g) > 1`), or its negation."
    ),
    why=(
        "Every copy is one more place where the convention can drift (one forgets the None check, another uses "
        "`!= 1`). Calls of the copy are guards like any other and should read `pg_utils.is_parallel(g)`."
    ),
    fix="Call `pg_utils.is_parallel` instead; the copy is removed once nothing else uses it.",
    fix_safety="Safe when the copy's body is proven equivalent; the copy stays (delegating) when it is public.",
    invalid=(
        Invalid(  # a lambda set on the instance by its constructor
            "import torch.distributed as dist\n"
            "class Block:\n"
            "    def __init__(self, sp_group=None):\n"
            "        self.sp_group = sp_group\n"
            "        self._sp_on = lambda: self.sp_group is not None and dist.get_world_size(self.sp_group) > 1\n"
            "    def forward(self, x):\n"
            "        if self._sp_on():\n"
            "            dist.all_reduce(x, group=self.sp_group)\n"
            "        return x\n",
            flagged="lambda: self.sp_group is not None and dist.get_world_size(self.sp_group) > 1",
        ),
        Invalid(  # `bool(g)` is g's truthiness, a None test
            "import torch.distributed as dist\n"
            "def tp_active(g):\n"
            "    return bool(g) and dist.get_world_size(group=g) >= 2\n",
            flagged="def tp_active(g):\n    return bool(g) and dist.get_world_size(group=g) >= 2",
        ),
        Invalid(  # a lambda's parameter is what its test is about: `g.size()` there is a group's own size
            "import torch.distributed as dist\n"
            "_is_split = lambda g: g is not None and g.size() > 1\n"
            "def full(w, grp=None):\n"
            "    if _is_split(grp):\n"
            "        dist.all_gather([w], w, group=grp)\n"
            "    return w\n",
            flagged="lambda g: g is not None and g.size() > 1",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "def _tp_active(group):\n"
            "    return group is not None and dist.get_world_size(group=group) > 1\n"
            "def f(t, group=None):\n"
            "    if _tp_active(group):\n"
            "        dist.all_reduce(t, group=group)\n",
            flagged="def _tp_active(group):\n    return group is not None and dist.get_world_size(group=group) > 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def f(t, group=None):\n"
            "    if pg_utils.is_parallel(group):\n"
            "        dist.all_reduce(t, group=group)\n",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "class Layer:\n"
            "    @property\n"
            "    def tp_enabled(self):\n"
            "        return self.tp_group is not None and dist.get_world_size(self.tp_group) > 1\n"
            "    def forward(self, x):\n"
            "        if self.tp_enabled:\n"
            "            dist.all_reduce(x, group=self.tp_group)\n",
            flagged="def tp_enabled(self):\n        return self.tp_group is not None and dist.get_world_size(self.tp_group) > 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class Layer:\n"
            "    @property\n"
            "    def tp_enabled(self):\n"
            "        return pg_utils.is_parallel(self.tp_group)\n"
            "    def forward(self, x):\n"
            "        if self.tp_enabled:\n"
            "            dist.all_reduce(x, group=self.tp_group)\n",
        ),
        Invalid(  # early returns that fold into the predicate (bot.analyze.returns); the copy is public: it stays,
            # delegating, with its docstring
            "import deepspeed.comm as dist\n"
            "def uses_group(group):\n"
            "    \"\"\"True when the group spans ranks.\"\"\"\n"
            "    if group is None:\n"
            "        return False\n"
            "    if dist.get_world_size(group) <= 1:\n"
            "        return False\n"
            "    return True\n"
            "def f(t, group=None):\n"
            "    if uses_group(group):\n"
            "        dist.all_reduce(t, group=group)\n",
            flagged="def uses_group(group):\n"
            "    \"\"\"True when the group spans ranks.\"\"\"\n"
            "    if group is None:\n"
            "        return False\n"
            "    if dist.get_world_size(group) <= 1:\n"
            "        return False\n"
            "    return True",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "def uses_group(group):\n"
            "    \"\"\"True when the group spans ranks.\"\"\"\n"
            "    return pg_utils.is_parallel(group)\n"
            "def f(t, group=None):\n"
            "    if pg_utils.is_parallel(group):\n"
            "        dist.all_reduce(t, group=group)\n",
        ),
        Invalid(  # an assigned lambda: no automatic fix (its calls are replaced by hand)
            "import deepspeed.comm as dist\n"
            "tp_on = lambda g: g is not None and dist.get_world_size(g) > 1\n"
            "def f(t, g=None):\n"
            "    if tp_on(g):\n"
            "        dist.all_reduce(t, group=g)\n",
            flagged="lambda g: g is not None and dist.get_world_size(g) > 1",
        ),
    ),
    valid=(
        # a predicate over a group it fetches from the parallel state: mpu-based, out of scope by design
        "import torch.distributed as dist\n"
        "from megatron.core import parallel_state\n"
        "def _tp_active():\n"
        "    tp = parallel_state.get_tensor_model_parallel_group()\n"
        "    return tp is not None and dist.get_world_size(group=tp) > 1\n",
        "from deepspeed.comm import pg_utils\n"
        "def f(t, group=None):\n"
        "    return pg_utils.is_parallel(group)\n",
        "import deepspeed.comm as dist\n"
        "def _active(group, n):\n"
        "    return group is not None and n > 1\n",
    ),
)


def check(r: Reporter) -> None:
    for copy in r.verdicts.copies:
        name = copy.name
        calls = [c for c in ast.walk(r.ctx.source.tree) if isinstance(c, ast.Call) and _calls(c, name)]
        negated = copy.pair.negated
        call = ("not " if negated else "") + f"{r.predicate}(...)"
        r.report(
            RULE, r.span(copy.node),
            f"{code_span(name)} re-implements the predicate: call "
            f"{code_span(call)} instead",
            copy.function, group=copy.key, kind="lambda" if copy.function is None else "def",
            payload=CopyPayload(name=name, calls=tuple(r.span(c) for c in calls), negated=negated, param=copy.key,
                                method=copy.method, property=copy.property),
        )


def _calls(call: ast.Call, name: str) -> bool:
    func = call.func
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)
