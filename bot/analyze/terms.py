"""The vocabulary of facts: what an atomic test says about a group, and what a size term measures.

Pure data and pure classification of single expressions; flow (what holds where) lives in `flow.py`.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from enum import IntEnum
from typing import NamedTuple, TypeGuard

# The sizes a comparison is evaluated at: non-member (-1), single rank (1), multi-rank (2 and 8).
SIZES = (-1, 1, 2, 8)
_POSITIVE = (False, False, True, True)
_NEGATIVE = (True, True, False, False)
_OPS: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_SYMBOL = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}
_FLIP = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


class Null(IntEnum):
    """What is known of a group expression's None-ness at a point of a function."""

    UNKNOWN = 0  # no evidence that it can be None (a required parameter, a call's result)
    MAYBE = 1  # it can be None here (default None, Optional, assigned None) and nothing narrowed it
    NONE = 2
    NOT_NONE = 3


def join_null(a: Null, b: Null) -> Null:
    if a == b:
        return a
    if Null.NONE in (a, b) or Null.MAYBE in (a, b):
        return Null.MAYBE
    return Null.UNKNOWN  # NOT_NONE with UNKNOWN


class SizeOf(NamedTuple):
    """The world size of ``group`` (a canonical group key). ``when_none`` is what the term is when the group is
    None: ``None`` for the WORLD size (an unguarded `get_world_size(g)`), an int for a fallback
    (`ws(g) if g is not None else 1`), or ``UNREACHABLE`` when it is only ever computed for a present group."""

    group: str
    when_none: int | None
    via: str | None = None  # the local/attribute/property it was read through, if cached

    @property
    def none_safe(self) -> bool:
        """A test `term > 1` on it is False for None: it checks presence too (`is_parallel` in one term)."""
        return self.when_none is not None and self.when_none <= 1

    @property
    def fallback(self) -> int | None:
        """The value written for a None group (`ws(g) if g is not None else 1` -> 1); None when there is none:
        the WORLD size, or never computed for a None group (UNREACHABLE)."""
        return None if self.when_none is None or self.when_none == UNREACHABLE else self.when_none


UNREACHABLE = -(10**9)  # sentinel for SizeOf.when_none: never evaluated when the group is None


class Separate(NamedTuple):
    """A size that is not the world size of a group the collective runs on: `len(partition_sizes)`, an argument,
    an mpu / parallel-state getter, arithmetic. Guards on it are out of scope."""

    why: str
    text: str


class Const(NamedTuple):
    value: int


SizeTerm = SizeOf | Separate | Const


class SizeCompare(NamedTuple):
    """`term op bound` that separates a single rank from many (with the term on the left)."""

    term: ast.expr
    op: str
    bound: int
    positive: bool  # True for a multi-rank group
    nonmember_bug: bool  # `!= 1` / `== 1`: treats a non-member (size -1) like the wrong side


