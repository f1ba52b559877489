"""From recorded sites to decisions: what guards each collective (full, split, None-only, size-only, cached,
nothing, or a separately supplied size), which chains hold a full guard, which functions are predicate copies,
and what None means for an unguarded group. Rules read these; they never look at the code again."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from bot.analyze.env import (
    FunctionInfo,
    none_defaults,
    optional_params,
    own_statements,
    param_defaults,
    says_world,
    sole_binding,
)
from bot.analyze.flow import (
    Atom,
    CallSite,
    ChainSite,
    Check,
    CollectiveSite,
    Facts,
    Sites,
    State,
    Walker,
    names_a_group,
)
from bot.analyze.module import ModuleFacts
from bot.analyze.names import dotted, leaf_name
from bot.analyze.scan import POINT_TO_POINT, PROCESS_GROUP_NAME
from bot.analyze.slicing import HELPER_LEVELS
from bot.analyze.source import statements
from bot.analyze.terms import (
    Null,
    SizeOf,
    is_bool_call,
    is_none,
    none_test,
    presence,
    size_compare,
    without_not,
)
from bot.model import Confidence


class Pair(NamedTuple):
    """A full guard inside one boolean chain: a None test and a size test of one group."""

    chain: ChainSite
    none: Atom
    size: Atom
    negated: bool  # an `or` chain: `g is None or size(g) == 1`

    @property
    def exits(self) -> bool:
        """The test as written is the negated guard (PG102): an `or` chain, or an `and` chain of the two tests
        under `not` (`if not (g is not None and ws(g) > 1): return`); `not (g is None or ws(g) == 1)` is the guard
        (PG101)."""
        return self.negated != (self.chain.inverted is not None)


class Split(NamedTuple):
    """A full guard spread over several tests (nested ifs, consecutive early exits, a flag), or one test of a
    None-safe size (``none is size``: the None test is in the size's definition)."""

    none: Check
    size: Check
    key: str  # the group, as the function holding the tests names it
    function: FunctionInfo | None
    protects: str | None  # the collective (or helper) it guards; None for a flag set from it (FlagSite)

    @property
    def negated(self) -> bool:
        """Reported as an early exit (PG102) only when both tests are exits (`if g is None: return` then
        `if ws(g) == 1: return`); tests that read both ways (`if g is None: return` then `if ws(g) > 1:`, or
        `if ... and g is not None:` then `if n == 1: continue` inside) are a guard (PG101)."""
        return self.none.negated and self.size.negated


class Copy(NamedTuple):
    """A function, method, property or assigned lambda whose whole body is a full guard on ``key``."""

    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    pair: Pair
    key: str
    function: FunctionInfo | None  # None for a lambda

    @property
    def method(self) -> bool:
        return self.function is not None and self.function.is_method

    @property
    def property(self) -> bool:
        return self.function is not None and self.function.is_property


class NoneOnly(NamedTuple):
    """A None test (``check``) is the only guard on the way to ``site``'s collective, on ``key`` as the function
    holding the check names it; ``call`` is the helper call in between when the collective is in a helper."""

    site: CollectiveSite
    check: Check
    key: str
    function: FunctionInfo | None
    call: CallSite | None = None
    sized_below: bool = False  # the helper tests the size itself on the way (`if pg.size() == 1: return`)


class Unguarded(NamedTuple):
    site: CollectiveSite
    confidence: Confidence
    evidence: tuple[str, ...]
    at_call: CallSite | None = None  # reported where an optional group is passed to a helper
    passed: str | None = None  # the caller's group key at that call


@dataclass
class Verdicts:
    module: ModuleFacts
    pairs: list[Pair] = field(default_factory=list)
    splits: list[Split] = field(default_factory=list)
    none_only: list[NoneOnly] = field(default_factory=list)
    size_only: list[tuple[CollectiveSite, Check]] = field(default_factory=list)
    cached: list[tuple[CollectiveSite, Check]] = field(default_factory=list)
    unguarded: list[Unguarded] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)
    # last names the file treats as the world when None (a world fallback, a world collective in the None branch)
    # and never tests for absence before communicating: a size-only test of one elsewhere means the world's size
    world_names: frozenset[str] = frozenset()
    # the file documents None as the world group (a docstring) and never tests a group for absence before
    # communicating: a size-only test here means get_world_size(None), the world's size
    world_file: frozenset[str] = frozenset()  # groups the file's docs say are the world when None (`*`: all)
    # a comment block at the module level states None is the world: so for every group the file does not test for
    # absence before communicating (`absent_names`, their last names)
    world_stated: bool = False
    absent_names: frozenset[str] = frozenset()

    @cached_property
    def sides(self) -> dict[int, dict[bool, set[tuple[str, str | None]]]]:
        """Per branch test, the communication on each outcome: (collective or communicating helper, group key)."""
        return _sides(self.module)

    @cached_property
    def both_ways(self) -> set[int]:
        """Tests after which the same group communicates whichever way they go (`if not overlap or ws(g) == 1:
        all_to_all(x, g) else: chunked all_to_all(x, g)`): a size there picks how to communicate, not whether."""
        return {test for test, seen in self.sides.items() if len(seen) == 2
                and {k for _, k in seen[True] if k is not None} & {k for _, k in seen[False] if k is not None}}

    @cached_property
    def callers(self) -> dict[int, list[CallSite]]:
        """In-file calls of each function (by id of its node)."""
        return _callers(self.module)

    @cached_property
    def dispatch(self) -> set[int]:
        """Branch tests with different communication on each side (`if has_two_levels(cg): hierarchical() else:
        flat()`): such a None test chooses how to communicate, it does not decide whether to. Communication that
        one side shares with the other (a barrier on another group before an early return, and after the
        collective on the other path) is common work, not a choice."""
        sides = _sides(self.module, later_tested=True)
        return {test for test, seen in sides.items()
                if len(seen) == 2 and not (seen[True] <= seen[False] or seen[False] <= seen[True])}

    @cached_property
    def copy_spans(self) -> list[tuple[int, int]]:
        return [(c.node.lineno, c.node.end_lineno or c.node.lineno) for c in self.copies]

    def in_copy(self, node: ast.AST) -> bool:
        line = node.lineno  # type: ignore[attr-defined]
        return any(a <= line <= b for a, b in self.copy_spans)


def decide(module: ModuleFacts) -> Verdicts:
    v = Verdicts(module)
    # (a test whose `if` only raises, `if g is not None and g.size() != 1: raise ValueError(...)`, guards nothing)
    pairs = [pair for chain in module.sites.chains.values() for pair in chain_pairs(chain) if not _only_raises(module, pair)]
    # A full test of a device mesh (not a process group) is a guard where its function communicates after it:
    # meshes also lay out local work (splitting a tensor by rank); a process group exists only to communicate.
    if any(_tests_mesh(p) for p in pairs):
        reaching = _communicating_closure(module)
        pairs = [p for p in pairs if not _tests_mesh(p) or _communicates_after(module, p, reaching)]
    if not module.sites.collectives:  # a file that never communicates
        pairs = [p for p in pairs if _tests_mesh(p) or not _lays_out_local_work(module, p)]  # (meshes: above)
    v.pairs = pairs
    lambdas = list(_lambda_copies(module))
    v.pairs += [c.pair for c in lambdas]  # their guard is the copy's (PG107), not a PG101 of its own
    copies = list(_copies(module, v.pairs))
    known = {id(p) for p in v.pairs}
    v.pairs += [c.pair for c in copies if id(c.pair) not in known]  # a folded body's chain (bot.analyze.returns)
    v.copies = [*copies, *lambdas]
    paired = {(id(n), id(p.size.node)) for p in v.pairs for n in _and_inner(p.none.node)}
    world = _world_fallbacks(module)
    absent = _absent_evidence(module, world)
    v.world_names = frozenset(n for n in (leaf_name(o.partition(":")[2]) for o in world) if n not in absent)
    v.world_file = frozenset() if absent else module.env.documents_world()
    v.world_stated = module.env.states_world()
    v.absent_names = frozenset(absent)
    callers = v.callers
    dispatch = v.dispatch
    settled: set[int] = set()  # optional groups decided at their collective: reported, or None is the world there
    world_at: set[int] = set()  # ... of those, where None is the world
    for site in module.sites.collectives.values():
        if site.key is None or site.facts is None:
            continue
        f = site.facts
        if _sized(v, site, f, paired, world):
            continue
        if f.nonnull:
            # (a helper of another file that tests the size on the way, `sp_gather(x, mesh)` exiting on one rank,
            # holds the other half: the two tests are one guard split across files, and the helper's own test is
            # where the predicate goes; readers of real code want nothing at the None test)
            if not site.separate and _owner(module, site.key, site.function) not in world \
                    and not _world_sized_when_none(module, site.key, site.function) \
                    and not _is_world_key(module, site.key) \
                    and not (site.collective.family == "wrapper" and module.ctx.sizes_elsewhere(site.call)):
                v.none_only.extend(NoneOnly(site, c, site.key, site.function)
                                   for c in sorted(f.nonnull, key=_pos) if id(c.test) not in dispatch)
            continue
        # Words can make a parameter or an attribute optional; a local bound here (`group = mesh.get_group(0)`)
        # holds what the flow says, and a comment naming it talks about something else of that name.
        # (a required parameter of a helper the file calls: its callers decide, and an unguarded one is reported)
        documented = _documented_optional(module, site, f) and not _decided_by_callers(site, callers)
        if site.separate or (f.null != Null.MAYBE and not documented) or site.collective.family == "wrapper":
            continue  # (a wrapper's body is elsewhere: what it does with None is unknown)
        # (a buffer sized by the group's size counts on None being the world, unless the docs say it is absent)
        if site.world_fallback or _owner(module, site.key, site.function) in world or \
                _none_is_world(module, site.key, site.function) or \
                (_sized_as_world(module, site) and not module.env.absent_documented(site.key, site.function)):
            settled.add(id(site))
            world_at.add(id(site))
            continue
        if _guarded_by_callers(module, site, callers) or _flag_follows(module, site):
            continue
        evidence = _evidence(module, site.key, site.function, absent, Use.at(site))
        if evidence is None:
            continue
        settled.add(id(site))
        v.unguarded.append(Unguarded(site, evidence[0], evidence[1]))
    reaches = _reaches(module, callers)  # helpers that run a collective on what their callers pass
    v.none_only.extend(n for n in _none_only_callers(module, reaches, callers, world) if id(n.check.test) not in dispatch)
    for site in _calls_as_sites(module, reaches, callers):  # their None-only guards: `_none_only_callers`
        assert site.facts is not None
        _sized(v, site, site.facts, paired, world)
    v.unguarded.extend(_through_callers(module, reaches, callers, absent, world, settled, world_at))
    _sized_through_callers(v, reaches, callers, world)
    _exits_before_other_communication(v, paired)
    _safe_flags(v, world)
    v.none_only = _about_a_dimension(module, v.none_only)
    return v


