"""Findings -> rewrite plans: what to change, whether it is behaviour-preserving, and why (no CST editing here).

Each rule has one planner. A planner reads the finding's typed payload (docs/contracts.md), proves the
rewrite with :mod:`bot.fix.equivalence` (an allow-listed AST interpreter: nothing is ever evaluated), and returns
the operations the codemod performs, or raises :class:`Refused` with a reason a reviewer can read. A rewrite the
interpreter cannot prove becomes a suggestion that says why, never applied by ``pg-bot fix``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.analyze.names import dotted, package_of
from bot.analyze.returns import returned_test
from bot.analyze.source import child_blocks, parse_module
from bot.analyze.terms import bool_form
from bot.config import Config
from bot.fix.equivalence import STATES, Comparison, Unprovable, Vocabulary, compare, parse_expr, snippet
from bot.fix.text import code, error_text, slice_span
from bot.model import (
    CachedSizePayload,
    ContiguousPayload,
    CopyPayload,
    Finding,
    GuardPayload,
    NoneOnlyPayload,
    SizeOnlyPayload,
    Span,
    SplitGuardPayload,
    UnguardedPayload,
)


class Refused(Exception):
    """This finding cannot be rewritten automatically; the message says why."""


class Unproven(Exception):
    """The rewrite is well-defined but cannot be proved behaviour-preserving: a suggestion only, with the reason."""


# ------------------------------------------------------------------ operations the codemod understands


@dataclass(frozen=True)
class ReplaceExpr:
    """Replace the expression at ``span`` by ``text``."""

    span: Span
    text: str


@dataclass(frozen=True)
class RewriteChain:
    """In the boolean chain at ``chain``, the operand at ``keep`` becomes ``text`` and the one at ``drop`` goes."""

    chain: Span
    keep: Span
    drop: Span
    text: str


@dataclass(frozen=True)
class ReplaceCall:
    """Replace the call at ``span`` to a local predicate copy by the predicate; the argument comes from the
    call (bound to the copy's parameters), so ``template`` holds ``{group}``."""

    span: Span
    template: str
    params: tuple[str, ...]
    defaults: Mapping[str, str]
    group: str  # group expression in terms of the copy's parameters
    method: bool  # the copy is a method: its first parameter binds to the call's receiver


@dataclass(frozen=True)
class WrapStatement:
    """Put the statement at ``span`` under ``if <test>:``."""

    span: Span
    test: str


@dataclass(frozen=True)
class NameContiguous:
    """Name a contiguous copy of ``tensor`` as ``temp`` before the statement at ``span`` and copy it back after
    (the collective's argument becomes ``temp`` by a ReplaceExpr of the same plan)."""

    span: Span
    tensor: str
    temp: str


@dataclass(frozen=True)
class InsertAfter:
    """Insert statement ``code`` after the statement at ``span`` (same block, same indentation)."""

    span: Span
    code: str


@dataclass(frozen=True)
class RemoveDef:
    line: int
    name: str


@dataclass(frozen=True)
class ReplaceReturn:
    """The copy stays (still used, or public): its returned expression delegates to the predicate."""

    line: int
    name: str
    text: str


@dataclass(frozen=True)
class MergeIf:
    """The `if` statement at ``span`` is folded into the test before it, which now says what both said: an inner
    `if` (``nested``) gives way to its body; a repeated early exit goes."""

    span: Span
    nested: bool


Op = (ReplaceExpr | RewriteChain | ReplaceCall | WrapStatement | NameContiguous | InsertAfter | RemoveDef | ReplaceReturn
      | MergeIf)


@dataclass
class Plan:
    finding: Finding
    ops: list[Op]
    safe: bool  # equivalent in all four states: applied by default
    note: str  # what changes and why (names the states that differ)
    comparison: Comparison | None = None
    needs_import: bool = True
    suggest_ops: list[Op] | None = None  # a self-contained variant for a one-block suggestion, when ops are not
    suggest_note: str = ""
    auto: bool = True  # False: offered as a suggestion only, never applied by `fix` (even with --unsafe-fixes)


@dataclass
class Context:
    source: str
    lines: list[str]
    config: Config
    tree: ast.Module
    vocabulary: Vocabulary | None = None

    def call(self, group: str, negative: bool = False) -> str:
        text = f"{self.config.predicate_call}({group})"
        return f"not {text}" if negative else text

    def text(self, span: Span) -> str:
        try:
            return slice_span(self.lines, span)
        except ValueError as exc:
            raise Refused(str(exc)) from exc

    def span_of(self, node: ast.expr | ast.stmt | ast.pattern) -> Span | None:
        """``node``'s span in characters (ast counts UTF-8 bytes within a line)."""
        end_line, end_col = node.end_lineno, node.end_col_offset
        if end_line is None or end_col is None or not (1 <= node.lineno <= end_line <= len(self.lines)):
            return None

        def column(line: int, offset: int) -> int:
            return len(self.lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace"))

        return Span(node.lineno, column(node.lineno, node.col_offset), end_line, column(end_line, end_col))

    def expr_at(self, span: Span) -> ast.expr:
        """The outermost expression whose span is exactly ``span``."""
        for stmt in [*self._around(span.line, span.end_line), self.tree]:  # the module last (decorators)
            for node in ast.walk(stmt):  # breadth first: an outer node is seen before one that shares its span
                if isinstance(node, ast.expr) and node.lineno == span.line and self.span_of(node) == span:
                    return node
        raise Refused(f"no expression at {_where(span)}")

    def parent(self, node: ast.AST) -> ast.AST | None:
        """The node directly holding ``node`` (the module for a top-level statement)."""
        line = getattr(node, "lineno", None)
        if line is None:
            return None
        for stmt in [*self._around(line, getattr(node, "end_lineno", None) or line), self.tree]:
            for candidate in ast.walk(stmt):
                if any(child is node for child in ast.iter_child_nodes(candidate)):
                    return candidate
        return None

    def _around(self, line: int, end_line: int) -> list[ast.stmt]:
        """The statements whose lines hold ``line``..``end_line``, innermost first: whatever sits in those lines
        is found in the first of them that has it, without walking the whole module (a big class is one
        statement; its methods are not)."""
        chain: list[ast.stmt] = []
        body: list[ast.stmt] = self.tree.body
        while True:
            inner = next((s for s in body if s.lineno <= line and end_line <= (s.end_lineno or s.lineno)), None)
            if inner is None:
                break
            chain.append(inner)
            body = [b for block in child_blocks(inner) for b in block]
        return chain[::-1]

    def case_at(self, span: Span) -> bool:
        """Does ``span`` end where a `case None:` or `case 1:` pattern ends (the analysis reads it as a None
        or a size test)?"""
        for stmt in self._around(span.line, span.end_line):
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    where = self.span_of(case.pattern)
                    if isinstance(case.pattern, (ast.MatchSingleton, ast.MatchValue)) and where is not None and \
                            (where.end_line, where.end_col) == (span.end_line, span.end_col):
                        return True
        return False

    def stmt_at(self, span: Span) -> ast.stmt:
        """The statement whose span is exactly ``span``."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and self.span_of(node) == span:
                return node
        raise Refused(f"no statement at {_where(span)}")

    def def_at(self, span: Span, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
        """The function ``name`` whose `def` starts where ``span`` starts."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                where = self.span_of(node)
                if where is not None and (where.line, where.col) == (span.line, span.col):
                    return node
        raise Refused(f"no `def {name}` at {span.line}:{span.col + 1}")


def _where(span: Span) -> str:
    return f"{span.line}:{span.col + 1}-{span.end_line}:{span.end_col + 1}"


def make_context(source: str, lines: list[str], config: Config, path: str | None = None) -> Context:
    tree = parse_module(source)
    vocabulary = Vocabulary.of(tree, config, package_of(path) if path else None)
    return Context(source, lines, config, tree, vocabulary)


# ------------------------------------------------------------------ helpers


P = TypeVar("P")


def _payload(finding: Finding, kind: type[P]) -> P:
    """The finding's payload, which must be a ``kind``: the planner works from its attributes alone."""
    payload = finding.payload
    if isinstance(payload, kind):
        return payload
    got = f"a {type(payload).__name__}" if payload is not None else "no payload"
    raise Refused(f"{finding.code} finding carries {got}, not a {kind.__name__}; cannot locate the rewrite")


def _group(finding: Finding) -> str:
    if not finding.group:
        raise Refused(f"{finding.code} finding names no process group (Finding.group is empty)")
    return finding.group


def _compare(
    ctx: Context,
    old: str | ast.expr,
    new: str | ast.expr,
    group: str,
    subs: Mapping[str, str | ast.expr] | None = None,
    *,
    sizes: Sequence[str] | Mapping[str, int | None] = (),
    opaque: Mapping[str, str] | None = None,
) -> Comparison:
    vocabulary = ctx.vocabulary or Vocabulary.of(ctx.tree, ctx.config)
    try:
        return compare(old, new, group, vocabulary, substitutions=subs, sizes=sizes, opaque=opaque)
    except Unprovable as exc:
        raise Unproven(f"cannot prove the rewrite: {exc}") from exc


def _unproven(finding: Finding, ops: list[Op], reason: str, needs_import: bool = True) -> Plan:
    note = (
        f"{reason}. Never applied by `pg-bot fix` (not even with --unsafe-fixes): check by hand that the "
        f"rewrite keeps what the old code did"
    )
    return Plan(finding, [], False, note, None, needs_import, suggest_ops=ops, suggest_note=note, auto=False)


_WHY = {
    STATES[0].name: "with the dimension absent the old code ran the collective over the WORLD group",
    STATES[1].name: "a rank outside the group must not take part in its collective",
    STATES[2].name: "a collective over one rank is a no-op",
}


def _judge(comparison: Comparison, intended: str, why: Mapping[str, str] = _WHY) -> tuple[bool, str]:
    """(safe, note). Refuses any rewrite that changes what a real multi-rank group does. ``why``: per state, why
    the new behaviour is the intended one."""
    if not comparison.preserves_parallel:
        raise Refused(f"rewrite would change behaviour for a multi-rank group ({comparison.describe()})")
    if comparison.equivalent:
        return True, f"behaviour-preserving: {comparison.describe()}"
    reasons = "; ".join(
        f"{o.describe()} ({why.get(o.state.name, 'no parallelism there')})"
        for o in comparison.differing
    )
    return False, f"unsafe fix, changes behaviour by design ({intended}): {reasons}"


# ------------------------------------------------------------------ planners, one per rule


def _full_guard(finding: Finding, ctx: Context) -> Plan:
    group = _group(finding)
    if finding.kind == "split" or isinstance(finding.payload, SplitGuardPayload):
        split = _payload(finding, SplitGuardPayload)
        call = ctx.call(group, negative=finding.code == "PG102")
        if split.none_check == split.size_check:  # one test of a size that is 1 when the group is None
            return _none_safe_size(finding, ctx, split, group)
        merged = _merge_split(finding, ctx, split, group)
        if merged is not None:
            return merged
        raise Refused(
            f"the guard is split over several statements (lines {split.none_check.line} and "
            f"{split.size_check.line}): merge them by hand into one {code(call)} test")
    guard = _payload(finding, GuardPayload)
    checks = guard.none_check, guard.size_check
    chain_span = guard.chain
    chain = ctx.expr_at(chain_span)
    if isinstance(chain, ast.IfExp):  # `ws(g) > 1 if g is not None else False`: the `and` it is, replaced whole
        chain = bool_form(chain) or chain
    kind = ast.Or if finding.kind == "or" else ast.And
    if not (isinstance(chain, ast.BoolOp) and isinstance(chain.op, kind)):
        raise Refused(f"the payload's chain is not an `{kind.__name__.lower()}` chain")
    spans = [ctx.span_of(v) for v in chain.values]
    if not all(c in spans for c in checks):
        raise Refused("the guard's two checks are not operands of its chain")
    first, last = sorted(spans.index(c) for c in checks)
    new = ctx.call(group, negative=kind is ast.Or)
    # The two checks collapse into the first one's place; every other operand stays, in order.
    if len(chain.values) == 2 and guard.inverted is not None:
        # `not (g is None or ws(g) == 1)` is the predicate itself, not `not (not ...)`: the `not` goes too
        ops: list[Op] = [ReplaceExpr(guard.inverted, ctx.call(group, negative=kind is ast.And))]
    elif len(chain.values) == 2:
        ops = [ReplaceExpr(chain_span, new)]
    else:
        first_span, last_span = spans[first], spans[last]
        assert first_span is not None and last_span is not None
        ops = [RewriteChain(chain_span, first_span, last_span, new)]
    sizes = {guard.size_via: guard.size_when_none} if guard.size_via is not None else {}
    try:
        comparison = _prove_chain(ctx, chain, first, last, new, group, sizes)
    except Unproven as exc:
        return _unproven(finding, ops, str(exc))
    safe, note = _judge(comparison, "this hand-written guard disagrees with the predicate")
    kept = len(chain.values) - 2
    if kept:
        note += f"; the other {kept} operand(s) of the chain stay, in order"
    return Plan(finding, ops, safe, note, comparison)


def _none_safe_size(finding: Finding, ctx: Context, split: SplitGuardPayload, group: str) -> Plan:
    """`n = ws(g) if g is not None else 1` then `if n > 1:`: the test becomes the predicate and the size stays
    (other code may read it), proved with `n` holding g's size, or its fallback when g is None."""
    # the single-rank side (`n <= 1`, an early exit or `not (...)`) is the negation
    single = split.op in ("==", "<=", "<")
    call = ctx.call(group, negative=single)
    via, fallback = split.size_via, split.size_when_none
    if via is None or fallback is None or "." in via or "." in group:
        # (an attribute may exist where the group's attribute does not yet: `self.n = 1` in `__init__`, the group
        # set up later; only a local size of a local group is rewritten)
        raise Refused(f"the None test is in the size's definition, not at line {split.size_check.line}: replace "
                      f"the test by hand with {code(call)} (check that the group is defined wherever the size is)")
    where, old = split.size_check, ctx.text(split.size_check)
    inverted = ctx.parent(ctx.expr_at(where))
    if isinstance(inverted, ast.UnaryOp) and isinstance(inverted.op, ast.Not) and \
            (outer := ctx.span_of(inverted)) is not None:
        # `not (n <= 1)` is the predicate itself, not `not (not ...)`: the `not` goes too
        where, old, call = outer, ctx.text(outer), ctx.call(group, negative=not single)
    ops: list[Op] = [ReplaceExpr(where, call)]
    try:
        comparison = _compare(ctx, old, call, group, sizes={via: fallback})
    except Unproven as exc:
        return _unproven(finding, ops, str(exc))
    safe, note = _judge(comparison, "this hand-written guard disagrees with the predicate")
    return Plan(finding, ops, safe, f"{note}; `{via}` stays for whatever else reads it", comparison)


def _merge_split(finding: Finding, ctx: Context, split: SplitGuardPayload, group: str) -> Plan | None:
    """The two plain shapes of a split guard, as one test: nested ifs (`if g is not None:` holding nothing but
    `if ws(g) > 1:`) and consecutive early exits with the same body (`if g is None: return t` then `if ws(g) == 1:
    return t`). Each test must be its `if`'s whole condition, with no `else`, and no comment may sit where the
    second `if` goes. None for any other shape (merged by hand)."""
    none_test, size_test = ctx.expr_at(split.none_test), ctx.expr_at(split.size_test)
    if not (_only(ctx, none_test, split.none_check) and _only(ctx, size_test, split.size_check)):
        return None  # (`if g is not None and x:`: the other operand would have to stay)
    outer, inner = ctx.parent(none_test), ctx.parent(size_test)
    if not (isinstance(outer, ast.If) and isinstance(inner, ast.If)) or outer.orelse or inner.orelse \
            or outer.test is not none_test or inner.test is not size_test:
        return None
    nested = not split.none_negated and not split.size_negated and len(outer.body) == 1 and outer.body[0] is inner
    exits = split.none_negated and split.size_negated and _next_statement(ctx, outer) is inner and \
        isinstance(outer.body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break) and \
        ast.dump(ast.Module(body=outer.body, type_ignores=[])) == ast.dump(ast.Module(body=inner.body, type_ignores=[]))
    if not (nested or exits):
        return None
    # What goes: the inner `if`'s header (a comment above it moves to its body's first statement), or the second
    # exit with the lines before it. A comment there would be lost.
    gone = ctx.lines[inner.lineno - 1 : inner.test.end_lineno or inner.lineno] if nested else \
        ctx.lines[outer.end_lineno or outer.lineno : inner.end_lineno or inner.lineno]
    if any("#" in line for line in gone):
        return None
    new = ctx.call(group, negative=exits)
    where = ctx.span_of(inner)
    if where is None:
        return None
    ops: list[Op] = [ReplaceExpr(split.none_test, new), MergeIf(where, nested)]
    old = ast.BoolOp(op=ast.Or() if exits else ast.And(), values=[outer.test, inner.test])
    try:
        comparison = _prove_chain(ctx, old, 0, 1, new, group, {})
    except Unproven as exc:
        return _unproven(finding, ops, str(exc))
    safe, note = _judge(comparison, "this hand-written guard disagrees with the predicate")
    shape = "the inner `if` gives way to its body" if nested else "the second early exit goes"
    return Plan(finding, ops, safe, f"{note}; the two tests become one ({shape})", comparison)


def _only(ctx: Context, test: ast.expr, check: Span) -> bool:
    """Is the condition ``test`` the check at ``check`` and nothing else (`g is None`, `not g`)?"""
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    return ctx.span_of(test) == check or ctx.span_of(inner) == check


def _next_statement(ctx: Context, stmt: ast.stmt) -> ast.stmt | None:
    """The statement right after ``stmt`` in its own block."""
    parent = ctx.parent(stmt)
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None) if parent is not None else None
        if isinstance(block, list):
            for i, item in enumerate(block):
                if item is stmt:
                    return block[i + 1] if i + 1 < len(block) else None
    return None


def _prove_chain(ctx: Context, chain: ast.BoolOp, first: int, last: int, new: str, group: str,
                 sizes: Mapping[str, int | None]) -> Comparison:
    """Old chain vs new chain, whole: the guard's checks as themselves, every other operand as an opaque boolean.

    A run of neighbouring operands stays neighbouring in both chains, so it is one opaque variable (at most three:
    before, between and after the checks), which keeps the enumeration small for chains of any length."""
    values = chain.values
    runs = {"before": values[:first], "between": values[first + 1 : last], "after": values[last + 1 :]}
    for operand in runs["between"]:  # these now run after the size check, which short-circuits them
        if (why := _impurity(operand, ctx)) is not None:
            raise Unproven(
                f"cannot prove the rewrite: the operand {_quote(ctx, operand)} holds {why}, and the rewrite moves "
                f"it after the size check (it would run at a different time, or not at all)"
            )
    joiner = " or " if isinstance(chain.op, ast.Or) else " and "
    opaque: dict[str, str] = {}
    placeholder: dict[str, ast.expr] = {}
    for name, run in runs.items():
        if run:
            label = f"<{name}>"  # not an identifier: it cannot clash with a name in the file
            opaque[label] = code(snippet(joiner.join(_text_of(ctx, v) for v in run)))
            placeholder[name] = ast.Name(id=label, ctx=ast.Load())
    parts = [placeholder.get("before"), values[first], placeholder.get("between"), values[last], placeholder.get("after")]
    old = ast.BoolOp(op=chain.op, values=[p for p in parts if p is not None])
    try:
        replacement = parse_expr(new, "rewrite")
    except Unprovable as exc:
        raise Unproven(f"cannot prove the rewrite: {exc}") from exc
    rest = [p for p in (placeholder.get("before"), replacement, placeholder.get("between"), placeholder.get("after")) if p]
    new_expr = rest[0] if len(rest) == 1 else ast.BoolOp(op=chain.op, values=rest)
    return _compare(ctx, old, new_expr, group, opaque=opaque, sizes=sizes)


# Nodes an operand may hold and still be moved: reading names and attributes, constants, arithmetic and logic.
_PURE = (
    ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Tuple,
    ast.List, ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)


def _impurity(node: ast.expr, ctx: Context) -> str | None:
    """What in ``node`` may have a side effect or raise (a call, a subscript, a walrus, ...), or None."""
    vocabulary = ctx.vocabulary or Vocabulary.of(ctx.tree, ctx.config)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            known = vocabulary.kind(sub.func) is not None and not sub.keywords[1:] and len(sub.args) <= 1
            plain = all(isinstance(a, ast.Name | ast.Attribute | ast.Constant) for a in (*sub.args, *(k.value for k in sub.keywords)))
            if known and plain and all(k.arg == "group" for k in sub.keywords):
                continue  # get_world_size(h) / the predicate on a name: no side effect
            return f"a call to {_quote(ctx, sub.func)}"
        if not isinstance(sub, _PURE):
            shown = _quote(ctx, sub) if isinstance(sub, ast.expr) else ""
            return f"{type(sub).__name__.lower()} {shown}".strip()
    return None


def _text_of(ctx: Context, node: ast.expr) -> str:
    span = ctx.span_of(node)
    return ctx.text(span) if span is not None else ast.unparse(node)


def _quote(ctx: Context, node: ast.expr) -> str:
    try:
        return code(snippet(_text_of(ctx, node)))
    except (Refused, RecursionError, ValueError):
        return f"a {type(node).__name__}"


def _test_replacement(finding: Finding, ctx: Context, intended: str, via: str | None = None) -> Plan:
    """``via``: the local name the size was read through (`ws = get_world_size(group=g)`), if any."""
    group = _group(finding)
    negative = finding.kind == "negative"
    new = ctx.call(group, negative)
    sizes = [via] if via is not None and via.replace(".", "_").isidentifier() else []
    ops: list[Op] = [ReplaceExpr(finding.span, new)]
    try:
        old = parse_expr(ctx.text(finding.span), "test")
    except Unprovable as exc:  # the finding's span is not an expression: nothing to suggest either
        raise Refused(str(exc)) from exc
    try:
        comparison = _compare(ctx, old, new, group, sizes=sizes)
    except Unproven as exc:
        return _unproven(finding, ops, str(exc))
    safe, note = _judge(comparison, intended)
    return Plan(finding, ops, safe, note, comparison)


def _partial_none(finding: Finding, ctx: Context) -> Plan:
    _payload(finding, NoneOnlyPayload)
    intended = "the None-only check also let single-rank and non-member groups through"
    rest = _rest_of_condition(finding, ctx)
    if rest:  # e.g. `g is None or tp_world_size == 1`: the other half may already stop a single-rank group
        intended = (f"the None-only check let single-rank and non-member groups through wherever the rest of the "
                    f"condition, {rest}, did not stop them")
    return _test_replacement(finding, ctx, intended)


def _rest_of_condition(finding: Finding, ctx: Context) -> str:
    """The other operands of the `and`/`or` chain the finding's test sits in, quoted ("" when it stands alone)."""
    try:
        node = ctx.expr_at(finding.span)
    except Refused:
        return ""
    chain = ctx.parent(node)
    if not isinstance(chain, ast.BoolOp):
        return ""
    joiner = " or " if isinstance(chain.op, ast.Or) else " and "
    return code(snippet(joiner.join(_text_of(ctx, v) for v in chain.values if v is not node)))


def _partial_size(finding: Finding, ctx: Context) -> Plan:
    size = _payload(finding, SizeOnlyPayload)
    return _test_replacement(
        finding, ctx, "the size-only check reduced over the WORLD when the group is None", via=size.via)


# Collectives whose skipping is invisible for a single-rank or non-member group: they only update their own
# tensor argument (or synchronise). Output-buffer collectives (all_gather, ...) would leave the buffer unfilled.
_SKIPPABLE_EXTRA = frozenset({"barrier", "monitored_barrier"})


# A statement put around or beside the one that makes a lambda or partial runs when it is made, not when it runs.
_DEFERRED = ("{} runs later, inside a lambda or a `functools.partial` (a hook or callback): fix it where that is made, "
             "by hand")


def _unguarded(finding: Finding, ctx: Context) -> Plan:
    group = _group(finding)
    unguarded = _payload(finding, UnguardedPayload)
    statement = unguarded.statement
    collective = unguarded.collective or "the collective"
    if unguarded.deferred:
        raise Refused(_DEFERRED.format(f"`{collective}`"))
    if unguarded.result_used:
        raise Refused(
            f"the result of `{collective}` is used, so skipping the call would leave it undefined; "
            f"guard the surrounding code with `if {ctx.call(group)}:` by hand"
        )
    new = ctx.call(group)
    wrap = WrapStatement(statement, new)
    try:
        comparison = _compare(ctx, "True", new, group)  # no guard: the collective always runs
    except Unproven as exc:
        return _unproven(finding, [wrap], str(exc))
    safe, note = _judge(comparison, f"`{collective}` on a None group ran over the WORLD group")
    if collective not in ctx.config.inplace_collectives | _SKIPPABLE_EXTRA:
        # Suggestion only: the guard is right, but the non-parallel branch must still fill the buffer.
        why = (
            f"never auto-applied: `{collective}` writes into an output buffer, which a single-rank group's call "
            f"still fills (with its own input), so skipping it is not behaviour-preserving for a present group; "
            f"after this guard, fill the buffer for the non-parallel case by hand (e.g. copy the input)"
        )
        # The generic reason for the single-rank state ("a no-op") is wrong here: say what is skipped.
        buffer = {**_WHY, STATES[2].name: "over one rank it only copies the input into the output buffer, which "
                                          "the guard now skips"}
        _, note = _judge(comparison, f"`{collective}` on a None group ran over the WORLD group", buffer)
        return Plan(finding, [], False, why, comparison, auto=False, suggest_ops=[wrap], suggest_note=f"{why}. {note}")
    return Plan(finding, [wrap], safe, note, comparison)


def _dimension(group: str, attribute: str) -> str:
    """`self.mp_group` -> `mp`; `group` with `self.tp_world_size` -> `tp`; else `group`."""
    strip = r"(^_+|_?process_group$|_?group$|_?pg$|_?world_size$|_?size$|^ws$)"
    for candidate in (group, attribute):
        name = re.sub(strip, "", candidate.rsplit(".", 1)[-1])
        name = re.sub(strip, "", name)
        if name.isidentifier():
            return name
    return "group"


def _cached_size(finding: Finding, ctx: Context) -> Plan:
    cached_size = _payload(finding, CachedSizePayload)
    attribute = cached_size.attribute
    if "." not in attribute:
        raise Refused(f"the cached size {code(snippet(attribute))} is not an attribute (e.g. `self.world_size`)")
    assignment = cached_size.assignment
    if assignment is None:
        raise Refused(f"no assignment of {code(snippet(attribute))} found in its class; cache the predicate by hand")
    node = ctx.stmt_at(assignment)
    value = getattr(node, "value", None)
    if not (isinstance(value, ast.Call) and isinstance(node, ast.Assign | ast.AnnAssign)):
        raise Refused(f"line {assignment.line} does not assign a get_world_size(...) call")
    if not isinstance(ctx.parent(node), ast.FunctionDef | ast.AsyncFunctionDef):
        # A flag set next to a conditional assignment would be missing on the other paths.
        raise Refused(f"the cached size is assigned conditionally (line {assignment.line}); cache the predicate by hand")
    group_node = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "group"), None)
    if group_node is None:
        raise Refused(f"{code(snippet(ast.unparse(value)))} measures the world, not an optional group")
    group = ast.unparse(group_node)
    if dotted(group_node) is None:
        raise Refused(f"the cached size measures {code(snippet(group))}, not a named group; cache the predicate by hand")
    base = attribute.rsplit(".", 1)[0]
    suggested = cached_size.cache_attribute  # the analyzer's message names it: use the same name
    if re.fullmatch(rf"{re.escape(base)}\.[A-Za-z_]\w*", suggested):
        cached = suggested
    else:
        cached = f"{base}.is_{_dimension(group, attribute)}_parallel"
    # The flag is set where the size is, on the same object: `self.n = ...` in the class caches `self.is_x_parallel`
    # even when the test reads it through a module-level instance (`LAYOUT.n`).
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    owner = next((t.rsplit(".", 1)[0] for t in map(dotted, targets) if t is not None and "." in t), base)
    flag = f"{owner}.{cached.rsplit('.', 1)[1]} = {ctx.call(group)}"
    negative = finding.kind == "negative"
    new = f"not {cached}" if negative else cached
    ops: list[Op] = [ReplaceExpr(finding.span, new)]
    if flag not in ctx.source:
        if re.search(rf"\.{re.escape(cached.rsplit('.', 1)[1])}\b", ctx.source):
            raise Refused(f"{code(cached)} already exists with another meaning; cache the predicate by hand")
        ops.append(InsertAfter(assignment, flag))
    try:
        # The cached flag holds is_parallel(group) from construction; compare the test against exactly that,
        # with the cached attribute standing for the call it was assigned (which must be allow-listed too).
        comparison = _compare(ctx, ctx.text(finding.span), ctx.call(group, negative), group, subs={attribute: value})
    except Unproven as exc:
        return _unproven(finding, ops, str(exc))
    safe, note = _judge(comparison, "a cached world size is 8 (the world) for a None group")
    note += f"; caches {code(flag)} at construction (line {assignment.line}) for the hot path"
    return Plan(finding, ops, safe, note, comparison)


