"""Does a rewritten guard behave like the original? Interpret both ASTs under the four group states.

Nothing here compiles, evaluates or imports the text under analysis. A small interpreter walks the expression's
AST and knows only an allow-list: the group expression (a Name/Attribute chain, as a symbol), ``None``, ``True``
/ ``False`` and integer constants, ``is`` / ``is not`` / ``==`` / ``!=`` / integer orderings (chained too),
``and`` / ``or`` / ``not``, unary minus, calls of the comm module's ``get_world_size`` (resolved through the
file's imports, like the analyzer does) and of the predicate whose only argument is the group, the group's own
``.size()`` (which raises where the group is None or excludes this rank), and opaque boolean operands named by the
caller. Any other node raises :class:`Unprovable` naming it: the caller must
then treat the rewrite as unproven. Nothing here knows rule codes.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from bot.analyze.names import Names, dotted
from bot.config import Config
from bot.fix.text import code

WORLD_SIZE = 8  # what get_world_size(None) returns: the world, which is the whole point of the migration
SIZE_FUNCTION = "get_world_size"
MAX_OPAQUE = 8  # opaque operands enumerated True/False; more means the caller did not merge its runs
_SNIPPET = 60  # characters of an offending sub-expression quoted in a reason


class _Present:
    """The value of the group expression when the group exists; only its identity matters."""

    def __repr__(self) -> str:
        return "<group>"


GROUP = _Present()
Value: TypeAlias = bool | int | _Present | None


@dataclass(frozen=True)
class State:
    name: str
    present: bool
    size: int  # what get_world_size(group) returns in this state

    def __str__(self) -> str:
        return self.name


STATES: tuple[State, ...] = (
    State("None (dimension absent)", False, WORLD_SIZE),
    State("non-member group (size -1)", True, -1),
    State("single-rank group (size 1)", True, 1),
    State("multi-rank group (size 4)", True, 4),
    State("large group (size 1024)", True, 1024),  # a test with an upper bound (`1 < ws <= 8`) differs here
)


class Unprovable(Exception):
    """The expression holds something outside the allow-list (or does not parse): nothing can be proved."""


@dataclass(frozen=True)
class Vocabulary:
    """Which callees are the world-size function and the predicate, resolved through one file's imports."""

    names: Names
    size_functions: frozenset[str]
    predicates: frozenset[str]

    @classmethod
    def of(cls, tree: ast.Module, config: Config, package: str | None = None) -> Vocabulary:
        names = Names.of(tree, package)
        # A rewrite's predicate call is generated text: it resolves through the import the fix adds.
        aliases = dict(names.aliases)
        aliases.setdefault(config.predicate_name, f"{config.predicate_module}.{config.predicate_name}")
        qualified = f"{config.predicate_module}.{config.predicate_name}.{config.predicate_function}"
        return cls(
            Names(aliases),
            frozenset(f"{module}.{SIZE_FUNCTION}" for module in config.comm_modules),
            frozenset({qualified, f"{config.predicate_name}.{config.predicate_function}"}),
        )

    def kind(self, func: ast.expr) -> str | None:
        """"size" or "predicate" for a callee this vocabulary knows, else None."""
        qualified = self.names.qualify(func)
        if qualified in self.size_functions:
            return "size"
        if qualified in self.predicates:
            return "predicate"
        return None


class _Raises(Exception):
    """Evaluating the expression raises in this state (`g.size()` on a group this rank is not in)."""


@dataclass(frozen=True)
class Outcome:
    state: State
    old: bool
    new: bool
    assumed: tuple[tuple[str, bool], ...] = ()  # opaque operands' (description, value) in this case
    old_raises: str | None = None  # what the old expression raised here (then ``old`` means nothing)

    @property
    def same(self) -> bool:
        return self.old_raises is None and self.old == self.new

    def describe(self) -> str:
        old = f"raises ({self.old_raises})" if self.old_raises is not None else str(self.old)
        text = f"{self.state}: old {old}, new {self.new}"
        if self.assumed:
            text += " (when " + ", ".join(f"{what} is {value}" for what, value in self.assumed) + ")"
        return text