def _about_a_dimension(module: ModuleFacts, none_only: list[NoneOnly]) -> list[NoneOnly]:
    """The None-only tests that ask whether a dimension is there: not those whose every collective is a warm-up
    (running it on a one-rank group is harmless, and a warm-up loop means to reach every group there is), nor a
    test of a tensor's mesh (it asks whether the tensor is a DTensor)."""
    useful = {id(n.check.test) for n in none_only if not _warm_up(module, n.site)}
    return [n for n in none_only if id(n.check.test) in useful and not _tests_tensor_mesh(n)]


def _tests_tensor_mesh(n: NoneOnly) -> bool:
    """`mesh = getattr(x, "device_mesh", None)`, then `if mesh is None:`: the test asks whether x is a DTensor
    (on a one-rank mesh it still is one, and code after the test counts on that), not whether a dimension is
    there."""
    target, _ = presence(n.check.node)
    if isinstance(target, ast.Name) and n.function is not None:
        value = sole_binding(n.function.node, target.id)
        return value is not None and _mesh_of_tensor(value)
    return _mesh_of_tensor(target)


def _mesh_of_tensor(node: ast.expr) -> bool:
    """`x.device_mesh` or `getattr(x, "device_mesh", None)`, x not the object itself (a module's own mesh)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
        owner, attr = node.args[0], node.args[1].value
    elif isinstance(node, ast.Attribute):
        owner, attr = node.value, node.attr
    else:
        return False
    return attr == "device_mesh" and not (isinstance(owner, ast.Name) and owner.id in ("self", "cls"))


# torch's factories of a fresh tensor (`torch.zeros(1, device=dev)`), and what else makes a contiguous one
_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "tensor", "rand", "randn"})
_CONTIGUOUS = _FACTORIES | {"arange", "randint", "cat", "concat", "concatenate", "stack"}


def _warm_up(module: ModuleFacts, site: CollectiveSite) -> bool:
    """The collective's result is dropped and its data is a throwaway tensor: made on the spot from constants
    (`all_reduce(torch.zeros(1).cuda(), group=g)`), or a local made so that nothing but collectives reads
    (`dummy = torch.ones(1)`): it computes nothing, it only sets up or syncs the communicator."""
    if site.result_used or site.function is None or not site.call.args:
        return False
    data = site.call.args[0]
    if _fresh_constant(data):
        return True
    if not isinstance(data, ast.Name):
        return False
    value = sole_binding(site.function.node, data.id)
    if value is None or not _fresh_constant(value):
        return False
    handed = {id(a) for c in module.sites.collectives.values() if c.function is site.function for a in c.call.args}
    return all(id(n) in handed for n in ast.walk(site.function.node)
               if isinstance(n, ast.Name) and n.id == data.id and isinstance(n.ctx, ast.Load))


def _fresh_constant(node: ast.expr) -> bool:
    """`torch.zeros(1)`, `torch.ones(1, device=dev).cuda()`, `torch.tensor([0.0]).to(dev)`: positional
    arguments constants only."""
    node = _unmoved(node)
    return isinstance(node, ast.Call) and _torch_call(node, _FACTORIES) and all(_literal(a) for a in node.args)


def made_contiguous(node: ast.expr) -> bool:
    """A tensor torch makes contiguous (`torch.zeros(n)`, `torch.cat(parts)`, maybe moved: `.cuda()`, `.to(dev)`),
    or `x.contiguous()`."""
    node = _unmoved(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "contiguous":
        return not node.args and not node.keywords
    return _torch_call(node, _CONTIGUOUS)


def _unmoved(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("cuda", "to"):
        node = node.func.value
    return node


def _torch_call(node: ast.expr, names: frozenset[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names \
        and dotted(node.func.value) == "torch"


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _sized(v: Verdicts, site: CollectiveSite, f: Facts, paired: set[tuple[int, int]], world: set[str]) -> bool:
    """The verdicts a size test decides, for a collective or a call into a helper: the predicate (nothing to
    report), a full guard split over tests, or a size-only test. False when no size is tested: None-only or
    unguarded, decided by the caller."""
    if f.pred:
        return True
    if f.nonnull and f.size:
        split = _split(site, f, paired)
        # (not where the same function runs the world when the group is None, nor where the None test chooses how
        # to communicate: `if g is not None: barrier(g) else: barrier(new_group())`: it picks, it does not guard)
        if split is not None and (site.key is None or _owner(v.module, site.key, site.function) not in world) \
                and (split.none is split.size or id(split.none.test) not in v.dispatch):
            v.splits.append(split)
        return True
    if f.size:
        _size_only(v, site, f, world)
        return True
    return False


def _size_only(v: Verdicts, site: CollectiveSite, f: Facts, world: set[str]) -> None:
    """Only the size is tested (PG104, or PG106 when it is cached on the instance), on a group that can be
    None here and where None is not the world (documented so, or given a world fallback): then `ws(None) > 1`
    is what is meant."""
    module = v.module
    assert site.key is not None
    if (f.null not in (Null.MAYBE, Null.NONE) and not _documented_optional(module, site, f)) or site.separate \
            or _owner(module, site.key, site.function) in world \
            or leaf_name(site.key) in v.world_names or _none_is_world(module, site.key, site.function) \
            or ((("*" in v.world_file or leaf_name(site.key) in v.world_file)
                 or (v.world_stated and leaf_name(site.key) not in v.absent_names))
                and not module.env.absent_documented(site.key, site.function)) \
            or _guarded_by_callers(module, site, v.callers, separate=False):  # every caller has ruled None out
        return
    for c in sorted(f.size, key=_pos):
        via = c.term.via if isinstance(c.term, SizeOf) else None
        # (a size that shapes data before its test counts on None being the world, unless the docs say it is absent)
        if id(c.test) in v.both_ways or (via and "." not in via and _shapes_first(v.module, site.function, via, c.node)
                                         and not module.env.absent_documented(site.key, site.function)):
            continue
        if _forward_shapes_first(module, site):  # (backward's group is forward's, read the same way)
            continue
        (v.cached if via and _on_instance(module, via, site.function) else v.size_only).append((site, c))


def _documented_optional(module: ModuleFacts, site: CollectiveSite, f: Facts) -> bool:
    """A group whose origin is unknown here (a parameter, another object's attribute) but whose docs or comments
    say None is the absent dimension: it may be None. A local the function binds itself is read through the names
    it is bound from (`_bound_from`): words about another thing of its name are not about it."""
    assert site.key is not None
    if f.null != Null.UNKNOWN:
        return False
    if _local(site.key, site.function):  # a local holds what it is bound from: `for name, g in groups.items():`
        return any(module.env.absent_documented(n, site.function) for n in _bound_from(site.key, site.function))
    return module.env.absent_documented(site.key, site.function)


def _bound_from(key: str, function: FunctionInfo | None) -> list[str]:
    """The names a local of the function takes its value from, where the docs of those names speak for it: the
    sides of `g = a if a is not None else b` or `g = a or b`, and the container a loop walks (`for g in
    groups`, `groups.values()`, the value of `groups.items()`)."""
    if function is None:
        return []
    value = sole_binding(function.node, key)
    if isinstance(value, ast.IfExp):
        return [d for v in (value.body, value.orelse) if (d := dotted(v)) is not None]
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return [d for v in value.values if (d := dotted(v)) is not None]
    for loop in (n for n in statements(function.node.body) if isinstance(n, (ast.For, ast.AsyncFor))):
        target, walked = loop.target, loop.iter
        if isinstance(walked, ast.Call) and isinstance(walked.func, ast.Attribute) and not walked.args \
                and walked.func.attr in ("values", "items"):
            if walked.func.attr == "items":
                target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else target
            walked = walked.func.value
        if isinstance(target, ast.Name) and target.id == key and (container := dotted(walked)) is not None:
            return [container]
    return []


def _decided_by_callers(site: CollectiveSite, callers: dict[int, list[CallSite]]) -> bool:
    """The group is a parameter of the site's function with no default, and the file calls that function."""
    function = site.function
    return function is not None and site.key in function.params and \
        site.key not in optional_params(function.node) and bool(callers.get(id(function.node)))


def _local(key: str, function: FunctionInfo | None) -> bool:
    """A plain name the function binds itself (not a parameter, not a global it only reads)."""
    if "." in key or function is None or key in function.params:
        return False
    return any(isinstance(name, ast.Name) and name.id == key
               for node in statements(function.node.body) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.For))
               for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
               for name in ast.walk(target))


def _on_instance(module: ModuleFacts, via: str, function: FunctionInfo | None) -> bool:
    """Is the size cached on an instance: `self.n`, or `LAYOUT.n` of a module-level instance of a class here?"""
    head, dot, _ = via.partition(".")
    # (or on an instance of a class of the file the holder is typed with: `ctx.size`, `ctx: SeqContext`)
    return bool(dot) and (head == "self" or module.env.singleton(head, function) is not None
                          or module.env.held_class(via.rpartition(".")[0], function) is not None)


