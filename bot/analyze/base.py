"""What every rule module gets: the file's context, its facts, and a way to report a finding."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from bot.analyze.context import Context, NoneCheck, SizeCheck
from bot.analyze.optional import OptionalFacts
from bot.analyze.walker import Facts, Guard, Scope
from bot.model import Finding, Span


@dataclass
class RuleInput:
    ctx: Context
    facts: Facts
    optional: OptionalFacts
    findings: list[Finding] = field(default_factory=list)
    # ids of nodes already reported, so one guard shared by several collectives is reported once
    seen: set[tuple[str, int, Span | None]] = field(default_factory=set)
    # spans of functions that are predicate copies (PG107): guards inside them are reported as the copy
    copies: list[Span] = field(default_factory=list)

    def span(self, node: ast.AST) -> Span:
        return self.ctx.source.span(node)

    def segment(self, node: ast.AST) -> str:
        return " ".join(self.ctx.source.segment(node).split())

    def report(
        self,
        code: str,
        node: ast.AST,
        message: str,
        scope: Scope,
        *,
        group: str | None = None,
        kind: str = "",
        span: Span | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        key = (code, id(node), span)
        if key in self.seen:
            return
        self.seen.add(key)
        self.findings.append(
            Finding(
                code=code,
                message=message,
                path=self.ctx.path,
                span=span or self.span(node),
                group=group,
                kind=kind,
                function=scope.qualname if scope.function is not None else None,
                data=data or {},
            )
        )

    def may_be_none(self, group: str, scope: Scope) -> bool:
        return self.optional.may_be_none(group, scope.function, scope.klass)


def operands(guard: Guard) -> list[ast.expr]:
    """The sub-tests each of which alone decides the guard: `and` operands of a positive test, `or`
    operands of a negated one (the early exit `if a or b: return`)."""
    op = ast.Or if guard.negated else ast.And
    test = guard.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, op):
        return list(test.values)
    return [test]


def none_or_truthy(ctx: Context, node: ast.expr, group: str) -> NoneCheck | None:
    check = ctx.none_check(node)
    if check is None:
        check = ctx.truthiness(node)
    return check if check is not None and check.group == group else None


def size_of(ctx: Context, node: ast.expr, group: str) -> SizeCheck | None:
    check = ctx.size_check(node)
    return check if check is not None and check.group == group else None
