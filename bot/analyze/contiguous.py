"""PG108: `all_reduce(x.contiguous(), ...)` reduces a temporary copy and throws the result away."""

from __future__ import annotations

import ast

from bot.analyze.base import RuleInput
from bot.analyze.names import dotted
from bot.model import Rule

DISCARDED = Rule(
    code="PG108",
    name="discarded-contiguous-result",
    summary="an in-place collective applied to `x.contiguous()`",
    why=(
        "`x.contiguous()` returns a new tensor when x is not contiguous; the in-place collective writes its "
        "result into that temporary, which is then dropped, so x keeps its unreduced value. It works only while "
        "x happens to be contiguous, which makes the bug intermittent."
    ),
    fix="Reduce a named contiguous tensor and copy it back into x when they differ.",
    invalid=(
        "import deepspeed.comm as dist\n"
        "def f(x, group):\n"
        "    dist.all_reduce(x.contiguous(), group=group)\n"
        "    return x\n",
        "import torch.distributed as dist\n"
        "def f(x):\n"
        "    dist.broadcast(x.contiguous(), 0)\n",
    ),
    valid=(
        "import deepspeed.comm as dist\n"
        "def f(x, group):\n"
        "    x_c = x.contiguous()\n"
        "    dist.all_reduce(x_c, group=group)\n"
        "    return x_c\n",
        "import deepspeed.comm as dist\n"
        "def f(out, x, group):\n"
        "    dist.all_gather_into_tensor(out, x.contiguous(), group=group)\n",
    ),
)

RULES = (DISCARDED,)


def check(inp: RuleInput) -> None:
    inplace = inp.ctx.config.inplace_collectives
    for coll in inp.facts.collectives:
        if coll.name not in inplace or not coll.call.args:
            continue
        first = coll.call.args[0]
        if not (
            isinstance(first, ast.Call)
            and isinstance(first.func, ast.Attribute)
            and first.func.attr == "contiguous"
            and not first.args
            and not first.keywords
        ):
            continue
        tensor = inp.segment(first.func.value)
        inp.report(
            "PG108",
            coll.call,
            f"`{coll.name}({tensor}.contiguous(), ...)` writes into a temporary when `{tensor}` is not "
            f"contiguous, and that result is thrown away",
            coll.scope,
            group=dotted(coll.group) if coll.group is not None else None,
            kind="call",
            data={
                "tensor": tensor,
                "statement": inp.span(coll.statement),
                "collective": coll.name,
                "result_used": coll.result_used,
            },
        )