def _shapes_first(module: ModuleFacts, function: FunctionInfo | None, local: str, test: ast.AST) -> bool:
    """The cached size shapes data before it is tested (`seqlen = shard * n`, `x.reshape(b, n, -1)`, then
    `if n > 1: all_to_all(...)`): those shapes are right only if `get_world_size(None)`, the world's size, is
    what None means here."""
    if function is None:
        return False
    line = getattr(test, "lineno", 0)
    for node in module.env.nodes(function.node, (ast.BinOp, ast.Call)):
        if isinstance(node, ast.BinOp):
            operands: list[ast.expr] = [node.left, node.right]
        elif isinstance(node, ast.Call):
            operands = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        if node.lineno < line and any(isinstance(o, ast.Name) and o.id == local for o in operands):
            return True
    return False


def _forward_shapes_first(module: ModuleFacts, site: CollectiveSite) -> bool:
    """In backward of an autograd Function, a group forward left on ctx (`ctx.group = group`) whose size forward
    used to shape data before its own test of it (`n = ws(group)`, `assert x.size(d) % n == 0`, then `if n == 1:`):
    forward counts on None being the world there, and backward's test of the same group is read the same way."""
    function, key = site.function, site.key
    forward = module.env.autograd_forward(function) if function is not None else None
    if forward is None or function is None or key is None or not function.params:
        return False
    head, _, attr = key.partition(".")
    param = module.env.ctx_params(forward).get(attr) if head == function.params[0] else None
    if param is None:
        return False
    sized = {t.id for n in module.env.nodes(forward.node, ast.Assign)
             if isinstance(group := module.ctx.world_size_group(n.value), ast.Name) and group.id == param
             for t in n.targets if isinstance(t, ast.Name)}
    for test in module.env.nodes(forward.node, ast.Compare):
        compare = size_compare(test)
        if compare is not None and isinstance(compare.term, ast.Name) and compare.term.id in sized and \
                _shapes_first(module, forward, compare.term.id, test):
            return True
    return False


def _calls_as_sites(module: ModuleFacts, reaches: list[Reach], callers: dict[int, list[CallSite]]
                    ) -> Iterator[CollectiveSite]:
    """A call into a helper that runs a collective, untested, on the group it is given: the guard around the
    call is that collective's guard (split, size-only or cached; None-only ones: `_none_only_callers`). Each
    comes back as the helper's collective seen from the call, with the caller's key, facts and function."""
    for r in reaches:
        if r.nonnull_inside or r.site.separate:
            continue
        for call in callers.get(id(r.helper.node), []):
            key = _map(module, r.helper, r.key, call)
            f = call.groups.get(key) if key is not None else None
            if key is None or f is None or not f.size:
                continue
            if r.size_inside and not f.nonnull:
                continue  # a size-only test here, and the size is tested again further down: the helper's to report
            yield r.site._replace(key=key, facts=f, function=call.function, separate=call.separate,
                                  path=call.path, statement=call.statement or r.site.statement)


def _none_only_callers(module: ModuleFacts, reaches: list[Reach], callers: dict[int, list[CallSite]],
                       world: set[str]) -> Iterable[NoneOnly]:
    """A call into a helper that (directly or through further helpers) runs a collective on the group it is
    given, guarded at the call by a None test alone while no size is tested on the way: the None-only guard is
    at the call."""
    for r in reaches:
        if r.site.separate or r.separate_inside:
            continue
        for call in callers.get(id(r.helper.node), []):
            key = _map(module, r.helper, r.key, call)
            f = call.groups.get(key) if key is not None else None
            if key is None or f is None or not f.nonnull or f.size or f.pred or call.separate or \
                    _owner(module, key, call.function) in world:
                continue
            yield from (NoneOnly(r.site, c, key, call.function, call, r.size_inside) for c in sorted(f.nonnull, key=_pos))


def _sides(module: ModuleFacts, *, later_tested: bool = False) -> dict[int, dict[bool, set[tuple[str, str | None]]]]:
    """Per branch test, the communication on each outcome. ``later_tested`` leaves out, on each side, a collective
    on a group the test checks for None that a later None test establishes again (`if a and g is not None: x(g)
    elif g is not None: y(g)`): the first test does not choose y, the second decides whether y runs."""
    sides: dict[int, dict[bool, set[tuple[str, str | None]]]] = {}
    communicating = _communicating(module)
    sites = module.sites.collectives.values()
    # (test, group) -> where the test's None check of the group starts
    starts = {(id(c.test), s.key): _pos(c) for s in sites if s.facts is not None for c in s.facts.nonnull} \
        if later_tested else {}
    done = [*((c.path, (c.collective.name, c.key), _last_none_test(c)) for c in sites),
            *((c.path, (c.callee.qualname, None), None) for c in module.sites.calls.values()
              if id(c.callee.node) in communicating)]
    for path, what, tested in done:
        for test, outcome in path:
            if tested is not None and tested > starts.get((test, what[1]), tested):
                continue
            sides.setdefault(test, {}).setdefault(outcome, set()).add(what)
    return sides


def _last_none_test(site: CollectiveSite) -> tuple[int, int] | None:
    """Where the last None test that establishes the collective's group starts."""
    return max(map(_pos, site.facts.nonnull)) if site.facts is not None and site.facts.nonnull else None


_MESH_ONLY = re.compile(r"mesh", re.I)
_DTENSOR_CALL = re.compile(r"\b(?:distribute_tensor|distribute_module|redistribute|full_tensor)\s*\(")


def _tests_mesh(pair: Pair) -> bool:
    leaf = leaf_name(pair.none.key)
    return bool(_MESH_ONLY.search(leaf)) and not PROCESS_GROUP_NAME.search(leaf)


def _communicating_closure(module: ModuleFacts) -> set[int]:
    """Functions that communicate, directly or through in-file helpers (up to three levels: `forward_for_sp`
    calls the one that communicates)."""
    communicating = _communicating(module)
    for _ in range(HELPER_LEVELS):
        more = {id(c.function.node) for c in module.sites.calls.values()
                if c.function is not None and id(c.callee.node) in communicating}
        if more <= communicating:
            break
        communicating |= more
    return communicating


def _communicates_after(module: ModuleFacts, pair: Pair, communicating: set[int]) -> bool:
    """Does the chain's function communicate after it: a collective, a call into a function that does, or
    DTensor placement (`distribute_tensor`, ...), here or in the function called? When the chain is an `if`
    test, only the communication it guards counts (in its block, or after an early exit): a mesh test around
    local padding is no guard even if the function gathers later, under a test of its own."""
    function = pair.chain.function
    start = pair.chain.node.lineno
    source = module.ctx.source.lines
    branch = _branch_of(module, function, pair.chain.node)
    outcome = not pair.negated  # the test's value on the side that communicates

    def distributes(node: ast.AST, first: int) -> bool:
        return any(_DTENSOR_CALL.search(line) for line in source[first - 1 : node.end_lineno])  # type: ignore[attr-defined]

    def under(path: frozenset[tuple[int, bool]], line: int) -> bool:
        return line >= start if branch is None else (id(pair.chain.node), outcome) in path

    # (a collective on the world is no communication on the mesh: `if mesh.size() > 1: dist.barrier()`)
    if any(s.function is function and under(s.path, s.call.lineno) and not _on_world(module, s)
           for s in module.sites.collectives.values()):
        return True
    for c in module.sites.calls.values():
        if c.function is function and under(c.path, c.call.lineno) and \
                (id(c.callee.node) in communicating or distributes(c.callee.node, c.callee.node.lineno)):
            return True
    # DTensor placement after the test counts wherever it is: the test sets up the mesh it places on
    return distributes(function.node if function is not None else module.ctx.source.tree, start)


def _only_raises(module: ModuleFacts, pair: Pair) -> bool:
    """The pair's chain is the whole test of an `if` with no `else` whose body ends in `raise`: a check of the
    configuration (`if g is not None and g.size() != 1: raise ValueError(...)`), under which nothing communicates."""
    branch = _branch_of(module, pair.chain.function, pair.chain.node)
    return branch is not None and not branch.orelse and isinstance(branch.body[-1], ast.Raise)


def _on_world(module: ModuleFacts, site: CollectiveSite) -> bool:
    """A collective with no group (a point-to-point call to a group's member has its group), None or the world."""
    group = site.collective.group
    return site.key is None if group is None else is_none(group) or module.ctx.is_world(group)


def _lays_out_local_work(module: ModuleFacts, pair: Pair) -> bool:
    """In a file that never communicates, an `if` on a group's full test after which the function hands the
    group to nothing (it only asks `g.rank()` and `g.size()` to slice weights by rank) lays out local work: no
    guard, as a mesh's would not be. A group handed on (`ExpertTP(tp_group)`, a helper of another file) may
    still communicate there, so that test stays a guard."""
    function = pair.chain.function
    if function is None or _branch_of(module, function, pair.chain.node) is None:
        return False
    leaf, start = leaf_name(pair.none.key), pair.chain.node.lineno
    for node in ast.walk(function.node):  # (by its last name: `self.tp_group` handed on as `tp_group` too)
        if isinstance(node, ast.Call) and node.lineno >= start and \
                any((d := dotted(a)) is not None and leaf_name(d) == leaf for a in (*node.args, *(k.value for k in node.keywords))):
            return False
    return True


def _branch_of(module: ModuleFacts, function: FunctionInfo | None, test: ast.expr) -> ast.If | None:
    """The `if` statement whose whole test ``test`` is, in the function."""
    if function is None:
        return None
    return next((n for n in module.env.nodes(function.node, ast.If) if n.test is test), None)