def _predicate_copy(finding: Finding, ctx: Context) -> Plan:
    copy = _payload(finding, CopyPayload)
    name, calls = copy.name, copy.calls
    if finding.kind == "lambda":
        raise Refused(f"`{name}` is a lambda: replace its calls with `{ctx.call('...')}` and remove it by hand")
    node = ctx.def_at(finding.span, name)
    returned = returned_test(node)  # one `return`, or early returns folded into one test
    if returned is None:
        raise Refused(f"`{name}` does more than return a guard; replace its calls by hand")
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
        raise Refused(f"`{name}` takes *args/**kwargs or keyword-only parameters; its calls cannot be mapped")
    defaults = dict(zip(params[len(params) - len(node.args.defaults) :], map(ast.unparse, node.args.defaults), strict=True))
    group = _group(finding)
    negated = copy.negated
    delegate = ReplaceReturn(node.lineno, name, ctx.call(group, negated))
    try:
        comparison = _compare(ctx, returned, ctx.call(group, negated), group)
    except Unproven as exc:
        return _unproven(finding, [delegate], str(exc))
    safe, note = _judge(comparison, f"`{name}` was not the predicate")
    parent = ctx.parent(node)
    # How a call binds the first parameter follows Python's rule for a def in a class body, not the payload's
    # `method` (the analyzer's "self/cls first" reading): a method whose receiver has another name binds too.
    method = isinstance(parent, ast.ClassDef) and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
    )
    template = ctx.call("{group}", negated)
    ops: list[Op] = [ReplaceCall(c, template, tuple(params), defaults, group, method) for c in calls]
    references = sum(
        1
        for n in ast.walk(ctx.tree)
        if (isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.Attribute) and n.attr == name)
    )
    siblings = getattr(parent, "body", [])
    plain = all(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)
    # No calls here at all means it is used from elsewhere (or dead): keep it, delegating, to be safe.
    if name.startswith("_") and calls and references <= len(calls) and len(siblings) > 1 and plain:
        ops.append(RemoveDef(node.lineno, name))
        note += f"; `{name}` is removed (no other use in this file)"
    else:
        why = (
            "not called in this file, so maybe imported elsewhere" if not calls
            else "still used" if references > len(calls)
            else "decorated" if not plain
            else "the only statement of its block" if len(siblings) <= 1
            else "public, may be imported elsewhere"
        )
        ops.append(ReplaceReturn(node.lineno, name, ctx.call(group, negated)))
        note += f"; `{name}` is kept ({why}) and now returns the predicate"
    where = ", ".join(str(c.line) for c in calls) or "none in this file"
    block_note = (
        f"{note.split(';')[0]}; this block makes `{name}` delegate to the predicate; `pg-bot fix` instead calls "
        f"`{ctx.config.predicate_call}` directly at its call sites (lines {where}) and removes the copy when unused"
    )
    return Plan(finding, ops, safe, note, comparison, suggest_ops=[delegate], suggest_note=block_note)


