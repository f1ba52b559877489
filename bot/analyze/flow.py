"""Flow-sensitive facts per function.

An abstract interpreter walks each function's statements in order, carrying a `State`: for every group
expression (a canonical dotted key such as `self.tp_group`) whether it can be None here and which tests on the
path established that it is not None, that its world size is above one, or that the predicate holds; which
tests on a separately supplied size hold; which locals/attributes hold a size (and of what); which flags hold
a guard; and which names alias a group. Branches narrow (`is None`, `==`, truthiness, `assert`, early exits,
`and`/`or`, conditional expressions, flags, local predicates) and merge at joins.

What it records (`Sites`): every collective with the facts that hold for its group, every call of an in-file
function with the state there, every boolean chain with its atoms. Rules decide from these; they never walk
the code themselves.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from bot.analyze.context import GROUP_GETTER, Collective
from bot.analyze.env import FunctionInfo, ModuleEnv, own_statements
from bot.analyze.names import dict_entry, dotted, indexed, leaf_name
from bot.analyze.scan import GROUP_NAME
from bot.analyze.terms import (
    UNREACHABLE,
    Const,
    NoneTest,
    Null,
    Separate,
    SizeCompare,
    SizeOf,
    SizeTerm,
    against_bool,
    bool_form,
    group_argument,
    is_bool_call,
    is_group_type_test,
    join_null,
    mapping_get,
    none_test,
    size_compare,
    size_floor,
    size_match,
    without_not,
)

_RANK_LISTS = frozenset({"get_process_group_ranks", "get_global_rank"})  # a group's members as global ranks
_P2P = frozenset({"send", "recv", "isend", "irecv"})
# what a `len(...)` that counts ranks (or their shares) is taken of
_RANK_COUNT = re.compile(r"size|world|degree|parallel|rank|partition|shard|replica|device|node|gpu|worker|proc|group"
                         r"|mesh|split|chunk|member|peer", re.I)
_SIZE_LIKE = re.compile(r"size|world|degree|parallel|num_|ranks|replicas|(^|_)ws($|_)|(^|_)(tp|dp|ep|mp|pp|sp|cp)$", re.I)
_MAX_DEPTH = 8  # how deep flags / local predicates are expanded into one another


class Check(NamedTuple):
    """A test that established a fact on the path: ``node`` is the atomic test, ``test`` the whole condition it
    sits in, ``negated`` when the fact comes from that condition being False (an early exit, an else branch)."""

    node: ast.expr
    test: ast.expr
    negated: bool
    kind: str  # "none" | "size" | "pred" | "separate"
    compare: SizeCompare | None = None
    term: SizeTerm | None = None


class Facts(NamedTuple):
    null: Null
    nonnull: frozenset[Check] = frozenset()
    size: frozenset[Check] = frozenset()
    pred: frozenset[Check] = frozenset()
    # size tests that hold wherever the group is present, not on a path that set it to None (`if ws(g) == 1:
    # g = None`): they join `size` once a None test rules that path out
    present: frozenset[Check] = frozenset()

    @property
    def guarded(self) -> bool:
        return bool(self.pred) or (bool(self.nonnull) and bool(self.size))


class State:
    """Facts at one point. Copied at branches (dicts are small: the groups a function touches)."""

    __slots__ = ("aliases", "bottom", "flags", "groups", "path", "same", "separate", "sizes", "world")

    def __init__(self, bottom: bool = False) -> None:
        self.bottom = bottom
        self.groups: dict[str, Facts] = {}
        self.separate: frozenset[Check] = frozenset()
        self.aliases: dict[str, str] = {}
        self.same: dict[str, str] = {}  # `self.g = g`: attribute -> the key it was assigned from (same object)
        self.sizes: dict[str, SizeTerm] = {}
        self.flags: dict[str, ast.expr] = {}
        self.world: frozenset[str] = frozenset()
        self.path: frozenset[tuple[int, bool]] = frozenset()  # (id of a branch test, its outcome) on this path

    def same_as(self, other: State) -> bool:
        return (self.bottom == other.bottom and self.groups == other.groups and self.sizes == other.sizes
                and self.separate == other.separate and self.aliases == other.aliases and self.same == other.same
                and self.world == other.world and self.path == other.path
                and self.flags.keys() == other.flags.keys()
                and all(v is other.flags[k] for k, v in self.flags.items()))

    def copy(self) -> State:
        s = State(self.bottom)
        s.groups = dict(self.groups)
        s.separate = self.separate
        s.aliases = dict(self.aliases)
        s.same = dict(self.same)
        s.sizes = dict(self.sizes)
        s.flags = dict(self.flags)
        s.world = self.world
        s.path = self.path
        return s


BOTTOM = State(bottom=True)


class CollectiveSite(NamedTuple):
    call: ast.Call
    collective: Collective
    key: str | None  # canonical key of the group argument (None: no group, or not a name/attribute)
    facts: Facts | None
    separate: frozenset[Check]
    world_fallback: bool  # the group was given an explicit world fallback on the path
    statement: ast.stmt
    result_used: bool
    function: FunctionInfo | None
    partial: bool = False
    none_keys: frozenset[str] = frozenset()  # keys known to be None here (a world collective in `else:` of a None test)
    path: frozenset[tuple[int, bool]] = frozenset()
    # a world collective: the groups tested for None and for size on its path (exits on another dimension)
    tested_groups: tuple[tuple[str, Facts], ...] = ()
    deferred: bool = False  # inside a lambda or a functools.partial: it runs later, with what that closes over


class CallSite(NamedTuple):
    """A call of an in-file function, with the facts of every group key known there."""

    call: ast.Call
    callee: FunctionInfo
    function: FunctionInfo | None
    groups: dict[str, Facts]
    separate: frozenset[Check]
    arguments: dict[str, str | None]  # callee parameter -> canonical key of the argument passed
    path: frozenset[tuple[int, bool]] = frozenset()
    statement: ast.stmt | None = None
    result_used: bool = True
    deferred: bool = False  # inside a lambda or a functools.partial


@dataclass(frozen=True)
class Atom:
    index: int
    node: ast.expr
    key: str
    kind: str  # "none" | "size"
    is_none: bool = False  # for "none": True when the atom is True for an absent group
    compare: SizeCompare | None = None
    term: SizeOf | None = None


class ChainSite(NamedTuple):
    node: ast.BoolOp
    atoms: tuple[Atom, ...]
    function: FunctionInfo | None
    inverted: ast.UnaryOp | None = None  # the `not (...)` (odd in number) whose operand the chain of two tests is


class FlagSite(NamedTuple):
    """A flag set from one test of a None-safe size (`use_sp = n > 1`, `bool(n > 1)`, or `if n > 1: use = True
    else: use = False`, with `n = ws(g) if g is not None else 1`): the predicate's value, stored for code that
    communicates elsewhere, as a flag set from the whole chain (`use_sp = g is not None and ws(g) > 1`) is."""

    check: Check
    function: FunctionInfo | None


class SizeQuery(NamedTuple):
    """A world-size query of a group (`get_world_size(g)`), with the facts of g there (evidence of what None
    means: authors check None before asking a size only where None means absent)."""

    call: ast.Call
    key: str
    facts: Facts
    function: FunctionInfo | None


@dataclass
class Sites:
    collectives: dict[int, CollectiveSite] = field(default_factory=dict)
    calls: dict[int, CallSite] = field(default_factory=dict)
    chains: dict[int, ChainSite] = field(default_factory=dict)
    flags: dict[int, FlagSite] = field(default_factory=dict)
    sizes: dict[int, SizeQuery] = field(default_factory=dict)
    predicate_calls: set[int] = field(default_factory=set)
    # id of a nested function's def -> the enclosing function's state there: what the closure's body starts from
    closures: dict[int, State] = field(default_factory=dict)
    # id of a nested function's def -> the `functools.partial` collectives bound to names where it is defined
    closure_partials: dict[int, dict[str, Collective]] = field(default_factory=dict)


class AttributeFlag(NamedTuple):
    """`self.use_ring = n > 1`, read in another method: the test, with the locals of the method that set it bound
    to the attributes they are (`g` -> `self.g`) or to the sizes they held there (`n` -> the size of self.g)."""

    test: ast.expr
    binding: dict[str, str]
    sizes: dict[str, SizeTerm]


@dataclass
class Summary:
    """Per class: what each method leaves in `self.*` (sizes and flags), merged over methods."""

    sizes: dict[str, SizeTerm] = field(default_factory=dict)
    # `self.use_tp = g is not None and ...`: the flag's test as other methods read it
    flags: dict[str, AttributeFlag] = field(default_factory=dict)
    # an autograd Function's forward leaves sizes on ctx for backward (`ctx.n = n`, `ctx.g = g`): attribute
    # name -> the size, its group named by a ctx attribute too (`SizeOf("g", ...)` for `ctx.g`)
    ctx_sizes: dict[str, SizeOf] = field(default_factory=dict)


class Walker:
    """Runs one function (or the module body) and records its sites into a shared `Sites`."""

    def __init__(self, env: ModuleEnv, function: FunctionInfo | None, sites: Sites,
                 summaries: dict[int, Summary], group_keys: frozenset[str], lines: list[int] | None = None) -> None:
        self.env = env
        self.ctx = env.ctx
        self.function = function
        self.sites = sites
        self.summaries = summaries
        self.group_keys = group_keys
        self.lines = lines  # statements spanning none of these hold no site: their expressions are not visited
        self.loops: list[tuple[list[State], list[State]]] = []  # (breaks, continues)
        self.exits: list[State] = []
        self.depth = 0
        self.lambdas = 0  # how many lambdas enclose the expression being visited
        # every `self.x = ...` with what it holds there (filled when set: the class summary's second source)
        self.attribute_sizes: list[tuple[str, SizeTerm | None]] | None = None
        self._origins: dict[str, Facts] = {}
        self.partials: dict[str, Collective] = {}  # local name -> the collective a `functools.partial` bound to it runs
        # local name -> the collectives it names (`reduce_fn = reduce_scatter_raw if sp else all_reduce_raw`)
        self.chosen: dict[str, tuple[ast.expr, ...]] = {}
        # local name -> the group whose global ranks it holds (`ranks = get_process_group_ranks(group=g)`,
        # `peer = ranks[(r + 1) % n]`): a send to it is communication on g (flow-insensitive, as `chosen`)
        self.rank_of: dict[str, str] = {}
        # locals holding what an in-file getter hands back only for a group of several ranks (`pg = get_tp()`,
        # `return g if n > 1 else None`): their None test is the whole guard (flow-insensitive, as `chosen`)
        self.parallel_only: set[str] = set()
        # locals holding a group's bound `size` method, or None (`size_fn = getattr(g, "size", None)`): `callable(
        # size_fn)` tests g for None and `size_fn()` is g's size (flow-insensitive, as `chosen`)
        self.size_methods: dict[str, ast.expr] = {}
        # local name -> the in-file function it names (`fn = _scatter if sp else _reduce`, then `fn(t, g)`: a call
        # of the first branch that is one, flow-insensitive, as `chosen`)
        self.helper_aliases: dict[str, ast.expr] = {}
        # keys holding the group of an mpu / parallel-state getter (`grp = ps.get_tensor_model_parallel_group()`),
        # or not, memoised: no group of this analysis (flow-insensitive, as `chosen`)
        self.mpu_held: dict[str, bool] = {}
        # locals holding a parallel-state object (`ps = ParallelState()`), whose group getters are mpu getters
        self.state_objects: set[str] = set()
        klass = env.class_of(function) if function is not None else None
        self.klass = klass
        self.summary = summaries.get(id(klass.node)) if klass is not None else None

    # ================================================================ driver

    def run(self) -> State:
        body = self.function.node.body if self.function is not None else self.ctx.source.tree.body
        if self.function is not None and id(self.function.node) in self.sites.closure_partials:
            # `reduce = partial(dist.all_reduce, group=g)`, then `def hook(x): reduce(x)`: the closure calls it
            mine = _parameters(self.function.node.args)
            self.partials.update((k, v) for k, v in self.sites.closure_partials[id(self.function.node)].items()
                                 if k not in mine)
        end = self.block(body, self._inherited())
        for state in self.exits:
            end = join(end, state, self)
        return end

    def _inherited(self) -> State:
        """A closure starts where it was defined: `if self.n > 1: def f(t): all_reduce(t, group=self.g)` runs
        f's collective under the enclosing test (it is called there, handed to `map_structure` and the like).
        What the closure's own parameters shadow is dropped."""
        outer = self.sites.closures.get(id(self.function.node)) if self.function is not None else None
        if outer is None or outer.bottom:
            start = State()
            if self.klass is not None and self.function is not None and self.function.node.name in _CONSTRUCTORS:
                # the instance starts with its class's constant defaults (`n = 1`; a dataclass's only where the
                # constructor takes no argument for it: `n: int = field(init=False, default=1)`)
                start.sizes.update((f"self.{name}", Const(value)) for name, value in _class_defaults(self.klass.node))
            return start
        assert self.function is not None
        return _shadowed(outer, _parameters(self.function.node.args))

    # ================================================================ statements

    def block(self, stmts: list[ast.stmt], state: State) -> State:
        for stmt in stmts:
            if state.bottom:
                break
            state = self.statement(stmt, state)
        return state

    def statement(self, stmt: ast.stmt, s: State) -> State:
        # the two most common statements first
        if isinstance(stmt, ast.Assign):
            self.expr(stmt.value, s, stmt)
            s = s.copy()
            for target in stmt.targets:
                self.assign(s, target, stmt.value)
            return s
        if isinstance(stmt, ast.Expr):
            self.expr(stmt.value, s, stmt)
            return s
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in stmt.decorator_list:
                self.expr(d, s, stmt)
            if not isinstance(stmt, ast.ClassDef):
                if self.function is not None and not s.bottom:
                    known = self.sites.closures.get(id(stmt))  # a def in a loop: what holds on every pass
                    self.sites.closures[id(stmt)] = s if known is None else join(known, s, self)
                    if self.partials:
                        self.sites.closure_partials[id(stmt)] = dict(self.partials)
                s = s.copy()
                self.kill(s, stmt.name)
            return s  # their bodies are walked as functions of their own
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and _fails(stmt.body[-1], stmt.test):
            # `if g is None: raise ...` is a contract, as `assert g is not None` is: after it g is present, but
            # nothing skips communication, so it is no guard (is_parallel there would refuse a single rank).
            # So is `if g is None: return False, "g was never set up"`: the caller is told of an error.
            self.expr(stmt.test, s, stmt)
            self.block(stmt.body, _took(self.assume(s, stmt.test, True, stmt.test, False), stmt.test, True))
            return self._contract(s, self.assume(s, stmt.test, False, stmt.test, True))
        if isinstance(stmt, ast.If):
            self.expr(stmt.test, s, stmt)
            self._builds_with_group(stmt, s)
            yes = self.assume(s, stmt.test, True, stmt.test, False)
            if stmt.orelse and _ends_in_failure(stmt):
                # `if g is not None: ... elif comm is not None: <another backend> else: raise`: g is required or
                # replaced, never an absent dimension; the test is a contract like the early `raise` above
                yes = self._contract(s, yes)
            then = self.block(stmt.body, _took(yes, stmt.test, True))
            other = self.block(stmt.orelse, _took(self.assume(s, stmt.test, False, stmt.test, True), stmt.test, False))
            out = join(then, other, self)
            flags = _constant_flags(stmt) if stmt.orelse and not out.bottom and self.guard_like(stmt.test) else ()
            if flags:  # `if n > 1: use = True else: use = False` is `use = n > 1`
                self._safe_flag(stmt.test, s)
                out = out.copy()
                for text, positive in flags:
                    out.flags[text] = stmt.test if positive else \
                        ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=stmt.test), stmt.test)
            return out
        if isinstance(stmt, ast.While):
            return self.loop(stmt, s, stmt.test)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expr(stmt.iter, s, stmt)
            return self.loop(stmt, s, None)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expr(item.context_expr, s, stmt)
                if item.optional_vars is not None:
                    s = s.copy()
                    self.kill_target(s, item.optional_vars)
            return self.block(stmt.body, s)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            t: ast.Try = stmt  # type: ignore[assignment]
            returned = len(self.exits)
            body = self.block(t.body, s)
            anywhere = join(s, body, self)  # an exception can leave the body at any point
            ends = [self.block(t.orelse, body)]
            for handler in t.handlers:
                h = anywhere.copy() if not anywhere.bottom else anywhere
                if handler.name and not h.bottom:
                    self.kill(h, handler.name)
                ends.append(self.block(handler.body, h))
            out = BOTTOM
            for e in ends:
                out = join(out, e, self)
            if not t.finalbody:
                return out
            after = self.block(t.finalbody, out)  # what follows the statement: the body or a handler completed
            every = join(anywhere, out, self)
            for exit_state in self.exits[returned:]:  # (the handlers' returns too)
                every = join(every, exit_state, self)
            if not every.same_as(out):
                # ... but `finally:` also runs on the way out of a `return` or an exception in the body: its sites
                # are recorded (last, so they stay) with what holds on every path into it
                self.block(t.finalbody, every)
            return after
        if isinstance(stmt, ast.Match):
            return self._match(stmt, s)
        if isinstance(stmt, ast.Assert):
            self.expr(stmt.test, s, stmt)
            return self._contract(s, self.assume(s, stmt.test, True, stmt.test, False), self._at_top(stmt))
        if isinstance(stmt, (ast.Return, ast.Raise)):
            value = stmt.value if isinstance(stmt, ast.Return) else stmt.exc
            if value is not None:
                self.expr(value, s, stmt)
            if isinstance(stmt, ast.Return):
                self.exits.append(s)
            return BOTTOM
        if isinstance(stmt, ast.Break):
            if self.loops:
                self.loops[-1][0].append(s)
            return BOTTOM
        if isinstance(stmt, ast.Continue):
            if self.loops:
                self.loops[-1][1].append(s)
            return BOTTOM
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.expr(stmt.value, s, stmt)
                s = s.copy()
                self.assign(s, stmt.target, stmt.value)
            return s
        if isinstance(stmt, ast.AugAssign):
            self.expr(stmt.value, s, stmt)
            s = s.copy()
            self.kill_target(s, stmt.target)
            return s
        if isinstance(stmt, ast.Delete):
            s = s.copy()
            for target in stmt.targets:
                self.kill_target(s, target)
            return s
        return s  # pass, import, global, nonlocal, type aliases

    def _match(self, stmt: ast.Match, s: State) -> State:
        """Cases in order, each reached when none before it matched: `case None:` is `subject is None` there and
        `subject is not None` after it; a capture or `_` without a guard matches whatever is left."""
        self.expr(stmt.subject, s, stmt)
        out = BOTTOM
        rest = s  # no case so far matched
        for case in stmt.cases:
            test = _case_test(stmt.subject, case.pattern, self.ctx.source.lines)
            here = rest if test is None else _took(self.assume(rest, test, True, test, False), test, True)
            if isinstance(case.pattern, ast.MatchAs) and case.pattern.name is not None and not here.bottom:
                here = here.copy()
                self.assign(here, ast.Name(case.pattern.name, ast.Store()), stmt.subject)
            if case.guard is not None:
                self.expr(case.guard, here, stmt)
                here = _took(self.assume(here, case.guard, True, case.guard, False), case.guard, True)
            out = join(out, self.block(case.body, here), self)
            if case.guard is None and _irrefutable(case.pattern):
                return out
            if case.guard is not None and _irrefutable(case.pattern) and not rest.bottom:
                # `case g if ws(g) == 1: return x`: what follows runs where the guard failed, g bound (to the
                # subject) either way, as after `if ws(subject) == 1: return x`
                if isinstance(case.pattern, ast.MatchAs) and case.pattern.name is not None:
                    rest = rest.copy()
                    self.assign(rest, ast.Name(case.pattern.name, ast.Store()), stmt.subject)
                after = self.assume(rest, case.guard, False, case.guard, True)
                rest = self._contract(rest, after) if case.body and _fails(case.body[-1], case.guard) else \
                    _took(after, case.guard, False)
                continue
            if test is not None and case.guard is None:
                after = self.assume(rest, test, False, test, True)
                # `case None: raise ...` is a contract, as `if g is None: raise ...` is (see `statement`)
                rest = self._contract(rest, after) if case.body and _fails(case.body[-1], test) else \
                    _took(after, test, False)
        return join(out, rest, self)

    def _at_top(self, stmt: ast.stmt) -> bool:
        """Directly in the function's body: what it states holds on every path after it."""
        return self.function is not None and any(s is stmt for s in self.function.node.body)

    def _contract(self, before: State, after: State, everywhere: bool = False) -> State:
        """What a precondition leaves: the nullness it establishes, none of the checks (it guards nothing).
        ``everywhere``: it holds on every path on (an `assert` in the function's own body)."""
        if after.bottom:
            return after
        out = after.copy()
        for key, f in after.groups.items():
            old = self.facts(before, key)
            out.groups[key] = Facts(f.null, old.nonnull, old.size, old.pred)
            if everywhere and f.null == Null.NONE:  # `assert g is None, "only the default group"`: the world
                out.world = out.world | {key}
        out.separate = before.separate
        return out

    def loop(self, stmt: ast.While | ast.For | ast.AsyncFor, s: State, test: ast.expr | None) -> State:
        entry = s
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            entry = s.copy()
            self.kill_target(entry, stmt.target)
            if isinstance(stmt.target, ast.Name) and isinstance(stmt.iter, (ast.Tuple, ast.List)) and stmt.iter.elts:
                # `for g in (tp_group, sp_group):` holds each in turn: None where any of them may be
                nulls = [self.value_null(e, s)[0] for e in stmt.iter.elts]
                if Null.MAYBE in nulls or Null.NONE in nulls:
                    entry.groups[stmt.target.id] = Facts(Null.MAYBE)
            for name, source in _zipped(stmt):
                if _SIZE_LIKE.search(source.rpartition(".")[2]):
                    # `for g, n in zip(groups, sizes)`: n is a count supplied beside the group, not its size
                    entry.sizes[name] = Separate("supplied", source)
            if isinstance(stmt.target, ast.Name) and type(stmt.iter) is ast.Call:
                # `for grp in _groups():` over what a helper collects from parallel-state getters
                self.mpu_held[stmt.target.id] = self._collects_mpu(stmt.iter)
        end = entry
        breaks: list[State] = []
        rebound = _rebound(stmt) if isinstance(stmt, ast.While) else set()
        for _ in range(2):  # the second pass sees what one iteration changes (a group reassigned in the body)
            self.loops.append(([], []))
            head = entry
            if test is not None:
                self.expr(test, head, stmt)
                head = _sentinel(self.assume(head, test, True, test, False), test, rebound)
            end = self.block(stmt.body, head)
            breaks, continues = self.loops.pop()
            for c in continues:
                end = join(end, c, self)
            joined = join(entry, end, self)
            if joined.same_as(entry):
                break  # one iteration changes nothing: a second pass would record the same sites again
            entry = joined
        out = entry if test is None else self.assume(entry, test, False, test, True)
        out = self.block(stmt.orelse, out)
        for b in breaks:
            out = join(out, b, self)
        return out

    # ================================================================ assignments

    def _builds_with_group(self, stmt: ast.If, s: State) -> None:
        """`if n > 1:` (a None-safe size of g) whose body builds an object handed g (`Embed(..., tp_group, ...)`,
        a class named as classes are): the test decides whether the layer is built to communicate, as a flag set
        from it does (a FlagSite)."""
        compare = size_compare(stmt.test)
        if compare is None or not compare.positive:
            return
        term = _none_safe(self.term(compare.term, s))
        if term is None:
            return
        same = self.equal(s, term.group)
        for node in (n for b in stmt.body for n in ast.walk(b)):
            if not isinstance(node, ast.Call) or not _constructor(node.func):
                continue
            passed = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(a, (ast.Name, ast.Attribute)) and self.canon(a, s) in same for a in passed):
                self.sites.flags[id(stmt.test)] = FlagSite(Check(stmt.test, stmt.test, False, "size", compare, term),
                                                           self.function)
                return

    def _safe_flag(self, value: ast.expr, s: State) -> None:
        """Record a flag's value when it is one test of a None-safe size (`bool(n > 1)`, `not n == 1`, or an
        operand of an `and` chain: `n > 1 and not fused`), read in the state before the flag is set (a FlagSite)."""
        while is_bool_call(value):
            value = value.args[0]
        operands = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else [value]
        for operand in operands:
            while is_bool_call(operand):
                operand = operand.args[0]
            inner = without_not(operand)
            compare = size_compare(inner)
            if compare is None:
                continue
            term = _none_safe(self.term(compare.term, s))
            if term is not None:
                self.sites.flags[id(inner)] = FlagSite(Check(inner, value, False, "size", compare, term), self.function)

    def assign(self, s: State, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            if values is None and type(value) is ast.Call:
                values = self._unpacked_return(value, len(target.elts))
            packed = self._packed_on_ctx(value) if values is None else None
            for i, t in enumerate(target.elts):
                if values is not None:
                    self.assign(s, t, values[i])
                else:
                    self.kill_target(s, t)
                    if packed is not None and isinstance(t, ast.Name):
                        s.aliases[t.id] = f"{packed}[{i}]"  # `n, grp = ctx.saved`: grp is forward's second
            return
        text = dotted(target)
        if text is None:
            if isinstance(target, ast.Starred):
                self.kill_target(s, target.value)
            return
        value = _collapsed(value)
        if text in self.partials and not (isinstance(value, ast.Call) and self.ctx.partial_collective(value)):
            del self.partials[text]  # rebound to something else
        if isinstance(target, ast.Name) and self.ctx.asks_ranks:
            ranked = self._ranks_of(value, s)
            if ranked is not None:
                self.rank_of[text] = ranked
            else:
                self.rank_of.pop(text, None)
        if isinstance(target, ast.Name):
            options = self._collectives_named(value)
            if options:
                self.chosen[text] = options
            else:
                self.chosen.pop(text, None)
            method = _size_method(value)
            if method is not None and (held := self.canon(method, s)) is not None and self.is_group(held):
                self.size_methods[text] = method
            else:
                self.size_methods.pop(text, None)
            helper = self._helper_named(value)
            if helper is not None:
                self.helper_aliases[text] = helper
            else:
                self.helper_aliases.pop(text, None)
            self.mpu_held[text] = self._mpu_value(value)
            if type(value) is ast.Call and self.ctx.parallel_state(value.func):
                self.state_objects.add(text)  # `ps = ParallelState()`: `ps.get_group("cp")` is a getter of it
            else:
                self.state_objects.discard(text)
            getter = self.env.callee(value, self.function) if type(value) is ast.Call and self.is_group(text) else None
            if getter is not None and self.env.parallel_getter(getter):
                self.parallel_only.add(text)
            else:
                self.parallel_only.discard(text)
        # Read the value in the state before the target is killed: `g = g or WORLD` reads the old g.
        null, copied, world = self.value_null(value, s)
        term = self.term(value, s)
        members = self._members(value, s) if type(value) in (ast.IfExp, ast.Call) else None
        if not isinstance(members, SizeOf):
            members = None
        flag = value if self.guard_like(value) else None
        if flag is not None and (isinstance(target, ast.Name) or (text.startswith("self.") and text.count(".") == 1)):
            self._safe_flag(value, s)
        alias = self.canon(value, s) if isinstance(value, (ast.Name, ast.Attribute)) else None
        self.kill(s, text)
        if isinstance(term, SizeOf):
            if term.when_none is None and self.facts(s, term.group).null == Null.NOT_NONE:
                term = term._replace(when_none=UNREACHABLE)  # only ever computed for a present group
            s.sizes[text] = term._replace(via=text)
        elif term is not None:
            s.sizes[text] = term
        if members is not None:  # `members = get_process_group_ranks(g) if g else [0]`: its len is g's size
            s.sizes[f"{text}.__len__"] = members._replace(via=f"len({text})")
        if self.attribute_sizes is not None and text.startswith("self."):
            self.attribute_sizes.append((text, across_methods(term, s) if isinstance(term, SizeOf) else term))
        if flag is not None:
            s.flags[text] = flag
        if copied is not None:
            s.groups[text] = copied
        elif null != Null.UNKNOWN or self.env.origin(text, self.function) != Null.UNKNOWN:
            s.groups[text] = Facts(null)  # the origin no longer applies
        # else: what `facts` answers for an absent key; most locals never hold a group, and every state copy
        # and join pays for each key kept
        if world:
            s.world = s.world | {text}
        if alias is not None and alias != text:
            if "." not in text:
                s.aliases[text] = alias
            else:
                s.same[text] = alias

    def _binds(self, name: str) -> bool:
        """Does the walked function (or one around it) bind ``name`` itself (a parameter, an assignment)?"""
        scope = self.function
        while scope is not None:
            if name in scope.params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                                           for n in ast.walk(scope.node)):
                return True
            scope = scope.parent
        return False

    def _unpacked_return(self, call: ast.Call, size: int) -> list[ast.expr] | None:
        """`g, n = self._group_and_size()`: what an in-file helper of no arguments (a method of self's, or a
        module function) returns in each place of its tuple, on every path (`if self.g is None: return None, 1`
        then `return self.g, ws(self.g)`: `None if self.g is None else self.g`, `1 if ... else ws(self.g)`)."""
        if call.args or call.keywords:
            return None
        helper = self.env.callee(call, self.function)
        if helper is None or helper.params[1 if helper.is_method else 0:]:
            return None
        if helper.is_method and not (isinstance(call.func, ast.Attribute) and dotted(call.func.value) == "self"):
            return None  # (its self is another object)
        returned = self.env.returned(helper)
        return _placed(returned, size) if returned is not None else None

    def _packed_on_ctx(self, value: ast.expr) -> str | None:
        """`ctx.saved` in an autograd backward, where forward packed several values (`ctx.saved = n, grp`)."""
        text = dotted(value)
        if text is None or self.function is None or not self.function.params:
            return None
        head, dot, _ = text.partition(".")
        if not dot or head != self.function.params[0] or self.env.autograd_forward(self.function) is None:
            return None
        return text

    def value_null(self, value: ast.expr, s: State) -> tuple[Null, Facts | None, bool]:
        """(None-ness of an assigned value, the facts it carries when it is a group key, whether it falls back
        to the world group)."""
        if isinstance(value, ast.Constant):
            return (Null.NONE if value.value is None else Null.NOT_NONE), None, False
        if self.ctx.is_world(value):  # (asked once: the branches below never ask it of the same node again)
            return Null.NOT_NONE, None, True
        if isinstance(value, (ast.Name, ast.Attribute)):
            key = self.canon(value, s)
            if key is not None:
                return self.facts(s, key).null, self.facts(s, key), key in s.world
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            last = value.values[-1]
            null, _, _ = self.value_null(last, s)
            world = self.ctx.is_world(last) or any(self.ctx.is_world(v) for v in value.values[1:])
            return (Null.NOT_NONE if world or null == Null.NOT_NONE else Null.UNKNOWN), None, world
        if isinstance(value, ast.IfExp):
            a, _, wa = self.value_null(value.body, self.assume(s, value.test, True, value.test, False))
            b, _, wb = self.value_null(value.orelse, self.assume(s, value.test, False, value.test, True))
            world = (wa or wb) or self.ctx.is_world(value.body) or self.ctx.is_world(value.orelse)
            return join_null(a, b), None, world
        if isinstance(value, ast.Call) and dotted(value.func) == "getattr" and len(value.args) == 3 \
                and _const_none(value.args[2]):
            return Null.MAYBE, None, False
        if isinstance(value, ast.NamedExpr):
            return self.value_null(value.value, s)
        if mapping_get(value):
            return Null.MAYBE, None, False  # `ep = groups.get("ep")`: None when the key is missing
        if type(value) is ast.Call and (getter := self.env.callee(value, self.function)) is not None:
            if self.env.optional_getter(getter):
                return Null.MAYBE, None, False  # `g = get_ring_group()`, a getter of a global None until set
            if self.env.world_fallback_getter(getter):
                return Null.NOT_NONE, None, True  # `g = _resolve_group(g)`: `return g if g is not None else WORLD`
        return Null.UNKNOWN, None, False

    def kill(self, s: State, text: str) -> None:
        prefix = text + "."
        for table in (s.groups, s.sizes, s.flags):
            if table:
                for key in [k for k in table if k == text or k.startswith(prefix)]:
                    del table[key]
        if s.aliases:
            for name in [n for n, target in s.aliases.items() if n == text or target == text or target.startswith(prefix)]:
                del s.aliases[name]
        if s.same:
            for name in [n for n, target in s.same.items() if n == text or n.startswith(prefix) or target == text]:
                del s.same[name]
        if text in s.world:
            s.world = s.world - {text}

    def kill_target(self, s: State, target: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.kill_target(s, t)
            return
        if isinstance(target, ast.Starred):
            self.kill_target(s, target.value)
            return
        text = dotted(target)
        if text is not None:
            self.kill(s, text)

    # ================================================================ keys and facts

    def canon(self, node: ast.expr, s: State) -> str | None:
        if type(node) is ast.Name:  # (the common case: a local, or an alias of a group)
            return s.aliases.get(node.id, node.id)
        if isinstance(node, ast.Call) and dotted(node.func) == "getattr" and len(node.args) in (2, 3) \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            base = self.canon(node.args[0], s)  # `getattr(self, "pg", None)` is `self.pg`
            return f"{base}.{node.args[1].value}" if base is not None else None
        held = dict_entry(node)
        if held is not None:  # `d["tp_group"]` and `d.get("tp_group")` are one key, spelled as the None-safe get
            table = indexed(held[0])  # `tracker[name]["avg_group"]`: the entry `name` of a table of dicts
            base = self.canon(held[0] if table is None else table[0], s)
            if base is not None and table is not None:
                base = f"{base}[{table[1]}]"
            return f"{base}.get({held[1]!r})" if base is not None else None
        text = dotted(node)
        if text is None:
            return None
        head, dot, rest = text.partition(".")
        target = s.aliases.get(head)
        return f"{target}{dot}{rest}" if target is not None else text

    def facts(self, s: State, key: str) -> Facts:
        found = s.groups.get(key)
        if found is not None:
            return found
        origin = self._origins.get(key)
        if origin is None:  # fixed for the walk: where the key comes from, before anything narrows it
            origin = self._origins[key] = Facts(self.env.origin(key, self.function))
        return origin

    def _truthy_group(self, node: ast.expr, key: str, s: State) -> bool:
        """Is a truthiness test of ``node`` a None test: a group by name, or a local that may hold None (`sp =
        getattr(self, "sp_group", None)`, then `if sp:`)?"""
        return self.is_group(key) or (type(node) is ast.Name and self.facts(s, key).null == Null.MAYBE)

    def is_group(self, key: str) -> bool:
        return names_a_group(key, self.group_keys) and not self.mpu(key)

    def _mpu_value(self, value: ast.expr) -> bool:
        """Is ``value`` a group of an mpu / parallel-state getter: a call of one, of a parallel-state object's
        (`ps.get_group("cp")`, ps a local holding one), or a fallback to one (`ps.get_group("cp") if g is None
        else g`, `g or mpu.get_x_group()`)?"""
        if isinstance(value, ast.IfExp):
            return self._mpu_value(value.body) or self._mpu_value(value.orelse)
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            return any(self._mpu_value(v) for v in value.values)
        if self.ctx.mpu_group(value):
            return True
        func = value.func if type(value) is ast.Call else None
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
            func.value.id in self.state_objects and _GROUP_GETTER.match(func.attr) is not None

    def _collects_mpu(self, call: ast.Call) -> bool:
        """Does the in-file helper ``call`` runs hand back only groups of mpu / parallel-state getters, appended
        to a list (`out.append(ps.get_tensor_model_parallel_group())`) or returned in one?"""
        helper = self.env.callee(call, self.function)
        if helper is None:
            return False
        held: list[ast.expr] = []
        for stmt in own_statements(helper.node.body):
            value = stmt.value if isinstance(stmt, (ast.Expr, ast.Return)) else None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "append" \
                    and len(value.args) == 1:
                held.append(value.args[0])
            elif isinstance(stmt, ast.Return) and isinstance(value, (ast.List, ast.Tuple)):
                held.extend(value.elts)
        return bool(held) and all(self._mpu_value(v) for v in held)

    def mpu(self, key: str) -> bool:
        """Does ``key`` hold the group of an mpu / parallel-state getter (a local, or an attribute the class only
        ever sets to one)?"""
        found = self.mpu_held.get(key)
        if found is None:
            found = self.mpu_held[key] = self.klass is not None and key.startswith("self.") and key.count(".") == 1 \
                and self.env.mpu_attribute(self.klass, key)
        return found

    # ================================================================ size terms

    def term(self, node: ast.expr, s: State) -> SizeTerm | None:
        """What a size-valued expression measures (None when it is not size-like at all)."""
        if isinstance(node, ast.NamedExpr):
            return self.term(node.value, s)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return Const(node.value)
        group = self.ctx.world_size_group(node)
        if group is not None:
            key = self.canon(group, s)
            if key is None or self.mpu(key):
                return Separate("mpu-size", dotted(group) or "a call")  # `get_world_size(group=mpu.get_x())`
            return SizeOf(key, None)
        elsewhere = self.ctx.elsewhere_size(node)
        if elsewhere is not None:
            key = self.canon(elsewhere[0], s)
            if key is not None:
                return SizeOf(key, elsewhere[1])
        if type(node) is ast.Call and node.args and not isinstance(node.args[0], ast.Starred):
            helper = self.env.callee(node, self.function)
            measured = self.env.measured(helper) if helper is not None else None
            if measured is not None:  # an in-file size helper, read as a project's are (before its name's guess)
                key = self.canon(node.args[0], s)
                if key is not None:
                    # One that answers 1 for None is a None-safe size, as `ws(g) if g is not None else 1` written out
                    # is: tested alone it is a full guard spelled by hand (a library's `get_pg_size`, imported, is
                    # left to the library: bot.analyze.elsewhere.measures)
                    return SizeOf(key, measured.when_none)
        helped = self.ctx.size_helper_group(node)
        if helped is not None:
            key = self.canon(helped, s)
            if key is not None and self.is_group(key):
                return SizeOf(key, UNREACHABLE)  # what it answers for None is unknown: never a finding alone
        if self.size_methods and type(node) is ast.Call and type(node.func) is ast.Name and not node.args \
                and node.func.id in self.size_methods:
            key = self.canon(self.size_methods[node.func.id], s)  # `size_fn()`: the group's own `.size()`
            return SizeOf(key, UNREACHABLE) if key is not None else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
                and not node.args and not node.keywords:
            key = self.canon(node.func.value, s)
            # (a group by its key's name, or by the local's that aliases it: `cp_group = self.pgc.cp`)
            if key is not None and (self.is_group(key) or (type(node.func.value) is ast.Name
                                                           and self.is_group(node.func.value.id))):
                return SizeOf(key, UNREACHABLE)  # `None.size()` raises: it is only ever a present group's size
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name == "len":
                inner = node.args[0] if len(node.args) == 1 else None
                counted = self._members(inner, s) if inner is not None else None
                if counted is not None:
                    return counted
                # `len(partition_sizes)`, `len(ranks)`: a count of ranks supplied beside the group; `len(tensors)`
                # counts something else, and tests nothing of any group
                return Separate("len", "len(...)") if _counts_ranks(inner) else None
            if self.ctx.comm_function(node) == "get_world_size":  # (its group, if any, was asked above)
                return Separate("world", "get_world_size()")  # no group: the world size, not a group's
            if isinstance(node.func, ast.Attribute) and node.func.attr == "size" and (node.args or node.keywords):
                return None  # `x.size(0)`: a tensor's dimension, which counts no ranks
            return Separate("getter", name) if _SIZE_LIKE.search(name.rpartition(".")[2]) else None
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = dotted(node)
            key = self.canon(node, s) or text
            if key is not None and key in s.sizes:
                return s.sizes[key]
            if text is not None and text in s.sizes:
                return s.sizes[text]
            if key is not None and key.startswith("self.") and self.summary is not None and key in self.summary.sizes:
                return self.summary.sizes[key]
            held = self._held_size(key) if key is not None and "." in key else None
            if held is not None:
                return held
            if key is not None and self.env.singletons and "." in key:
                held = self._singleton_size(key)
                if held is not None:
                    return held
            if key is not None and self.summary is not None and self.summary.ctx_sizes:
                carried = self._from_forward(key)
                if carried is not None:
                    return carried
            prop = self.env.property_of(node, self.function)
            if prop is not None:
                body = self.env.returned(prop)
                if body is not None and self.depth < _MAX_DEPTH:
                    self.depth += 1
                    try:
                        held = self.term(body, State())
                    finally:
                        self.depth -= 1
                    if isinstance(held, SizeOf):
                        # held where the property reads a cached size (`return self._ws`) or is a cached_property;
                        # asked afresh at each read where it computes one (`return ws(self.g)`): a size test, not
                        # a cache
                        return held._replace(via=text) if held.via is not None or prop.caches else held
            leaf = (text or "").rpartition(".")[2]
            if isinstance(node, ast.Name) and self.function is not None and node.id in self.function.params:
                return Separate("argument", node.id)  # a count the caller supplies (`tp_n > 1`, `shards == 1`)
            return Separate("supplied", text or "") if _SIZE_LIKE.search(leaf) else None
        if isinstance(node, ast.BinOp):
            parts = [self.term(node.left, s), self.term(node.right, s)]
            if any(p is not None and not isinstance(p, Const) for p in parts):
                return Separate("arithmetic", "arithmetic")
            return None
        if isinstance(node, ast.IfExp):
            if type(node.test) is ast.Call and self.ctx.is_predicate(node.test):
                # `ws(g) if pg_utils.is_parallel(g) else 1`: the predicate has decided already; a test of this
                # size repeats it, and is nothing to migrate
                return Separate("predicate", self.ctx.source.segment(node.test))
            a_state = self.assume(s, node.test, True, node.test, False)
            b_state = self.assume(s, node.test, False, node.test, True)
            return join_term(self.term(node.body, a_state), a_state, self.term(node.orelse, b_state), b_state, self)
        return None

    def _held_size(self, key: str) -> SizeTerm | None:
        """`self.cfg.cp_size`, `cfg.dp_size`: a size the class of the holder (typed where it is bound, as for its
        optional fields) caches on its instances, of the holder's own group (`SizeOf("self.cp_group")` there is
        `self.cfg.cp_group` here)."""
        holder, _, leaf = key.rpartition(".")
        klass = self.env.held_class(holder, self.function)
        summary = self.summaries.get(id(klass.node)) if klass is not None else None
        term = summary.sizes.get(f"self.{leaf}") if summary is not None else None
        if not isinstance(term, SizeOf) or not term.group.startswith("self."):
            return None
        return term._replace(group=f"{holder}.{term.group[5:]}", via=key if term.via is not None else None)

    def _supplied_attribute(self, key: str) -> Separate | None:
        """`self.tp_n`, set in the class only to constants and to separately supplied sizes (`mpu.get_x_size()`,
        a parameter of the method that sets it), also in methods that are not walked (a constructor touching no
        collective): a separately supplied size. Each value is read in the method that assigns it."""
        klass = self.env.class_of(self.function) if self.function is not None else None
        if klass is None:
            return None
        memo = self.env.supplied_sizes.setdefault(id(klass.node), {})
        if key not in memo:
            memo[key] = None  # (while its values are read: `self.a = self.b`, `self.b = self.a` ends here)
            terms = [self._term_in(method, value)
                     for c in self.env.mro(klass) for method, value in self.env.assigned_values(c).get(key, [])]
            separate = [t for t in terms if isinstance(t, Separate)]
            memo[key] = separate[0] if separate and all(isinstance(t, (Separate, Const)) for t in terms) else None
        return memo[key]

    def _term_in(self, method: FunctionInfo, value: ast.expr) -> SizeTerm | None:
        """What ``value`` measures where ``method`` computes it, from no facts (one level deeper)."""
        if self.depth + 1 >= _MAX_DEPTH:
            return None
        walker = self
        if method is not self.function:
            walker = Walker(self.env, method, self.sites, self.summaries, self.group_keys)
            walker.depth = self.depth
        walker.depth += 1
        try:
            return walker.term(value, State())
        finally:
            walker.depth -= 1

    def _singleton_size(self, key: str) -> SizeTerm | None:
        """`LAYOUT.n`, where the module-level LAYOUT holds the one instance of a class here: what that class's
        summary knows of `self.n`, its group named through LAYOUT too."""
        head, _, rest = key.partition(".")
        klass = self.env.singleton(head, self.function)
        summary = self.summaries.get(id(klass.node)) if klass is not None else None
        held = summary.sizes.get(f"self.{rest}") if summary is not None else None
        if isinstance(held, SizeOf):
            group = f"{head}.{held.group[5:]}" if held.group.startswith("self.") else held.group
            return held._replace(group=group, via=key)
        return held

    def _from_forward(self, key: str) -> SizeOf | None:
        """In an autograd backward, `ctx.n` as forward left it (its group as backward names it: `ctx.g`)."""
        assert self.summary is not None
        if self.function is None or not self.function.params or self.env.autograd_forward(self.function) is None:
            return None
        ctx, _, attr = key.partition(".")
        held = self.summary.ctx_sizes.get(attr) if ctx == self.function.params[0] else None
        return held._replace(group=f"{ctx}.{held.group}", via=key) if held is not None else None

    # ================================================================ narrowing

    def assume(self, s: State, test: ast.expr, value: bool, whole: ast.expr, negated: bool) -> State:
        """The state in which ``test`` evaluated to ``value``. ``whole``/``negated`` describe the condition the
        facts come from (for reporting)."""
        if s.bottom:
            return s
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.assume(s, test.operand, not value, whole, negated)
        if isinstance(test, ast.BoolOp):
            conj = isinstance(test.op, ast.And)
            if conj == value:  # every operand has the value
                for v in test.values:
                    s = self.assume(s, v, value, whole, negated)
                return s
            out = BOTTOM  # some operand has the other value, all before it had this one
            cur = s
            for v in test.values:
                out = join(out, self.assume(cur, v, not conj, whole, negated), self)
                cur = self.assume(cur, v, conj, whole, negated)
            return out
        if is_bool_call(test):
            return self.assume(s, test.args[0], value, whole, negated)
        if (truth := against_bool(test)) is not None:  # `flag == True`, `flag is False`: the flag itself
            return self.assume(s, truth[0], value == truth[1], whole, negated)
        if isinstance(test, ast.IfExp) and (form := self._bool_form(test)) is not None:
            return self.assume(s, form, value, whole, negated)
        if isinstance(test, ast.NamedExpr):
            bound = s.copy()
            self.assign(bound, test.target, test.value)
            key = self.canon(test.target, bound)
            if key is not None and self.is_group(key) and not isinstance(test.value, (ast.Compare, ast.BoolOp)):
                # `if (g := groups.get("replica")):` tests the group it binds; the check is the whole walrus, which
                # no rewrite replaces. A group read by its name (`(g := self.dim.group)`) is the one bound: its own
                # test would be a second check of one group
                if not isinstance(test.value, (ast.Name, ast.Attribute)):
                    bound = self.assume(s, test.value, value, whole, negated).copy()
                    self.assign(bound, test.target, test.value)
                return self._none(bound, test.target, value, Check(test, whole, negated, "none"),
                                  NoneTest(test.target, is_none=False))
            s = self.assume(s, test.value, value, whole, negated).copy()
            self.assign(s, test.target, test.value)
            return s
        if type(test) is ast.Compare and type(test.left) is ast.NamedExpr:
            s = s.copy()  # `(pg := groups.get(k)) is not None`: bound first, then tested by its name
            self.assign(s, test.left.target, test.left.value)
        return self.atom(s, test, value, whole, negated)

    def atom(self, s: State, node: ast.expr, value: bool, whole: ast.expr, negated: bool) -> State:
        if isinstance(node, ast.Call) and is_group_type_test(node):
            # `isinstance(pg, ProcessGroup)`: pg is there, but this dispatches on a type (a group or a stateless
            # stand-in), it does not skip an absent dimension: no guard, as after `assert pg is not None`
            return self._none(s, node.args[0], True, None, None) if value else s
        nt = none_test(node)
        if nt is not None:
            if type(nt.target) is ast.NamedExpr:
                nt = nt._replace(target=nt.target.target)
            return self._none(s, nt.target, nt.is_none != value, Check(node, whole, negated, "none"), nt)
        compare = size_compare(node)
        if compare is not None:
            term = self.term(compare.term, s)
            multi = compare.positive == value  # this branch is the multi-rank (or non-member) side
            if term is None and multi and isinstance(compare.term, ast.Attribute):
                key = self.canon(compare.term, s)  # (only here: a size test is where a supplied size matters)
                if key is not None and key.startswith("self.") and key.count(".") == 1:
                    term = self._supplied_attribute(key)
            if isinstance(term, SizeOf):
                if not multi:
                    return s
                s = s.copy()
                check = Check(node, whole, negated, "size", compare, term)
                for same in self.equal(s, term.group):  # `self.g = g`: a size of g is the size of self.g
                    f = self.facts(s, same)
                    nonnull, null = f.nonnull, f.null
                    if term.none_safe:
                        nonnull, null = nonnull | {check}, Null.NOT_NONE
                    s.groups[same] = Facts(null, nonnull, f.size | {check}, f.pred)
                return s
            if isinstance(term, Separate) and multi:
                s = s.copy()
                s.separate = s.separate | {Check(node, whole, negated, "separate", compare, term)}
                return s
            return s
        floor = size_floor(node)
        match = size_match(node) if value else None
        if (floor is not None and floor[1] == value and isinstance(self.term(floor[0], s), SizeOf)) or \
                (match is not None and any(isinstance(self.term(side, s), SizeOf) for side in match)):
            # `ws(g) > 2`, `ws(g) >= min_ranks`: the size is tested, with a bound of the code's own choosing that
            # also rules out one rank; `ws(g) == cp_size`, held to a count the code supplies: either way not the
            # predicate's test, and no None-only guard either
            s = s.copy()
            s.separate = s.separate | {Check(node, whole, negated, "separate")}
            return s
        if isinstance(node, ast.Call):
            if self.size_methods and dotted(node.func) == "callable" and len(node.args) == 1 \
                    and isinstance(node.args[0], ast.Name) and node.args[0].id in self.size_methods:
                group = self.size_methods[node.args[0].id]  # `callable(size_fn)`: the group is there
                return self._none(s, group, value, Check(node, whole, negated, "none"), NoneTest(group, is_none=False))
            if node.args and (self.ctx.is_predicate(node) or self.ctx.predicate_named(node)):
                key = self.canon(node.args[0], s)
                if key is not None and value:
                    s = s.copy()
                    f = self.facts(s, key)
                    s.groups[key] = Facts(Null.NOT_NONE, f.nonnull, f.size, f.pred | {Check(node, whole, negated, "pred")})
                return s
            return self._expand_call(s, node, value, whole, negated)
        if isinstance(node, (ast.Name, ast.Attribute)):
            key = self.canon(node, s)
            if key is None:
                return s
            flag = s.flags.get(key)
            if flag is None and type(node) is ast.Name and key in self.env.module_flags and not self._binds(key):
                flag = self.env.module_flags[key]  # a module-level flag, set at import (`if TP_ON:`)
            if flag is not None and self.depth < _MAX_DEPTH:
                return self._expanded(s, flag, value, whole, negated, {})
            if key.startswith("self.") and self.summary is not None and key in self.summary.flags \
                    and self.depth < _MAX_DEPTH:
                held = self.summary.flags[key]
                return self._expanded(s, held.test, value, whole, negated, held.binding, held.sizes)
            prop = self.env.property_of(node, self.function)
            # (a property that hands back a group or None is tested as that group, not expanded as a predicate)
            if prop is not None and not self.env.optional_getter(prop):
                body = self.env.returned(prop)
                if body is not None and self.depth < _MAX_DEPTH:
                    return self._expanded(s, body, value, whole, negated, {})
            if self._truthy_group(node, key, s):
                return self._none(s, node, value, Check(node, whole, negated, "none"), NoneTest(node, is_none=False))
        return s

    def _none(self, s: State, target: ast.expr, present: bool, check: Check | None, test: NoneTest | None) -> State:
        """``check`` None: ``target`` is known present with no test to report (`isinstance(pg, ProcessGroup)`)."""
        key = self.canon(target, s)
        if key is None:
            return s
        s = s.copy()
        for k in self.equal(s, key):
            f = self.facts(s, k)
            # the group of a parallel-state getter is present past its test, but the test is out of scope by design
            mine = None if check is not None and self.mpu(k) else check
            if present and mine is not None and (k in self.parallel_only or self._parallel_attribute(k)):
                # present means several ranks: the predicate's answer
                s.groups[k] = Facts(Null.NOT_NONE, f.nonnull | {mine}, f.size, f.pred | {mine._replace(kind="pred")})
            elif present:
                s.groups[k] = Facts(Null.NOT_NONE, f.nonnull | {mine} if mine is not None else f.nonnull,
                                    f.size | f.present, f.pred)
            else:
                s.groups[k] = Facts(Null.MAYBE if check is not None and _truthiness(check) else Null.NONE)
        return s

    def _bool_form(self, node: ast.IfExp) -> ast.BoolOp | None:
        """The `and`/`or` a conditional expression with a constant boolean branch is, the same node every walk."""
        memo = self.env.bool_forms
        if id(node) not in memo:
            form = bool_form(node)
            if form is None:
                return None
            memo[id(node)] = form
        return memo[id(node)]

    def _parallel_attribute(self, key: str) -> bool:
        """`self.x` that the class sets to a group only for several ranks (ModuleEnv.parallel_only_attribute)."""
        return self.klass is not None and key.startswith("self.") and key.count(".") == 1 \
            and self.env.parallel_only_attribute(self.klass, key)

    def equal(self, s: State, key: str) -> set[str]:
        """The key and the keys known to hold the same object (`self.g = g`)."""
        out = {key}
        if key in s.same:
            out.add(s.same[key])
        out.update(a for a, b in s.same.items() if b == key)
        return out

    def _expand_call(self, s: State, call: ast.Call, value: bool, whole: ast.expr, negated: bool) -> State:
        """A local predicate as a test: `_tp_active(g)`, `self._is_parallel()`, a lambda: narrow by its body with
        parameters bound to the arguments."""
        if self.depth >= _MAX_DEPTH:
            return s
        run = self.env.lambda_of(call, self.function)
        if run is not None:
            return self._expanded(s, run[0].body, value, whole, negated, _bind(run[1], call, s, self))
        callee = self.env.callee(call, self.function)
        if callee is None:
            return s
        body = self.env.returned(callee)
        if body is None:
            return s
        params = self.env.call_params(callee, call)
        binding = _bind(params, call, s, self)
        if callee.params[:1] == ["cls"] and isinstance(call.func, ast.Attribute) and dotted(call.func.value) == "self":
            binding["cls"] = "self"  # a classmethod asked through the instance reads the class-level names it sees
        return self._expanded(s, body, value, whole, negated, binding)

    def _expanded(self, s: State, body: ast.expr, value: bool, whole: ast.expr, negated: bool,
                  binding: dict[str, str], sizes: dict[str, SizeTerm] | None = None) -> State:
        saved = {name: s.aliases.get(name) for name in binding}
        saved_sizes = {name: s.sizes.get(name) for name in sizes or ()}
        s = s.copy()
        s.aliases.update(binding)
        if sizes:
            s.sizes.update(sizes)
        self.depth += 1
        try:
            out = self.assume(s, body, value, whole, negated)
        finally:
            self.depth -= 1
        if out.bottom:
            return out
        out = out.copy()
        for name, old in saved.items():
            if old is None:
                out.aliases.pop(name, None)
            else:
                out.aliases[name] = old
        for name, held in saved_sizes.items():
            if held is None:
                out.sizes.pop(name, None)
            else:
                out.sizes[name] = held
        return out

    def guard_like(self, value: ast.expr, depth: int = 0) -> bool:
        """A boolean built from None tests, size comparisons, the predicate or a local predicate: worth keeping
        as a flag. Any other call (`g = get_group()`) is a value, so a later `if g:` is a None test of g."""
        for node in _walk_bool(value):
            if none_test(node) is not None or size_compare(node) is not None:
                return True
            if isinstance(node, ast.Call) and (self.ctx.is_predicate(node) or self._local_predicate(node, depth)):
                return True
        # `bool(g)` of a group (or of what may be None): its truthiness, kept as a None test (`g` alone would be
        # an alias of the group)
        inner = value.args[0] if is_bool_call(value) else None
        return isinstance(inner, (ast.Name, ast.Attribute)) and (text := dotted(inner)) is not None \
            and (self.is_group(text) or self.env.origin(text, self.function) != Null.UNKNOWN)

    def _local_predicate(self, call: ast.Call, depth: int) -> bool:
        if depth >= 3:
            return False
        run = self.env.lambda_of(call, self.function)
        if run is not None:
            return self.guard_like(run[0].body, depth + 1)
        callee = self.env.callee(call, self.function)
        if callee is None:
            return False
        memo = (id(callee.node), depth, id(self.function.node) if self.function is not None else 0)
        known = self.env.guard_bodies.get(memo)
        if known is None:
            body = self.env.returned(callee)
            known = self.env.guard_bodies[memo] = body is not None and self.guard_like(body, depth + 1)
        return known

    # ================================================================ expressions

    def expr(self, node: ast.expr, s: State, stmt: ast.stmt) -> None:
        """Record the sites in an expression; `and`/`or` and conditional expressions narrow what they contain."""
        if s.bottom:
            return
        if node is _top(stmt) and not self.wanted(node):
            return
        self._expr(node, s, stmt)

    def wanted(self, node: ast.expr) -> bool:
        """Tests and boolean values are always visited (a chain may hold a guard on a cached size); other
        expressions only when they span an interesting line."""
        if self.lines is None or isinstance(node, (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.IfExp)):
            return True
        if isinstance(node, ast.Call) and self._partial_run(node) is not None:
            return True
        start, end = node.lineno, node.end_lineno or node.lineno
        i = bisect.bisect_left(self.lines, start)
        return i < len(self.lines) and self.lines[i] <= end

    def _expr(self, node: ast.expr, s: State, stmt: ast.stmt) -> None:
        if s.bottom:
            return
        if isinstance(node, ast.BoolOp):
            self.chain(node, s)
            conj = isinstance(node.op, ast.And)
            cur = s
            for v in node.values:
                self._expr(v, cur, stmt)
                cur = self.assume(cur, v, conj, v, not conj)
                if cur.bottom:
                    break
            return
        if isinstance(node, ast.IfExp):
            form = self._bool_form(node)
            if form is not None:  # `ws(g) > 1 if g is not None else False` is `g is not None and ws(g) > 1`
                self._expr(form, s, stmt)
                return
            self._expr(node.test, s, stmt)
            self._expr(node.body, self.assume(s, node.test, True, node.test, False), stmt)
            self._expr(node.orelse, self.assume(s, node.test, False, node.test, True), stmt)
            return
        if isinstance(node, ast.Lambda):
            # It runs later, but with what its definition closes over: a hook or reducer built under a test runs
            # under it (`if g is not None: p.register_hook(lambda x: all_reduce(x, group=g))`). Its parameters
            # shadow the enclosing names.
            closed = _shadowed(s, _parameters(node.args))
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            bound = [*zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True),
                     *((p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)]
            for param, default in bound:  # `lambda p, g=group: ...` binds g to the group where it is made
                key = self.canon(default, s) if isinstance(default, (ast.Name, ast.Attribute)) else None
                if key is not None:
                    closed.aliases[param.arg] = key
            self.lambdas += 1
            try:
                self._expr(node.body, closed, stmt)
            finally:
                self.lambdas -= 1
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            # Its filters narrow what it builds (`[all_reduce(t, group=g) for g in gs if g is not None]`) and are
            # tests like any other (`[g for g in gs if g is not None and ws(g) > 1]`); its targets are bound anew.
            cur = s
            for generator in node.generators:
                self._expr(generator.iter, cur, stmt)
                cur = cur.copy()
                self.kill_target(cur, generator.target)
                for test in generator.ifs:
                    self._expr(test, cur, stmt)
                    cur = self.assume(cur, test, True, test, False)
                    if cur.bottom:
                        return
            for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
                self._expr(part, cur, stmt)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner, nots = node.operand, 1
            while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
                inner, nots = inner.operand, nots + 1
            if isinstance(inner, ast.BoolOp):
                self._expr(inner, s, stmt)
                site = self.sites.chains.get(id(inner))
                # `not (g is not None and ws(g) > 1)` is the negated guard; in a longer chain the `not` is the
                # chain's (`not (n > 1 and g is not None and same)`), and the guard keeps its own reading
                if site is not None and nots % 2 and len(inner.values) == 2:
                    self.sites.chains[id(inner)] = site._replace(inverted=node)
                return
        if isinstance(node, ast.Call):
            self.call(node, s, stmt)
        for field_name in _child_fields(type(node)):  # ast.iter_child_nodes, less the fields that hold no node
            value = getattr(node, field_name, None)
            for child in value if isinstance(value, list) else (value,):
                if child is None or isinstance(child, (ast.Name, ast.Constant)):
                    continue  # leaves hold no site
                if isinstance(child, ast.expr):
                    self._expr(child, s, stmt)
                elif isinstance(child, ast.keyword):
                    self._expr(child.value, s, stmt)
                elif isinstance(child, ast.comprehension):
                    self._expr(child.iter, s, stmt)

    def _members(self, node: ast.expr, s: State) -> SizeTerm | None:
        """What `len(node)` measures when node lists a group's members: `get_process_group_ranks(g)` is g's size;
        `ranks(g) if g else [0]` (held in a local too: `members = ...`, then `len(members)`) is a size that is 1
        when g is None."""
        if isinstance(node, ast.Call) and node.args and self.ctx.comm_function(node) == "get_process_group_ranks":
            key = self.canon(node.args[0], s)
            return SizeOf(key, None) if key is not None else None
        if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return Const(len(node.elts))
        if isinstance(node, ast.IfExp):
            a, b = self.assume(s, node.test, True, node.test, False), self.assume(s, node.test, False, node.test, True)
            body, orelse = self._members(node.body, a), self._members(node.orelse, b)
            if body is None or orelse is None:
                return None
            return join_term(body, a, orelse, b, self)
        if isinstance(node, (ast.Name, ast.Attribute)):
            key = self.canon(node, s) or dotted(node)
            return s.sizes.get(f"{key}.__len__") if key is not None else None
        return None

    def _collectives_named(self, value: ast.expr) -> tuple[ast.expr, ...]:
        """The collectives a value names, uncalled: `dist.all_reduce`, `a if sp else b` (those of its branches that
        are). (In-file helpers named so are not followed: the text index does not find the calls of such a local.)"""
        branches = (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,)
        return tuple(b for b in branches if isinstance(b, (ast.Name, ast.Attribute))
                     and self.ctx.collective(ast.Call(func=b, args=[], keywords=[])) is not None)

    def _helper_named(self, value: ast.expr) -> ast.expr | None:
        """The in-file function a value names, uncalled: `_reduce`, `_Sum.apply`, `_scatter if sp else _reduce` (its
        first branch that is one)."""
        branches = (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,)
        for b in branches:
            if isinstance(b, (ast.Name, ast.Attribute)) and \
                    self.env.callee(ast.Call(func=b, args=[], keywords=[]), self.function) is not None:
                return b
        return None

    def _chosen_run(self, call: ast.Call) -> Collective | None:
        """The collective a call of such a local runs, with this call's arguments."""
        options = self.chosen.get(call.func.id) if isinstance(call.func, ast.Name) else None
        for option in options or ():
            coll = self.ctx.collective(ast.Call(func=option, args=call.args, keywords=call.keywords))
            if coll is not None:
                return coll
        return None

    def _partial_run(self, call: ast.Call) -> Collective | None:
        """The collective a named `functools.partial` runs at this call: `red(t)` after
        `red = partial(dist.all_reduce, group=g)`, or `communicate(grads, red)`, handed to a helper that runs it."""
        if not self.partials:
            return None
        for n in (call.func, *call.args, *(k.value for k in call.keywords)):
            if isinstance(n, ast.Name) and n.id in self.partials:
                return self.partials[n.id]
        return None

    def call(self, call: ast.Call, s: State, stmt: ast.stmt) -> None:
        ctx = self.ctx
        if ctx.is_predicate(call):
            self.sites.predicate_calls.add(id(call))
            return
        coll = self._partial_run(call)
        partial = coll is not None
        if coll is None:
            coll = ctx.collective(call) or self._chosen_run(call)
        if coll is None:
            coll = ctx.partial_collective(call)
            partial = coll is not None
            if partial and isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                assert coll is not None
                self.partials[stmt.targets[0].id] = coll  # decided where it is called, with the facts there
                return
        if coll is not None:
            # (`group=g if g is not None else None` is g)
            key = self.canon(_collapsed(coll.group), s) if coll.group is not None else None
            peers = self._peer_group(call, coll) if coll.group is None and self.rank_of else None
            used = not (isinstance(stmt, ast.Expr) and stmt.value is call)
            world_call = peers is None and (coll.group is None or _const_none(coll.group) or ctx.is_world(coll.group))
            key = key if peers is None else peers
            none_keys = frozenset(k for k, f in s.groups.items() if f.null == Null.NONE) if world_call else frozenset()
            tested = tuple((k, f) for k, f in s.groups.items() if f.size and f.nonnull) if world_call else ()
            self.sites.collectives[id(call)] = CollectiveSite(
                call, coll, key, self.facts(s, key) if key is not None else None, s.separate,
                key is not None and key in s.world, stmt, used, self.function, partial, none_keys, s.path, tested,
                self.lambdas > 0)
            return
        group = ctx.world_size_group(call)
        if group is not None:
            key = self.canon(group, s)
            if key is not None:
                self.sites.sizes[id(call)] = SizeQuery(call, key, self.facts(s, key), self.function)
            return
        callee = self.env.callee(call, self.function)
        named = call
        if callee is None and isinstance(call.func, ast.Name) and call.func.id in self.helper_aliases:
            named = ast.Call(func=self.helper_aliases[call.func.id], args=call.args, keywords=call.keywords)
            callee = self.env.callee(named, self.function)
        later = ctx.later_call(call) if callee is None else None
        if later is not None:  # `partial(_sync_grad, group=g)`, handed to a hook: the helper runs later, on g
            named, callee = later, self.env.callee(later, self.function)
        if callee is not None:
            params = self.env.call_params(callee, named)
            arguments: dict[str, str | None] = {}
            for i, arg in enumerate(named.args):
                if i < len(params) and not isinstance(arg, ast.Starred):
                    arguments[params[i]] = self.canon(arg, s)
            for kw in named.keywords:
                if kw.arg is not None:
                    arguments[kw.arg] = self.canon(kw.value, s)
            keys = {k for k in arguments.values() if k is not None} | {k for k in s.groups}
            if callee.parent is not None and callee.parent is self.function:
                keys |= set(self.function.params)  # a closure reads its function's parameters as they are here
            self.sites.calls[id(call)] = CallSite(
                call, callee, self.function, {k: self.facts(s, k) for k in keys}, s.separate, arguments, s.path,
                stmt, not (isinstance(stmt, ast.Expr) and stmt.value is call), self.lambdas > 0 or later is not None)

    def _ranks_of(self, value: ast.expr, s: State) -> str | None:
        """The one group whose global ranks ``value`` is made of: `get_process_group_ranks(group=g)`,
        `get_global_rank(g, r)`, or a local that holds them (`ranks[(r + 1) % n]`)."""
        if not self.rank_of:  # nothing held yet: the value must ask for ranks itself, in its own text
            text = "\n".join(self.ctx.source.lines[value.lineno - 1 : value.end_lineno])
            if "get_process_group_ranks" not in text and "get_global_rank" not in text:
                return None
        found: set[str] = set()
        for node in ast.walk(value):
            if isinstance(node, ast.Call) and self.ctx.comm_function(node) in _RANK_LISTS:
                group = group_argument(node)
                key = self.canon(group, s) if group is not None else None
                if key is None:
                    return None
                found.add(key)
            elif isinstance(node, ast.Name) and node.id in self.rank_of:
                found.add(self.rank_of[node.id])
        return found.pop() if len(found) == 1 else None

    def _peer_group(self, call: ast.Call, coll: Collective) -> str | None:
        """A point-to-point call with no group whose peer is a global rank of a group (`isend(t, dst=peer)`,
        `peer = get_process_group_ranks(g)[i]`): it communicates with g's members."""
        if coll.name not in _P2P:
            return None
        peer = next((k.value for k in call.keywords if k.arg in ("dst", "src", "peer")),
                    call.args[1] if len(call.args) > 1 else None)
        return self.rank_of.get(peer.id) if isinstance(peer, ast.Name) else None

    def chain(self, node: ast.BoolOp, s: State) -> None:
        atoms: list[Atom] = []
        conj = isinstance(node.op, ast.And)
        cur = s
        for i, v in enumerate(node.values):
            atom = self.classify(i, v, cur)
            if atom is not None:
                atoms.append(atom)
            cur = self.assume(cur, v, conj, v, not conj)
            if cur.bottom:
                cur = s
        if atoms:
            self.sites.chains[id(node)] = ChainSite(node, tuple(atoms), self.function)

    def classify(self, index: int, node: ast.expr, s: State) -> Atom | None:
        nt = none_test(node)
        if nt is None and type(node) is ast.UnaryOp and type(node.op) is ast.Not and \
                (flipped := none_test(node.operand)) is not None:
            nt = flipped._replace(is_none=not flipped.is_none)  # `not g is None` is `g is not None`
        if nt is not None:
            key = self.canon(nt.target, s)
            return Atom(index, node, key, "none", is_none=nt.is_none) if key is not None else None
        compare = size_compare(node)
        if compare is not None:
            term = self.term(compare.term, s)
            if isinstance(term, SizeOf):
                return Atom(index, node, term.group, "size", compare=compare, term=term)
            return None
        inner = without_not(node)
        negated = inner is not node
        if is_bool_call(inner) and isinstance(inner.args[0], (ast.Name, ast.Attribute)):
            inner = inner.args[0]  # `bool(g)` is g's truthiness
        if isinstance(inner, (ast.Name, ast.Attribute)):
            key = self.canon(inner, s)
            if key is not None and self._truthy_group(inner, key, s):
                return Atom(index, node, key, "none", is_none=negated)
        if self.size_methods and isinstance(inner, ast.Call) and dotted(inner.func) == "callable" \
                and len(inner.args) == 1 and isinstance(inner.args[0], ast.Name) and inner.args[0].id in self.size_methods:
            key = self.canon(self.size_methods[inner.args[0].id], s)  # `not callable(size_fn)`: the group is None
            return Atom(index, node, key, "none", is_none=inner is not node) if key is not None else None
        return None


def left_on_ctx(end: State, ctx: str) -> dict[str, SizeOf]:
    """The sizes forward leaves on its ctx whose group it leaves there too (`ctx.n = ws(g) if g else 1` and
    `ctx.g = g`), by attribute name, for backward (bot.analyze.flow.Summary.ctx_sizes)."""
    out: dict[str, SizeOf] = {}
    prefix = f"{ctx}."
    for key, term in end.sizes.items():
        if not key.startswith(prefix) or not isinstance(term, SizeOf):
            continue
        holder = term.group if term.group.startswith(prefix) else next(
            (a for a, b in end.same.items() if b == term.group and a.startswith(prefix)), None)
        if holder is not None:
            out[key[len(prefix):]] = term._replace(group=holder[len(prefix):])
    return out


def across_methods(term: SizeOf, s: State) -> SizeOf | None:
    """A size as another method of the class reads it: its group named by an attribute (`self.g = g` then
    `self.ws = ws(g)`: only `self.g` means anything elsewhere; `self.cfg = cfg` then `ws(cfg.ep_group)`: the
    group is `self.cfg.ep_group`); None when no attribute holds that group."""
    if term.group.startswith("self."):
        return term
    head, dot, rest = term.group.partition(".")
    for held in (term.group, head if dot else None):
        owner = next((a for a, b in s.same.items() if b == held and a.startswith("self.")), None)
        if owner is not None:
            return term._replace(group=owner if held == term.group else f"{owner}.{rest}")
    return None


# ==================================================================== joins


def join(a: State, b: State, w: Walker) -> State:
    if a.bottom:
        return b
    if b.bottom:
        return a
    if a is b:
        return a
    out = State()
    for key in a.groups.keys() | b.groups.keys():
        fa, fb = w.facts(a, key), w.facts(b, key)
        if fa is fb or fa == fb:
            out.groups[key] = fa
            continue
        out.groups[key] = Facts(
            join_null(fa.null, fb.null),
            fa.nonnull | fb.nonnull if fa.nonnull and fb.nonnull else frozenset(),
            fa.size | fb.size if fa.size and fb.size else frozenset(),
            fa.pred | fb.pred if fa.pred and fb.pred else frozenset(),
            _present(fa, fb),
        )
    out.separate = a.separate | b.separate if a.separate and b.separate else frozenset()
    out.aliases = {k: v for k, v in a.aliases.items() if b.aliases.get(k) == v}
    out.same = {k: v for k, v in a.same.items() if b.same.get(k) == v}
    # A local that aliases a key on one path only (`cp_group = pgc.cp`, else `cp_group = None`) is its own key after
    # the join: a size of the aliased key is that local's size there
    local_a = {v: k for k, v in a.aliases.items() if k not in out.aliases}
    local_b = {v: k for k, v in b.aliases.items() if k not in out.aliases}
    for key in a.sizes.keys() | b.sizes.keys():
        term = join_term(_as_local(a.sizes.get(key), local_a), a, _as_local(b.sizes.get(key), local_b), b, w)
        if term is not None:
            out.sizes[key] = term
    out.flags = {k: v for k, v in a.flags.items() if b.flags.get(k) is v}
    out.world = a.world | b.world
    out.path = a.path & b.path
    return out


def names_a_group(key: str, group_keys: frozenset[str]) -> bool:
    """A key the file passes as a group somewhere, or named as one."""
    return key in group_keys or bool(GROUP_NAME.search(leaf_name(key)))


def _present(fa: Facts, fb: Facts) -> frozenset[Check]:
    """The size tests that hold where the group is present after a join: a path that left it None holds them all
    (a None test after the join rules it out), the others their own."""
    held = [f.size | f.present for f in (fa, fb) if f.null != Null.NONE]
    if len(held) == 1:
        return held[0]
    return held[0] | held[1] if held and all(held) else frozenset()


def _as_local(term: SizeTerm | None, local: dict[str, str]) -> SizeTerm | None:
    if local and isinstance(term, SizeOf) and term.group in local:
        return term._replace(group=local[term.group])
    return term


def join_term(ta: SizeTerm | None, a: State, tb: SizeTerm | None, b: State, w: Walker) -> SizeTerm | None:
    """Merge what a size holds on two paths: `ws(g)` where g is present with `1` where it is absent is the
    None-safe size of g (`ws(g) if g is not None else 1`)."""
    if ta == tb:
        return ta
    if ta is None or tb is None:
        return None
    for x, xs, y, ys in ((ta, a, tb, b), (tb, b, ta, a)):
        if isinstance(x, SizeOf) and isinstance(y, Const):
            null_x, null_y = w.facts(xs, x.group).null, w.facts(ys, x.group).null
            if null_x == Null.NOT_NONE and null_y != Null.NOT_NONE:
                # the size's path needs the group; a None group (falsy too: `if g` / `else 1`) takes the other
                return SizeOf(x.group, y.value, x.via)
            if null_y == Null.NONE:
                return SizeOf(x.group, y.value if x.when_none in (None, UNREACHABLE) else None, x.via)
            if null_x == null_y and x.when_none in (None, UNREACHABLE) and y.value <= 1:
                # `ws(g) if dist.is_initialized() else 1`: the other path does not depend on g, so a None g still
                # gets the world's size on this one; where g is known present on both (`try: n = ws(g)` /
                # `except RuntimeError: n = 1` after a None exit), a None g reaches neither
                return SizeOf(x.group, x.when_none, x.via)
        if isinstance(x, SizeOf) and isinstance(y, SizeOf) and x.group == y.group:
            return SizeOf(x.group, x.when_none if y.when_none == UNREACHABLE else y.when_none, x.via or y.via)
    if isinstance(ta, Separate) or isinstance(tb, Separate):
        return ta if isinstance(ta, Separate) else tb
    return None


# ==================================================================== helpers


def _sentinel(s: State, test: ast.expr, rebound: set[str]) -> State:
    """A loop's state after its `while` test: a None test there of a name the loop binds again (in the test,
    `while (g := next_group()) is not None:`, or in its body), which no size test of it joins, ends the loop on a
    sentinel. What it establishes holds in the body, but it decides how long to iterate, not whether to communicate:
    no guard (a rewrite would end the loop at the first single-rank group). A size test there is one (`while ws(g) >
    1 and queue:`), and so is a None test of a group the loop never rebinds."""
    if s.bottom or not rebound:
        return s
    out = s
    for key, f in s.groups.items():
        if key not in rebound or any(c.test is test for c in f.size):
            continue
        kept = frozenset(c for c in f.nonnull if c.test is not test)
        if kept != f.nonnull:
            out = out.copy() if out is s else out
            out.groups[key] = f._replace(nonnull=kept)
    return out


_CONSTRUCTORS = frozenset({"__init__", "__post_init__"})


def _class_defaults(klass: ast.ClassDef) -> list[tuple[str, int]]:
    """Integer constants a class gives its attributes at class level that an instance starts with."""
    dataclass = any(dotted(d.func if isinstance(d, ast.Call) else d) in ("dataclass", "dataclasses.dataclass")
                    for d in klass.decorator_list)
    out = []
    for item in klass.body:
        if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
            name, value = item.targets[0].id, item.value
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
            name, value = item.target.id, item.value
        else:
            continue
        if isinstance(value, ast.Call) and dotted(value.func) in ("field", "dataclasses.field"):
            given = {k.arg: k.value for k in value.keywords}
            init = given.get("init")
            if "default" not in given or not (isinstance(init, ast.Constant) and init.value is False):
                continue  # (a field the constructor sets from its argument)
            value = given["default"]
        elif dataclass and isinstance(item, ast.AnnAssign):
            continue  # a dataclass field with a default: the constructor's argument
        if isinstance(value, ast.Constant) and type(value.value) is int:
            out.append((name, value.value))
    return out


def _collapsed(value: ast.expr) -> ast.expr:
    """`None if g is None else g` (or `g if g is not None else None`) is g."""
    if not isinstance(value, ast.IfExp):
        return value
    test = none_test(value.test)
    if test is None or (held := dotted(test.target)) is None:
        return value
    when_none, other = (value.body, value.orelse) if test.is_none else (value.orelse, value.body)
    return other if _const_none(when_none) and dotted(other) == held else value


def _placed(value: ast.expr, size: int) -> list[ast.expr] | None:
    """Each place of a tuple-valued expression: a tuple's elements, a conditional expression's places each a
    conditional expression over the same test (new nodes where the conditional is)."""
    if isinstance(value, ast.Tuple):
        return list(value.elts) if len(value.elts) == size and not any(isinstance(e, ast.Starred) for e in value.elts) \
            else None
    if isinstance(value, ast.IfExp):
        body, orelse = _placed(value.body, size), _placed(value.orelse, size)
        if body is None or orelse is None:
            return None
        return [ast.copy_location(ast.IfExp(value.test, b, o), value) for b, o in zip(body, orelse, strict=True)]
    return None


def _zipped(stmt: ast.For | ast.AsyncFor) -> list[tuple[str, str]]:
    """The names a `for a, b in zip(xs, ys)` binds, each with the text of the sequence it walks."""
    target, it = stmt.target, stmt.iter
    if not (isinstance(target, ast.Tuple) and isinstance(it, ast.Call) and dotted(it.func) == "zip"
            and len(it.args) == len(target.elts)):
        return []
    return [(t.id, text) for t, a in zip(target.elts, it.args, strict=True)
            if isinstance(t, ast.Name) and (text := dotted(a)) is not None]


def _rebound(stmt: ast.While) -> set[str]:
    """Names a `while` loop binds on every pass: walrus targets in its test, plain and attribute targets in its body."""
    out = {n.target.id for n in ast.walk(stmt.test) if isinstance(n, ast.NamedExpr)}
    for node in (n for b in stmt.body for n in ast.walk(b)):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)) else []
        out.update(text for t in targets if (text := dotted(t)) is not None)
    return out


