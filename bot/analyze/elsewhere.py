"""Size helpers and communicating helpers a file imports from elsewhere in its project (`from pkg.state import
get_parallel_world_size`, `from pkg.utils import sync_shared_params`), read as text through a reader the caller
supplies (never imported, never run).

A project's one-line wrapper `return dist.get_world_size(group=group)` measures exactly what get_world_size does,
None included (the world); `return 1 if group is None else dist.get_world_size(group)` is 1 for None. Anything
else is left to the name-based guess (bot.analyze.context.Context.size_helper_group).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from bot.analyze.group_methods import method_receiver
from bot.analyze.names import absolute_module, dotted, leaf_name
from bot.analyze.scan import GROUP_NAME, WRAPPER_NAME
from bot.analyze.source import after_docstring
from bot.analyze.terms import UNREACHABLE, group_argument, is_none, none_test, size_compare, without_not

Reader = Callable[[str], "str | None"]  # a '/'-separated path from the project root -> its text (None: absent)
_Node = TypeVar("_Node", ast.FunctionDef, ast.ClassDef)  # what a file is searched for (a helper or a Function)

# names of imported helpers worth a read: they say they measure a size
_SIZE_NAME = re.compile(r"size", re.I)


class HelperSize(NamedTuple):
    """What the helper answers: a group's world size, and for None ``when_none`` (None: the world's size;
    bot.analyze.terms.UNREACHABLE: its own answer, taken for the project's own guard)."""

    when_none: int | None


