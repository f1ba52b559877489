"""What a function returns, as one test: its single `return`, or a run of early returns of True/False folded
into one `and`/`or` chain, so that every reader (local predicates as guards, predicate copies, the fixer's
proof) sees the same expression however the body spells it.

    if g is None:            not (g is None)           # as `g is not None`
        return False    ->   and not (ws(g) == 1)      # as `ws(g) != 1`
    if ws(g) == 1:
        return False
    return True

Early returns of values fold into conditional expressions (`if g is None: return 1` then `return ws(g)`).
A local the body binds once to a query and reads once (`n = ws(g)` then `return n > 1`) is read as that query
where it is read: a size query has no effect, so where it is asked does not change what the function returns.
Folded nodes are new, placed at the statement they come from; negations are pushed into comparisons and
through `and`/`or` (De Morgan), so a chain's atoms read as tests the analysis classifies.
"""

from __future__ import annotations

import ast
import copy
import re

from bot.analyze.terms import is_bool_call

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In,
}
_Outcome = ast.expr | bool


def returned_test(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """The expression the function returns on every path, or None when the body does anything else."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    body = _inlined(function, body)
    if not body:
        return None
    last = _outcome(body[-1])
    if last is None:
        return None
    if len(body) == 1:
        return last if isinstance(last, ast.expr) else None
    result: _Outcome = last
    for stmt in reversed(body[:-1]):
        if not (isinstance(stmt, ast.If) and not stmt.orelse):
            return None
        then = _returned(stmt.body)
        if then is None:
            return None
        result = _fold(stmt, stmt.test, then, result)
    return result if isinstance(result, ast.expr) else None


def _inlined(function: ast.FunctionDef | ast.AsyncFunctionDef, body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with its query locals read in place: each `name = value` statement (a plain local, bound nowhere
    else in the function, not a parameter; ``value`` a query, `_query`) goes, and its one later read becomes
    ``value``. Tests and returns that read one are new nodes (the body's own stay as they are); anything else
    (a local read twice, or before it is bound, or bound again) leaves the body as it is."""
    if not any(isinstance(s, (ast.Assign, ast.AnnAssign)) for s in body) or \
            not all(isinstance(s, (ast.Assign, ast.AnnAssign, ast.If, ast.Return)) for s in body) or \
            not isinstance(body[-1], (ast.If, ast.Return)):
        return body  # (nothing to inline, or a body that does more than test: no fold either way)
    bindings = [b for b in map(_local_binding, body) if b[0] is not None]
    bound = {t for t, _ in bindings if t is not None}
    if any(v is None or not _query(v, bound, set()) for _, v in bindings):
        return body  # (a binding that is no query: checked first, before the walk below)
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    stores: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    values: dict[str, ast.expr] = {}
    kept: list[ast.stmt] = []
    reads = dict.fromkeys(bound, 0)
    for stmt in body:
        target, value = _local_binding(stmt)
        if target is not None and value is not None:
            if target in params or stores.get(target) != 1 or not _query(value, set(values), bound):
                return body
            values[target] = _substituted(value, values)
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id in reads:
                if node.id not in values:
                    return body  # read before it is bound
                reads[node.id] += 1
        kept.append(stmt)
    if not values or any(n != 1 for n in reads.values()) or \
            any(isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) for s in kept):
        return body
    return [_substituted_statement(stmt, values) for stmt in kept]


def _local_binding(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target.id, stmt.value
    return None, None


# calls that only ask (a group's or the world's size, a length, an attribute); anything else may act
_QUERY_CALL = re.compile(r"(?:^|_)size$|^(?:len|getattr|bool|int|min|max)$")


def _query(value: ast.expr, inlined: set[str], bound: set[str]) -> bool:
    """An expression with no effect to keep in its place: names, attributes, constants, operators and calls of
    queries (`_QUERY_CALL`), reading of the locals ``bound`` in the body only those already ``inlined``."""
    for node in ast.walk(value):
        if isinstance(node, ast.Name) and node.id in bound and node.id not in inlined:
            return False
        if isinstance(node, ast.Call):
            func = node.func
            leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if not _QUERY_CALL.search(leaf):
                return False
        elif isinstance(node, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom,
                               ast.comprehension, ast.Starred)):
            return False
    return True