_SIMPLE_REF = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Load, ast.Slice, ast.Tuple)


def _discarded_contiguous(finding: Finding, ctx: Context) -> Plan:
    contiguous = _payload(finding, ContiguousPayload)
    tensor = contiguous.tensor
    statement = contiguous.statement
    if contiguous.deferred:
        raise Refused(_DEFERRED.format(f"`{contiguous.collective}`"))
    if contiguous.result_used:
        raise Refused(
            "the collective's result is used (assigned or returned, e.g. an async handle): the copy-back must "
            "follow `wait()`; fix by hand"
        )
    if contiguous.asynchronous:
        raise Refused("async_op: the copy-back would run before the collective completes; fix by hand")
    try:
        parsed = ast.parse(tensor, mode="eval").body
    except SyntaxError as exc:
        raise Refused(f"tensor {code(snippet(tensor))} does not parse") from exc
    if not all(isinstance(n, _SIMPLE_REF) for n in ast.walk(parsed)):
        raise Refused(f"{code(snippet(tensor))} would be evaluated twice by a copy-back; name it first by hand")
    used = {n.id for n in ast.walk(ctx.tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(ctx.tree) if isinstance(a, ast.arg)
    }
    stem = re.sub(r"\W+", "_", tensor.rsplit(".", 1)[-1]).strip("_") or "tensor"
    temp = f"{stem}_c"
    n = 2
    while temp in used:
        temp, n = f"{stem}_c{n}", n + 1
    collective = contiguous.collective or "the collective"
    note = (
        f"unsafe fix: `{collective}` now writes into a named contiguous copy that is copied back into {code(tensor)}. "
        f"It changes the result only when {code(tensor)} is not contiguous (the old code lost the reduction there); "
        f"{code(tensor + '.copy_')} fails on a leaf tensor that requires grad, so review before applying"
    )
    ops: list[Op] = [ReplaceExpr(contiguous.argument, temp), NameContiguous(statement, tensor, temp)]
    return Plan(finding, ops, False, note, None, needs_import=False)


PLANNERS: dict[str, Callable[[Finding, Context], Plan]] = {
    "PG101": _full_guard,
    "PG102": _full_guard,
    "PG103": _partial_none,
    "PG104": _partial_size,
    "PG105": _unguarded,
    "PG106": _cached_size,
    "PG107": _predicate_copy,
    "PG108": _discarded_contiguous,
}


def plan(finding: Finding, ctx: Context) -> Plan:
    planner = PLANNERS.get(finding.code)
    if planner is None:
        raise Refused(f"{finding.code} has no automatic fix")
    spans = (finding.span, *(getattr(finding.payload, name, None)
                             for name in ("none_check", "none_test", "size_check", "size_test")))
    if any(isinstance(span, Span) and ctx.case_at(span) for span in spans):
        raise Refused("the test is a `case` of a `match` (`case None:`, `case 1:`), which no expression can replace: test "
                      f"{code(ctx.call(finding.group or 'group'))} in an `if` instead, by hand")
    try:
        return planner(finding, ctx)
    except Refused:
        raise
    except Exception as exc:  # a malformed payload (or absurdly nested code) must not crash the run
        raise Refused(f"cannot plan a fix: {error_text(exc)}") from exc
