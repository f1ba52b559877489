"""What a function returns, as one test: its single `return`, or a run of early returns of True/False folded
into one `and`/`or` chain, so that every reader (local predicates as guards, predicate copies, the fixer's
proof) sees the same expression however the body spells it.

    if g is None:            not (g is None)           # as `g is not None`
        return False    ->   and not (ws(g) == 1)      # as `ws(g) != 1`
    if ws(g) == 1:
        return False
    return True

Early returns of values fold into conditional expressions (`if g is None: return 1` then `return ws(g)`).
Folded nodes are new, placed at the statement they come from; negations are pushed into comparisons and
through `and`/`or` (De Morgan), so a chain's atoms read as tests the analysis classifies.
"""

from __future__ import annotations

import ast

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
