"""Shared by PG101 and PG102: report a full guard found in one chain or spread over several tests."""

from __future__ import annotations

import ast

from bot.analyze.env import FunctionInfo
from bot.analyze.flow import Check
from bot.analyze.rules.base import Reporter, code_span
from bot.analyze.source import statements
from bot.analyze.terms import SizeOf, presence
from bot.analyze.verdicts import Pair, Split
from bot.model import GuardPayload, Payload, Rule, Span, SplitGuardPayload


def report_pair(r: Reporter, rule: Rule, pair: Pair) -> None:
    node = pair.chain.node
    first, last = sorted((pair.none, pair.size), key=lambda a: a.index)
    start, end = r.span(first.node), r.span(last.node)
    whole = pair.chain.inverted or node  # `not (a and b)` is the test written: quoted, flagged and fixed whole
    span = r.span(whole) if len(node.values) == 2 else Span(start.line, start.col, end.end_line, end.end_col)
    compare = pair.size.compare
    assert compare is not None
    # the group as the test reads it (`mesh` after `mesh = ctx.sp_mesh`): the rewrite replaces that test, in its
    # own words (PG103 does the same)
    target, _ = presence(pair.none.node)
    group = r.text(target) if isinstance(target, ast.Name | ast.Attribute) else pair.none.key
    text = r.text(whole) if len(node.values) == 2 else f"{r.text(first.node)} ... {r.text(last.node)}"
    payload = GuardPayload(
        none_check=r.span(pair.none.node),
        size_check=r.span(pair.size.node),
        chain=r.span(node),
        adjacent=last.index - first.index == 1,
        op=compare.op,
        bound=compare.bound,
        nonmember_bug=compare.nonmember_bug,
        size_via=pair.size.term.via if pair.size.term is not None else None,
        # the cached size's value when the group is None (`ws(g) if g is not None else 1`): None = the world
        size_when_none=_fallback(pair.size.term),
        inverted=r.span(pair.chain.inverted) if pair.chain.inverted is not None else None,
    )
    _emit(r, rule, span, text, group, pair.exits, compare.op, compare.bound, compare.nonmember_bug,
          "or" if pair.negated else "and", payload, pair.chain.function)


def _fallback(term: SizeOf | None) -> int | None:
    return term.fallback if term is not None and term.via is not None else None


def report_split(r: Reporter, rule: Rule, split: Split) -> None:
    compare = split.size.compare
    assert compare is not None
    negated = split.negated
    none, size = _here(split.none, split.function), _here(split.size, split.function)
    first = min((none, size), key=lambda n: (n.lineno, n.col_offset))
    safe = split.none is split.size  # one test of a size that is 1 when the group is None
    term = split.size.term if safe and isinstance(split.size.term, SizeOf) else None  # (that size)
    text = r.text(size) if safe else f"{r.text(none)} ... {r.text(size)}"
    payload = SplitGuardPayload(
        none_check=r.span(none),
        size_check=r.span(size),
        none_test=r.span(split.none.test),
        size_test=r.span(split.size.test),
        none_negated=split.none.negated,
        size_negated=split.size.negated,
        op=compare.op,
        bound=compare.bound,
        nonmember_bug=compare.nonmember_bug,
        collective=split.protects,
        size_via=term.via if term is not None else None,
        size_when_none=_fallback(term),
    )
    shape, note = "split over several tests ", ""
    span = r.span(first)
    if safe:
        fallback = term.fallback if term is not None else None
        shape, note = "", f" (a size that is {1 if fallback is None else fallback} when `{split.key}` is None)"
        defined = _local_definition(split.function, term.via if term is not None else None, span.line)
        if defined is not None and isinstance(defined.value, ast.IfExp) and \
                span.line - (defined.end_lineno or defined.lineno) <= 2:
            # `n = ws(g) if g is not None else 1` right above the test: the guard's None test is in that
            # line, so the guard starts there (a definition further up is a cache, not part of this guard)
            span = Span(defined.lineno, defined.col_offset, span.end_line, span.end_col)
    # `if not (n <= 1):` or a flag set from it: the test quoted is the single-rank one, so it reads `not ...`
    single = safe and not negated and not compare.positive
    _emit(r, rule, span, text, split.key, negated, compare.op, compare.bound,
          compare.nonmember_bug, "split", payload, split.function, shape=shape, note=note, single=single)


def _here(check: Check, function: FunctionInfo | None) -> ast.expr:
    """The check as the guard's function shows it: a test made inside a predicate helper it calls (`pg is not None`
    in `_is_member(pg)`) is shown, and flagged, at the call (`if _is_member(grp):`). A flag an attribute holds
    (`self.on = n > 1` in `__init__`) stays where it was set: that is where the guard was written."""
    node = check.node
    if function is None or not isinstance(check.test, ast.Call) or \
            function.node.lineno <= node.lineno <= (function.node.end_lineno or node.lineno):
        return node
    return check.test


def _local_definition(function: FunctionInfo | None, name: str | None, before: int) -> ast.Assign | ast.AnnAssign | None:
    """The last assignment of the local ``name`` (or of `x` for `len(x)`) in the function before line ``before``."""
    if name is not None and name.startswith("len(") and name.endswith(")"):
        name = name[4:-1]  # a list of a group's members, measured by its length
    if function is None or name is None or "." in name:
        return None
    found: ast.Assign | ast.AnnAssign | None = None
    for stmt in statements(function.node.body):
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.lineno >= before:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        bound = any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
        if bound and (found is None or stmt.lineno > found.lineno):
            found = stmt
    return found


def _emit(r: Reporter, rule: Rule, span: Span, text: str, group: str, negated: bool, op: str, bound: int,
          nonmember_bug: bool, kind: str, payload: Payload, function: FunctionInfo | None,
          shape: str = "", note: str = "", single: bool = False) -> None:
    if negated:
        message = f"hand-rolled early exit {shape}{code_span(text)}{note}: use {code_span(f'not {r.predicate}({group})')}"
        if nonmember_bug:
            message += f" ({code_span(f'{op} {bound}')} lets a non-member group, size -1, through)"
    else:
        use = f"not {r.predicate}({group})" if single else f"{r.predicate}({group})"
        message = f"hand-rolled guard {shape}{code_span(text)}{note}: use {code_span(use)}"
        if nonmember_bug:
            message += f" ({code_span(f'{op} {bound}')} is True for a non-member group, size -1)"
    r.report(rule, span, message, function, group=group, kind=kind, payload=payload)
