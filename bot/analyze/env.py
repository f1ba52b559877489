"""What a module says about its names before any flow: its functions and classes, which group expressions can
be None where they come from (origins), cached sizes and flags kept on instances, local predicates, and what
its docs and comments say None means."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from bot.analyze.context import Context
from bot.analyze.elsewhere import HelperSize, measures
from bot.analyze.names import dotted, leaf_name
from bot.analyze.returns import returned_test
from bot.analyze.scan import GROUP_NAME, global_statements
from bot.analyze.source import ParsedSource, after_docstring, child_blocks, statements
from bot.analyze.terms import Null, Separate, is_none, mapping_get, none_test, presence, size_compare

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_N = TypeVar("_N", bound=ast.AST)
_COMMENT = re.compile(r"#(.*)$")
# None documented as the world / default group ("If None, the default process group will be used").
# A group left out is said as None is ("If not specified, the default process group will be used", torch's own
# words; "the whole job when grp is omitted").
_LEFT_OUT = r"(?:None|omitted|unspecified|not (?:given|passed|provided|specified|set))"
_WORLD_DOC = re.compile(
    rf"\b{_LEFT_OUT}\b[^.\n]{{0,80}}\b(default|global|world|(?:whole|entire) (?:world|group|process group|job|cluster)"
    r"|all (?:the |available )?(?:ranks|processes|devices|gpus|workers)"
    r"|every (?:rank|process|device|gpu|worker))\b(?!s? (?:holds?|has|have|keeps?|owns?|stores?|computes?|gets?|sees?))"
    # ranks that each act alone are no group ("None: every rank reads the checkpoint by itself")
    r"(?![^.\n]{0,60}\b(?:by (?:it|them)sel(?:f|ves)|on (?:its|their) own|independently|alone)\b)"
    rf"|\b(default|global|world)\b[^.\n]{{0,40}}\b(group|process group)\b[^.\n]{{0,40}}\b{_LEFT_OUT}\b"
    r"|\b(?:(?:whole|entire) (?:world|job|cluster)|all ranks|every rank)\b[^.\n]{0,40}\b(?:omitted|not (?:given|passed))\b",
    re.I,
)
# numpy style with no None: "process_group : ProcessGroup, default = world group", "defaults to the global group"
_WORLD_DEFAULT = re.compile(r"\bdefaults?\b\s*(?:[=:]|to|is)?\s*(?:the\s+)?(?:whole\s+|entire\s+)?"
                            r"(?:world|global|default\s+(?:process\s+)?group|all\s+ranks)\b", re.I)
_NAMES_A_GROUP = re.compile(r"\b\w+_(?:group|pg)\b|\bprocess group\b", re.I)  # `process_group`, `dp_group`
_GENERIC_GROUPS = frozenset({"process_group", "process group", "Process group", "Process Group"})
_GETATTR_NONE = re.compile(r"getattr\(\s*self\s*,\s*[\"'](\w+)[\"']\s*,\s*None\s*\)")
# None documented as "no parallelism" ("If None, no model parallelism is set", "None to disable it", "None when
# sequence parallelism is off", "None if it isn't enabled", "None: every rank reads it by itself")
_ABSENT_DOC = re.compile(r"\bNone\b[^.\n]{0,60}(?:\b(no|not|never|unless|disabled?|disables|off|unused|inactive|without"
                         r"|absent|skip|single|replicated|local|unsplit|unsharded|independently|alone"
                         r"|by (?:it|them)sel(?:f|ves)|on (?:its|their) own)\b|n't\b)", re.I)


def _reads(text: str, numpy_default: bool = True) -> str | None:
    """What a line of docs says None is: "world", "absent" or nothing. When it says both, the word nearer after
    None wins (`None uses the global group (a single writer)` is the world; `None: no sharding, not the world
    group` is absent). ``numpy_default``: also take `default = world group`, which names no None."""
    world = _WORLD_DOC.search(text) or (_WORLD_DEFAULT.search(text) if numpy_default else None)
    absent = _ABSENT_DOC.search(text)
    if world is None or absent is None:
        return "world" if world is not None else "absent" if absent is not None else None
    return "world" if world.end() <= absent.end() else "absent"


def says_world(text: str) -> bool:
    """Does ``text`` (a comment, a message) say the group used is the world or default one (`fall back to the default
    group, i.e. all ranks`)?"""
    return _reads(text) == "world" or re.search(r"\bworld\b|default (?:process )?group|all ranks", text, re.I) is not None


_CACHED_PROPERTY = frozenset({"functools.cached_property", "cached_property"})
_MARGIN_COMMENT = re.compile(r"\n#[^\n]*")  # literal-led (bot.analyze.scan): a comment line at the margin


class FunctionInfo(NamedTuple):
    node: FunctionNode
    qualname: str
    klass: ast.ClassDef | None
    parent: FunctionInfo | None  # the enclosing function of a nested one

    @property
    def params(self) -> list[str]:
        a = self.node.args
        names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        return names

    @property
    def is_method(self) -> bool:
        return self.klass is not None and self.params[:1] in (["self"], ["cls"])

    @property
    def is_property(self) -> bool:
        return any(dotted(d) in {"property", *_CACHED_PROPERTY} for d in self.node.decorator_list)

    @property
    def caches(self) -> bool:
        """A `functools.cached_property`: computed at the first read, then kept on the instance."""
        return any(dotted(d) in _CACHED_PROPERTY for d in self.node.decorator_list)


@dataclass
class ClassInfo:
    node: ast.ClassDef
    qualname: str
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    lambdas: dict[str, ast.Lambda] = field(default_factory=dict)  # class-level `is_tp = lambda g: ...`
    bound_lambdas: set[str] = field(default_factory=set)  # those of `lambdas` an instance passes itself to
    autograd: bool | None = None  # a torch.autograd.Function (through bases here); None: not asked yet
    # ModuleEnv fills these on first use (most classes are never asked):
    optional: set[str] | None = None  # `self.x` that can hold None
    read_as_optional: set[str] | None = None  # `getattr(self, "x", None)` in the class


@dataclass
class ModuleEnv:
    ctx: Context
    functions: list[FunctionInfo] = field(default_factory=list)
    by_node: dict[int, FunctionInfo] = field(default_factory=dict)
    module_functions: dict[str, FunctionInfo] = field(default_factory=dict)
    closures: dict[int, dict[str, FunctionInfo]] = field(default_factory=dict)  # id of a function -> its nested ones
    classes: dict[int, ClassInfo] = field(default_factory=dict)
    class_by_name: dict[str, ClassInfo] = field(default_factory=dict)
    optional_globals: set[str] = field(default_factory=set)
    # module-level names only ever bound to an instance of one class of this file (or to None): `LAYOUT =
    # Layout(ranks)`, at module level or under `global LAYOUT`; `LAYOUT.x` reads that class's `self.x`
    singletons: dict[str, ClassInfo] = field(default_factory=dict)
    lambdas: dict[str, ast.Lambda] = field(default_factory=dict)  # module-level `name = lambda ...`
    aliases: dict[str, ast.expr] = field(default_factory=dict)  # module-level `name = helper` / `= Fn.apply`
    module_flags: dict[str, ast.expr] = field(default_factory=dict)  # module-level `NAME = <a test>`, never rebound
    comments: list[tuple[int, str]] = field(default_factory=list)
    _returned: dict[int, ast.expr | None] = field(default_factory=dict)
    _origins: dict[tuple[str, int], Null] = field(default_factory=dict)  # asked for every assignment: remembered
    _conventions: list[str] | None = None  # the module level's comment blocks about groups and None
    _filled: dict[int, dict[str, int]] = field(default_factory=dict)  # id of a function node -> filled_in
    # id of a class node -> `self.x` -> (the method, the value it assigns)
    _assigned: dict[int, dict[str, list[tuple[FunctionInfo, ast.expr]]]] = field(default_factory=dict)
    # id of a class node -> `self.x` -> the separately supplied size it always holds, or None (bot.analyze.flow)
    supplied_sizes: dict[int, dict[str, Separate | None]] = field(default_factory=dict)
    # (callee, depth, calling function) -> whether the callee returns a guard (bot.analyze.flow.Walker.guard_like)
    guard_bodies: dict[tuple[int, int, int], bool] = field(default_factory=dict)
    _parallel_getters: dict[int, bool] = field(default_factory=dict)  # id of a function node -> parallel_getter
    _optional_getters: dict[int, bool] = field(default_factory=dict)  # id of a function node -> optional_getter
    _world_fallbacks: dict[int, bool] = field(default_factory=dict)  # id of a function node -> world_fallback_getter
    # id of a conditional expression with a constant boolean branch -> the `and`/`or` it is (one node per file, so
    # every walk records the same chain)
    bool_forms: dict[int, ast.BoolOp] = field(default_factory=dict)
    _parallel_attributes: dict[int, frozenset[str]] = field(default_factory=dict)  # class -> parallel_only_attribute
    _measured: dict[int, HelperSize | None] = field(default_factory=dict)  # id of a function node -> measured
    _nodes: dict[tuple[int, type | tuple[type, ...]], list[Any]] = field(default_factory=dict)  # -> nodes
    _comments_about: dict[tuple[int, str], list[str]] = field(default_factory=dict)  # (node, leaf) -> comments
    _holding: dict[str, list[int]] = field(default_factory=dict)  # word -> the lines that hold it

    @classmethod
    def of(cls, ctx: Context) -> ModuleEnv:
        env = cls(ctx)
        env._index(ctx.source.tree.body, None, None, "")
        for stmt in ctx.source.tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for target in _targets(stmt):
                    if isinstance(target, ast.Name):
                        if _may_be_none(stmt.value, set()):
                            env.optional_globals.add(target.id)
                        if isinstance(stmt.value, ast.Lambda):
                            env.lambdas[target.id] = stmt.value
                        elif isinstance(stmt.value, ast.Name | ast.Attribute):
                            env.aliases[target.id] = stmt.value
                        elif isinstance(stmt.value, ast.BoolOp | ast.Compare) and isinstance(stmt, ast.Assign):
                            env.module_flags[target.id] = stmt.value  # `TP_ON = _TP is not None and ws(_TP) > 1`
        if env.module_flags:  # one a function rebinds (`global TP_ON`) holds what it was set to last: unknown
            for _, names in global_statements(ctx.source.text):
                for name in names:
                    env.module_flags.pop(name, None)
        if env.class_by_name:
            env.singletons = _singletons(env)
        return env

    def nodes(self, root: ast.AST, kinds: type[_N] | tuple[type[_N], ...]) -> list[_N]:
        """The nodes of ``kinds`` under ``root`` (itself included), in `ast.walk`'s order, listed once per root
        and kinds: the verdicts ask the same function again for each key and path."""
        memo = (id(root), kinds)
        found = self._nodes.get(memo)
        if found is None:
            found = self._nodes[memo] = [n for n in ast.walk(root) if isinstance(n, kinds)]
        return found

    def _index(self, body: list[ast.stmt], klass: ClassInfo | None, parent: FunctionInfo | None, prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{stmt.name}"
                info = FunctionInfo(stmt, qual, klass.node if klass is not None else None, parent)
                self.functions.append(info)
                self.by_node[id(stmt)] = info
                if klass is not None and parent is None:
                    klass.methods.setdefault(stmt.name, info)
                elif klass is None and parent is None:
                    self.module_functions.setdefault(stmt.name, info)
                elif klass is None:
                    self.closures.setdefault(id(parent.node), {}).setdefault(stmt.name, info)  # type: ignore[union-attr]
                self._index(stmt.body, None, info, f"{qual}.")
            elif isinstance(stmt, ast.ClassDef):
                qual = f"{prefix}{stmt.name}"
                info_c = ClassInfo(stmt, qual)
                self.classes[id(stmt)] = info_c
                self.class_by_name.setdefault(stmt.name, info_c)
                self._index(stmt.body, info_c, parent, f"{qual}.")
                for item in stmt.body:
                    if not isinstance(item, (ast.Assign, ast.AnnAssign)) or item.value is None:
                        continue
                    lam = _static_lambda(item.value)  # `has_peers = staticmethod(lambda g: ...)`: no instance
                    if lam is None and isinstance(item.value, ast.Lambda):
                        lam = item.value  # `is_tp = lambda self, g: ...`: called through self, self comes first
                        info_c.bound_lambdas.update(t.id for t in _targets(item) if isinstance(t, ast.Name))
                    if lam is not None:
                        for target in _targets(item):
                            if isinstance(target, ast.Name):
                                info_c.lambdas[target.id] = lam
                init = info_c.methods.get("__init__")
                if init is not None:  # `self._sp_active = lambda: ...` set once in the constructor, as at class level
                    for node in statements(init.node.body):  # (statements only: no expression holds one)
                        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Lambda):
                            for target in _targets(node):
                                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                        and target.value.id == "self":
                                    info_c.lambdas.setdefault(target.attr, node.value)
            else:
                for child in child_blocks(stmt):
                    self._index(child, klass, parent, prefix)

    # ------------------------------------------------------------ origins

    def origin(self, key: str, function: FunctionInfo | None) -> Null:
        """Can ``key`` be None where it comes from, before anything in the function narrows it?"""
        memo = (key, id(function.node) if function is not None else 0)
        found = self._origins.get(memo)
        if found is None:
            found = self._origins[memo] = self._origin(key, function)
        return found

    def _origin(self, key: str, function: FunctionInfo | None) -> Null:
        head, _, rest = key.partition(".")
        if not rest:
            scope = function
            while scope is not None:
                if head in scope.params:
                    return Null.MAYBE if head in optional_params(scope.node) else Null.UNKNOWN
                scope = scope.parent
            return Null.MAYBE if head in self.optional_globals else Null.UNKNOWN
        if head in ("self", "cls") and function is not None:
            klass = self.class_of(function)
            attr = f"self.{rest}"  # (`cls.group` in a classmethod is the class-level `group` an instance reads too)
            if klass is not None and any(attr in self._optional_attrs(c) or rest in self._read_as_optional(c)
                                         for c in self.mro(klass)):
                return Null.MAYBE
            # a mixin's (or base's) method that never sets it reads what a subclass of the file stores
            if klass is not None and not self._sets(klass, attr) and any(
                    attr in self._optional_attrs(c) for c in self.classes.values()
                    if c is not klass and any(b is klass for b in self.mro(c)[1:])):
                return Null.MAYBE
            getter = self.method(klass, rest) if klass is not None and "." not in rest else None
            if getter is not None and getter is not function and getter.is_property and self.optional_getter(getter):
                return Null.MAYBE  # `@property def group(self): return self._group`, an optional attribute
            if any(self.origin(source, method) == Null.MAYBE for source, method in self.field_sources(key, function)):
                return Null.MAYBE  # `self.ep_group = pgs.ep`, `pgs: Groups` whose field `ep` defaults to None
        klass = self.singleton(head, function)
        if klass is not None and any(f"self.{rest}" in self._optional_attrs(c) or rest in self._read_as_optional(c)
                                     for c in self.mro(klass)):
            return Null.MAYBE
        # an object of a class of the file, typed where it comes from: `cfg: ParallelConfig` (a parameter), or
        # `self.cfg` set from one, annotated, or constructed (`self.cfg = ParallelConfig(...)`); its field `ep_group:
        # Optional[ProcessGroup] = None` can be None
        holder, _, leaf = key.rpartition(".")
        held = self.held_class(holder, function)
        if held is not None and any(f"self.{leaf}" in self._optional_attrs(c) for c in self.mro(held)):
            return Null.MAYBE
        return Null.UNKNOWN

    def _sets(self, klass: ClassInfo, attr: str) -> bool:
        """Does the class (or a base of it in the file) assign ``attr`` (`self.x`) anywhere?"""
        return any(attr in self.assigned_values(c) for c in self.mro(klass))

    def held_class(self, holder: str, function: FunctionInfo | None) -> ClassInfo | None:
        """The class of the file an object is an instance of, from its type where it is bound: a parameter of
        ``function`` annotated with it (`cfg: Config`), or an attribute of self (`self.cfg`) that the class
        annotates with it or sets from such a parameter or from its constructor."""
        if function is None or holder in ("self", "cls"):
            return None  # (self's own attributes are read as the class's, above)
        if "." not in holder:
            scope: FunctionInfo | None = function
            while scope is not None:
                if holder in scope.params:
                    return self.class_named(_annotation_of(scope.node, holder))
                scope = scope.parent
            return None
        head, _, attr = holder.partition(".")
        klass = self.class_of(function) if head == "self" and "." not in attr else None
        if klass is None:
            return None
        for item in klass.node.body:  # `cfg: Config` at class level (a dataclass field, an attribute declared)
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == attr:
                return self.class_named(item.annotation)
        for method, value in self.assigned_values(klass).get(holder, []):
            if isinstance(value, ast.Call) and (found := self.class_named(value.func)) is not None:
                return found
            if isinstance(value, ast.Name) and value.id in method.params:
                found = self.class_named(_annotation_of(method.node, value.id))
                if found is not None:
                    return found
        return None

    def class_named(self, node: ast.expr | None) -> ClassInfo | None:
        """The class of the file a type annotation or a constructor names (`Config`, `mod.Config`,
        `Optional[Config]` is not an instance always there and is left alone)."""
        name = dotted(node) if node is not None else None
        return self.class_by_name.get(name.rpartition(".")[2]) if name else None

    def assigned_values(self, klass: ClassInfo) -> dict[str, list[tuple[FunctionInfo, ast.expr]]]:
        """`self.x` -> every value a method of the class assigns it (plain and annotated assignments), with the
        method that assigns it (whose parameters the value may name)."""
        key = id(klass.node)
        if key not in self._assigned:
            found: dict[str, list[tuple[FunctionInfo, ast.expr]]] = {}
            for method in klass.methods.values():
                for node in own_statements(method.node.body):
                    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                        for target in _targets(node):
                            text = dotted(target)
                            if text is not None and text.startswith("self.") and text.count(".") == 1:
                                found.setdefault(text, []).append((method, node.value))
            self._assigned[key] = found
        return self._assigned[key]

    def filled_in(self, function: FunctionInfo) -> dict[str, int]:
        """Names the function gives a value when None, with the line that first does (`if g is None: g = X`)."""
        key = id(function.node)
        if key not in self._filled:
            self._filled[key] = _filled_in(function.node)
        return self._filled[key]

    def singleton(self, name: str, function: FunctionInfo | None) -> ClassInfo | None:
        """The class whose one instance the module-level ``name`` holds, unless a parameter of ``function`` (or
        of a function around it) shadows it."""
        klass = self.singletons.get(name)
        scope = function
        while klass is not None and scope is not None:
            if name in scope.params:
                return None
            scope = scope.parent
        return klass

    def documents_world(self) -> frozenset[str]:
        """The groups a docstring of the file says are the default (world) group when left None, a project's
        convention (`process_group : str | None ... If passed as None, will default to the world group.`): the
        names such a sentence gives (`dense_dp_group: ... None means every rank (the world group)` speaks for
        `dense_dp_group` alone), or `*` for every group when it names only a generic one (`process_group`,
        `group`, `pg`)."""
        names: set[str] = set()
        nodes = (self.ctx.source.tree, *(f.node for f in self.functions), *(c.node for c in self.classes.values()))
        for node in nodes:
            doc = ast.get_docstring(node, clean=False)
            if not doc or "None" not in doc or not _NAMES_A_GROUP.search(doc):
                continue  # (a sentence over no named group, `None means the default group.`, is its function's)
            for sentence in re.split(r"(?<=\.)\s", " ".join(doc.split())):
                if "group" in sentence and _reads(sentence, numpy_default=False) == "world":
                    named = {m.group(0) for m in _NAMES_A_GROUP.finditer(sentence)} - _GENERIC_GROUPS
                    names |= named or {"*"}
        return frozenset(names)

    def states_world(self) -> bool:
        """Does a comment block of the module level state it as the file's convention (`# group=None in this file
        means the default (world) process group`)? Unlike a docstring over one function, it speaks for every group
        of the file the file does not test for absence itself."""
        return any(_reads(block, numpy_default=False) == "world" for block in self._module_conventions())

    def documents_absent(self) -> bool:
        """Does a comment block of the module level say that a group left None is a dimension not used, a file's
        convention (`# every *_group argument may be None, which means the dimension is not used`)?"""
        return any(_reads(block) == "absent" for block in self._module_conventions())

    def _module_conventions(self) -> list[str]:
        """The comment blocks at the margin of the module level, outside every top-level statement and not right
        above one (those are about that statement), that name a group and None: a file's stated convention."""
        if self._conventions is None:
            self._conventions = _margin_blocks(self.ctx.source)
        return self._conventions

    def _optional_attrs(self, klass: ClassInfo) -> set[str]:
        if klass.optional is None:
            klass.optional = _optional_attributes(klass, self.filled_in)
        return klass.optional

    def _read_as_optional(self, klass: ClassInfo) -> set[str]:
        """Attributes the class reads as `getattr(self, "x", None)`: it expects them to be missing or None."""
        if klass.read_as_optional is None:
            start, end = klass.node.lineno, klass.node.end_lineno or klass.node.lineno
            text = "\n".join(self.ctx.source.lines[start - 1 : end])
            klass.read_as_optional = set(_GETATTR_NONE.findall(text)) if "getattr(" in text else set()
        return klass.read_as_optional

    def returned(self, function: FunctionInfo) -> ast.expr | None:
        """The test the function returns (bot.analyze.returns), one node per function: folded tests are new
        nodes, and the flow and the verdicts must see the same ones."""
        key = id(function.node)
        if key not in self._returned:
            self._returned[key] = returned_test(function.node)
        return self._returned[key]

    def parallel_getter(self, function: FunctionInfo) -> bool:
        """Does the function hand back a group only when it spans several ranks, None otherwise (`return pg if
        n > 1 else None`, every other return None)? A None test of what it returns is then the whole guard."""
        key = id(function.node)
        if key not in self._parallel_getters:
            self._parallel_getters[key] = _parallel_getter(function.node)
        return self._parallel_getters[key]

    def mpu_attribute(self, klass: ClassInfo, key: str) -> bool:
        """Is `self.x` only ever the group of an mpu / parallel-state getter (`self.tp_group =
        parallel_state.get_tensor_model_parallel_group()`)? Its guards are then out of scope, as the getter's are."""
        values = [v for c in self.mro(klass) for _, v in self.assigned_values(c).get(key, ())]
        return bool(values) and all(self.ctx.mpu_group(v) for v in values)

    def optional_getter(self, function: FunctionInfo) -> bool:
        """Is the function a plain getter of something that may be None (`def get_ring_group(): return
        _RING_GROUP`, the global None until a setter runs; `return self._sp_group`, an optional attribute)? What
        it hands back may then be None. A getter that tests or asserts first is not plain, and is not read."""
        key = id(function.node)
        if key not in self._optional_getters:
            self._optional_getters[key] = self._optional_getter(function)
        return self._optional_getters[key]

    def world_fallback_getter(self, function: FunctionInfo) -> bool:
        """An in-file helper whose whole body returns its group or the world (`return g if g is not None else
        dist.group.WORLD`, `return g or _get_default_group()`): what it hands back is never None, and None meant
        the world."""
        key = id(function.node)
        if key not in self._world_fallbacks:
            self._world_fallbacks[key] = self._world_fallback_getter(function)
        return self._world_fallbacks[key]

    def _world_fallback_getter(self, function: FunctionInfo) -> bool:
        value = _sole_return(function.node, (ast.Pass,))
        if value is None:
            return False
        params = set(function.params)
        if isinstance(value, ast.IfExp):  # `g if g is not None else WORLD`: the other branch is the parameter tested
            tested, _ = presence(value.test)
            world, other = (value.orelse, value.body) if self.ctx.is_world(value.orelse) else (value.body, value.orelse)
            return isinstance(tested, ast.Name) and tested.id in params and self.ctx.is_world(world) and \
                isinstance(other, ast.Name) and other.id == tested.id
        return isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2 and \
            isinstance(value.values[0], ast.Name) and value.values[0].id in params and self.ctx.is_world(value.values[1])

    def _optional_getter(self, function: FunctionInfo) -> bool:
        value = _sole_return(function.node, (ast.Global, ast.Nonlocal, ast.Pass))
        if value is None or isinstance(value, ast.IfExp):
            return _returns_group_or_none(function, self.ctx)
        if mapping_get(value):  # `return self.groups.get(name)`: None for a name the mapping lacks
            return True
        text = dotted(value)
        if text is None:
            return False
        head = text.partition(".")[0]
        if head in function.params and head not in ("self", "cls"):
            return False  # hands back what its caller gave it
        return self.origin(text, function) == Null.MAYBE

    def parallel_only_attribute(self, klass: ClassInfo, key: str) -> bool:
        """Is `self.x` set to a group only behind a test that the size is above one, None otherwise
        (`if spec is None or spec.tp_size <= 1: self.x = None; return` then `self.x = get_tp_group()`)? None
        then stands for a single rank too, and a None test of it is the whole guard, as for a parallel getter."""
        memo = id(klass.node)
        if memo not in self._parallel_attributes:  # every attribute of the class in one walk
            self._parallel_attributes[memo] = _parallel_only_attributes(
                [m.node for c in self.mro(klass) for m in c.methods.values()])
        return key in self._parallel_attributes[memo]

    def measured(self, function: FunctionInfo) -> HelperSize | None:
        """What an in-file size helper measures (`def pg_len(g): if g is None: return 1; return g.size()`), read
        as a project's helper is (bot.analyze.elsewhere)."""
        key = id(function.node)
        if key not in self._measured:
            self._measured[key] = measures(function.node)
        return self._measured[key]

    def mro(self, klass: ClassInfo) -> list[ClassInfo]:
        """The class and its bases defined in this file (depth first, as far as names resolve here)."""
        out: list[ClassInfo] = []
        stack = [klass]
        while stack and len(out) < 32:
            c = stack.pop(0)
            if c in out:
                continue
            out.append(c)
            for base in c.node.bases:
                name = dotted(base)
                found = self.class_by_name.get(name.rpartition(".")[2]) if name else None
                if found is not None:
                    stack.append(found)
        return out

    def method(self, klass: ClassInfo, name: str) -> FunctionInfo | None:
        for c in self.mro(klass):
            if name in c.methods:
                return c.methods[name]
        return None

    def class_of(self, function: FunctionInfo) -> ClassInfo | None:
        scope: FunctionInfo | None = function
        while scope is not None and scope.klass is None:
            scope = scope.parent
        return self.classes.get(id(scope.klass)) if scope is not None and scope.klass is not None else None

    # ------------------------------------------------------------ local predicates and callees

    def callee(self, call: ast.Call, function: FunctionInfo | None) -> FunctionInfo | None:
        """The in-file function a call runs: `helper(...)` (a function nested in the caller first),
        `self.helper(...)`, `cls.helper(...)`, and `Fn.apply(...)` of an autograd Function defined here (its
        `forward`)."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name):
            klass = self.class_by_name.get(func.value.id)
            if klass is not None and self.is_autograd(klass):
                return self.method(klass, "forward")
        if isinstance(func, ast.Name):
            scope = function
            while scope is not None:  # `def _gather(): ...` then `_gather()` in its function, or in a sibling
                nested = self.closures.get(id(scope.node))
                if nested is not None and func.id in nested:
                    return nested[func.id]
                scope = scope.parent
            found = self.module_functions.get(func.id)
            alias = self.aliased(func) if found is None else None
            return self.callee(ast.Call(func=alias, args=[], keywords=[]), function) if alias is not None else found
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and function is not None \
                and func.value.id in ("self", "cls"):
            klass = self.class_of(function)
            if klass is not None:
                return self.method(klass, func.attr)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.class_by_name:
            return self.method(self.class_by_name[func.value.id], func.attr)  # `_Roll._impl(x, g)`: through its class
        return None

    def aliased(self, func: ast.expr) -> ast.expr | None:
        """What a module-level alias called as ``func`` names (`sum_over = _Sum.apply`, `fn = helper`)."""
        if not isinstance(func, ast.Name):
            return None
        alias = self.aliases.get(func.id)
        return None if alias is None or (isinstance(alias, ast.Name) and alias.id == func.id) else alias

    def call_params(self, callee: FunctionInfo, call: ast.Call) -> list[str]:
        """The parameters a call's positional arguments bind to (no self/cls/ctx)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id not in self.module_functions:
            func = self.aliased(func) or func
        if isinstance(func, ast.Attribute) and func.attr == "apply":
            return callee.params[1:]  # forward(ctx, ...)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.class_by_name \
                and callee.params[:1] == ["self"]:
            return callee.params  # `Cls.method(obj, x)`: the instance is passed too
        return callee.params[1:] if callee.is_method else callee.params

    def is_autograd(self, klass: ClassInfo) -> bool:
        if klass.autograd is None:  # asked once per function per helper level: remembered
            klass.autograd = any((dotted(b) or "").endswith("Function") for c in self.mro(klass) for b in c.node.bases)
        return klass.autograd

    def autograd_forward(self, function: FunctionInfo) -> FunctionInfo | None:
        """For `backward` of an autograd Function here: its `forward` (whose `ctx.x = param` feed backward)."""
        klass = self.class_of(function)
        if klass is None or not self.is_autograd(klass) or function.node.name == "forward":
            return None
        return self.method(klass, "forward")

    def ctx_params(self, forward: FunctionInfo) -> dict[str, str]:
        """`ctx.group = group` in forward: ctx attribute -> forward parameter."""
        out: dict[str, str] = {}
        params = set(forward.params[1:])
        ctx = forward.params[0] + "." if forward.params else None
        for node in own_statements(forward.node.body):
            if not isinstance(node, ast.Assign) or ctx is None:
                continue
            pairs: list[tuple[ast.expr, ast.expr]] = [(t, node.value) for t in node.targets]
            for t in node.targets:  # `ctx.n, ctx.grp = n, grp`
                if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(t.elts) == len(node.value.elts):
                    pairs.extend(zip(t.elts, node.value.elts, strict=True))
            for t, value in pairs:
                text = dotted(t) or ""
                if isinstance(value, ast.Name) and value.id in params and text.startswith(ctx):
                    out[text.partition(".")[2]] = value.id
                elif isinstance(value, ast.Tuple) and text.startswith(ctx):  # `ctx.saved = n, grp`
                    for i, v in enumerate(value.elts):
                        if isinstance(v, ast.Name) and v.id in params:
                            out[f"{text.partition('.')[2]}[{i}]"] = v.id
        return out

    def property_of(self, node: ast.expr, function: FunctionInfo | None) -> FunctionInfo | None:
        """`self.tp_active` when it is a property of the enclosing class."""
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and function is not None):
            klass = self.class_of(function)
            if klass is not None:
                method = self.method(klass, node.attr)
                if method is not None and method.is_property:
                    return method
        return None

    def lambda_of(self, call: ast.Call, function: FunctionInfo | None) -> tuple[ast.Lambda, list[str]] | None:
        """The lambda a call runs, with the parameters its arguments bind (a class-level lambda called through
        self binds the instance first, which the call does not spell)."""
        func = call.func
        if isinstance(func, ast.Name):
            lam = self.lambdas.get(func.id)
            return (lam, [a.arg for a in lam.args.args]) if lam is not None else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                and function is not None:
            klass = self.class_of(function)
            lam = klass.lambdas.get(func.attr) if klass is not None else None
            if klass is None or lam is None:
                return None
            params = [a.arg for a in lam.args.args]
            return lam, params[1:] if func.attr in klass.bound_lambdas else params
        return None

    # ------------------------------------------------------------ what None means, in words

    def world_documented(self, name: str, function: FunctionInfo | None) -> bool:
        """The function's docstring, or a comment in its class or function, says None is the world/default group
        for this name."""
        leaf = leaf_name(name)
        for doc in self._docs(function):
            for line in _mentions(doc, leaf):
                if _reads(line) == "world":
                    return True
        # `"""None means the default group."""` over `def all_reduce(t, pg=None)`: it can only mean pg
        if function is not None and self._the_only_group(name, function) and _docstring_says_world(function.node):
            return True
        if any(_reads(c) == "world" for c in self._field_comments(name, function)):
            return True
        return any(re.search(r"\bworld|default group|global group", c, re.I) or _reads(c) == "world"
                   for c in (*self._comments(function, leaf), *self._global_comments(name)))

    @staticmethod
    def _the_only_group(name: str, function: FunctionInfo) -> bool:
        """``name`` is the function's one parameter that can be None and is named like a group."""
        optional = optional_params(function.node)
        return name in optional and [p for p in optional if GROUP_NAME.search(p)] == [name]

    def absent_documented(self, name: str, function: FunctionInfo | None) -> bool:
        """The docs, or a comment in the class or function, say None means the dimension is absent (`# the
        group is None for a local, single-host run`)."""
        leaf = leaf_name(name)
        if any(_reads(line) == "absent" for doc in self._docs(function) for line in _mentions(doc, leaf)):
            return True
        return any(_reads(c) == "absent" for c in (*self._comments(function, leaf), *self._global_comments(name),
                                                   *self._field_comments(name, function),
                                                   *self._getter_docs(name, function)))

    def _getter_docs(self, name: str, function: FunctionInfo | None) -> Iterator[str]:
        """For a local bound once from an in-file getter's call, or an attribute every method sets from one in-file
        getter (`self.sp_group = get_sp_group()`), the getter's docstring (`The sequence-parallel group, or None
        when sequence parallelism is off.`), which is about what it hands back, and the comments on a module global
        it returns."""
        if function is not None and "." not in name:  # a local bound once from a getter's call: `g = get_ep_group(n)`
            value = sole_binding(function.node, name)
            getter = self.callee(value, function) if isinstance(value, ast.Call) else None
            if getter is not None:
                yield from (ast.get_docstring(getter.node, clean=False) or "").splitlines()
            return
        klass = self.class_of(function) if function is not None else None
        if klass is None or not name.startswith("self.") or name.count(".") != 1:
            return
        values = [(method, value) for c in self.mro(klass) for method, value in self.assigned_values(c).get(name, ())]
        # (every value a call this file resolves, all to the same getter)
        getters = [self.callee(value, method) if isinstance(value, ast.Call) else None for method, value in values]
        getter = getters[0] if getters else None
        if getter is None or any(g is not getter for g in getters):
            return
        yield from (ast.get_docstring(getter.node, clean=False) or "").splitlines()
        returned = _sole_return(getter.node, (ast.Global, ast.Pass))
        if isinstance(returned, ast.Name):
            yield from self._global_comments(returned.id)

    def _global_comments(self, name: str) -> Iterator[str]:
        """For a module global (`_SP_GROUP = None`), the comments at the end of its module-level assignment and on the
        lines right above it (`# stays None when sequence parallelism is off`)."""
        if "." in name:
            return
        lines = self.ctx.source.lines
        for stmt in self.ctx.source.tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(
                    isinstance(t, ast.Name) and t.id == name for t in _targets(stmt)):
                match = _COMMENT.search(lines[stmt.lineno - 1])
                if match is not None:
                    yield match.group(1)
                yield from _comments_above(lines, stmt.lineno - 1, 0)

    def _comments(self, function: FunctionInfo | None, leaf: str) -> Iterator[str]:
        """The comments in the function's class (or the function) about ``leaf``: those that name it, and those
        at the end of a line that sets it or on the lines right above one (`# None: no tensor parallelism`)."""
        klass = self.class_of(function) if function is not None else None
        if klass is not None:  # (and its bases of the file: a subclass reads what they set)
            for c in self.mro(klass):
                yield from self._node_comments(c.node, leaf)
        elif function is not None:
            yield from self._node_comments(function.node, leaf)

    def field_sources(self, name: str, function: FunctionInfo | None) -> list[tuple[str, FunctionInfo]]:
        """For an attribute (`self.ep_group`) that the class only ever sets from a field of an object typed with a
        class of the file (`self.ep_group = pgs.ep` with `pgs: ProcessGroupCollection`): those fields, each with
        the method that reads it. Empty otherwise."""
        klass = self.class_of(function) if function is not None else None
        if klass is None or not name.startswith("self.") or name.count(".") != 1:
            return []
        values = [(method, value) for c in self.mro(klass) for method, value in self.assigned_values(c).get(name, ())]
        out = []
        for method, value in values:
            source = dotted(value) if isinstance(value, ast.Attribute) else None
            holder = source.rpartition(".")[0] if source is not None else ""
            if source is None or not holder or self.held_class(holder, method) is None:
                return []
            out.append((source, method))
        return out

    def _field_comments(self, name: str, function: FunctionInfo | None) -> Iterator[str]:
        """The comments about a field of another class of the file that ``name`` is, or is only ever set from."""
        yield from self._held_comments(name, function)
        for source, method in self.field_sources(name, function):
            yield from self._held_comments(source, method)

    def _held_comments(self, name: str, function: FunctionInfo | None) -> Iterator[str]:
        """For a field of an object of another class of the file (`cfg.group`, `cfg: MetricsConfig`), that
        class's docstring lines and comments about the field (`# None means the default (world) group`)."""
        holder, _, leaf = name.rpartition(".")
        held = self.held_class(holder, function) if holder else None
        if held is None or (function is not None and held is self.class_of(function)):
            return
        yield from _mentions(ast.get_docstring(held.node, clean=False) or "", leaf)
        yield from self._node_comments(held.node, leaf)

    def _node_comments(self, node: ast.AST, leaf: str) -> list[str]:
        memo = (id(node), leaf)  # (asked again for each use of the group, of the whole class)
        found = self._comments_about.get(memo)
        if found is None:
            found = self._comments_about[memo] = list(self._read_node_comments(node, leaf))
        return found

    def _read_node_comments(self, node: ast.AST, leaf: str) -> Iterator[str]:
        start, end = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        lines = self.ctx.source.lines
        named, sets = re.compile(rf"\b{re.escape(leaf)}\b"), re.compile(rf"\b{re.escape(leaf)}\s*(?::[^=]*)?=(?!=)")
        holding = self._lines_holding(leaf)  # (1-based: a large class is read for each group, most lines lack it)
        for number in holding[bisect.bisect_left(holding, start) : bisect.bisect_right(holding, end)]:
            i = number - 1
            line = lines[i]
            match = _COMMENT.search(line) if "#" in line else None
            code = line if match is None else line[: match.start()]
            setting = sets.search(code)
            # a comment on a line that sets it to None is about that None, said or not (`= None  # no CP`)
            to_none = setting is not None and _NONE_VALUE.match(code, setting.end()) is not None
            if match is not None and (setting or named.search(match.group(1))):
                # (a comment naming it among other groups speaks for it only in its own clauses)
                yield _about_none(match.group(1) if setting else _about(match.group(1), leaf), to_none)
            if setting:
                yield from (_about_none(c, to_none) for c in _comments_above(lines, i, start - 1))

    def _lines_holding(self, word: str) -> list[int]:
        """The sorted 1-based lines whose text holds ``word``, from string searches of the whole text."""
        found = self._holding.get(word)
        if found is None:
            text, offsets, at = self.ctx.source.text, [], self.ctx.source.text.find(word)
            while at >= 0:
                offsets.append(at)
                at = text.find(word, at + 1)
            found = self._holding[word] = self.ctx.source.lines_at(offsets)
        return found

    def _docs(self, function: FunctionInfo | None) -> Iterator[str]:
        """The docstrings that document the function's names: its own and its enclosing functions', then its
        class's and the class's `__init__` (where numpy/Google style documents constructor parameters)."""
        scope = function
        while scope is not None:
            yield ast.get_docstring(scope.node, clean=False) or ""
            scope = scope.parent
        klass = self.class_of(function) if function is not None else None
        if klass is not None:
            yield ast.get_docstring(klass.node, clean=False) or ""
            init = klass.methods.get("__init__")
            if init is not None and init is not function:
                yield ast.get_docstring(init.node, clean=False) or ""


