"""PG101/PG102: the full hand-rolled guard, in every spelling, and its negated early-exit form."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from bot.analyze.base import RuleInput
from bot.analyze.context import NoneCheck, SizeCheck
from bot.analyze.names import dotted
from bot.analyze.walker import BoolChain
from bot.model import Rule, Span

FULL = Rule(
    code="PG101",
    name="hand-rolled-guard",
    summary="`g is not None and get_world_size(g) > 1` spelled by hand",
    why=(
        "Hand-rolled guards differ subtly from module to module (some forget the None check, some the size, "
        "some mishandle a non-member's size of -1). One predicate, `pg_utils.is_parallel(g)`, states the "
        "convention once: None means the parallel dimension is absent, and a group is parallel iff its world "
        "size is greater than one."
    ),
    fix="Replace the two checks with `pg_utils.is_parallel(g)`; other operands of the chain stay in place.",
    invalid=(
        "import deepspeed.comm as dist\n"
        "def f(t, tp_group=None):\n"
        "    if tp_group is not None and dist.get_world_size(tp_group) > 1:\n"
        "        dist.all_reduce(t, group=tp_group)\n",
        "from deepspeed import comm as dist\n"
        "class A:\n"
        "    def forward(self, x):\n"
        "        if self.config.mlp_after_attn and self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1:\n"
        "            dist.all_reduce(x, group=self.mp_group)\n",
        "import torch.distributed as dist\n"
        "def f(t, g):\n"
        "    if g is not None and 1 < dist.get_world_size(group=g):\n"
        "        dist.all_reduce(t, group=g)\n",
        "from deepspeed.comm import get_world_size\n"
        "def f(t, g):\n"
        "    active = g is not None and get_world_size(g) >= 2\n"
        "    return t if not active else t * 2\n",
    ),
    valid=(
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
    ),
)

NEGATED = Rule(
    code="PG102",
    name="hand-rolled-early-exit",
    summary="`g is None or get_world_size(g) == 1` (`<= 1`, `< 2`) as an early exit",
    why=(
        "The negated guard is the same hand-rolled check turned around, with the same pitfalls: `== 1` lets a "
        "non-member group (size -1) through to the collective."
    ),
    fix="Replace the two checks with `not pg_utils.is_parallel(g)`.",
    invalid=(
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is None or dist.get_world_size(group=group) == 1:\n"
        "        return t\n"
        "    dist.all_reduce(t, group=group)\n"
        "    return t\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is None or dist.get_world_size(group) <= 1:\n"
        "        return t\n"
        "    return t\n",
        "import deepspeed.comm as dist\n"
        "def f(t, group=None):\n"
        "    if group is None or dist.get_world_size(group) < 2:\n"
        "        return t\n"
        "    return t\n",
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
    ),
)

RULES = (FULL, NEGATED)


def check(inp: RuleInput) -> None:
    for chain in inp.facts.chains:
        node = chain.node
        if any(_within(inp.span(node), copy) for copy in inp.copies):
            continue
        negated = isinstance(node.op, ast.Or)
        for pair in _pairs(inp, node.values, negated, chain.scope.sizes):
            _report(inp, chain, pair, negated)


def _pairs(
    inp: RuleInput, values: list[ast.expr], negated: bool, sizes: Mapping[str, str]
) -> list[tuple[tuple[int, NoneCheck], tuple[int, SizeCheck]]]:
    """Every disjoint guard in one chain (`g is not None and ws(g) > 1 and h is not None and ws(h) > 1`)."""
    found = []
    used: set[int] = set()
    while (pair := _pair(inp, values, negated, sizes, used)) is not None:
        found.append(pair)
        used |= {pair[0][0], pair[1][0]}
    return found


def _report(
    inp: RuleInput, chain: BoolChain, pair: tuple[tuple[int, NoneCheck], tuple[int, SizeCheck]], negated: bool
) -> None:
    ctx, node = inp.ctx, chain.node
    (ni, none_check), (si, size_check) = pair
    first, last = sorted((ni, si))
    a, b = node.values[first], node.values[last]
    start, end = inp.span(a), inp.span(b)
    span = inp.span(node) if len(node.values) == 2 else Span(start.line, start.col, end.end_line, end.end_col)
    g = none_check.group
    data = {
        "none_check": inp.span(node.values[ni]),
        "size_check": inp.span(node.values[si]),
        "chain": inp.span(node),
        "adjacent": last - first == 1,
        "op": size_check.op,
        "bound": size_check.bound,
        "nonmember_bug": size_check.nonmember_bug,
    }
    text = inp.segment(node) if len(node.values) == 2 else f"{inp.segment(a)} ... {inp.segment(b)}"
    if negated:
        message = f"hand-rolled early exit `{text}`: use `not {ctx.config.predicate_call}({g})`"
        if size_check.nonmember_bug:
            message += f" (`{size_check.op} {size_check.bound}` lets a non-member group, size -1, through)"
        inp.report("PG102", node, message, chain.scope, group=g, kind="or", span=span, data=data)
    else:
        message = f"hand-rolled guard `{text}`: use `{ctx.config.predicate_call}({g})`"
        if size_check.nonmember_bug:
            message += f" (`{size_check.op} {size_check.bound}` is True for a non-member group, size -1)"
        inp.report("PG101", node, message, chain.scope, group=g, kind="and", span=span, data=data)


def _pair(
    inp: RuleInput, values: list[ast.expr], negated: bool, sizes: Mapping[str, str], used: set[int] | None = None
) -> tuple[tuple[int, NoneCheck], tuple[int, SizeCheck]] | None:
    """The first (None check, size check) on one group with the polarity of a guard (or its negation)."""
    ctx = inp.ctx
    skip = used or set()
    found = [
        (i, s)
        for i, v in enumerate(values)
        if i not in skip and (s := ctx.size_check(v, sizes)) and s.positive != negated
    ]
    if not found:
        return None
    groups = {s.group for _, s in found}
    for i, value in enumerate(values):
        if i in skip:
            continue
        check = ctx.none_check(value) or (ctx.truthiness(value) if _dotted_in(value, groups) else None)
        if check is None or check.is_none != negated or check.group not in groups:
            continue
        for j, size in found:
            if size.group == check.group:
                return (i, check), (j, size)
    return None


def _dotted_in(node: ast.expr, groups: set[str]) -> bool:
    target = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) else node
    return dotted(target) in groups


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.col) <= (inner.line, inner.col) and (inner.end_line, inner.end_col) <= (
        outer.end_line,
        outer.end_col,
    )