def _communicating(module: ModuleFacts) -> set[int]:
    return {id(h.node) for s in module.sites.collectives.values() if (h := _helper(module, s)) is not None}


def _and_inner(node: ast.expr) -> tuple[ast.expr, ...]:
    """A truthiness atom `not g` (or `bool(g)`, `not bool(g)`) is narrowed as `g`: they name the same test."""
    out = [node]
    inner = without_not(node)
    if inner is not node:
        out.append(inner)
    if is_bool_call(inner):
        out.append(inner.args[0])
    return tuple(out)


def _pos(check: Check) -> tuple[int, int]:
    return check.node.lineno, check.node.col_offset


def chain_pairs(chain: ChainSite) -> list[Pair]:
    """Every full guard in one chain, found in one pass: the first None test and the first size test of each
    group, with the polarity of a guard (`and`: present and multi-rank; `or`: absent or single-rank)."""
    negated = isinstance(chain.node.op, ast.Or)
    nones: dict[str, Atom] = {}
    sizes: dict[str, Atom] = {}
    for atom in chain.atoms:
        if atom.kind == "none" and atom.is_none == negated:
            nones.setdefault(atom.key, atom)
        elif atom.kind == "size" and atom.compare is not None and atom.compare.positive != negated:
            sizes.setdefault(atom.key, atom)
    return [Pair(chain, nones[k], sizes[k], negated) for k in nones if k in sizes]


def _split(site: CollectiveSite, f: Facts, paired: set[tuple[int, int]]) -> Split | None:
    if site.key is None:
        return None
    nones = [n for n in f.nonnull if n.kind != "size"]
    if not nones:
        # A None-safe size alone (`n > 1` with `n = ws(g) if g is not None else 1`): the None test sits in the
        # size's definition, so this one comparison is the whole hand-written guard.
        safe = [c for c in f.size if c in f.nonnull and isinstance(c.term, SizeOf) and c.term.fallback is not None]
        if not safe:
            return None
        first = min(safe, key=_pos)
        return Split(first, first, site.key, site.function, site.collective.name)
    if any((id(n.node), id(c.node)) in paired for n in nones for c in f.size):
        return None  # one chain, reported as such
    return Split(min(nones, key=_pos), min(f.size, key=_pos), site.key, site.function, site.collective.name)


def _safe_flags(v: Verdicts, world: set[str]) -> None:
    """A flag set from one test of a None-safe size (`self.use_sp = n > 1`, `n = ws(g) if g is not None else
    1`) holds the predicate wherever its communication is, as a flag set from the whole chain does (PG101, kind
    `split`). Not on a device mesh, which also lays out local work, nor where the file takes None as the world."""
    module = v.module
    seen = {id(s.size.node) for s in v.splits} | {id(p.size.node) for p in v.pairs}  # (a chain's: reported as such)
    for flag in module.sites.flags.values():
        check, term = flag.check, flag.check.term
        if not isinstance(term, SizeOf) or id(check.node) in seen or v.in_copy(check.node) or \
                _MESH_ONLY.search(leaf_name(term.group)) or _owner(module, term.group, flag.function) in world:
            continue
        seen.add(id(check.node))
        v.splits.append(Split(check, check, term.group, flag.function, None))


# ------------------------------------------------------------------ what None means


def _absent_evidence(module: ModuleFacts, world: set[str]) -> dict[str, set[str]]:
    """Group keys (and their last names) that the module None-checks before a collective or a world-size query:
    there None means "this dimension is absent". Not where the same function runs the world when it is None
    (`if g is None: all_reduce(t) else: all_reduce(t, group=g)`: ``world``)."""
    found: dict[str, set[str]] = {}
    sites: Iterable[tuple[str, Facts, FunctionInfo | None]] = [
        *((s.key, s.facts, s.function) for s in module.sites.collectives.values() if s.key and s.facts),
        *((q.key, q.facts, q.function) for q in module.sites.sizes.values()),
    ]
    helpers = _communicating(module)
    sites = [*sites, *((k, f, c.function) for c in module.sites.calls.values() if id(c.callee.node) in helpers
                       for k, f in c.groups.items() if k in c.arguments.values() or k.startswith("self."))]
    for key, facts, function in sites:
        if (facts.nonnull or facts.pred) and not _world_sized_when_none(module, key, function):
            owner = _owner(module, key, function)  # (a None test whose other side counts the world is no evidence)
            if owner not in world:
                found.setdefault(leaf_name(key), set()).add(owner)
    return found


def _is_world_key(module: ModuleFacts, key: str) -> bool:
    """Is the group the world itself (`tp_group = dist.group.WORLD`, then `if tp_group is not None:`)? Its None
    test asks whether the default group exists yet, not whether a dimension is there."""
    try:
        node = ast.parse(key, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Attribute) and module.ctx.is_world(node)


def _owner(module: ModuleFacts, key: str, function: FunctionInfo | None) -> str:
    if key.startswith("self.") and function is not None:
        klass = module.env.class_of(function)
        return f"{klass.qualname if klass else ''}:{key}"
    return f"{function.qualname if function else ''}:{key}"


def _world_fallbacks(module: ModuleFacts) -> set[str]:
    """Groups (as `owner:key`, scoped to their function or, for attributes, their class) given an explicit
    world fallback (`g = g or dist.group.WORLD`) or None at a collective on the world."""
    out: set[str] = set()
    for site in module.sites.collectives.values():
        if site.world_fallback and site.key:
            out.add(_owner(module, site.key, site.function))
        # `if g is not None: barrier(g) else: barrier()`: None is the world
        out.update(_owner(module, k, site.function) for k in site.none_keys)
        if site.key and site.facts is not None and site.facts.null == Null.NONE and \
                not _set_to_none(site.function, site.key):
            # `if g is not None: ...; return` then `barrier(group=g)`: run where a test says g is None, on the world
            out.add(_owner(module, site.key, site.function))
    # `gather(lens)` of `def gather(x, group=None)`, whose collective None reaches untested: this file runs it on
    # the world (a helper that tests for None skips instead: `if g is not None: all_reduce(t, group=g)`)
    reached = {(id(site.function.node), site.key) for site in module.sites.collectives.values()
               if site.function is not None and site.facts is not None and site.facts.null == Null.MAYBE}
    for call in module.sites.calls.values():
        out.update(_owner(module, name, call.callee) for name in _left_none(module, call)
                   if (id(call.callee.node), name) in reached)
    # `self.pg = pg or dist.group.WORLD` (or `pg if pg is not None else WORLD`) wherever the class sets it: a None
    # given is the world, and a None test of the attribute decides nothing
    for klass in module.env.classes.values():
        level = {t.id for item in klass.node.body if isinstance(item, ast.Assign | ast.AnnAssign)
                 for t in (item.targets if isinstance(item, ast.Assign) else [item.target]) if isinstance(t, ast.Name)}
        for key, values in module.env.assigned_values(klass).items():
            if key.partition(".")[2] not in level and all(_world_fallback(module, v) for _, v in values):
                out.add(f"{klass.qualname}:{key}")
    # `_stats(a, b, pg=None)` that every call in the file hands the world (`pg=dist.group.WORLD`): None is the world
    # to it too (its default only spares writing it)
    handed: dict[tuple[int, str], tuple[FunctionInfo, bool]] = {}
    for call in module.sites.calls.values():
        passed = _passed(module, call) or {}
        for name in none_defaults(call.callee.node):
            param = (id(call.callee.node), name)
            world_here = name in passed and module.ctx.is_world(passed[name])
            handed[param] = (call.callee, handed.get(param, (call.callee, True))[1] and world_here)
    out.update(_owner(module, name, callee) for (_, name), (callee, always) in handed.items() if always)
    # `if g is None: return helper(x, default_group())` beside `helper(x, g)`: None has a group put in its place
    passes: dict[tuple[int, int, str], set[str]] = {}
    for call in module.sites.calls.values():
        for slot, held in call.arguments.items():
            if held is not None:
                passes.setdefault((id(call.callee.node), id(call.function.node) if call.function else 0, slot),
                                  set()).add(held)
    for call in module.sites.calls.values():
        absent = {k for k, f in call.groups.items() if f.null == Null.NONE}
        for slot, held in call.arguments.items() if absent else ():
            if held is None:  # (a getter's call there, not a name)
                same = passes.get((id(call.callee.node), id(call.function.node) if call.function else 0, slot), set())
                out.update(_owner(module, k, call.function) for k in absent & same)
    # `grp: ProcessGroup | None = dist.group.WORLD`: the world by default, so a None passed is the world too
    for function in module.env.functions:
        if function.node.args.defaults or function.node.args.kw_defaults:
            out.update(_owner(module, name, function) for name, default in param_defaults(function.node)
                       if isinstance(default, (ast.Attribute, ast.Call)) and module.ctx.is_world(default))
    return out


def _world_fallback(module: ModuleFacts, value: ast.expr) -> bool:
    """`x or dist.group.WORLD`, `x if x is not None else WORLD` (either way round): a value that is the world when
    what it was given is None."""
    is_world = module.ctx.is_world
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return is_world(value.values[-1])
    if isinstance(value, ast.IfExp):
        # the world on the branch the given value's None test sends None to (not `tp if use_tp else WORLD`)
        target, present = presence(value.test)
        kept, world = (value.body, value.orelse) if present else (value.orelse, value.body)
        return is_world(world) and ast.dump(kept) == ast.dump(target)
    return is_world(value)


def _set_to_none(function: FunctionInfo | None, key: str) -> bool:
    """Does the function assign None to ``key`` itself (`tp_group = None`)? Then a None there is its own doing."""
    if function is None:
        return False
    return any(isinstance(n, ast.Assign) and is_none(n.value) and any(dotted(t) == key for t in n.targets)
               for n in own_statements(function.node.body))