def _case_test(subject: ast.expr, pattern: ast.pattern, lines: list[str]) -> ast.expr | None:
    """`case None:` as the test it makes, `subject is None`, and `case 1:` as `subject == 1` (a size that
    matches one rank), placed from `case` to the pattern's end: findings quote and point at `case None`."""
    if isinstance(pattern, ast.MatchSingleton) and pattern.value is None:
        test = ast.copy_location(ast.Compare(subject, [ast.Is()], [ast.copy_location(ast.Constant(None), pattern)]),
                                 pattern)
    elif isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant) \
            and type(pattern.value.value) is int:
        test = ast.copy_location(ast.Compare(subject, [ast.Eq()], [pattern.value]), pattern)
    else:
        return None
    line = lines[pattern.lineno - 1].encode("utf-8") if pattern.lineno <= len(lines) else b""
    keyword = line.rfind(b"case", 0, pattern.col_offset)  # (ast columns are UTF-8 byte offsets)
    if keyword >= 0 and not line[keyword + 4 : pattern.col_offset].strip(b" \t("):
        test.col_offset = keyword
    return test


def _irrefutable(pattern: ast.pattern) -> bool:
    """`case _:`, `case x:` (or an `|` holding one): matches anything."""
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None
    return isinstance(pattern, ast.MatchOr) and any(_irrefutable(p) for p in pattern.patterns)