_NONE_VALUE = re.compile(r"\s*None\s*$")


def _about_none(comment: str, to_none: bool) -> str:
    """A comment on an assignment of None, as a sentence about None (`no context parallelism` -> `None: no
    context parallelism`), so the docs' readers see what it says None means."""
    return f"None: {comment}" if to_none and not re.search(r"\bNone\b", comment) else comment


def _mentions(doc: str, leaf: str) -> Iterator[str]:
    """The docstring lines that talk about ``leaf``: its line and up to two after it, or up to eight indented
    under it (a parameter's entry continued), but not into the next parameter's entry (`other (int): ...`,
    `other : int`), whose words are about something else."""
    lines = doc.splitlines()
    word = re.compile(rf"\b{re.escape(leaf)}\b")
    for i, line in enumerate(lines):
        if word.search(line):
            taken = [line]
            indent = len(line) - len(line.lstrip())
            for n, more in enumerate(lines[i + 1 : i + 9]):
                if _ENTRY.match(more) or not more.strip() or (n >= 2 and len(more) - len(more.lstrip()) <= indent) \
                        or any(_another(other, leaf) for other in _GROUP_WORD.findall(more)):  # about another group
                    break
                taken.append(more)
            yield _about(" ".join(taken), leaf)


def _comments_above(lines: list[str], index: int, floor: int) -> Iterator[str]:
    """The comment-only lines right above ``lines[index]`` (0-based), nearest first, none above ``floor``."""
    j = index - 1
    while j >= floor and lines[j].lstrip().startswith("#"):
        yield lines[j].lstrip()[1:]
        j -= 1