@dataclass(frozen=True)
class Comparison:
    outcomes: tuple[Outcome, ...]

    @property
    def equivalent(self) -> bool:
        return all(o.same for o in self.outcomes)

    @property
    def differing(self) -> tuple[Outcome, ...]:
        """The first differing case of each state (a state differs when any opaque assignment does)."""
        first: dict[str, Outcome] = {}
        for o in self.outcomes:
            if not o.same:
                first.setdefault(o.state.name, o)
        return tuple(first.values())

    @property
    def preserves_parallel(self) -> bool:
        """A present multi-rank group must behave the same, whatever else a fix changes."""
        return all(o.same for o in self.outcomes if o.state.present and o.state.size > 1)

    def describe(self) -> str:
        if self.equivalent:
            return "equivalent for None, non-member, single-rank and multi-rank groups"
        return "; ".join(f"differs for {o.describe()}" for o in self.differing)


# ------------------------------------------------------------------ parsing (ast only; never compiled)


def parse_expr(text: str, what: str = "expression") -> ast.expr:
    try:
        # Parentheses (and a newline, for a trailing comment) let a multi-line sub-expression parse alone.
        return ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError as exc:
        raise Unprovable(f"the {what} {code(snippet(text))} does not parse: {exc.msg}") from exc
    except (RecursionError, MemoryError, ValueError) as exc:
        raise Unprovable(f"the {what} is too deeply nested to analyse ({type(exc).__name__})") from exc


def snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 3] + "..."


def _show(node: ast.AST) -> str:
    try:
        return code(snippet(ast.unparse(node)))
    except (RecursionError, ValueError):
        return f"a nested {type(node).__name__}"


# ------------------------------------------------------------------ the allow-list


_COMPARE = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_WHAT = {
    ast.Subscript: "a subscript",
    ast.NamedExpr: "an assignment expression",
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Await: "an await",
    ast.Yield: "a yield",
    ast.YieldFrom: "a yield",
    ast.BinOp: "arithmetic",
    ast.IfExp: "a conditional expression",
    ast.JoinedStr: "an f-string",
    ast.Starred: "a starred expression",
}


@dataclass(frozen=True)
class _Env:
    group: str  # dotted text of the group expression
    vocabulary: Vocabulary
    substitutions: Mapping[str, ast.expr]  # dotted name -> the expression it stands for (a cached size)
    sizes: Mapping[str, int | None]  # dotted names holding the group's world size -> their value for None
    opaque: Mapping[str, str]  # placeholder name -> description of the operand(s) it stands for
    state: State = STATES[0]
    assignment: Mapping[str, bool] = field(default_factory=dict)


def _vet(node: ast.AST, env: _Env) -> None:
    """Raise Unprovable for the first node outside the allow-list (every branch, reachable or not)."""
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _vet(value, env)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.Not | ast.USub):
            raise Unprovable(f"unary {type(node.op).__name__} in {_show(node)}")
        _vet(node.operand, env)
    elif isinstance(node, ast.Compare):
        for op in node.ops:
            if not isinstance(op, _COMPARE):
                raise Unprovable(f"the comparison {_show(node)} (only is/==/!=/</<=/>/>= are understood)")
        for operand in (node.left, *node.comparators):
            _vet(operand, env)
    elif isinstance(node, ast.Constant):
        if node.value is not None and type(node.value) not in (bool, int):
            raise Unprovable(f"the constant {_show(node)}")
    elif isinstance(node, ast.Name | ast.Attribute):
        name = dotted(node)
        if name is None:
            raise Unprovable(f"attribute access on an expression in {_show(node)}")
        if name in env.substitutions:
            _vet(env.substitutions[name], _without_subs(env))
        elif name != env.group and name not in env.sizes and name not in env.opaque:
            raise Unprovable(f"it depends on {code(name)} besides the group {code(env.group)}")
    elif isinstance(node, ast.Call):
        _vet_call(node, env)
    else:
        what = _WHAT.get(type(node), f"a {type(node).__name__} expression")
        raise Unprovable(f"{what} {_show(node)}")