def _took(s: State, test: ast.expr, outcome: bool) -> State:
    if s.bottom:
        return s
    s = s.copy()
    s.path = s.path | {(id(test), outcome)}
    return s


def _top(stmt: ast.stmt) -> ast.expr | None:
    """The statement's own expression (what `expr` is first called with for it)."""
    if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)):
        return stmt.value
    return None


def _bind(params: list[str], call: ast.Call, s: State, w: Walker) -> dict[str, str]:
    binding: dict[str, str] = {}
    for i, arg in enumerate(call.args):
        if i < len(params):
            key = w.canon(arg, s)
            if key is not None:
                binding[params[i]] = key
    for kw in call.keywords:
        if kw.arg in params:
            key = w.canon(kw.value, s)
            if key is not None:
                binding[kw.arg] = key
    return binding


_GROUP_GETTER = re.compile(f"{GROUP_GETTER}$")


def _parameters(args: ast.arguments) -> set[str]:
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(x.arg for x in (args.vararg, args.kwarg) if x is not None)
    return names


def _shadowed(outer: State, mine: set[str]) -> State:
    """``outer`` less what names in ``mine`` (a closure's own parameters) shadow."""
    def shadowed(key: str) -> bool:
        return key.partition(".")[0] in mine

    s = outer.copy()
    if not mine:
        return s
    s.groups = {k: v for k, v in s.groups.items() if not shadowed(k)}
    s.sizes = {k: v for k, v in s.sizes.items() if not shadowed(k)}
    s.flags = {k: v for k, v in s.flags.items() if not shadowed(k)}
    s.aliases = {k: v for k, v in s.aliases.items() if k not in mine and not shadowed(v)}
    s.same = {k: v for k, v in s.same.items() if not shadowed(k) and not shadowed(v)}
    s.world = frozenset(k for k in s.world if not shadowed(k))
    return s


