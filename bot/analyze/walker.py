"""One pass over a module that records the facts the rules consume: each collective call with the guards that
dominate it, each boolean chain, each function definition, each cached world size. No rule logic here."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import cast

from bot.analyze.context import Context
from bot.analyze.names import dotted
from bot.analyze.optional import FunctionNode
from bot.analyze.source import statements

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_TRY: tuple[type[ast.stmt], ...] = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


@dataclass(frozen=True)
class Guard:
    """An `if` test that dominates a statement; ``negated`` when the statement runs only if the test is False
    (the `else` branch, or the code after an early exit `if test: return`)."""

    test: ast.expr
    negated: bool


@dataclass(frozen=True)
class Scope:
    function: FunctionNode | None
    klass: ast.ClassDef | None
    qualname: str | None
    # names/attributes holding a cached world size here -> their group (`ws = get_world_size(group=g)`)
    sizes: dict[str, str] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class CollectiveCall:
    call: ast.Call
    name: str
    group: ast.expr | None
    guards: tuple[Guard, ...]
    scope: Scope
    statement: ast.stmt
    result_used: bool


@dataclass(frozen=True)
class BoolChain:
    node: ast.BoolOp
    scope: Scope


@dataclass(frozen=True)
class CachedSize:
    """`self.attr = get_world_size(group=g)` somewhere in a class."""

    attribute: str
    group: str
    assignment: ast.stmt
    assigned_in: str | None


@dataclass
class Facts:
    collectives: list[CollectiveCall] = field(default_factory=list)
    chains: list[BoolChain] = field(default_factory=list)
    functions: list[tuple[FunctionNode, Scope]] = field(default_factory=list)
    cached: dict[int, dict[str, CachedSize]] = field(default_factory=dict)  # class id -> attribute -> fact
    predicate_calls: int = 0


def collect(ctx: Context) -> Facts:
    facts = Facts()
    _Walker(ctx, facts).block(ctx.source.tree.body, (), Scope(None, None, None, {}))
    return facts


class _Walker:
    def __init__(self, ctx: Context, facts: Facts) -> None:
        self.ctx = ctx
        self.facts = facts

    def block(self, stmts: list[ast.stmt], guards: tuple[Guard, ...], scope: Scope) -> None:
        hot = self.ctx.source.hot
        for stmt in stmts:
            if hot(stmt):
                self.statement(stmt, guards, scope)
            if isinstance(stmt, ast.If) and not stmt.orelse and _exits(stmt.body):
                guards = (*guards, Guard(stmt.test, negated=True))

    def statement(self, stmt: ast.stmt, guards: tuple[Guard, ...], scope: Scope) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in stmt.decorator_list:
                self.expression(d, stmt, guards, scope)
            qual = f"{scope.qualname}.{stmt.name}" if scope.qualname else stmt.name
            inner = Scope(stmt, scope.klass, qual, {**scope.sizes, **self._local_sizes(stmt)})
            self.facts.functions.append((stmt, inner))
            self.block(stmt.body, (), inner)
        elif isinstance(stmt, ast.ClassDef):
            qual = f"{scope.qualname}.{stmt.name}" if scope.qualname else stmt.name
            cached = self._cached_sizes(stmt)
            self.facts.cached[id(stmt)] = cached
            sizes = {**scope.sizes, **{attr: fact.group for attr, fact in cached.items()}}
            self.block(stmt.body, (), Scope(None, stmt, qual, sizes))
        elif isinstance(stmt, ast.If):
            self.expression(stmt.test, stmt, guards, scope)
            self.block(stmt.body, (*guards, Guard(stmt.test, negated=False)), scope)
            self.block(stmt.orelse, (*guards, Guard(stmt.test, negated=True)), scope)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            header = stmt.test if isinstance(stmt, ast.While) else stmt.iter
            self.expression(header, stmt, guards, scope)
            self.block(stmt.body, guards, scope)
            self.block(stmt.orelse, guards, scope)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expression(item.context_expr, stmt, guards, scope)
            self.block(stmt.body, guards, scope)
        elif isinstance(stmt, _TRY):
            block = cast(ast.Try, stmt)  # try/except* (3.11+) has the same four blocks as try
            self.block(block.body, guards, scope)
            for handler in block.handlers:
                self.block(handler.body, guards, scope)
            self.block(block.orelse, guards, scope)
            self.block(block.finalbody, guards, scope)
        elif isinstance(stmt, ast.Match):
            self.expression(stmt.subject, stmt, guards, scope)
            for case in stmt.cases:
                self.block(case.body, guards, scope)
        else:
            self.expression(stmt, stmt, guards, scope)

    def expression(self, node: ast.AST, stmt: ast.stmt, guards: tuple[Guard, ...], scope: Scope) -> None:
        """Calls and chains in an expression. Conditional expressions and short-circuit chains guard what they
        contain too: `dist.all_reduce(t, group=g) if g is not None else t`, `g is not None and dist.barrier(...)`."""
        stack: list[tuple[ast.AST, tuple[Guard, ...]]] = [(node, guards)]
        while stack:
            sub, held = stack.pop()
            if isinstance(sub, ast.Call):
                self.call(sub, stmt, held, scope)
            elif isinstance(sub, ast.BoolOp):
                self.facts.chains.append(BoolChain(sub, scope))
                negated = isinstance(sub.op, ast.Or)  # in `a or b`, b runs only when a is False
                for i, value in enumerate(sub.values):
                    stack.append((value, (*held, *(Guard(v, negated) for v in sub.values[:i]))))
                continue
            elif isinstance(sub, ast.IfExp):
                stack.append((sub.test, held))
                stack.append((sub.body, (*held, Guard(sub.test, negated=False))))
                stack.append((sub.orelse, (*held, Guard(sub.test, negated=True))))
                continue
            elif isinstance(sub, ast.Lambda):
                continue  # runs later, elsewhere: not under these guards (and rarely a collective)
            stack.extend((child, held) for child in ast.iter_child_nodes(sub))

    def call(self, call: ast.Call, stmt: ast.stmt, guards: tuple[Guard, ...], scope: Scope) -> None:
        if self.ctx.is_predicate(call):
            self.facts.predicate_calls += 1
            return
        found = self.ctx.collective_group(call)
        if found is None:
            return
        used = not (isinstance(stmt, ast.Expr) and stmt.value is call)
        self.facts.collectives.append(CollectiveCall(call, found[0], found[1], guards, scope, stmt, used))

    # ------------------------------------------------------------ cached sizes

    def _local_sizes(self, function: FunctionNode) -> dict[str, str]:
        """Locals assigned once from `get_world_size(group=g)` act as that size (`ws > 1`)."""
        sizes: dict[str, str] = {}
        for node in statements(function.body, only=self.ctx.source):  # the assignment mentions get_world_size
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                group = self.ctx.world_size_group(node.value)
                text = dotted(group) if group is not None else None
                if text is not None:
                    sizes[node.targets[0].id] = text
        if not sizes:
            return sizes
        counts: dict[str, int] = {}  # any other assignment (hot or not) disqualifies the name
        for node in statements(function.body):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id in sizes:
                    counts[target.id] = counts.get(target.id, 0) + 1
        return {name: group for name, group in sizes.items() if counts.get(name) == 1}

    def _cached_sizes(self, klass: ast.ClassDef) -> dict[str, CachedSize]:
        found: dict[str, CachedSize] = {}
        for item in klass.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in statements(item.body, only=self.ctx.source):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    attr = dotted(node.targets[0])
                    group = self.ctx.world_size_group(node.value)
                    text = dotted(group) if group is not None else None
                    if attr and attr.startswith("self.") and text:
                        found[attr] = CachedSize(attr, text, node, f"{klass.name}.{item.name}")
        return found


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], _EXITS)
