"""PG107: a local helper whose body is the predicate (`def _tp_active(g): return g is not None and ...`)."""

from __future__ import annotations

import ast

from bot.analyze.base import RuleInput
from bot.analyze.guards import _pair
from bot.model import Rule

COPY = Rule(
    code="PG107",
    name="predicate-copy",
    summary="a local function that re-implements `pg_utils.is_parallel`",
    why=(
        "Each copy of the predicate is one more place for the conventions to drift apart; the RFC keeps exactly "
        "one, `deepspeed.comm.pg_utils.is_parallel`."
    ),
    fix="Call `pg_utils.is_parallel` instead; the copy is removed once nothing else uses it.",
    invalid=(
        "import deepspeed.comm as dist\n"
        "def _tp_active(group):\n"
        "    return group is not None and dist.get_world_size(group=group) > 1\n"
        "def f(t, group=None):\n"
        "    if _tp_active(group):\n"
        "        dist.all_reduce(t, group=group)\n",
        "import deepspeed.comm as dist\n"
        "class A:\n"
        "    def _no_tp(self, g):\n"
        '        """True when there is no tensor parallelism."""\n'
        "        return g is None or dist.get_world_size(g) == 1\n",
    ),
    valid=(
        "from deepspeed.comm import pg_utils\n"
        "def _tp_active(group):\n"
        "    return pg_utils.is_parallel(group)\n",
        "import deepspeed.comm as dist\n"
        "def _active(group, enabled):\n"
        "    if enabled:\n"
        "        print('x')\n"
        "    return enabled and group is not None and dist.get_world_size(group=group) > 1\n",
    ),
)

RULES = (COPY,)


def check(inp: RuleInput) -> None:
    for function, scope in inp.facts.functions:
        body = function.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.BoolOp):
            continue
        chain = body[0].value
        if len(chain.values) != 2:
            continue
        negated = isinstance(chain.op, ast.Or)
        pair = _pair(inp, chain.values, negated, scope.sizes)
        if pair is None:
            continue
        group = pair[0][1].group
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)]
        if group not in params:
            continue
        calls = _calls_of(inp.ctx.source.tree, function.name)
        inp.copies.append(inp.span(function))
        call = inp.ctx.config.predicate_call
        inp.report(
            "PG107",
            function,
            f"`{function.name}` re-implements the predicate: call "
            f"`{'not ' if negated else ''}{call}(...)` instead",
            scope,
            group=group,
            kind="def",
            data={
                "name": function.name,
                "calls": [inp.span(c) for c in calls],
                "negated": negated,
                "param": group,
                "method": scope.klass is not None and params[:1] == ["self"],
            },
        )


def _calls_of(tree: ast.Module, name: str) -> list[ast.Call]:
    """Calls `name(...)` / `self.name(...)` anywhere in the file (only walked when a copy is found)."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
    ]
