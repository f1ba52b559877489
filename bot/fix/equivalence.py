"""Does a rewritten guard behave like the original? Evaluate both for real under the four group states.

The original sub-expression is compiled as written, with the process-group expression bound to a state
sentinel and every ``get_world_size`` call answered the way torch answers it for that state. Nothing here knows
rule codes: a rewrite is judged only by what the two expressions evaluate to.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

WORLD_SIZE = 8  # what get_world_size(None) returns: the world, which is the whole point of the migration
_GROUP = "__pg_group__"
_WS = "__pg_world_size__"
SIZE_FUNCTIONS = frozenset({"get_world_size"})


class _Group:
    """Stands in for a process group object; only its identity matters."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<group {self.name}>"


@dataclass(frozen=True)
class State:
    name: str
    group: _Group | None
    size: int  # what get_world_size(group) returns in this state

    def __str__(self) -> str:
        return self.name


STATES: tuple[State, ...] = (
    State("None (dimension absent)", None, WORLD_SIZE),
    State("non-member group (size -1)", _Group("non-member"), -1),
    State("single-rank group (size 1)", _Group("single-rank"), 1),
    State("multi-rank group (size 4)", _Group("multi-rank"), 4),
)
MULTI_RANK = STATES[3]


class EvaluationError(Exception):
    """The expression cannot be evaluated in isolation (an unknown name, an unexpected call, bad syntax)."""


@dataclass(frozen=True)
class Outcome:
    state: State
    old: bool
    new: bool

    @property
    def same(self) -> bool:
        return self.old == self.new


@dataclass(frozen=True)
class Comparison:
    outcomes: tuple[Outcome, ...]

    @property
    def equivalent(self) -> bool:
        return all(o.same for o in self.outcomes)

    @property
    def differing(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.outcomes if not o.same)

    @property
    def preserves_parallel(self) -> bool:
        """A present multi-rank group must behave the same, whatever else a fix changes."""
        return all(o.same for o in self.outcomes if o.state is MULTI_RANK)

    def describe(self) -> str:
        if self.equivalent:
            return "equivalent for None, non-member, single-rank and multi-rank groups"
        return "; ".join(f"differs for {o.state}: old {o.old}, new {o.new}" for o in self.differing)


def _is_parallel(group: Any, world_size: Callable[..., int]) -> bool:
    """Mirror of pg_utils.is_parallel, parameterised by the world-size function (tests check it against it)."""
    if group is None:
        return False
    return world_size(group=group) > 1


def _parse_expr(text: str, what: str) -> ast.expr:
    try:
        # Parentheses (and a newline, for a trailing comment) let a multi-line sub-expression compile alone.
        return ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError as exc:
        raise EvaluationError(f"{what} `{text}` does not parse: {exc.msg}") from exc


class _Bind(ast.NodeTransformer):
    """Replace the group expression by the state sentinel, named substitutions by their expressions, and
    world-size calls by the state's answer."""

    def __init__(self, group: ast.expr | None, substitutions: Mapping[str, ast.expr]) -> None:
        self.group = ast.dump(group) if group is not None else None
        self.subs = {ast.dump(_parse_expr(k, "substituted expression")): v for k, v in substitutions.items()}

    def visit(self, node: ast.AST) -> Any:
        dumped = ast.dump(node) if isinstance(node, ast.expr) else None
        if dumped is not None and dumped in self.subs:
            return self.visit(self.subs[dumped])
        if dumped is not None and dumped == self.group:
            return ast.copy_location(ast.Name(id=_GROUP, ctx=ast.Load()), node)
        if isinstance(node, ast.Call) and _callee_name(node.func) in SIZE_FUNCTIONS:
            self.generic_visit(node)  # rewrites the children in place (and returns `node` itself)
            node.func = ast.copy_location(ast.Name(id=_WS, ctx=ast.Load()), node.func)
            return node
        return self.generic_visit(node)


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def evaluate(
    text: str,
    group: str | None,
    state: State,
    *,
    substitutions: Mapping[str, str] | None = None,
    predicate: tuple[str, str] = ("pg_utils", "is_parallel"),
) -> bool:
    """Truth value of expression ``text`` when ``group`` (source text) is in ``state``.

    ``substitutions`` replaces sub-expressions before evaluation (e.g. a cached ``self.ws`` by the
    ``get_world_size(...)`` call it was assigned from). ``predicate`` names the module and function of the
    migration's predicate, so the new guard is evaluated through the same machinery.
    """
    expr = _parse_expr(text, "guard")
    group_expr = _parse_expr(group, "group") if group is not None else None
    subs = {k: _parse_expr(v, "substitution") for k, v in (substitutions or {}).items()}
    bound = ast.fix_missing_locations(ast.Expression(body=_Bind(group_expr, subs).visit(expr)))

    def world_size(group: Any = None, *args: Any, **kwargs: Any) -> int:
        if group is None:
            return WORLD_SIZE
        if group is state.group:
            return state.size
        raise EvaluationError(f"get_world_size of something other than `{_text_of(group_expr)}`")

    module, function = predicate
    namespace: dict[str, Any] = {
        "__builtins__": {"True": True, "False": False, "None": None},
        _GROUP: state.group,
        _WS: world_size,
        module: SimpleNamespace(**{function: lambda g: _is_parallel(g, world_size)}),
    }
    try:
        code = compile(bound, "<guard>", "eval")
        return bool(eval(code, namespace))  # our own AST; names limited to the namespace above
    except EvaluationError:
        raise
    except NameError as exc:
        raise EvaluationError(f"`{text.strip()}` depends on {exc.name or exc} besides the group") from exc
    except Exception as exc:  # any other failure means we cannot vouch for the rewrite
        raise EvaluationError(f"`{text.strip()}` cannot be evaluated alone: {type(exc).__name__}: {exc}") from exc


def _text_of(expr: ast.expr | None) -> str:
    return "None" if expr is None else ast.unparse(expr)


def compare(
    old: str,
    new: str,
    group: str | None,
    *,
    substitutions: Mapping[str, str] | None = None,
    predicate: tuple[str, str] = ("pg_utils", "is_parallel"),
) -> Comparison:
    """Evaluate ``old`` and ``new`` for every state. Raises EvaluationError when either cannot be evaluated."""
    outcomes = tuple(
        Outcome(
            state,
            evaluate(old, group, state, substitutions=substitutions, predicate=predicate),
            evaluate(new, group, state, predicate=predicate),
        )
        for state in STATES
    )
    return Comparison(outcomes)