def _own_size(node: ast.Call, env: _Env) -> bool:
    """`g.size()` of the group itself, no arguments (a DeviceMesh's `size(dim)` is one dimension's)."""
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == "size" and not node.args and not node.keywords \
        and dotted(func.value) == env.group


def _without_subs(env: _Env) -> _Env:
    """A substituted expression is vetted without substitutions (no cycles)."""
    return _Env(env.group, env.vocabulary, {}, env.sizes, env.opaque, env.state, env.assignment)


def _vet_call(node: ast.Call, env: _Env) -> None:
    if _own_size(node, env):
        return
    kind = env.vocabulary.kind(node.func)
    if kind is None:
        raise Unprovable(f"call to {_show(node.func)}")
    arguments = [*node.args, *node.keywords]
    keyword_ok = all(k.arg == "group" for k in node.keywords)
    if len(arguments) != 1 or not keyword_ok or any(isinstance(a, ast.Starred) for a in node.args):
        raise Unprovable(f"{_show(node.func)} is called with more than the group: {_show(node)}")
    argument = node.args[0] if node.args else node.keywords[0].value
    if dotted(argument) != env.group:
        raise Unprovable(f"{_show(node.func)} is called on {_show(argument)}, not on the group {code(env.group)}")


# ------------------------------------------------------------------ the interpreter


def _truth(value: Value) -> bool:
    if isinstance(value, _Present):
        return True  # a process group object defines no __bool__ / __len__
    return bool(value)


def _size(env: _Env, group: Value) -> int:
    return WORLD_SIZE if group is None else env.state.size