class _Substitute(ast.NodeTransformer):
    """New nodes along the way to each read of an inlined local; every other subtree is the body's own."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.values.get(node.id, node)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if not any(isinstance(n, ast.Name) and n.id in self.values for n in ast.walk(node)):
            return node
        fresh = copy.copy(node)  # (shallow: the original keeps its children)
        for name, field in ast.iter_fields(node):
            if isinstance(field, list):
                setattr(fresh, name, [self.visit(x) if isinstance(x, ast.AST) else x for x in field])
            elif isinstance(field, ast.AST):
                setattr(fresh, name, self.visit(field))
        return fresh


def _substituted(value: ast.expr, values: dict[str, ast.expr]) -> ast.expr:
    if not values:
        return value
    out = _Substitute(values).visit(value)
    assert isinstance(out, ast.expr)
    return out


def _substituted_statement(stmt: ast.stmt, values: dict[str, ast.expr]) -> ast.stmt:
    out = _Substitute(values).visit(stmt)
    assert isinstance(out, ast.stmt)
    return out


def negation(node: ast.expr) -> ast.expr:
    """`not node`, with the `not` pushed into a one-operator comparison and through `and`/`or`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
        flipped = ast.Compare(node.left, [_FLIP[type(node.ops[0])]()], node.comparators)
        return ast.copy_location(flipped, node)
    if isinstance(node, ast.BoolOp):
        op: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return ast.copy_location(ast.BoolOp(op, [negation(v) for v in node.values]), node)
    return ast.copy_location(ast.UnaryOp(ast.Not(), node), node)


def _outcome(stmt: ast.stmt) -> _Outcome | None:
    """What a final statement returns: `return X`, or `if C: return A` / `else: return B` as one outcome."""
    if isinstance(stmt, ast.If) and stmt.orelse:
        other = _outcome(stmt.orelse[0]) if len(stmt.orelse) == 1 else None  # `else: return B`, or an `elif`
        then = _returned(stmt.body)
        if then is not None and other is not None:
            return _fold(stmt, stmt.test, then, other)
        return None
    return _returned([stmt])


def _returned(block: list[ast.stmt]) -> _Outcome | None:
    if len(block) != 1 or not isinstance(block[0], ast.Return) or block[0].value is None:
        return None
    value = block[0].value
    while is_bool_call(value) and not isinstance(value.args[0], ast.Starred):
        value = value.args[0]  # `return bool(test)` returns the test's truth, as the test itself does here
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return value.value
    return value


def _fold(at: ast.stmt, test: ast.expr, then: _Outcome, rest: _Outcome) -> _Outcome:
    """`if test: return then` followed by ``rest``: a chain when ``then`` is True/False (a function that returns
    a truth early is read as a test), else a conditional expression (`if g is None: return 1` then
    `return ws(g)` is `1 if g is None else ws(g)`)."""
    if not isinstance(then, bool):
        return ast.copy_location(ast.IfExp(test, _expr(at, then), _expr(at, rest)), at)
    if then:
        if rest is True:
            return True
        return test if rest is False else _chain(at, ast.Or(), [test, rest])
    if rest is False:
        return False
    return negation(test) if rest is True else _chain(at, ast.And(), [negation(test), rest])


def _expr(at: ast.stmt, value: _Outcome) -> ast.expr:
    return ast.copy_location(ast.Constant(value), at) if isinstance(value, bool) else value


def _chain(at: ast.stmt, op: ast.boolop, values: list[ast.expr]) -> ast.expr:
    flat: list[ast.expr] = []
    for v in values:  # one chain, as the analysis reads `a and b and c`
        flat.extend(v.values if isinstance(v, ast.BoolOp) and type(v.op) is type(op) else [v])
    return ast.copy_location(ast.BoolOp(op, flat), at)