def _passed(module: ModuleFacts, call: CallSite) -> dict[str, ast.expr] | None:
    """The callee's parameters the call binds, to what it passes; None when `*xs` / `**kw` may bind any."""
    node = call.call
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    passed = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
    passed.update(zip(module.env.call_params(call.callee, node), node.args, strict=False))  # extra ones: *args
    return passed


def _left_none(module: ModuleFacts, call: CallSite) -> Iterator[str]:
    """Parameters defaulting to None that the call leaves at None (omitted, or passed a literal None)."""
    passed = _passed(module, call)
    if passed is None:
        return  # `*xs` / `**kw` may bind them
    for name in none_defaults(call.callee.node):
        if name not in passed or is_none(passed[name]):
            yield name


def _none_is_world(module: ModuleFacts, key: str, function: FunctionInfo | None) -> bool:
    """None is the world for this key here: the docs or a comment say so, or the function counts the world when
    the group is None (`n = ws(g) if g is not None else self.world_size`)."""
    return module.env.world_documented(key, function) or _world_sized_when_none(module, key, function)


_WORLD_SIZE_NAMES = frozenset({"world_size", "_world_size", "global_world_size"})


def _world_sized_when_none(module: ModuleFacts, key: str, function: FunctionInfo | None) -> bool:
    if function is None:
        return False
    keys = module.world_when_none.get(id(function.node))
    if keys is None:
        keys = module.world_when_none[id(function.node)] = frozenset(_world_counted_when_none(module, function))
    return key in keys


_IFEXP = re.compile(r"\belse\b(?!\s*:)")  # `x if t else y` (an `else:` clause is a statement)


def _world_counted_when_none(module: ModuleFacts, function: FunctionInfo) -> Iterator[str]:
    """Keys the function sizes by the world when they are None (`ws(g) if g is not None else self.world_size`)."""
    start, end = function.node.lineno, function.node.end_lineno
    text = "\n".join(module.ctx.source.lines[start - 1 : end])
    expressions, statements = _IFEXP.search(text) is not None, "get_world_size()" in text
    if not (expressions or statements):
        return  # nothing to look for (most functions: the walk was a tenth of the verdicts)
    for node in module.env.nodes(function.node, (ast.If, ast.IfExp)):
        if statements and isinstance(node, ast.If) and (tested := _tested_presence(node.test)) is not None \
                and (key := dotted(tested[0])) is not None:
            # `if g is None: return list(range(dist.get_world_size()))`, `if g: n = g.size() else: n =
            # dist.get_world_size()`: what None stands for is the world
            block = node.orelse if tested[1] else node.body
            # (the world's size asked there; a name like `world_size` is too often a local that is 1 for None)
            if any(module.ctx.is_world_size(n) for stmt in block for n in ast.walk(stmt)):
                yield key
            continue
        if not expressions or not isinstance(node, ast.IfExp):
            continue
        test = none_test(node.test)
        key = dotted(test.target) if test is not None else None
        if test is None or key is None:
            continue
        when_none = node.body if test.is_none else node.orelse
        held = dotted(when_none)
        if module.ctx.is_world_size(when_none) or leaf_name(held or "") in _WORLD_SIZE_NAMES:
            yield key  # `dist.get_world_size()` (no group: the world's), `self.world_size`
        elif held is not None and _holds_world_size(module, function, held):
            yield key  # `self.n_all`, set to `dist.get_world_size()`


def _tested_presence(test: ast.expr) -> tuple[ast.expr, bool] | None:
    """The name or attribute a None test or a truthiness test asks about, and whether the test holds when it is
    there (bot.analyze.terms.presence; None for any other test)."""
    tested, present = presence(test)
    return (tested, present) if isinstance(tested, (ast.Name, ast.Attribute)) else None


def _holds_world_size(module: ModuleFacts, function: FunctionInfo, name: str) -> bool:
    """``name`` (a local, or `self.x` anywhere in the class) is set to the world's size."""
    klass = module.env.class_of(function) if name.startswith("self.") else None
    scope: ast.AST = klass.node if klass is not None else function.node
    held = module.world_sized.get(id(scope))
    if held is None:  # one walk per scope (a class can be most of the file), whatever names are asked
        # (statements only: an assignment never sits inside an expression)
        held = module.world_sized[id(scope)] = frozenset(
            text for n in statements([scope]) if isinstance(n, ast.Assign) and module.ctx.is_world_size(n.value)
            for t in n.targets if (text := dotted(t)) is not None)
    return name in held


# rules.yaml `absent_groups`: names of groups for which None means "this dimension is absent" in this project.
def _named_absent(module: ModuleFacts, leaf: str) -> bool:
    """rules.yaml `absent_groups`: name globs (`*_tp_group`) of groups for which None means "absent"."""
    return any(fnmatch.fnmatchcase(leaf, pattern) for pattern in module.ctx.config.absent_groups)


class Use(NamedTuple):
    """Where a possibly-None group is used: the collective on it, or the call that hands it to a helper running
    one (``collective`` names that collective)."""

    function: FunctionInfo | None
    path: frozenset[tuple[int, bool]]
    collective: str

    @classmethod
    def at(cls, site: CollectiveSite) -> Use:
        return cls(site.function, site.path, site.collective.name)


def _evidence(module: ModuleFacts, key: str, function: FunctionInfo | None, absent: dict[str, set[str]],
              use: Use | None = None) -> tuple[Confidence, tuple[str, ...]] | None:
    leaf = leaf_name(key)
    owners = absent.get(leaf, set())
    mine = _owner(module, key, function)
    if use is not None and _holder_state_decides(module, key, use):
        return None
    if module.env.absent_documented(key, function):
        return Confidence.HIGH, (f"the docs or a comment say `{leaf}=None` means the dimension is absent",)
    if _local(key, function) and (sources := [n for n in _bound_from(key, function)
                                              if module.env.absent_documented(n, function)]):
        return Confidence.HIGH, (f"`{key}` is taken from `{sources[0]}`, whose docs say None means the dimension is absent",)
    if mine in owners or (key.startswith("self.") and any(o.endswith(f":{key}") and o.split(":")[0] == mine.split(":")[0] for o in owners)):
        return Confidence.HIGH, (f"`{key}` is checked for None before a collective elsewhere here",)
    if owners:
        return Confidence.MEDIUM, (f"`{leaf}` is checked for None before a collective elsewhere in this file",)
    if _named_absent(module, leaf):
        return Confidence.MEDIUM, (f"`{leaf}` matches rules.yaml `absent_groups`: None means the dimension is absent",)
    if module.env.documents_absent():
        return Confidence.MEDIUM, ("a comment at the module level says a group left None is a dimension not used",)
    if _none_unless(module, function, key, use):
        return Confidence.MEDIUM, (f"`{key}` is set to None when its condition fails (`... if ... else None`): "
                                   "None stands for a dimension that is not there",)
    if _counted_one_when_none(module, key, function):
        return Confidence.MEDIUM, (f"`{key}` is counted as one rank when None (a size helper of the file answers 1 "
                                   "for None): None stands for a dimension that is not there",)
    if _built_none_unless(module, key, function, use):
        return Confidence.MEDIUM, (f"the file builds the object holding `{leaf}` with None for it when a condition "
                                   "fails (`... if ... else None`): None stands for a dimension that is not there",)
    return None


def _counted_one_when_none(module: ModuleFacts, key: str, function: FunctionInfo | None) -> bool:
    """The function takes the group's size through an in-file helper that answers 1 for None (`world =
    get_pg_size(tp_group)`, `def get_pg_size(g): if g is None: return 1; return g.size()`), shaping data by it: it
    counts None as a single rank, the dimension absent (the other side of the shapes-first reading, where
    `get_world_size(None)` counts the world)."""
    if function is None:
        return False
    for call in module.env.nodes(function.node, ast.Call):
        helper = module.env.callee(call, function) if call.args and dotted(call.args[0]) == key else None
        measured = module.env.measured(helper) if helper is not None else None
        if measured is not None and measured.when_none is not None:
            return True
    return False


def _built_none_unless(module: ModuleFacts, key: str, function: FunctionInfo | None, use: Use | None) -> bool:
    """A field of an object of a class of the file (`self.groups.ep`, `groups: Groups`) that the file builds with
    a group or None by a condition (`ep = new_group(r) if layout.ep > 1 else None`, then `Groups(tp=tp, ep=ep)`):
    the factory writes None for the case where there is no such group. Not for a point-to-point call."""
    holder, _, leaf = key.rpartition(".")
    held = module.env.held_class(holder, function) if holder and function is not None else None
    if held is None or (use is not None and use.collective in POINT_TO_POINT):
        return False
    fields = [t.id for item in held.node.body if isinstance(item, ast.AnnAssign) and isinstance(t := item.target, ast.Name)]
    for builder in module.env.functions:
        for call in module.env.nodes(builder.node, ast.Call):
            if module.env.class_named(call.func) is not held:
                continue
            value = next((k.value for k in call.keywords if k.arg == leaf), None)
            if value is None and leaf in fields and fields.index(leaf) < len(call.args):
                value = call.args[fields.index(leaf)]
            if isinstance(value, ast.IfExp) and (is_none(value.body) or is_none(value.orelse)):
                return True
            if isinstance(value, ast.Name) and _sets_none_unless(module, builder, value.id) is not None:
                return True
    return False


def _holder_state_decides(module: ModuleFacts, key: str, use: Use) -> bool:
    """A group held by another object (`comm.gather_pg`, `self.cfg.ep_group`) reached only past a test of that
    object's state (`if comm.direction is FAN_IN:`): the object sets the group for the states that use it, so
    its None is not the absent dimension here."""
    holder = key.rpartition(".")[0]
    if not holder or holder in ("self", "cls") or use.function is None:
        return False
    return any(dotted(n) == holder for test, _ in _path_tests(module, use.function, use.path) for n in ast.walk(test)
               if isinstance(n, (ast.Name, ast.Attribute)))