def size_compare(node: ast.expr) -> SizeCompare | None:
    """A comparison of some term with an integer constant whose truth separates 1 rank from many: `ws(g) > 1`,
    `1 < ws(g)`, `ws(g) - 1 > 0` (the term moved clear of a constant), and the link of a chain that does, `1 <
    ws(g) <= 8` (the other link is a further condition of the code's own)."""
    if not isinstance(node, ast.Compare) or len(node.ops) > 2:
        return None
    if len(node.ops) == 2:  # `c1 < term <= c2`
        links = (ast.Compare(node.left, [node.ops[0]], [node.comparators[0]]),
                 ast.Compare(node.comparators[0], [node.ops[1]], [node.comparators[1]]))
        found = [c for c in map(size_compare, links) if c is not None]
        return found[0] if len(found) == 1 else None
    left, right, op = node.left, node.comparators[0], type(node.ops[0])
    if op not in _OPS:
        return None
    if int_value(left) is not None:  # `1 < get_world_size(g)`
        left, right, op = right, left, _FLIP[op]
    bound = int_value(right)
    if bound is None or int_value(left) is not None:
        return None
    offset = int_value(left.right) if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add | ast.Sub) else None
    if isinstance(left, ast.BinOp) and offset is not None:  # `ws(g) - 1 > 0` is `ws(g) > 1`
        bound = bound + offset if isinstance(left.op, ast.Sub) else bound - offset
        left = left.left
    elif counts_peers(left):  # the ranks other than this one: `num_peers > 0` is a size `> 1`
        bound += 1
    table = tuple(_OPS[op](size, bound) for size in SIZES)
    if table in (_POSITIVE, _NEGATIVE):
        return SizeCompare(left, _SYMBOL[op], bound, positive=table == _POSITIVE, nonmember_bug=False)
    if table[1:] == _POSITIVE[1:] or table[1:] == _NEGATIVE[1:]:  # `!= 1`, `== 1`: wrong for size -1
        return SizeCompare(left, _SYMBOL[op], bound, positive=not table[1], nonmember_bug=True)
    return None


# `num_peers`, `peers`, `peer_count`; not `peer_ranks` (the members of a peer group, this rank among them)
_PEERS = re.compile(r"(?:^|_)(?:n?peers|peer_count)$", re.I)


def counts_peers(node: ast.expr) -> bool:
    """`num_peers`, `self.n_peers`, `len(self.peers)`: a count of the ranks other than this one (one fewer than
    a size), by its name's end."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
        node = node.args[0]
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return name is not None and _PEERS.search(name) is not None


def against_bool(test: ast.expr) -> tuple[ast.expr, bool] | None:
    """`x == True`, `x is True` (x and True), `x != True`, `x is False` (x and False): the operand, and the value
    it must have for the test to hold."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.comparators[0].value, bool)):
        return None
    op, constant = test.ops[0], test.comparators[0].value
    if isinstance(op, (ast.Eq, ast.Is)):
        return test.left, constant
    if isinstance(op, (ast.NotEq, ast.IsNot)):
        return test.left, not constant
    return None


def is_bool_call(node: ast.expr) -> TypeGuard[ast.Call]:
    """`bool(x)`: a test's value as a flag (`self.sharded = bool(n > 1)`), or as what a function returns."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" \
        and len(node.args) == 1 and not node.keywords


def size_floor(node: ast.expr) -> tuple[ast.expr, bool] | None:
    """`term > 2`, `term >= min_ranks`, `term < k`: a term held against a bound other than the single-rank one,
    where one outcome rules out one rank and a non-member (-1). Returns the term and that outcome (True for
    `>`/`>=`, False for `<`/`<=`); None for a constant bound that does not (`> 0`), and for `==` / `!=`."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1) or size_compare(node) is not None:
        return None
    left, right, op = node.left, node.comparators[0], type(node.ops[0])
    if op not in (ast.Gt, ast.GtE, ast.Lt, ast.LtE):
        return None
    if int_value(left) is not None:  # `2 < get_world_size(g)`
        left, right, op = right, left, _FLIP[op]
    if int_value(left) is not None or isinstance(left, ast.Constant):
        return None
    large = op in (ast.Gt, ast.GtE)
    bound = int_value(right)
    if bound is not None and any(_OPS[op](size, bound) == large for size in (-1, 1)):
        return None  # `> 0`, `>= 1`: one rank passes too
    return left, large