def _about(text: str, leaf: str) -> str:
    """The clauses of ``text`` that are not about another group (`intra_group is always a real group; inter_group
    is None on a single node`: the second is inter_group's), abbreviations' dots kept from ending a clause."""
    text = text.replace("i.e.", "ie").replace("e.g.", "eg")
    kept, others = [], False
    # (`group` is an English word too: within another group's entry, "the world group" does not name it)
    plain = re.compile(rf"\b{re.escape(leaf)}\b")
    named = re.compile(r"^\s*group\b|`group`|\bgroup\s*(?:=|is\b|\()") if leaf == "group" else plain
    for clause in re.split(r";|\.\s", text):
        if (named if others else plain).search(clause) and not _entry_of_another(clause, leaf):
            others = False
        elif any(_another(o, leaf) for o in _GROUP_WORD.findall(clause)):
            # another group's clause, and the clauses after it that name no group are its entry continued
            # (`dense_dp_group: the dense data-parallel group; None means every rank`)
            others = True
            continue
        if not others:
            kept.append(clause)
    return "; ".join(kept)


def _entry_of_another(clause: str, leaf: str) -> bool:
    """`dense_dp_group: data-parallel group of ...`: an entry headed by another group's name, where ``leaf`` (an
    English word, `group`) is only part of its description."""
    head = _ENTRY.match(clause)
    return head is not None and any(_another(o, leaf) for o in _GROUP_WORD.findall(head.group(0)))