def _none_unless(module: ModuleFacts, function: FunctionInfo | None, key: str, use: Use | None = None) -> bool:
    """The function sets the local to a group or to None by a condition (`grp = mesh["dp"].get_group() if dims
    else None`, or the same as an if/else statement): it writes None for the case where there is no such group.
    For `self.x`, any method of the class may (`if uses_tp: self.tp_group = ... else: self.tp_group = None` in
    `__init__`). Not when the condition only asks whether the object the group comes from is there
    (`mesh.get_group() if mesh is not None else None`): that passes its None on, and what None means for it is not
    said here; nor when the branch that writes None also takes the world's size (`n = world_size; grp = None`):
    None is the world."""
    if function is None:
        return False
    if key.startswith("self.") and key.count(".") == 1:
        # An attribute set so is read where that condition no longer shows; the object's own state may still
        # follow it (`else: self.pg = None; self.enabled = False`, then `if self.enabled: all_reduce(...)`), so only
        # a collective that no test of the object's state leads to counts, in a function that does not set the
        # attribute again on the way (`self._make_group()`), and not a point-to-point call (its peer is a global
        # rank either way).
        if use is None or use.collective in POINT_TO_POINT or _reads_own_state(module, use) or \
                _refills(module, function, key):
            return False
        klass = module.env.class_of(function)
        return klass is not None and any(_sets_none_unless(module, m, key) is not None for c in module.env.mro(klass)
                                         for m in c.methods.values())
    if "." in key:
        return False
    value = _sets_none_unless(module, function, key)
    return value is not None and (use is None or not _on_the_groups_side(module, use, value))


def _on_the_groups_side(module: ModuleFacts, use: Use, value: ast.IfExp) -> bool:
    """Does the collective run only where the condition that chose the group holds (`pg = g if on else None`,
    then `if on: all_reduce(t, group=pg)`)? Then its None never reaches it."""
    if use.function is None or not use.path:
        return False
    picks = not is_none(value.body)  # the condition's value that picks the group
    wanted = ast.dump(value.test)
    for test, outcome in _path_tests(module, use.function, use.path):
        read = without_not(test)
        if ast.dump(read) == wanted and (outcome if read is test else not outcome) == picks:
            return True
    return False


def _reads_own_state(module: ModuleFacts, use: Use) -> bool:
    """Does a test on the path to the use read the object's state (`self.x`, `self.ready()`), or is its method
    called in the file only where one does (`if self._sync: self._reduce_buffers()`)?"""
    return use.function is not None and (_path_reads_self(module, use.function, use.path)
                                         or _called_under_own_state(module, use.function, _MAX_HELPER_DEPTH))


def _flag_follows(module: ModuleFacts, site: CollectiveSite) -> bool:
    """A test on the collective's path asks a flag of the object (`if not self._sharded: return`) that every
    method setting the group sets with it, to a true constant beside a group and a false one beside None
    (`self.xp_group = mesh.get_group(); self._sharded = True` in `shard`; None and False in `__init__`): the flag
    follows the group, and the collective runs only where the group is there."""
    key = site.key
    if site.function is None or not site.path or key is None or not key.startswith("self.") or key.count(".") != 1:
        return False
    klass = module.env.class_of(site.function)
    if klass is None:
        return False
    assigned = module.env.assigned_values(klass)
    for test, outcome in _path_tests(module, site.function, site.path):
        read = without_not(test)
        truthy = outcome if read is test else not outcome  # the flag's value where the collective runs
        flag = dotted(read) if isinstance(read, ast.Attribute) else None
        if truthy and flag is not None and flag != key and flag.startswith("self.") and flag.count(".") == 1 \
                and _set_together(assigned.get(key, []), assigned.get(flag, [])):
            return True
    return False


def _set_together(groups: list[tuple[FunctionInfo, ast.expr]], flags: list[tuple[FunctionInfo, ast.expr]]) -> bool:
    """Each method that sets the group sets the flag once, to a constant that is true exactly where the group is
    not None, and no other method sets the flag."""
    if not groups or {id(m.node) for m, _ in groups} != {id(m.node) for m, _ in flags}:
        return False
    by_method: dict[int, list[ast.expr]] = {}
    for method, value in flags:
        by_method.setdefault(id(method.node), []).append(value)
    for method, value in groups:
        set_to = by_method.get(id(method.node), [])
        if len(set_to) != 1 or not isinstance(set_to[0], ast.Constant) or \
                bool(set_to[0].value) == is_none(value):
            return False
    return True


def _path_reads_self(module: ModuleFacts, function: FunctionInfo, path: frozenset[tuple[int, bool]]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("self", "cls")
               for test, _ in _path_tests(module, function, path) for n in ast.walk(test))


def _path_tests(module: ModuleFacts, function: FunctionInfo, path: frozenset[tuple[int, bool]]) -> Iterator[tuple[ast.expr, bool]]:
    """The branch tests on a path through the function (the flow keeps their ids), with the outcome taken."""
    if not path:
        return
    outcomes = dict(path)
    for node in module.env.nodes(function.node, ast.expr):
        outcome = outcomes.get(id(node))
        if outcome is not None:
            yield node, outcome


def on_the_source_rank(module: ModuleFacts, site: CollectiveSite) -> bool:
    """A broadcast reached only past a test that this rank is its source (`if rank == src_rank:` before
    `broadcast(x, src=src_rank, ...)`, or the `else` of `!=`): there it only reads its tensor, so nothing it
    writes can be lost."""
    if site.collective.name != "broadcast" or site.function is None:
        return False
    call = site.call
    src = next((k.value for k in call.keywords if k.arg in ("src", "group_src")), None)
    if src is None and len(call.args) > 1:
        src = call.args[1]
    source = dotted(src) if src is not None else None
    if source is None:
        return False
    for test, outcome in _path_tests(module, site.function, site.path):
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], ast.Eq if outcome else ast.NotEq) and \
                source in (dotted(test.left), dotted(test.comparators[0])):
            return True
    return False


def _called_under_own_state(module: ModuleFacts, function: FunctionInfo, depth: int) -> bool:
    """The method is called in the file (once at least), and every call is behind a test of the object's state,
    there or in its own callers (``depth`` hops)."""
    calls = [c for c in module.sites.calls.values() if c.callee.node is function.node]
    return depth > 0 and bool(calls) and all(
        c.function is not None and (_path_reads_self(module, c.function, c.path)
                                    or _called_under_own_state(module, c.function, depth - 1)) for c in calls)


def _refills(module: ModuleFacts, function: FunctionInfo, key: str) -> bool:
    """Does the function call a method of its class that assigns ``key`` (`self._make_host_group()`)?"""
    klass = module.env.class_of(function)
    if klass is None:
        return False
    setters = {f.node.name for c in module.env.mro(klass) for f, _ in module.env.assigned_values(c).get(key, [])}
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in setters
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
               for n in module.env.nodes(function.node, ast.Call))


def _sets_none_unless(module: ModuleFacts, function: FunctionInfo, key: str) -> ast.IfExp | None:
    """The group-or-None value the function gives ``key`` by a condition (an if/else statement read as the
    conditional expression it is, or a `try` that makes the group and an `except` that sets None), if any."""
    for node in module.env.nodes(function.node, (ast.Assign, ast.If, ast.Try)):
        value: ast.IfExp | None = None
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.IfExp) \
                and any(dotted(t) == key for t in node.targets):
            value, counted = node.value, False
        elif isinstance(node, ast.Try) and (value := _handler_values(node, key)) is not None:
            # (a handler that says it falls back to the world, in a comment or its log message, sets the world; a
            # parallel state's group that could not be had is out of scope, as the getter is)
            counted = module.ctx.mpu_group(value.body) or any(
                says_world(line) for h in node.handlers for line in module.ctx.source.lines[h.lineno - 1 : h.end_lineno])
        elif isinstance(node, ast.If) and (value := _branch_values(node, key)) is not None:
            none_side = node.body if is_none(value.body) else node.orelse
            counted = any(isinstance(s, ast.Assign) and (module.ctx.is_world_size(s.value) or (
                isinstance(s.value, ast.Name) and _holds_world_size(module, function, s.value.id)))
                for s in none_side)
        if value is None:
            continue
        # (a None passed on from the object the group comes from counts when that object's docs say its None is
        # absent: `tp_mesh ... None when tensor parallelism is disabled`)
        if is_none(value.body) != is_none(value.orelse) and not counted and not _handed_in(function, value) and \
                (not _passes_on(value) or module.env.absent_documented(_presence_tested(value.test) or "", function)):
            return value
    return None


def _handed_in(function: FunctionInfo, value: ast.IfExp) -> bool:
    """`self.pg = None if on_host else pg` with `pg` a required parameter: the group exists (it was handed in), and
    None is a placeholder for another one (made later), not a dimension that is not there."""
    taken = value.orelse if is_none(value.body) else value.body
    if not isinstance(taken, ast.Name):
        return False
    args = function.node.args
    positional = [*args.posonlyargs, *args.args]
    required = {a.arg for a in positional[: len(positional) - len(args.defaults)]}
    required |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=False) if d is None}
    return taken.id in required


def _branch_values(node: ast.AST, key: str) -> ast.IfExp | None:
    """`if cond: key = X else: key = None` as the conditional expression it is (the last assignment of the
    local, or of `self.x`, in each branch's own statements)."""
    if not isinstance(node, ast.If) or not node.orelse:
        return None

    then, other = _last_assigned(node.body, key), _last_assigned(node.orelse, key)
    return ast.IfExp(test=node.test, body=then, orelse=other) if then is not None and other is not None else None


