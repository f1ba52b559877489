"""Per-file facts every rule asks about: what a call resolves to, and what a test checks of a group."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.analyze.names import Names, dotted
from bot.analyze.source import ParsedSource
from bot.config import Config

# The sizes a size check is evaluated at: non-member (-1), single rank (1), multi-rank (2 and 8).
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


@dataclass(frozen=True)
class NoneCheck:
    group: str
    is_none: bool  # True for `g is None` / `not g`: the check is True when the group is absent


@dataclass(frozen=True)
class SizeCheck:
    group: str
    op: str
    bound: int
    positive: bool  # True when the check is True for a multi-rank group
    nonmember_bug: bool  # the check treats a non-member (size -1) like a multi-rank group, or vice versa
    via: str | None = None  # the cached name/attribute the size was read through, if any


@dataclass
class Context:
    path: str
    source: ParsedSource
    names: Names
    config: Config

    def __post_init__(self) -> None:
        self._modules = tuple(self.config.comm_modules)

    # ------------------------------------------------------------ calls

    def comm_function(self, call: ast.Call) -> str | None:
        """`all_reduce` for `dist.all_reduce(...)` when `dist` resolves to a comm module, else None."""
        qualified = self.names.qualify(call.func)
        if qualified is None:
            return None
        module, _, name = qualified.rpartition(".")
        return name if module in self._modules else None

    def world_size_group(self, node: ast.AST) -> ast.expr | None:
        """The group of `get_world_size(group=g)` / `get_world_size(g)`; None without a group or if not comm."""
        if not isinstance(node, ast.Call) or self.comm_function(node) != "get_world_size":
            return None
        group: ast.expr | None = node.args[0] if node.args else None
        for kw in node.keywords:
            if kw.arg == "group":
                group = kw.value
        if group is None or (isinstance(group, ast.Constant) and group.value is None):
            return None
        return group

    def collective_group(self, call: ast.Call) -> tuple[str, ast.expr | None] | None:
        """(collective name, its `group=` expression or None) for a collective call, else None."""
        name = self.comm_function(call)
        if name is None or name not in self.config.collectives:
            return None
        group = next((kw.value for kw in call.keywords if kw.arg == "group"), None)
        return name, group

    def is_predicate(self, call: ast.Call) -> bool:
        qualified = self.names.qualify(call.func)
        c = self.config
        return qualified in {
            f"{c.predicate_module}.{c.predicate_name}.{c.predicate_function}",
            f"{c.predicate_name}.{c.predicate_function}",
        }

    # ------------------------------------------------------------ tests

    def none_check(self, node: ast.expr) -> NoneCheck | None:
        """`g is not None`, `g != None`, `None is not g` (present) or `g is None`, `g == None`, `not g` (absent)."""
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right, op = node.left, node.comparators[0], node.ops[0]
            if _is_none(left):
                left, right = right, left
            if _is_none(right):
                group = dotted(left)
                if group is not None:
                    if isinstance(op, (ast.IsNot, ast.NotEq)):
                        return NoneCheck(group, is_none=False)
                    if isinstance(op, (ast.Is, ast.Eq)):
                        return NoneCheck(group, is_none=True)
        return None

    def truthiness(self, node: ast.expr) -> NoneCheck | None:
        """`g` or `not g` used as a test; only meaningful where g is known to be a group."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            group = dotted(node.operand)
            return NoneCheck(group, is_none=True) if group else None
        group = dotted(node)
        return NoneCheck(group, is_none=False) if group else None

    def size_check(self, node: ast.expr, aliases: Mapping[str, str] = {}) -> SizeCheck | None:
        """A comparison of a group's world size with a constant that separates 1 rank from many.

        ``aliases`` maps names holding a cached size (`ws = get_world_size(group=g)`) to their group."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            return None
        left, right, op = node.left, node.comparators[0], type(node.ops[0])
        if op not in _OPS:
            return None
        if _int(left) is not None:  # `1 < get_world_size(g)`
            left, right, op = right, left, _FLIP[op]
        bound = _int(right)
        if bound is None:
            return None
        group, via = self._size_source(left, aliases)
        if group is None:
            return None
        table = tuple(_OPS[op](size, bound) for size in SIZES)
        if table in (_POSITIVE, _NEGATIVE):
            return SizeCheck(group, _SYMBOL[op], bound, positive=table == _POSITIVE, nonmember_bug=False, via=via)
        # Separates 1 from many but mis-handles the non-member's -1 (`!= 1`, `== 1`).
        if table[1:] == _POSITIVE[1:] or table[1:] == _NEGATIVE[1:]:
            return SizeCheck(group, _SYMBOL[op], bound, positive=not table[1], nonmember_bug=True, via=via)
        return None

    def _size_source(self, node: ast.expr, aliases: Mapping[str, str]) -> tuple[str | None, str | None]:
        group = self.world_size_group(node)
        if group is not None:
            return dotted(group), None
        text = dotted(node)
        if text is not None and text in aliases:
            return aliases[text], text
        return None, None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return -inner if inner is not None else None
    return None