def size_match(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """`term == expected` with no constant on either side (`get_world_size(g) == cp_size`): a term held equal to a
    count the code supplies; its two sides (which one is the group's size is for the caller to tell)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Constant) or isinstance(right, ast.Constant) or int_value(left) is not None \
            or int_value(right) is not None:
        return None
    return left, right


def evaluate_size_test(op: str, bound: int, size: int) -> bool:
    fn = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq,
          "!=": operator.ne}[op]
    return fn(size, bound)


class NoneTest(NamedTuple):
    """`g is None` / `g == None` (``is_none``) or `g is not None` / `g != None`; `None is g` likewise."""

    target: ast.expr
    is_none: bool


def none_test(node: ast.expr) -> NoneTest | None:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right, op = node.left, node.comparators[0], node.ops[0]
        if is_none(left):
            left, right = right, left
        if is_none(right) and not is_none(left):
            if isinstance(op, (ast.IsNot, ast.NotEq)):
                return NoneTest(left, is_none=False)
            if isinstance(op, (ast.Is, ast.Eq)):
                return NoneTest(left, is_none=True)
    return None


_BACKEND_GROUPS = frozenset(f"ProcessGroup{b}" for b in ("NCCL", "Gloo", "MPI", "UCC", "XCCL", "HCCL", "CCL", "Wrapper"))


def group_argument(call: ast.Call) -> ast.expr | None:
    """The group a size or rank query is asked of (`get_world_size(group=g)`, `get_process_group_ranks(g)`): the
    `group=` keyword, else the first positional argument."""
    return next((k.value for k in call.keywords if k.arg == "group"), call.args[0] if call.args else None)


def is_group_type_test(call: ast.Call) -> bool:
    """`isinstance(g, ProcessGroup)`: `dist.ProcessGroup` or a backend's (`ProcessGroupNCCL`), not a class that
    only holds groups (`ProcessGroupCollection`)."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "isinstance" and len(call.args) == 2
            and not call.keywords):
        return False
    kind = call.args[1]
    name = kind.attr if isinstance(kind, ast.Attribute) else kind.id if isinstance(kind, ast.Name) else ""
    return name.endswith("ProcessGroup") or name in _BACKEND_GROUPS


def presence(test: ast.expr) -> tuple[ast.expr, bool]:
    """What a test says of a value being there: (x, True) when it holds only if x is not None (`x is not None`,
    `x`), (x, False) when it fails only then (`x is None`, `not x`)."""
    tested = none_test(test)
    if tested is not None:
        return tested.target, not tested.is_none
    inner = unparenthesised_not(test)
    return (inner, False) if inner is not None else (test, True)


def is_none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def int_value(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_value(node.operand)
        return -inner if inner is not None else None
    return None


def unparenthesised_not(node: ast.expr) -> ast.expr | None:
    return node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) else None


def without_not(node: ast.expr) -> ast.expr:
    """`x` of `not x`, else the node itself: both name the same test."""
    return node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) else node


def bool_form(node: ast.IfExp) -> ast.BoolOp | None:
    """`b if t else False` is `t and b`, `True if t else b` is `t or b`, `False if t else b` is `not t and b`,
    `b if t else True` is `not t or b` (a flag spelled as a conditional expression); None for any other."""
    def const(n: ast.expr) -> bool | None:
        return n.value if isinstance(n, ast.Constant) and isinstance(n.value, bool) else None

    body, orelse = const(node.body), const(node.orelse)
    if (body is None) == (orelse is None):
        return None
    negated = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=node.test), node.test)
    if orelse is not None:  # `b if t else C`
        op, first, other = (ast.And() if orelse is False else ast.Or()), (node.test if orelse is False else negated), node.body
    else:  # `C if t else b`
        op, first, other = (ast.Or() if body else ast.And()), (node.test if body else negated), node.orelse
    return ast.copy_location(ast.BoolOp(op=op, values=[first, other]), node)


def mapping_get(value: ast.expr) -> bool:
    """`groups.get("ep")`, `self.pgs.get(name, None)`: a mapping's lookup that answers None for a missing key."""
    return type(value) is ast.Call and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
        and isinstance(value.func.value, (ast.Name, ast.Attribute)) and not value.keywords \
        and (len(value.args) == 1 or (len(value.args) == 2 and is_none(value.args[1]))) \
        and not isinstance(value.args[0], ast.Starred)