def _handler_values(node: ast.Try, key: str) -> ast.IfExp | None:
    """`try: key = new_group(r)` with `except ...: key = None`: the group, or None when it could not be made, as the
    conditional expression it is (its test stands for "the try succeeded")."""
    made = _last_assigned(node.body, key)
    failed = [_last_assigned(h.body, key) for h in node.handlers]
    if made is None or is_none(made) or not any(v is not None and is_none(v) for v in failed):
        return None
    return ast.IfExp(test=ast.Constant(True), body=made, orelse=ast.Constant(None))


def _last_assigned(block: list[ast.stmt], key: str) -> ast.expr | None:
    """The value of the last assignment of ``key`` among the block's own statements."""
    found = None
    for stmt in block:
        if isinstance(stmt, ast.Assign) and any(dotted(t) == key for t in stmt.targets):
            found = stmt.value
    return found


def _passes_on(value: ast.IfExp) -> bool:
    """`mesh.get_group() if mesh is not None else None`: the group is None exactly when the object it comes
    from is (a name the other branch reads)."""
    tested = _presence_tested(value.test)
    taken = value.orelse if is_none(value.body) else value.body
    return tested is not None and any(isinstance(n, ast.Name) and n.id == tested for n in ast.walk(taken))


def _presence_tested(test: ast.expr) -> str | None:
    """The name whose presence alone the test asks: `x is not None`, `x is None`, `x`, `not x`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Name):
        return test.id
    checked = none_test(test)
    return checked.target.id if checked is not None and isinstance(checked.target, ast.Name) else None


def _sized_as_world(module: ModuleFacts, site: CollectiveSite) -> bool:
    """The function asks the world size of the same possibly-None group outside any test, to shape data
    (`[empty() for _ in range(get_world_size(g))]` before `all_gather(..., group=g)`): it counts on None being
    the world, as the collective does."""
    if site.function is None:
        return False
    queries = [q for q in module.sites.sizes.values()
               if q.function is site.function and q.key == site.key and not q.facts.nonnull and not q.facts.pred]
    if not queries:
        return False
    tested = {id(n) for node in module.env.nodes(site.function.node, ast.Compare) for n in ast.walk(node)}
    return any(id(q.call) not in tested for q in queries)


# ------------------------------------------------------------------ across functions in a file


def _callers(module: ModuleFacts) -> dict[int, list[CallSite]]:
    out: dict[int, list[CallSite]] = {}
    env = module.env
    for call in module.sites.calls.values():
        out.setdefault(id(call.callee.node), []).append(call)
        # `self.communicate(y)` in a base class runs a subclass's override too (for an instance of the subclass)
        func = call.call.func
        if not isinstance(func, ast.Attribute) or dotted(func.value) != "self":
            continue
        base = env.class_of(call.callee)
        for klass in env.classes.values() if base is not None else ():
            override = klass.methods.get(func.attr) if klass is not base else None
            if override is not None and any(c is base for c in env.mro(klass)[1:]):
                out.setdefault(id(override.node), []).append(call)
    return out


class Reach(NamedTuple):
    """`helper` runs ``site``'s collective on its own ``key`` (a parameter, or an attribute of self), directly or
    through further in-file helpers; ``*_inside``: what is tested on the way from the helper's entry."""

    site: CollectiveSite
    helper: FunctionInfo
    key: str
    size_inside: bool
    nonnull_inside: bool
    depth: int = 0
    # (function, key, line) where the group is handed on, from the collective up: a None given is replaced on the
    # way when one of them fills it in (`if g is None: g = getter()`), and only groups get through
    hops: tuple[tuple[FunctionInfo, str, int], ...] = ()
    # handed on through a helper whose own group may be None, where a size it is given decides
    # (`def scatter_in(t, n=1, grp=None): if n == 1: return t` then `swap(t, grp)`): that test is out of scope
    # there, but a caller that tests the group's own size before the call guards the communication with it
    separate_inside: bool = False

    def filled(self, module: ModuleFacts) -> bool:
        return any(_fills(module, *hop) for hop in self.hops)


_MAX_HELPER_DEPTH = 3


def _helper(module: ModuleFacts, site: CollectiveSite) -> FunctionInfo | None:
    """The function whose callers decide the site's group: its own, or an autograd Function's forward."""
    if site.function is None:
        return None
    return module.env.autograd_forward(site.function) or site.function


def _relative(module: ModuleFacts, function: FunctionInfo, key: str) -> tuple[FunctionInfo, str] | None:
    """The key as the function's callers see it: a parameter, an attribute of self, or (in an autograd
    backward or forward) `ctx.group`, which is forward's parameter."""
    head, _, rest = key.partition(".")
    forward = module.env.autograd_forward(function)
    klass = module.env.class_of(function) if forward is None else None
    if klass is not None and function.node.name == "forward" and module.env.is_autograd(klass):
        forward = function  # `ctx.group = group` then `all_gather(..., group=ctx.group)` in forward itself
    if forward is not None and function.params and head == function.params[0]:
        attr, _, more = rest.partition(".")
        param = module.env.ctx_params(forward).get(attr)
        return (forward, f"{param}.{more}" if more else param) if param is not None else None
    if head in ("self", "cls"):
        return (function, key) if rest else None
    if head in function.params:
        return function, key
    if function.parent is not None:  # a closure's free name: the enclosing function's, where it is called
        return function, key
    return None


def _fills(module: ModuleFacts, function: FunctionInfo, key: str, line: int) -> bool:
    """Does the function give the parameter a value when it is None before ``line`` (`if g is None: g =
    get_sp_group()`)? Then a caller's None is not what reaches the collective; a group it passes still is."""
    filled = module.env.filled_in(function).get(key) if "." not in key else None
    return filled is not None and filled < line


def _map(module: ModuleFacts, helper: FunctionInfo, key: str, call: CallSite) -> str | None:
    """The caller's key for the helper's ``key``: the argument bound to the parameter, or the same attribute."""
    head, dot, rest = key.partition(".")
    if helper.parent is not None and head not in helper.params and call.function is helper.parent:
        return key  # a closure called where it was defined sees that function's names
    if head in ("self", "cls"):
        if call.function is None:
            return None
        mine, theirs = module.env.class_of(helper), module.env.class_of(call.function)
        # (or a base class's method calling the override the helper is: self is the same instance there)
        return key if mine is not None and theirs is not None and \
            (mine in module.env.mro(theirs) or theirs in module.env.mro(mine)) else None
    arg = call.arguments.get(head)
    return f"{arg}{dot}{rest}" if arg is not None else None


def _reaches(module: ModuleFacts, callers: dict[int, list[CallSite]]) -> list[Reach]:
    out: list[Reach] = []
    for site in module.sites.collectives.values():
        if site.key is None or site.facts is None or site.function is None:
            continue
        # `n = g.size()` then `if n == 1: return`: a size that only a present group has says g is present, but a
        # None test is still the caller's to make (`if g is None: return x` then `helper(x, g)`)
        tested = site.facts.nonnull - site.facts.size
        if site.facts.pred or (tested and site.facts.size):
            continue
        rel = _relative(module, site.function, site.key)
        if rel is not None:
            line = site.call.lineno if rel[0] is site.function else 1 << 30  # (forward, from its backward: all of it)
            out.append(Reach(site, rel[0], rel[1], bool(site.facts.size), bool(tested), hops=((rel[0], rel[1], line),)))
    frontier = list(out)
    while frontier:
        r = frontier.pop()
        if r.depth >= _MAX_HELPER_DEPTH:
            continue
        for call in callers.get(id(r.helper.node), []):
            key = _map(module, r.helper, r.key, call)
            if key is None or call.function is None:
                continue
            f = call.groups.get(key)
            if f is None or f.guarded:
                continue  # a guarded group stops here
            separate = f.null == Null.MAYBE and bool(call.separate) and not (f.nonnull or f.size or f.pred)
            if f.null != Null.UNKNOWN and not separate:
                continue  # an optional group here is decided at this call
            rel = _relative(module, call.function, key)
            if rel is None or any(x.helper is rel[0] and x.key == rel[1] and x.site is r.site for x in out):
                continue
            nxt = Reach(r.site, rel[0], rel[1], r.size_inside or bool(f.size), r.nonnull_inside or bool(f.nonnull),
                        r.depth + 1, (*r.hops, (rel[0], rel[1], call.call.lineno)), r.separate_inside or separate)
            out.append(nxt)
            frontier.append(nxt)
    return out


def _guarded_by_callers(module: ModuleFacts, site: CollectiveSite, callers: dict[int, list[CallSite]],
                        separate: bool = True) -> bool:
    """Every in-file caller of the helper already tests the group (the helper's collective is guarded there) or
    passes one that is there (`if group is None: group = get_default_group()` before the call); with ``separate``
    False, a caller's test of a separately supplied size does not count (it says nothing of None)."""
    helper = _helper(module, site)
    rel = _relative(module, site.function, site.key) if site.function is not None and site.key else None
    if helper is None or rel is None:
        return False
    calls = callers.get(id(rel[0].node), [])
    if not calls:
        return False
    for call in calls:
        key = _map(module, rel[0], rel[1], call)
        if key is None:
            return False
        f = call.groups.get(key)
        # (a caller's own size test, size-only or not, is where a finding about the group is made)
        if f is None or not (f.nonnull or f.pred or (separate and (call.separate or f.size)) or f.null == Null.NOT_NONE) \
                or f.null == Null.NONE:
            return False
    return True