class ProjectHelpers:
    """One project's helpers, each file read at most once per run."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self._texts: dict[str, str | None] = {}
        self._sizes: dict[str, HelperSize | None] = {}
        self._communicating: dict[str, bool] = {}
        # top-level package -> the folders it sits in, when not the root or src, each with the subpackage found
        # there (a namespace package split over distributions: `models/src/anemoi/models`, `training/src/anemoi/...`)
        self._folders: dict[str, list[tuple[str, str]]] = {}

    def size_of(self, qualified: str) -> HelperSize | None:
        """`pkg.mod.fn`: what ``fn`` (defined at the top of pkg/mod.py or pkg/mod/__init__.py) measures, if it
        is a world-size wrapper."""
        if qualified not in self._sizes:
            self._sizes[qualified] = self._read(qualified) if _SIZE_NAME.search(qualified.rpartition(".")[2]) else None
        return self._sizes[qualified]

    def communicates(self, qualified: str, collectives: frozenset[str]) -> bool:
        """Does ``fn`` (as in ``size_of``) run one of ``collectives`` on a group it is given (`group=pg`, pg one
        of its parameters), itself or through functions of its file it hands the group to? Then a call of it
        passing a group is that group's collective, as a wrapper named for one is (`sync_shared_params(model,
        pg)` broadcasts on pg)."""
        if qualified not in self._communicating:
            found = self._located(qualified, _definition)
            self._communicating[qualified] = found is not None and \
                bool(_communicating_params(found[0], found[1], collectives, _HOPS))
        return self._communicating[qualified]

    def tests_size(self, qualified: str) -> bool:
        """Does ``qualified`` (as in ``communicates``) test the size of a group it is given on the way (`if
        pg.size() == 1: return x`, `if get_world_size(group) <= 1: return`)? Then a None test in front of a call of it
        is the None half of a guard whose size half is in there."""
        key = f"{qualified}:size"
        if key not in self._communicating:
            self._communicating[key] = False  # (a cycle of imports reads as no)
            found = self._located(qualified, _definition)
            self._communicating[key] = found is not None and self._sizes_on_the_way(found[0], found[1], found[2], None,
                                                                                    _HOPS)
        return self._communicating[key]

    def _sizes_on_the_way(self, function: ast.FunctionDef, text: str, package: str, param: str | None,
                          hops: int) -> bool:
        """``function`` tests the size of ``param`` (any parameter when None) itself, or hands it to a function of
        its file (an autograd Function's `.apply` too) or to one it imports, ``hops`` calls deep, that does
        (`reduce_tensor(x, g)` -> `_Reduce.apply(x, g)` -> forward's `_reduce(x, group=g)`, which exits on one
        rank)."""
        if _tests_param_size(function, param):
            return True
        if hops <= 0:
            return False
        wanted = {param} if param is not None else set(_params(function))
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            func = dotted(node.func) or ""
            passed = {i: a.id for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id in wanted}
            named = {k.arg: k.value.id for k in node.keywords
                     if k.arg is not None and isinstance(k.value, ast.Name) and k.value.id in wanted}
            if not func or func == function.name or not (passed or named):
                continue
            head, dot, attr = func.partition(".")
            if dot and attr == "apply":  # an autograd Function of the file: forward(ctx, *args)
                klass = _class_definition(text, head)
                forward = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == "forward"),
                               None) if klass is not None else None
                params = [a.arg for a in forward.args.args[1:]] if forward is not None else []
                if forward is not None and any(self._sizes_on_the_way(forward, text, package, params[i], hops - 1)
                                               for i in passed if i < len(params)):
                    return True
                continue
            if dot:
                continue
            callee = _definition(text, func)
            if callee is not None:
                positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
                receiving = {positional[i] for i in passed if i < len(positional)} | set(named)
                if any(self._sizes_on_the_way(callee, text, package, p, hops - 1) for p in receiving):
                    return True
                continue
            source = _reexported(text, func, package)  # imported: asked there, of any parameter
            if source is not None and self.tests_size(f"{source}.{func}"):
                return True
        return False

    def applies(self, qualified: str, collectives: frozenset[str]) -> bool:
        """Is ``qualified`` an autograd Function of the project (`class Fn(torch.autograd.Function)`, read as
        for ``size_of``) whose forward or backward communicates on a group (`all_gather(..., group=ctx.group)`,
        or a helper named for a collective given one)? Then `Fn.apply(x, g)` is a collective on g, as an
        imported Function named for one is (`AllGather.apply(x, g)`)."""
        key = f"{qualified}.apply"
        if key not in self._communicating:
            klass = self._definition(qualified, _class_definition)
            self._communicating[key] = klass is not None and _function_communicates(klass, collectives)
        return self._communicating[key]

    def locate(self, package: str, folder: str, sub: str = "") -> None:
        """The top-level ``package`` sits in ``folder`` of the project (`python/` for `python/pkg/mod.py`), as
        a file that imports from its own package shows, with its subpackage ``sub`` there; `""` and `src` are
        always looked in."""
        if folder not in ("", "src") and (folder, sub) not in (known := self._folders.setdefault(package, [])):
            known.append((folder, sub))

    def _roots(self, module: str) -> list[str]:
        """Where ``module``'s file may sit: the folders its package was seen in, then, for a namespace package
        split over distributions, the same folders with the seen subpackage's name swapped for the module's
        (`training/src` -> `models/src` for `anemoi.models.x`)."""
        package, _, rest = module.partition(".")
        known = self._folders.get(package)
        if not known:
            return ["", "src/"]
        roots = [f"{folder}/" for folder, _ in known]
        wanted = rest.partition(".")[0]
        for folder, sub in known:
            parts = folder.split("/")
            swapped = [p.replace(sub, wanted) if sub and wanted and sub in p else p for p in parts]
            if swapped != parts and (root := "/".join(swapped) + "/") not in roots:
                roots.append(root)
        return roots

    def _read(self, qualified: str) -> HelperSize | None:
        function = self._function(qualified)
        return measures(function) if function is not None else None

    def _function(self, qualified: str) -> ast.FunctionDef | None:
        return self._definition(qualified, _definition)

    def _definition(self, qualified: str, find: Callable[[str, str], _Node | None]) -> _Node | None:
        found = self._located(qualified, find)
        return found[0] if found is not None else None

    def _located(self, qualified: str, find: Callable[[str, str], _Node | None],
                 hops: int = 2) -> tuple[_Node, str, str] | None:
        """The definition of ``qualified``, its file's text and the package its relative imports start from; a name
        a package's `__init__.py` (or any module) re-exports (`from .comm import fn`) is followed there, ``hops``
        times at most."""
        module, _, name = qualified.rpartition(".")
        if not module or not all(part.isidentifier() for part in module.split(".")):
            return None
        base = module.replace(".", "/")
        for path in (f"{r}{base}{tail}" for r in self._roots(module) for tail in (".py", "/__init__.py")):
            text = self._text(path)
            if text is None:
                continue
            package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
            node = find(text, name)
            if node is not None:
                return node, text, package
            source = _reexported(text, name, package)
            return self._located(f"{source}.{name}", find, hops - 1) if source is not None and hops > 0 else None
        return None

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                self._texts[path] = self._reader(path)
            except (OSError, UnicodeDecodeError, ValueError):
                self._texts[path] = None
        return self._texts[path]


def _definition(text: str, name: str) -> ast.FunctionDef | None:
    """The module-level `def name(...)`, parsed alone: from its line to the next line at the margin."""
    node = _top_level(text, "def", name)
    return node if isinstance(node, ast.FunctionDef) else None


def _class_definition(text: str, name: str) -> ast.ClassDef | None:
    """The module-level `class name(...Function):`, an autograd Function, parsed alone as `_definition` does."""
    node = _top_level(text, "class", name)
    if not isinstance(node, ast.ClassDef) or not any((dotted(b) or "").endswith("Function") for b in node.bases):
        return None
    return node


_MARGIN = re.compile(r"^[^ \t\n#)]", re.M)


@functools.lru_cache(maxsize=4096)
def _top_level(text: str, keyword: str, name: str) -> ast.stmt | None:
    """The statement `keyword name` at the margin (found by its literal: the helpers of one file are asked for
    again and again, and a regex anchored at `^` scans every line), from its line to the next at the margin."""
    head, at = f"{keyword} {name}", -1
    while True:
        at = text.find(head, at + 1)
        if at < 0:
            return None
        after = text[at + len(head) : at + len(head) + 1]
        if (at == 0 or text[at - 1] == "\n") and after in ("(", ":", " "):
            break
    end = _MARGIN.search(text, at + len(head))
    chunk = text[at : end.start() if end is not None else len(text)]
    try:
        tree = ast.parse(chunk)
    except (SyntaxError, ValueError):
        return None
    return tree.body[0] if tree.body else None


def _function_communicates(klass: ast.ClassDef, collectives: frozenset[str]) -> bool:
    """Does a method of the Function run a collective, or call a helper named for one, with a group: `group=`
    anything but None, or an argument named as a group (`ctx.group`, `pg`)?"""
    for node in ast.walk(klass):
        if not isinstance(node, ast.Call):
            continue
        leaf = (dotted(node.func) or "").rpartition(".")[2]
        if leaf not in collectives and not WRAPPER_NAME.search(leaf):
            continue
        if any(k.arg == "group" and not is_none(k.value) for k in node.keywords):
            return True
        if any(GROUP_NAME.search(leaf_name(dotted(a) or "")) for a in node.args if isinstance(a, (ast.Name, ast.Attribute))):
            return True
    return False


def measures(function: ast.FunctionDef | ast.AsyncFunctionDef) -> HelperSize | None:
    """`return ws(g)` (the world for None), `return 1 if g is None else ws(g)` or `if g is None: return 1` then
    `return ws(g)` (1 for None), with g the first parameter; behind the None test, the group's own `g.size()`
    measures it too (`if not dist.is_initialized() or g is None: return 1`, then `return g.size()`)."""
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if not params:
        return None
    group = params[0]
    body = after_docstring(function.body)
    if len(body) == 2 and isinstance(body[0], ast.If) and not body[0].orelse and len(body[0].body) == 1:
        exits, early = _none_exit(body[0].test, group), body[0].body[0]
        fallback = _constant(_default_of(function, early.value)) if isinstance(early, ast.Return) else None
        if exits and fallback is not None and isinstance(body[1], ast.Return):
            if _world_size_of(body[1].value, group) and isinstance(body[0].test, ast.Compare) \
                    and isinstance(early, ast.Return) and isinstance(early.value, ast.Constant):
                return HelperSize(fallback)
            # Megatron-Core's `get_pg_size` (more than the None test, the group's own size, a default parameter):
            # labellers take a test on it for the project's own guard, so only its group is known
            return HelperSize(UNREACHABLE) if _world_size_of(body[1].value, group) or \
                _own_size_of(body[1].value, group) else None
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value = body[0].value
    if _world_size_of(value, group):
        return HelperSize(None)
    if isinstance(value, ast.IfExp):
        test = none_test(value.test)
        if test is None or not _named(test.target, group):
            return None
        sized, other = (value.orelse, value.body) if test.is_none else (value.body, value.orelse)
        fallback = _constant(other)
        if fallback is not None and _world_size_of(sized, group):
            return HelperSize(fallback)
        if fallback is not None and _own_size_of(sized, group):
            return HelperSize(UNREACHABLE)
    return None


def _default_of(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.expr | None) -> ast.expr | None:
    """A parameter's default where the value is that parameter (`def n(g, default=1): ... return default`),
    as the calls that leave it out see it; anything else as it is."""
    if not isinstance(node, ast.Name):
        return node
    a = function.args
    positional = [*a.posonlyargs, *a.args]
    pairs = [*zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True),
             *((k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)]
    return next((d for p, d in pairs if p.arg == node.id), node)


def _none_exit(test: ast.expr, group: str) -> bool:
    """`g is None`, alone or beside tests that do not name g (`not dist.is_initialized() or g is None`)."""
    operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    tests = [none_test(v) for v in operands]
    named = [t for t in tests if t is not None and t.is_none and _named(t.target, group)]
    others = [v for v, t in zip(operands, tests, strict=True) if t is None or not _named(t.target, group)]
    return len(named) == 1 and not any(isinstance(n, ast.Name) and n.id == group for v in others for n in ast.walk(v))


def _own_size_of(node: ast.expr | None, group: str) -> bool:
    """`g.size()`: a present group's own size (it raises for None, so only behind a None test)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
        and _named(node.func.value, group) and not node.args and not node.keywords


_HOPS = 3  # how many functions of the helper's file a group is followed through (as in-file helpers are)


def _tests_param_size(function: ast.FunctionDef, param: str | None = None) -> bool:
    """An `if` in ``function`` tests the size of ``param`` (any of its parameters when None) against one rank
    (`p.size() == 1`, `get_world_size(p) <= 1`, `get_world_size(group=p) > 1`), alone or in a chain, or a local
    holding that size (`n = get_world_size(group=p)` then `if n == 1:`)."""
    params = set(_params(function))
    if param is not None:
        params &= {param}
    held: set[str] = set()  # locals bound to a parameter's size
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and _size_of_param(node.value, params):
                held.add(targets[0].id)
    # (a test on the None path only, `if group is None: if n == 1: return x`, leaves a group it is given untested)
    none_side = {id(n) for node in ast.walk(function) if isinstance(node, ast.If) and (t := none_test(node.test))
                 and isinstance(t.target, ast.Name) and t.target.id in params
                 for stmt in (node.body if t.is_none else node.orelse) for n in ast.walk(stmt)}
    for node in ast.walk(function):
        if not isinstance(node, ast.If) or id(node) in none_side:
            continue
        test = without_not(node.test)
        for part in test.values if isinstance(test, ast.BoolOp) else [test]:
            compare = size_compare(without_not(part))
            if compare is not None and (_size_of_param(compare.term, params) or
                                        (isinstance(compare.term, ast.Name) and compare.term.id in held)):
                return True
    return False


def _params(function: ast.FunctionDef) -> list[str]:
    a = function.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


_SIZE_FUNCTION = re.compile(r"(?:^|[._])(?:world_size|get_size|group_size)$")


def _size_of_param(term: ast.expr, params: set[str]) -> bool:
    """`p.size()`, or `...world_size(p)` / `...world_size(group=p)` / `comm.get_size(p)` (a project's size helper
    too, named for a size), p a parameter."""
    if any(_own_size_of(term, p) for p in params):
        return True
    if not isinstance(term, ast.Call) or not _SIZE_FUNCTION.search(dotted(term.func) or ""):
        return False
    group = group_argument(term)
    return group is not None and any(_named(group, p) for p in params)


def _communicating_params(function: ast.FunctionDef, text: str | None, collectives: frozenset[str],
                          hops: int, held: dict[str, str] | None = None) -> set[str]:
    """The parameters of ``function`` that a collective runs on: `group=pg`, a group's own collective
    (`pg.allreduce(x)`), or, with the file's ``text``, handed to a function defined at the top of that file that
    communicates on the parameter it lands in (`return send_recv(t, group)`), or to an autograd Function of that
    file that does (`_SeqAllToAll.apply(group, x)`), ``hops`` calls deep. ``held``: other spellings of a parameter
    (`ctx.group` -> `group` in an autograd Function's methods)."""
    names = {p: p for p in _params(function)}
    names.update(held or {})
    found: set[str] = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        func = dotted(node.func) or ""
        if func.rpartition(".")[2] in collectives:
            found.update(names[t] for k in node.keywords if k.arg == "group" and (t := dotted(k.value)) in names)
        receiver = method_receiver(node)  # `pg.allreduce(x)` on a parameter
        if receiver is not None and (t := dotted(receiver)) in names:
            found.add(names[t])
        if text is None or hops <= 0 or not func or func == function.name:
            continue
        passed = {i: names[t] for i, a in enumerate(node.args) if (t := dotted(a)) in names}
        named = {k.arg: names[t] for k in node.keywords if k.arg is not None and (t := dotted(k.value)) in names}
        if not passed and not named:
            continue
        head, dot, attr = func.partition(".")
        if dot:
            if attr == "apply":  # (an autograd Function's arguments are positional)
                on = _applied(text, head, collectives, hops - 1)
                found.update(p for i, p in passed.items() if i in on)
            continue
        callee = _definition(text, func)
        if callee is None:
            continue
        inner = _communicating_params(callee, text, collectives, hops - 1)
        positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
        found.update(p for i, p in passed.items() if i < len(positional) and positional[i] in inner)
        found.update(p for k, p in named.items() if k in inner)
    return found


def _applied(text: str, name: str, collectives: frozenset[str], hops: int) -> set[int]:
    """The positions of `name.apply(...)`'s arguments that a collective runs on, for an autograd Function at the top
    of ``text``: its forward's parameters after ctx that forward communicates on, or that it saves on ctx
    (`ctx.group = group`) for a collective there or in backward."""
    klass = _class_definition(text, name)
    methods = {m.name: m for m in klass.body if isinstance(m, ast.FunctionDef)} if klass is not None else {}
    forward = methods.get("forward")
    if forward is None or not forward.args.args:
        return set()
    ctx, *params = [a.arg for a in forward.args.args]
    saved = {f"{ctx}.{t.attr}": v.id for stmt in ast.walk(forward) if isinstance(stmt, ast.Assign)
             and isinstance(v := stmt.value, ast.Name) and v.id in params
             for t in stmt.targets if isinstance(t, ast.Attribute) and _named(t.value, ctx)}
    on = _communicating_params(forward, text, collectives, hops, saved)
    backward = methods.get("backward")
    if saved and backward is not None and backward.args.args:
        own = backward.args.args[0].arg
        on |= _communicating_params(backward, text, collectives, hops,
                                    {f"{own}.{key.partition('.')[2]}": p for key, p in saved.items()})
    return {i for i, p in enumerate(params) if p in on}


def _reexported(text: str, name: str, package: str) -> str | None:
    """The module a file takes ``name`` from (`from .comm import (a, name)` in package ``package``), absolute."""
    for m in _FROM_IMPORT.finditer(text):
        names = [part.split() for part in m.group(2).strip("()").replace("\\", " ").split(",")]
        if not any(words and words[-1] == name and (len(words) == 1 or words[0] == name) for words in names):
            continue
        source = m.group(1)
        level = len(source) - len(source.lstrip("."))
        if level - 1 >= len(package.split(".")):
            return None  # (above the top package)
        return absolute_module(source[level:] or None, level, package)
    return None


_FROM_IMPORT = re.compile(r"^from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)


def _world_size_of(node: ast.expr | None, group: str) -> bool:
    """`dist.get_world_size(g)` / `torch.distributed.get_world_size(group=g)` / `get_world_size(g)`."""
    if not isinstance(node, ast.Call) or (dotted(node.func) or "").rpartition(".")[2] != "get_world_size":
        return False
    args = [*node.args, *(k.value for k in node.keywords if k.arg == "group")]
    return len(args) == 1 and _named(args[0], group) and len(node.args) + len(node.keywords) == 1


def _named(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _constant(node: ast.expr | None) -> int | None:
    if node is None or is_none(node) or not isinstance(node, ast.Constant) or type(node.value) is not int:
        return None
    return node.value