def _value(node: ast.AST, env: _Env) -> Value:
    """The value of a vetted node in ``env.state`` (Python's own semantics, on symbols)."""
    if isinstance(node, ast.BoolOp):
        result: Value = None
        for value in node.values:
            result = _value(value, env)
            if _truth(result) == isinstance(node.op, ast.Or):
                break  # short-circuit, exactly as Python does
        return result
    if isinstance(node, ast.UnaryOp):
        operand = _value(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not _truth(operand)
        if type(operand) is not int:
            raise Unprovable(f"unary minus of a non-integer in {_show(node)}")
        return -operand
    if isinstance(node, ast.Compare):
        left = _value(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _value(comparator, env)
            if not _compare(op, left, right, node):
                return False
            left = right
        return True
    if isinstance(node, ast.Constant):
        constant = node.value
        if constant is None or isinstance(constant, bool | int):  # vetted: nothing else gets here
            return constant
        raise Unprovable(f"the constant {_show(node)}")
    if isinstance(node, ast.Name | ast.Attribute):
        name = dotted(node)
        assert name is not None  # vetted
        if name in env.substitutions:
            return _value(env.substitutions[name], _without_subs(env))
        if name in env.opaque:
            return env.assignment[name]
        if name in env.sizes:
            fallback = env.sizes[name]  # a cached size with a None fallback (`... if g is not None else 1`)
            return env.state.size if env.state.present or fallback is None else fallback
        return GROUP if env.state.present else None
    if isinstance(node, ast.Call):
        group = GROUP if env.state.present else None
        if _own_size(node, env):
            if group is None:
                raise _Raises(f"{_show(node)} on None")
            if env.state.size < 0:  # torch's non-member placeholder is an int, with no `size`
                raise _Raises(f"{_show(node)} on a group this rank is not in")
            return env.state.size
        if env.vocabulary.kind(node.func) == "size":
            return _size(env, group)
        return group is not None and env.state.size > 1  # the predicate, as pg_utils.is_parallel defines it
    raise Unprovable(f"{_show(node)}")  # unreachable after _vet


def _compare(op: ast.cmpop, left: Value, right: Value, node: ast.Compare) -> bool:
    if isinstance(op, ast.Is | ast.IsNot):
        if type(left) is int or type(right) is int:
            raise Unprovable(f"`is` on an integer in {_show(node)}")
        same = left is right
        return same if isinstance(op, ast.Is) else not same
    if isinstance(op, ast.Eq | ast.NotEq):
        if type(left) is not type(right) and None not in (left, right):
            raise Unprovable(f"== between different kinds of value in {_show(node)}")
        same = left is right if None in (left, right) else left == right
        return same if isinstance(op, ast.Eq) else not same
    if type(left) is not int or type(right) is not int:
        raise Unprovable(f"an ordering of something other than integers in {_show(node)}")
    if isinstance(op, ast.Lt):
        return left < right
    if isinstance(op, ast.LtE):
        return left <= right
    if isinstance(op, ast.Gt):
        return left > right
    return left >= right


def truth(node: ast.expr, env: _Env) -> bool:
    return _truth(_value(node, env))


# ------------------------------------------------------------------ the public check


def compare(
    old: str | ast.expr,
    new: str | ast.expr,
    group: str,
    vocabulary: Vocabulary,
    *,
    substitutions: Mapping[str, str | ast.expr] | None = None,
    sizes: Iterable[str] | Mapping[str, int | None] = (),
    opaque: Mapping[str, str] | None = None,
) -> Comparison:
    """Interpret ``old`` and ``new`` for every state (and every True/False of each ``opaque`` placeholder name).

    ``group`` is the group expression's text (a Name/Attribute chain). ``substitutions`` maps a dotted name to
    the expression it holds (a cached ``self.ws`` -> the ``get_world_size(...)`` call it was assigned);
    ``sizes`` are dotted names known to hold the group's world size (a mapping gives each one's value when the
    group is None: None for the world size, an int for a fallback such as ``... if g is not None else 1``). Raises :class:`Unprovable` when either
    expression holds anything outside the allow-list."""
    group_node = parse_expr(group, "group")
    group_text = dotted(group_node)
    if group_text is None:
        raise Unprovable(f"the group {code(snippet(group))} is not a name or attribute")
    old_node = parse_expr(old, "guard") if isinstance(old, str) else old
    new_node = parse_expr(new, "rewrite") if isinstance(new, str) else new
    subs = {k: parse_expr(v, "substitution") if isinstance(v, str) else v for k, v in (substitutions or {}).items()}
    placeholders = dict(opaque or {})
    if len(placeholders) > MAX_OPAQUE:
        raise Unprovable(f"more than {MAX_OPAQUE} independent operands to enumerate")
    size_map = dict(sizes) if isinstance(sizes, Mapping) else dict.fromkeys(sizes)
    env = _Env(group_text, vocabulary, subs, size_map, placeholders)
    try:
        _vet(old_node, env)
        _vet(new_node, env)
        outcomes = []
        names = sorted(placeholders)
        for state in STATES:
            for values in itertools.product((True, False), repeat=len(names)):
                assignment = dict(zip(names, values, strict=True))
                here = _Env(group_text, vocabulary, subs, env.sizes, placeholders, state, assignment)
                assumed = tuple((placeholders[n], v) for n, v in assignment.items())
                try:
                    old_value, raised = truth(old_node, here), None
                except _Raises as exc:  # (the old code may crash where the predicate answers)
                    old_value, raised = False, str(exc)
                try:
                    new_value = truth(new_node, here)
                except _Raises as exc:
                    raise Unprovable(f"the rewrite raises for a {state}: {exc}") from exc
                outcomes.append(Outcome(state, old_value, new_value, assumed, old_raises=raised))
    except RecursionError as exc:
        raise Unprovable("the expression is too deeply nested to analyse") from exc
    return Comparison(tuple(outcomes))