def _through_callers(module: ModuleFacts, reaches: list[Reach], callers: dict[int, list[CallSite]], absent: dict[str, set[str]],
                     world: set[str], settled: set[int], world_at: set[int]) -> list[Unguarded]:
    """A helper runs a collective on a group it takes from its caller and does not test; a caller passes a group
    that can be None (and means "absent") with no guard: report there. The helper's own parameter may be optional
    when nothing there says what None means (`def _reduce(t, group=None)`, the plain wrapper): a caller whose None
    means "absent" still reaches the world through it. Not when it is ``settled`` at the collective: reported
    there, or None is the world there (a fallback, the docs, a buffer sized by the group, ``world_at``), unless the
    caller's own docs say its None is the absent dimension: then it hands the helper a None that means something
    else (`reduce_expert_loss(loss, ep_group=None)`, "None when experts are not sharded", calling a mean helper
    documented "None averages over all ranks")."""
    out: list[Unguarded] = []
    for r in reaches:
        if r.site.separate or r.size_inside or r.nonnull_inside or r.separate_inside or \
                r.site.collective.family == "wrapper":
            continue
        world_there = id(r.site) in world_at
        if r.depth == 0 and (r.site.facts is None or r.site.facts.null not in (Null.UNKNOWN, Null.MAYBE)
                             or (id(r.site) in settled and not world_there)):
            continue
        for call in callers.get(id(r.helper.node), []):
            key = _map(module, r.helper, r.key, call)
            if key is None:
                continue
            f = call.groups.get(key)
            if f is None or f.null != Null.MAYBE or f.nonnull or f.size or f.pred or call.separate:
                continue
            if _owner(module, key, call.function) in world or _none_is_world(module, key, call.function):
                continue
            if world_there and r.depth == 0 and not module.env.absent_documented(key, call.function):
                continue
            evidence = _evidence(module, key, call.function, absent, Use(call.function, call.path, r.site.collective.name))
            if evidence is None or r.filled(module):
                continue
            why = (*evidence[1], f"`{r.site.collective.name}` runs on it unguarded in `{r.helper.qualname}`")
            out.append(Unguarded(r.site, evidence[0], why, at_call=call, passed=key))
    return out


def _exits_before_other_communication(v: Verdicts, paired: set[tuple[int, int]]) -> None:
    """`if g is None: return` then `if ws(g) <= 1: return`, then a world collective or a call into a helper that
    communicates on another group or the world (`_scatter_from_rank0(...)`): the two exits are g's whole guard,
    as the one test `if g is None or ws(g) <= 1: return` is wherever it stands (PG102, kind `split`); so is one
    test of a size that is 1 when g is None, before such a call (`if n > 1: return self.encode_cp(x)`, PG101)."""
    module = v.module
    seen = {(id(s.none.node), id(s.size.node)) for s in v.splits}
    direct: dict[int, CollectiveSite] = {}
    for site in module.sites.collectives.values():
        helper = _helper(module, site)
        if helper is not None:
            direct.setdefault(id(helper.node), site)
    seen_from: list[tuple[CollectiveSite, dict[str, Facts]]] = [
        (site, dict(site.tested_groups)) for site in module.sites.collectives.values() if site.tested_groups]
    for call in module.sites.calls.values():
        inside = direct.get(id(call.callee.node))
        if inside is not None:
            seen_from.append((inside._replace(function=call.function, separate=call.separate, path=call.path),
                              call.groups))
    for at, groups in seen_from:
        for key, f in groups.items():
            if f.pred or not f.size or not f.nonnull or _MESH_ONLY.search(leaf_name(key)):
                continue
            split = _split(at._replace(key=key, facts=f), f, paired)
            # both tests exits, or one test of a size that is 1 when the group is None (`if n > 1: return
            # self.encode_cp(x)`, the helper communicating on the group it fetches itself)
            if split is None or not (split.negated or split.none is split.size):
                continue
            pair = (id(split.none.node), id(split.size.node))
            if pair not in seen:
                seen.add(pair)
                v.splits.append(split)


def _sized_through_callers(v: Verdicts, reaches: list[Reach], callers: dict[int, list[CallSite]], world: set[str]) -> None:
    """A helper tests only the size of a group it takes and does not test for None (`if ws(g) == 1: return`), and
    an in-file caller hands it one that can be None, untested (`def combine(t, g=None): return _sum(t, g)`): the
    helper's size test is size-only (PG104), as it would be with the caller's None default on its own parameter."""
    module = v.module
    done: set[int] = set()
    for r in reaches:
        site, f = r.site, r.site.facts
        if f is None or not f.size or f.nonnull or f.null != Null.UNKNOWN or r.nonnull_inside or site.separate \
                or r.separate_inside or id(site) in done or r.filled(module):
            continue
        if r.depth > 0 and "." not in r.key and r.key in optional_params(r.helper.node):
            # handed on from a function whose own parameter may be None (`def forward(ctx, x, group=None)`)
            if _owner(module, r.key, r.helper) not in world and not _none_is_world(module, r.key, r.helper):
                _size_only(v, site, f._replace(null=Null.MAYBE), world)
                done.add(id(site))
            continue
        for call in callers.get(id(r.helper.node), []):
            key = _map(module, r.helper, r.key, call)
            g = call.groups.get(key) if key is not None else None
            if key is None or g is None or g.null != Null.MAYBE or g.nonnull or g.size or g.pred or call.separate:
                continue
            if _owner(module, key, call.function) in world or _none_is_world(module, key, call.function):
                continue
            _size_only(v, site, f._replace(null=Null.MAYBE), world)
            done.add(id(site))
            break


# ------------------------------------------------------------------ predicate copies


def _copies(module: ModuleFacts, pairs: list[Pair]) -> Iterable[Copy]:
    """Functions, methods and properties whose whole body is a full guard on a parameter or an attribute of self
    (one `return`, or early returns that fold into one: bot.analyze.returns)."""
    by_chain = {id(p.chain.node): p for p in pairs}
    config = module.ctx.config
    home = f"{config.predicate_module.replace('.', '/')}/{config.predicate_name}.py"
    for f in module.env.functions:
        if f.parent is None and f.klass is None and f.node.name == config.predicate_function and \
                module.ctx.path.replace("\\", "/").endswith(home):
            continue  # the predicate itself, in its own module
        body = module.env.returned(f) or _fetches_and_returns(f)
        if body is None:
            continue
        inner = without_not(body)
        pair = by_chain.get(id(inner))
        if pair is None and isinstance(inner, ast.BoolOp):  # folded (`if not dist.is_initialized(): return False`...)
            scratch = Sites()
            # (a parameter a caller hands a group is what its test is about: `g.size()` there is a group's own size)
            handed = frozenset(p for c in module.sites.calls.values() if c.callee is f
                               for p, key in c.arguments.items() if key is not None and names_a_group(key, module.group_keys))
            Walker(module.env, f, scratch, {}, module.group_keys | handed).chain(inner, State())
            pair = next((p for chain in scratch.chains.values() for p in chain_pairs(chain)), None)
        if pair is None or not _only_the_guard(module, pair):
            continue
        key = pair.none.key
        params = f.params[1:] if f.is_method else f.params
        # (with no parameter: a group it fetches itself, the module's global that is None until set, or one its
        # enclosing function was given: `def expert_sharded(): return cfg.ep_group is not None and ...`)
        if key in params or (f.is_method and key.startswith(("self.", "cls."))) or \
                (not params and (key in _fetched(module, f) or key in module.env.optional_globals
                                 or (f.parent is not None and key.partition(".")[0] in f.parent.params))):
            yield Copy(f.node.name, f.node, pair, key, f)


def _fetched(module: ModuleFacts, function: FunctionInfo) -> set[str]:
    """Locals the function binds to a call's result (`group = get_cp_group()`): a group it fetches itself; not one
    of an mpu / parallel-state getter, whose tests are out of scope by design."""
    return {t.id for node in own_statements(function.node.body) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call) and not module.ctx.mpu_group(node.value)
            for t in node.targets if isinstance(t, ast.Name)}


def _fetches_and_returns(function: FunctionInfo) -> ast.expr | None:
    """`try: g = get_cp_group(); return g is not None and ws(g) > 1` / `except ...: return False`: a predicate
    that fetches its own group; every other return is False. Its one test, else None."""
    if function.params[1:] if function.is_method else function.params:
        return None
    returns = [n for n in own_statements(function.node.body) if isinstance(n, ast.Return)]
    tests = [r.value for r in returns if isinstance(r.value, ast.BoolOp)]
    others = [r for r in returns if not isinstance(r.value, ast.BoolOp)]
    if len(tests) != 1 or not all(isinstance(r.value, ast.Constant) and r.value.value is False for r in others):
        return None
    return tests[0]


def _only_the_guard(module: ModuleFacts, pair: Pair) -> bool:
    """The chain is the full guard and nothing else that decides: its other operands only check that the group
    can be asked (`hasattr(g, "size")`, `isinstance(g, ProcessGroup)`) or that distributed is up
    (`dist.is_initialized()`), which is_parallel's own `get_world_size` needs anyway."""
    for value in pair.chain.node.values:
        if value is pair.none.node or value is pair.size.node:
            continue
        if not (isinstance(value, ast.Call) and not value.keywords and (
                (dotted(value.func) in ("hasattr", "isinstance") and value.args and dotted(value.args[0]) == pair.none.key)
                or (not value.args and module.ctx.comm_function(value) in ("is_initialized", "is_available")))):
            return False
    return True


def _lambda_copies(module: ModuleFacts) -> Iterable[Copy]:
    """`is_tp = lambda g: g is not None and get_world_size(g) > 1`, at module or class level, or set on the
    instance in its constructor."""
    named = [*module.env.lambdas.items(), *(i for c in module.env.classes.values() for i in c.lambdas.items())]
    for name, lam in named:
        body = without_not(lam.body)
        if not isinstance(body, ast.BoolOp) or len(body.values) != 2:
            continue
        scratch = Sites()
        params = [a.arg for a in lam.args.args]
        # its parameters are what its test is about: `g.size()` there is a group's own size
        Walker(module.env, None, scratch, {}, module.group_keys | frozenset(params)).chain(body, State())
        for chain in scratch.chains.values():
            for pair in chain_pairs(chain):
                # on a parameter, or on the instance (`self._sp_active = lambda: self.sp is not None and ...`)
                if pair.none.key in params or pair.none.key.startswith("self."):
                    yield Copy(name, lam, pair, pair.none.key, None)
