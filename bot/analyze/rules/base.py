"""What every rule gets: the module's verdicts and a reporter that turns a node into a `Finding`."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.analyze.context import Context
from bot.analyze.env import FunctionInfo
from bot.analyze.verdicts import Verdicts
from bot.model import Confidence, Finding, Payload, Rule, Span


@dataclass
class Reporter:
    verdicts: Verdicts
    findings: list[Finding] = field(default_factory=list)
    _seen: set[tuple[str, Span]] = field(default_factory=set)

    @property
    def ctx(self) -> Context:
        return self.verdicts.module.ctx

    @property
    def predicate(self) -> str:
        return str(self.ctx.config.predicate_call)

    def span(self, node: ast.AST) -> Span:
        return self.ctx.source.span(node)

    def text(self, node: ast.AST) -> str:
        """The node's source on one line (whitespace folded)."""
        return " ".join(self.ctx.source.segment(node).split())

    def report(
        self,
        rule: Rule,
        span: Span,
        message: str,
        function: FunctionInfo | None,
        *,
        group: str | None,
        kind: str,
        payload: Payload,
        confidence: Confidence = Confidence.HIGH,
        evidence: tuple[str, ...] = (),
    ) -> None:
        key = (rule.code, span)
        if key in self._seen:
            return  # one guard shared by several collectives is one finding
        self._seen.add(key)
        self.findings.append(Finding(
            code=rule.code, message=message, path=self.ctx.path, span=span, group=group, kind=kind,
            function=function.qualname if function is not None else None, payload=payload,
            confidence=confidence, evidence=evidence,
        ))


Check = Callable[[Reporter], None]


def code_span(text: str) -> str:
    """`text` as a Markdown/plain code span that no backtick inside can break."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