_ENTRY = re.compile(r"\s*[*\w`]+\s*(?:\([^)]*\))?\s*:(?!:)")
# a group's name, or a parallel dimension's short name (`tp and dp always exist; ep is None without experts`)
_GROUP_WORD = re.compile(r"\b(?:\w+_(?:group|pg)|e?tp|e?dp|ep|sp|cp|pp|fsdp|hsdp)\b")


def _another(word: str, leaf: str) -> bool:
    """Is ``word`` (a _GROUP_WORD) about another group than ``leaf``: `ep` is, for `dp`; `tp` is not, for `tp_group`."""
    return word != leaf and not leaf.startswith(f"{word}_") and not word.startswith(f"{leaf}_")


def optional_params(function: FunctionNode) -> set[str]:
    """Parameters that can be None: defaulting to it, or annotated Optional."""
    args = function.args
    names = none_defaults(function)
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if arg.annotation is not None and optional_annotation(arg.annotation):
            names.add(arg.arg)
    return names


def none_defaults(function: FunctionNode) -> set[str]:
    """Parameters whose default is None."""
    return {name for name, default in param_defaults(function) if is_none(default)}


def param_defaults(function: FunctionNode) -> list[tuple[str, ast.expr]]:
    """Each parameter with a default, and the default (defaults belong to the last positional ones; a keyword-only
    one without a default has None in `kw_defaults`, which is no default)."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    out = [(arg.arg, default) for arg, default in
           zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)]
    out.extend((arg.arg, d) for arg, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)
    return out


def optional_annotation(node: ast.expr) -> bool:
    """`Optional[X]`, `Union[X, None]`, `X | None`, `None`, or such a string annotation (parsed, never run)."""
    if isinstance(node, ast.Constant):
        if node.value is None:
            return True
        if isinstance(node.value, str) and len(node.value) < 200:
            try:
                return optional_annotation(ast.parse(node.value, mode="eval").body)
            except (SyntaxError, ValueError, RecursionError):
                return False
        return False
    if isinstance(node, ast.Subscript):
        name = (dotted(node.value) or "").rsplit(".", 1)[-1]
        if name == "Optional":
            return True
        if name == "Union":
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return any(is_none(e) for e in elts)
        return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return optional_annotation(node.left) or optional_annotation(node.right)
    return False


def _optional_attributes(klass: ClassInfo, filled_in: Callable[[FunctionInfo], dict[str, int]]) -> set[str]:
    """`self.x` assigned None, an optional parameter, `getattr(..., None)` or a conditional with a None branch
    anywhere in the class; class-level `x = None` / `x: Optional[...]` too."""
    attrs: set[str] = set()
    init = klass.methods.get("__init__")
    # a class-level `x = None` that `__init__` always replaces with a value is a default no instance keeps
    replaced = set() if init is None else {
        text for stmt in init.node.body if isinstance(stmt, ast.Assign)
        and not _may_be_none(stmt.value, optional_params(init.node))
        for t in stmt.targets if (text := dotted(t)) is not None and text.startswith("self.")}
    for item in klass.node.body:
        if isinstance(item, (ast.Assign, ast.AnnAssign)):
            annotated = isinstance(item, ast.AnnAssign) and optional_annotation(item.annotation)
            if annotated or _may_be_none(item.value, set()):
                attrs.update(f"self.{t.id}" for t in _targets(item) if isinstance(t, ast.Name)
                             and (annotated or f"self.{t.id}" not in replaced))
    handed = _optional_by_callers(klass)
    for method in klass.methods.values():
        params = (optional_params(method.node) | handed.get(method.node.name, set())) - filled_in(method).keys()
        for node, present in _with_present(method.node.body, frozenset()) if params else \
                ((n, frozenset[str]()) for n in own_statements(method.node.body)):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                annotated = isinstance(node, ast.AnnAssign) and optional_annotation(node.annotation)
                for target, value in _paired(node):
                    if annotated or _may_be_none(value, params - present):
                        text = dotted(target)
                        if text and text.startswith("self."):
                            attrs.add(text)
    return attrs


def _optional_by_callers(klass: ClassInfo) -> dict[str, set[str]]:
    """Parameters of the class's methods that another method hands an optional parameter of its own (`def
    __init__(self, mp_group=None): self.set_group(mp_group)`): a setter's `self.g = group` then stores what may be
    None."""
    out: dict[str, set[str]] = {}
    for caller in klass.methods.values():
        optional = optional_params(caller.node)
        if not optional:
            continue  # (a None written out is rare; an optional parameter handed on is the case)
        for call in (n for n in ast.walk(caller.node) if isinstance(n, ast.Call)):
            func = call.func
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
                continue
            callee = klass.methods.get(func.attr)
            if callee is None or callee is caller:
                continue
            given = [*zip(callee.params[1:], call.args, strict=False),  # (a call may pass fewer)
                     *((k.arg, k.value) for k in call.keywords if k.arg is not None)]
            for param, value in given:
                if isinstance(value, ast.Name) and value.id in optional:
                    out.setdefault(func.attr, set()).add(param)
    return out


def _paired(node: ast.Assign | ast.AnnAssign) -> list[tuple[ast.expr, ast.expr | None]]:
    """Each target with the value it gets: element by element for `self.a, self.b = a, b`, else the whole value."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
            and isinstance(node.value, ast.Tuple) and len(node.value.elts) == len(node.targets[0].elts) \
            and not any(isinstance(e, ast.Starred) for e in (*node.targets[0].elts, *node.value.elts)):
        return list(zip(node.targets[0].elts, node.value.elts, strict=True))
    return [(t, node.value) for t in _targets(node)]


def _with_present(body: list[ast.stmt], present: frozenset[str]) -> Iterator[tuple[ast.stmt, frozenset[str]]]:
    """Each statement of a function body (as own_statements) with the names known not None where it runs: inside
    `if g is not None:` (or `if g:`, or the `else` of `if g is None:`), after `assert g is not None` and after
    `if g is None: raise ...` (or return) in the same block. `self.g = g` there never stores None: an attribute
    set only so is there only when g is (YaFSDP's `if flag: assert g is not None; self.g = g`)."""
    for stmt in body:
        yield stmt, present
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Assert):
            known = _present_when(stmt.test)
            if known is not None and known[1]:
                present = present | {known[0]}
            continue
        if isinstance(stmt, ast.If):
            known = _present_when(stmt.test)
            yes = present | {known[0]} if known is not None and known[1] else present
            no = present | {known[0]} if known is not None and not known[1] else present
            yield from _with_present(stmt.body, yes)
            yield from _with_present(stmt.orelse, no)
            if known is not None and not known[1] and stmt.body and \
                    isinstance(stmt.body[-1], (ast.Raise, ast.Return, ast.Continue, ast.Break)):
                present = no  # `if g is None: raise`: g is there for the rest of the block
            continue
        for block in child_blocks(stmt):
            yield from _with_present(block, present)


def _filled_in(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Names the function gives a value when they are None (`if grp is None: grp = dist.group.WORLD`,
    `grp = grp or WORLD`, `grp = X if grp is None else grp`), with the first line that does: an attribute set
    from them later is never None, and a caller's None does not reach what follows."""
    filled: dict[str, int] = {}
    for node in own_statements(function.body):
        if isinstance(node, ast.If):
            test = none_test(node.test)
            if test is not None and test.is_none and isinstance(test.target, ast.Name):
                name = test.target.id
                if any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                       and not _may_be_none(s.value, set()) for s in node.body):
                    filled.setdefault(name, node.lineno)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and \
                    isinstance(value.values[0], ast.Name) and value.values[0].id == name:
                if not _may_be_none(value.values[-1], set()):
                    filled.setdefault(name, node.lineno)
            elif isinstance(value, ast.IfExp) and not _may_be_none(value, {name}):
                filled.setdefault(name, node.lineno)
    return filled


def _singletons(env: ModuleEnv) -> dict[str, ClassInfo]:
    """Module-level names bound only to `Cls(...)` of one class defined here (or to None), at module level or in a
    function that declares them `global`."""
    bound: dict[str, set[str] | None] = {}  # name -> the classes it is bound to; None: bound to something else

    def note(name: str, value: ast.expr | None) -> None:
        if value is None or is_none(value) or bound.get(name, set()) is None:
            return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in env.class_by_name:
            bound.setdefault(name, set()).add(value.func.id)  # type: ignore[union-attr]
        else:
            bound[name] = None

    def assignments(body: list[ast.stmt], names: set[str] | None) -> None:
        for stmt in body if names is None else own_statements(body):
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for target in _targets(stmt):
                    if isinstance(target, ast.Name) and (names is None or target.id in names):
                        note(target.id, stmt.value)

    assignments(env.ctx.source.tree.body, None)
    text = env.ctx.source.text
    # `global NAME` then `NAME = Cls(...)`, in the functions holding a `global` line (found by the text: most
    # files have none, and walking every function's statements for one is a tenth of reading a module)
    lines = env.ctx.source.lines_at(offset for offset, _ in global_statements(text))
    for f in env.functions if lines else ():
        start, end = f.node.lineno, f.node.end_lineno or f.node.lineno
        i = bisect.bisect_left(lines, start)
        if i == len(lines) or lines[i] > end:
            continue
        body = "\n".join(env.ctx.source.lines[start - 1 : end])
        if not any(f"{name}(" in body for name in env.class_by_name):
            continue  # (`global cdb` then `cdb = TorchBackend(...)` of another module's class: most such functions)
        declared = {n for stmt in own_statements(f.node.body) if isinstance(stmt, ast.Global) for n in stmt.names}
        if declared:
            assignments(f.node.body, declared)
    return {name: env.class_by_name[next(iter(classes))] for name, classes in bound.items()
            if classes is not None and len(classes) == 1}


def _returns_group_or_none(function: FunctionInfo, ctx: Context) -> bool:
    """A getter that hands back None on one path and a group on another (`if len(ranks) == 1: return None` then
    `return dist.new_group(ranks)`; `return None if n == 1 else self._build_group()`): a group by the getter's name
    or by what it returns."""
    values: list[ast.expr | None] = []
    tests: list[ast.expr] = []  # what chooses None
    for stmt in own_statements(function.node.body):
        if isinstance(stmt, ast.Return):
            values.extend((stmt.value.body, stmt.value.orelse) if isinstance(stmt.value, ast.IfExp) else (stmt.value,))
            if isinstance(stmt.value, ast.IfExp):
                tests.append(stmt.value.test)
        elif isinstance(stmt, ast.If) and any(isinstance(r, ast.Return) and r.value is not None and is_none(r.value)
                                              for r in stmt.body):
            tests.append(stmt.test)
    if not any(v is not None and is_none(v) for v in values):
        return False
    # None for the world: `None if len(ranks) == dist.get_world_size() else new_group(ranks)`, or said so
    if any(ctx.is_world_size(n) for t in tests for n in ast.walk(t)):
        return False
    if _docstring_says_world(function.node):
        return False
    given = [v for v in values if v is not None and not is_none(v)]
    # (an entry of a container of groups names a group: `self.groups[name]`, `self.groups.get(name)`)
    named = [dotted(_container_or_callee(v)) or "" for v in given]
    return bool(given) and (bool(GROUP_NAME.search(function.node.name)) or any(GROUP_NAME.search(leaf_name(n)) for n in named))


def _container_or_callee(value: ast.expr) -> ast.expr:
    """What names a returned value: the function called, or the container of an entry (`self.groups[name]`,
    `self.groups.get(name)`)."""
    if isinstance(value, ast.Subscript):
        return value.value
    if isinstance(value, ast.Call):
        func = value.func
        return func.value if isinstance(func, ast.Attribute) and func.attr == "get" else func
    return value


def _docstring_says_world(function: FunctionNode) -> bool:
    """A clause of the function's docstring says None is the world (`None means the default group.`)."""
    doc = ast.get_docstring(function, clean=False) or ""
    return any(_reads(c, numpy_default=False) == "world" for line in doc.splitlines() for c in re.split(r"[.;]", line))


def _static_lambda(value: ast.expr) -> ast.Lambda | None:
    """The lambda of `staticmethod(lambda g: ...)`."""
    if isinstance(value, ast.Call) and dotted(value.func) == "staticmethod" and len(value.args) == 1 \
            and not value.keywords and isinstance(value.args[0], ast.Lambda):
        return value.args[0]
    return None


def _sole_return(function: FunctionNode, skipped: tuple[type[ast.stmt], ...]) -> ast.expr | None:
    """The value of a function whose whole body (its docstring and ``skipped`` statements aside) is one `return`."""
    body = [s for s in after_docstring(function.body) if not isinstance(s, skipped)]
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None


def _margin_blocks(source: ParsedSource) -> list[str]:
    """bot.analyze.env.ModuleEnv._module_conventions, read off the source."""
    text = source.text
    first = text[: text.find("\n")] if text.startswith("#") else ""
    if not any("None" in c and "group" in c for c in (first, *(m.group() for m in _MARGIN_COMMENT.finditer(text)))):
        return []  # (most files: no comment at the margin speaks of None and a group)
    inside = {n for stmt in source.tree.body for n in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)}
    blocks: list[str] = []
    block: list[str] = []
    for number, line in enumerate(source.lines, 1):
        if line.startswith("#") and number not in inside:
            block.append(line[1:].strip())
            continue
        if block and line.strip() == "" and number not in inside:  # (a blank line ends it: not above)
            blocks.append(" ".join(block))
        block = []
    return [b for b in blocks if "None" in b and "group" in b]


def _annotation_of(function: FunctionNode, param: str) -> ast.expr | None:
    a = function.args
    return next((p.annotation for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg == param), None)


def _may_be_none(value: ast.expr | None, optional_names: set[str]) -> bool:
    if value is None:
        return False
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.Name):
        return value.id in optional_names
    if isinstance(value, ast.IfExp):
        # `d if g is None else g`, `g if g is not None else d`, `g if g else d`: g is taken only when present
        present = _present_when(value.test)
        body = _may_be_none(value.body, optional_names - ({present[0]} if present and present[1] else set()))
        orelse = _may_be_none(value.orelse, optional_names - ({present[0]} if present and not present[1] else set()))
        return body or orelse
    if isinstance(value, ast.Call) and dotted(value.func) == "getattr" and len(value.args) == 3:
        return is_none(value.args[2])
    return mapping_get(value)  # `self.fsdp_group = topology.get("fsdp")`: None when the key is missing


def _present_when(test: ast.expr) -> tuple[str, bool] | None:
    """bot.analyze.terms.presence, of a plain name."""
    target, present = presence(test)
    return (target.id, present) if isinstance(target, ast.Name) else None


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for t in node.targets:
            out.extend(t.elts if isinstance(t, ast.Tuple) else [t])
        return out
    return [node.target]


def sole_binding(function: FunctionNode, name: str) -> ast.expr | None:
    """The value of the function's one assignment to the local ``name`` (None: none, or several)."""
    bound = [node.value for node in statements(function.body) if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
    return bound[0] if len(bound) == 1 else None


def binding_before(function: FunctionNode, name: str, at: ast.stmt) -> ast.expr | None:
    """The value the local ``name`` holds when ``at`` runs, where straight-line code decides it: the nearest
    statement before ``at`` (in its block, then in each enclosing block) that binds ``name``, when it is a plain
    `name = value` (None: a loop, a branch or another kind of binding sets it, or nothing before ``at`` does);
    `name += x` in between keeps it."""
    path = _blocks_to(function.body, at)
    for block, index in reversed(path or []):
        for stmt in reversed(block[:index]):
            if not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt)):
                continue
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                continue  # `total += x`: a tensor's in-place update, the same tensor
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                return stmt.value
            return None
    return None


def _blocks_to(body: list[ast.stmt], at: ast.stmt) -> list[tuple[list[ast.stmt], int]] | None:
    """The blocks from ``body`` down to the one holding ``at``, each with the index of the statement on the way."""
    for i, stmt in enumerate(body):
        if stmt is at:
            return [(body, i)]
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if stmt.lineno <= at.lineno <= (stmt.end_lineno or stmt.lineno):
            for block in child_blocks(stmt):
                inner = _blocks_to(block, at)
                if inner is not None:
                    return [(body, i), *inner]
    return None


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a function body, nested blocks included, nested functions and classes excluded."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in child_blocks(stmt):
            stack.extend(reversed(block))


def _parallel_only_attributes(methods: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> frozenset[str]:
    """The `self.x` whose every non-None value is stored behind a size test on the multi-rank side (an early
    exit on the single-rank side before it in the same block, or inside an `if` that holds only for several
    ranks), with at least one such value."""
    behind_only: set[str] = set()
    anywhere: set[str] = set()

    def multi(test: ast.expr, value: bool) -> bool:
        """Does ``test`` being ``value`` mean a size above one (an `and` of it when True, an `or` when False)?"""
        operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if value else ast.Or) \
            else [test]
        return any((c := size_compare(o)) is not None and c.positive == value and not c.nonmember_bug
                   for o in operands)

    def walk(block: list[ast.stmt], behind: bool) -> None:
        for stmt in block:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
                if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
            if targets:
                assert isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None
                if not is_none(stmt.value):
                    for target in targets:
                        text = dotted(target)
                        if text is not None and text.startswith("self.") and text.count(".") == 1:
                            (behind_only if behind else anywhere).add(text)
            elif isinstance(stmt, ast.If):
                walk(stmt.body, behind or multi(stmt.test, True))
                walk(stmt.orelse, behind or multi(stmt.test, False))
                if not behind and multi(stmt.test, False) and stmt.body and \
                        isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                    behind = True  # the single-rank side left: what follows has several ranks
            elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for inner in child_blocks(stmt):
                    walk(inner, behind)

    for method in methods:
        walk(method.body, False)
    return frozenset(behind_only - anywhere)


def _parallel_getter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    sized = False
    for stmt in own_statements(node.body):
        if not isinstance(stmt, ast.Return):
            continue
        value = stmt.value
        if value is None or is_none(value):
            continue
        if not (isinstance(value, ast.IfExp) and is_none(value.orelse)
                and isinstance(value.body, (ast.Name, ast.Attribute))):
            return False
        compare = size_compare(value.test)
        if compare is None or not compare.positive or compare.nonmember_bug:
            return False  # (`n != 1` would hand back a non-member group, size -1)
        sized = True
    return sized