def _walk_bool(node: ast.expr) -> Iterator[ast.expr]:
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            yield from _walk_bool(v)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _walk_bool(node.operand)
    elif is_bool_call(node):
        yield from _walk_bool(node.args[0])
    elif isinstance(node, ast.IfExp) and (form := bool_form(node)) is not None:
        yield from _walk_bool(form)
    elif isinstance(node, (ast.Compare, ast.Call)):
        yield node


def _none_safe(term: SizeTerm | None) -> SizeOf | None:
    """The term when it is a size written as 1 for a None group (`ws(g) if g is not None else 1`): its test alone
    is the predicate."""
    return term if isinstance(term, SizeOf) and term.none_safe and term.fallback is not None else None


def _constructor(func: ast.expr) -> bool:
    """`Name(...)` or `mod.Name(...)` with a capitalised last name: a class being built."""
    leaf = (func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "").lstrip("_")
    return leaf[:1].isupper() and not leaf.isupper()


def _truthiness(check: Check) -> bool:  # `if g:` rather than `g is None`
    return none_test(check.node) is None


_NO_CHILD = frozenset({"ctx", "op", "ops", "type_comment", "conversion", "kind", "is_async"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of an expression type that can hold nodes with sites (not `ctx`, operators, flags)."""
    found = _CHILD_FIELDS.get(kind)
    if found is None:
        found = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _NO_CHILD)  # type: ignore[attr-defined]
    return found


def _fails(stmt: ast.stmt, test: ast.expr) -> bool:
    """A raise, or after a None test a return whose value carries a message (a sentence or an f-string): an
    error, not a skip. (After a size test such a return is a skip that says so: `return "single rank"`.)"""
    if isinstance(stmt, ast.Raise):
        return True
    absent = none_test(test) is not None or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
                                             and isinstance(test.operand, (ast.Name, ast.Attribute)))
    if not isinstance(stmt, ast.Return) or stmt.value is None or not absent:
        return False
    return any(isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, str)
                                                  and " " in n.value.strip())
               for n in ast.walk(stmt.value))


def _constant_flags(stmt: ast.If) -> list[tuple[str, bool]]:
    """Names (or `self.x`) the branches set to opposite booleans (`if t: use = True else: use = False`), with
    whether True is set when the test holds."""
    def constants(block: list[ast.stmt]) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for node in block:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, bool):
                text = dotted(node.targets[0])
                if text is not None and (isinstance(node.targets[0], ast.Name) or
                                         (text.startswith("self.") and text.count(".") == 1)):
                    out[text] = node.value.value
        return out

    then, other = constants(stmt.body), constants(stmt.orelse)
    return [(text, value) for text, value in then.items() if other.get(text) is (not value)]


def _ends_in_failure(stmt: ast.If) -> bool:
    """Does the chain's last `else` fail (bot.analyze.flow._fails): `if a: ... elif b: ... else: raise`?"""
    node = stmt
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
    return bool(node.orelse) and _fails(node.orelse[-1], node.test)


def _size_method(value: ast.expr) -> ast.expr | None:
    """The group of `getattr(g, "size", None)`: its size method, or None when g is None."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" \
            and len(value.args) == 3 and not value.keywords and isinstance(value.args[1], ast.Constant) \
            and value.args[1].value == "size" and _const_none(value.args[2]) \
            and isinstance(value.args[0], (ast.Name, ast.Attribute)):
        return value.args[0]
    return None


def _const_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _counts_ranks(inner: ast.expr | None) -> bool:
    """Can ``len(inner)`` be a count of ranks? Unless its name says it counts something else."""
    named = inner.func if isinstance(inner, ast.Call) else inner
    text = dotted(named) if named is not None else None
    return text is None or _RANK_COUNT.search(text) is not None
