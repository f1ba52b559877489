"""Run the flow analysis over one module: which functions, in which order, and the in-file call summaries.

Only functions that touch a relevant line (a collective, a world-size query, the predicate, or a call of a
function that does, a few levels up) are walked, and functions whose whole body returns a test (a copy of the
predicate may test only a cached size); methods that cache a size or a flag on the instance are walked
first, so the others read what they leave.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.analyze.context import Context
from bot.analyze.env import FunctionInfo, ModuleEnv
from bot.analyze.flow import AttributeFlag, Sites, State, Summary, Walker, across_methods, left_on_ctx
from bot.analyze.names import dotted
from bot.analyze.scan import GROUP_NAME, SIZE_FLAG, word_before
from bot.analyze.slicing import HELPER_LEVELS, callable_name
from bot.analyze.source import ParsedSource, statements
from bot.analyze.terms import UNREACHABLE, Const, SizeOf, SizeTerm

# literal-led (see bot.analyze.scan): `group=g` (a whole word) and `get_world_size(g)` / `(group=g)`, also of
# a project's wrapper (`get_distributed_world_size(g)`); the argument alone, not `f(with_cp=True)`
_GROUP_KWARG = re.compile(r"group\s*=\s*([A-Za-z_][\w.]*)")
_SIZE_ARG = re.compile(r"world_size\(\s*(?:group\s*=\s*)?([A-Za-z_][\w.]*)\s*[,)]")


@dataclass
class ModuleFacts:
    ctx: Context
    env: ModuleEnv
    sites: Sites
    walked: set[int] = field(default_factory=set)  # ids of function nodes walked
    group_keys: frozenset[str] = frozenset()  # dotted texts passed as a group somewhere in the file
    # id of a function node -> the keys it counts the world for when None (bot.analyze.verdicts), found once
    world_when_none: dict[int, frozenset[str]] = field(default_factory=dict)
    # id of a function or class node -> the names assigned the world's size anywhere in it (bot.analyze.verdicts)
    world_sized: dict[int, frozenset[str]] = field(default_factory=dict)


def analyze_module(ctx: Context) -> ModuleFacts:
    env = ModuleEnv.of(ctx)
    sites = Sites()
    facts = ModuleFacts(ctx, env, sites)
    source = ctx.source
    group_keys = _group_keys(source.text)
    facts.group_keys = group_keys
    summaries: dict[int, Summary] = {}
    # which methods' end states each summary entry came from (None: from assignments in several methods)
    origins: dict[str, set[int] | None] = {}

    lines = _interesting_lines(env, source)
    # (a function whose whole body returns a test is walked too: a copy of the predicate on a cached size,
    # `return self.g is not None and self.n > 1`, touches no hot line)
    hot = [f for f in env.functions if _spans_hot(lines, f.node) or (lines and _returns_test(f.node))]
    by_class: dict[int, list[FunctionInfo]] = {}
    for f in hot:
        if f.klass is not None and f.parent is None:
            by_class.setdefault(id(f.klass), []).append(f)
    group_words = {k.rpartition(".")[2] for k in group_keys}
    flag_setters: list[FunctionInfo] = []
    # A flag a cold method sets from a None test of a group (`self.on = g is not None` in `__init__`) guards the
    # hot methods that read it: such methods are summarised too, in file order.
    for class_id, methods in by_class.items():
        read = "\n".join("\n".join(source.lines[m.node.lineno - 1 : m.node.end_lineno]) for m in methods)
        cold = [m for m in env.classes[class_id].methods.values()
                if m not in methods and _sets_instance_flag(m.node, source.lines, group_words, read)]
        if cold:
            methods.extend(cold)
            methods.sort(key=lambda m: m.node.lineno)
            flag_setters.extend(cold)

    def walk(function: FunctionInfo) -> None:
        Walker(env, function, sites, summaries, group_keys, lines).run()
        facts.walked.add(id(function.node))

    # Pass A: methods that may cache sizes/flags on the instance; their end states make the class summary.
    for class_id, methods in by_class.items():
        summary = Summary()
        summaries[class_id] = summary
        assigned: list[tuple[str, SizeTerm | None]] = []
        for method in methods:
            if not _assigns_self(method.node, source.lines):
                continue
            walker = Walker(env, method, sites, summaries, group_keys, lines)
            walker.attribute_sizes = assigned
            end = walker.run()
            facts.walked.add(id(method.node))
            for key, term in end.sizes.items():
                if key.startswith("self.") and isinstance(term, SizeOf):
                    translated = across_methods(term, end)
                    if translated is None:
                        continue
                    term = translated
                if key.startswith("self."):
                    merged = term if key not in summary.sizes else _merge(summary.sizes[key], term)
                    _came_from(origins, key, method)
                    if merged is not None:
                        summary.sizes[key] = merged
                    else:
                        summary.sizes.pop(key, None)
            binding = {local: attr for attr, local in end.same.items() if attr.startswith("self.") and "." not in local}
            for key, flag in end.flags.items():
                if not key.startswith("self."):
                    continue
                sizes = _sizes_named(flag, binding, end)
                if _only_bound(flag, binding, sizes):
                    summary.flags[key] = AttributeFlag(flag, binding, sizes)
                    _came_from(origins, key, method)

        if any(isinstance(t, SizeOf) for _, t in assigned):
            walked = {id(m.node) for m in methods}
            klass = env.classes[class_id]
            for method in klass.methods.values():
                if id(method.node) not in walked:
                    assigned.extend(_plain_assignments(method))
            for key, term in _assigned_sizes(assigned).items():
                if not isinstance(summary.sizes.get(key), SizeOf):  # a constant end state is only __init__'s
                    summary.sizes[key] = term
                    origins[key] = None

    # Autograd Functions: what forward leaves on ctx, for backward.
    for f in hot:
        owner = env.class_of(f)
        if f.node.name != "backward" or owner is None or not f.params or env.autograd_forward(f) is None:
            continue
        forward = env.autograd_forward(f)
        if forward is None or not forward.params or not _spans_hot(lines, forward.node):
            continue
        end = Walker(env, forward, sites, summaries, group_keys, lines).run()
        facts.walked.add(id(forward.node))
        left = left_on_ctx(end, forward.params[0])
        if left:
            summaries.setdefault(id(owner.node), Summary()).ctx_sizes.update(left)

    # Subclasses in this file inherit what their bases cache.
    for info in env.classes.values():
        chain = env.mro(info)
        if len(chain) > 1:
            inherited = Summary()
            for c in reversed(chain):
                own = summaries.get(id(c.node))
                if own is not None:
                    inherited.sizes.update(own.sizes)
                    inherited.flags.update(own.flags)
            summaries[id(info.node)] = inherited

    # Pass B: everything hot (again for methods of pass A that read what the summary now knows).
    with_sites = {id(x.function.node) for table in (sites.collectives, sites.calls, sites.chains, sites.sizes,
                                                    sites.flags)
                  for x in table.values() if x.function is not None}
    setters = {id(f.node) for f in flag_setters}  # (their flags over sizes the summary now knows: walked again)
    for f in [*hot, *flag_setters]:
        if id(f.node) in facts.walked and id(f.node) not in setters and \
                not _reads_summary(f, summaries, source.lines, origins, only_chains=id(f.node) not in with_sites):
            continue  # walked in pass A, and nothing it records can read the summary differently
        walk(f)
    if any(_spans_hot(lines, s) for s in source.tree.body
           if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))):
        Walker(env, None, sites, summaries, group_keys, lines).run()
    return facts


def _group_keys(text: str) -> frozenset[str]:
    keys = {m.group(1) for m in _GROUP_KWARG.finditer(text) if not word_before(text, m.start())}
    keys.update(m.group(1) for m in _SIZE_ARG.finditer(text))
    return frozenset(keys)


def _interesting_lines(env: ModuleEnv, source: ParsedSource) -> list[int]:
    """Hot lines (a collective, a world-size query, the predicate) plus the lines that call a function which
    contains one, transitively (a few levels): only functions touching these are walked."""
    lines = set(source.hot_lines)
    names: set[str] = set()
    for _ in range(HELPER_LEVELS):
        ordered = sorted(lines)
        found = set()
        for f in env.functions:
            if _spans_hot(ordered, f.node):
                # only names a call can resolve to (bot.analyze.env.callee): module-level functions, methods and
                # functions nested in a function (called there); `Cls(...)` is not a call of __init__
                name = f.node.name
                if (f.parent is None or f.klass is None) and callable_name(name):
                    found.add(name)
                klass = env.class_of(f)
                if klass is not None and env.is_autograd(klass):
                    found.add(f"{klass.node.name}.apply")
        new = found - names
        if not new:
            break
        names |= new
        lines |= source.call_lines(new)
    return sorted(lines)


def _only_bound(test: ast.expr, binding: dict[str, str], sizes: dict[str, SizeTerm]) -> bool:
    """A flag read in another method only means something when the groups it tests are attributes (or the sizes
    it compares were taken of attributes). A count the constructor was handed beside them (`ep_group is not None
    and ep_size > 1`, ep_size a parameter) stays what it was: a separately supplied size, read as such."""
    for node in ast.walk(test):
        if isinstance(node, (ast.Compare, ast.Call)):
            for name in ast.walk(node):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load) and name.id not in binding \
                        and name.id not in sizes and name.id not in ("self", "bool") and name.id.islower() \
                        and _looks_local(name.id, test) and not _SUPPLIED_COUNT.search(name.id):
                    return False
    return True


# a count of ranks handed in (`ep_size`, `tp_world_size`, `num_replicas`): no group, and fixed for the object
_SUPPLIED_COUNT = re.compile(r"(?:_size|_world_size|_degree|^num_\w+|^n_\w+)$")


def _sizes_named(test: ast.expr, binding: dict[str, str], end: State) -> dict[str, SizeTerm]:
    """The locals a flag's test compares that held a size where it was set (`n = ws(g) if g else 1`, then
    `self.use = n > 1`), their groups named as attributes; a size of a local group is left out."""
    out: dict[str, SizeTerm] = {}
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id not in binding and node.id in end.sizes:
            term = end.sizes[node.id]
            held = across_methods(term, end) if isinstance(term, SizeOf) else term
            if held is not None:
                out[node.id] = held
    return out


def _looks_local(name: str, test: ast.expr) -> bool:
    # module names (`dist`, `torch`) are used as call targets or attribute bases, and so are functions imported by
    # name (`get_world_size(g)`); locals as plain values
    return not any((isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name)
                   or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name)
                   for n in ast.walk(test))


def _assigned_sizes(assigned: list[tuple[str, SizeTerm | None]]) -> dict[str, SizeOf]:
    """Attributes whose every assignment, in any method and on any path, is a constant <= 1 or the world size
    of one group taken where that group is present (`self.n = 1` in `__init__`, `self.n = ws(g)` under
    `if g is not None:` in a setup method): a None-safe size of that group. End states miss these, since the
    setup method's other path leaves the attribute as it was."""
    merged: dict[str, SizeTerm | None] = {}
    for key, term in assigned:
        merged[key] = _combine(merged[key], term) if key in merged else term
    return {k: SizeOf(t.group, t.when_none, k) for k, t in merged.items()
            if isinstance(t, SizeOf) and t.none_safe and t.fallback is not None}


def _plain_assignments(method: FunctionInfo) -> Iterator[tuple[str, SizeTerm | None]]:
    """`self.x = ...` in a method that is not walked (it touches no collective or size): an int constant as
    such, anything else as unknown."""
    for node in statements(method.node.body):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                text = dotted(target)
                if text is not None and text.startswith("self."):
                    const = isinstance(value, ast.Constant) and type(value.value) is int and not isinstance(node, ast.AugAssign)
                    yield text, Const(value.value) if const else None  # type: ignore[union-attr]


def _combine(a: SizeTerm | None, b: SizeTerm | None) -> SizeTerm | None:
    if a is None or b is None:
        return None
    if isinstance(a, Const) and isinstance(b, Const):
        return a if a == b else None
    if isinstance(b, Const):
        a, b = b, a
    if isinstance(a, Const) and isinstance(b, SizeOf):
        if b.when_none is None:
            return None
        return SizeOf(b.group, a.value if b.when_none == UNREACHABLE else max(a.value, b.when_none))
    if isinstance(a, SizeOf) and isinstance(b, SizeOf) and a.group == b.group:
        if a.when_none is None or b.when_none is None:
            return None
        if UNREACHABLE in (a.when_none, b.when_none):
            return SizeOf(a.group, a.when_none if b.when_none == UNREACHABLE else b.when_none)
        return SizeOf(a.group, max(a.when_none, b.when_none))
    return None


def _merge(a: SizeTerm, b: SizeTerm) -> SizeTerm | None:
    if a == b:
        return a
    if isinstance(a, SizeOf) and isinstance(b, SizeOf) and a.group == b.group:
        return a if a.none_safe and b.none_safe else SizeOf(a.group, None, a.via)
    return None


def _returns_test(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The body (after a docstring) is one `return a and b` / `return a or b`. Only picks which functions to walk,
    on every function of the file: cheaper than bot.analyze.returns.returned_test, which folds early returns too
    and decides what a copy of the predicate is once it is walked."""
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and \
        isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str) else node.body
    return len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.BoolOp)


def _spans_hot(hot_lines: list[int], node: ast.AST) -> bool:
    start = node.lineno  # type: ignore[attr-defined]
    end = node.end_lineno or start  # type: ignore[attr-defined]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
        start = min(start, *(d.lineno for d in node.decorator_list))
    i = bisect.bisect_left(hot_lines, start)
    return i < len(hot_lines) and hot_lines[i] <= end


_SELF_ASSIGN = re.compile(r"^\s*self\.\w+\s*(?::[^=]*)?=(?!=)")


_GROUP_FLAG = re.compile(r"^\s*self\.\w+\s*(?::[^=]*)?=(?!=).*(?:\bis(?:\s+not)?\s+None\b|\bbool\()")


def _sets_instance_flag(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], groups: set[str],
                     read: str) -> bool:
    """Does a line of the method store on self a test of a size the class keeps (`self.n > 1`), or a None test
    (or `bool(...)`) of something named as a group, or passed as one somewhere in the file (``groups``), that the
    hot methods' text ``read`` names?"""
    end = function.end_lineno or function.lineno
    for line in lines[function.lineno - 1 : end]:
        if SIZE_FLAG.match(line) is not None:  # `self.split = self.n > 1`
            return True
        match = _GROUP_FLAG.match(line)
        if match is None:
            continue
        target, _, value = line.partition("=")
        if target.strip().partition(":")[0].strip() in read and \
                (GROUP_NAME.search(value) or any(w in groups for w in _WORDS.findall(value))):
            return True
    return False


_WORDS = re.compile(r"[A-Za-z_]\w*")


def _assigns_self(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> bool:
    end = function.end_lineno or function.lineno
    return any(_SELF_ASSIGN.match(line) for line in lines[function.lineno - 1 : end])


def _came_from(origins: dict[str, set[int] | None], key: str, method: FunctionInfo) -> None:
    known = origins.get(key, set())
    if known is not None:  # None: set in several methods' plain assignments, never one method's own
        origins[key] = {*known, id(method.node)}


def _set_before_read(f: FunctionInfo, attr: str, lines: list[str]) -> bool:
    """Is the first top-level statement of the method that names `self.attr` a plain `self.attr = ...` that does
    not read it? Then a summary entry that is only this method's own end state tells it nothing new. (By the
    text, one statement at a time: most statements never name it.)"""
    word = re.compile(rf"\bself\.{re.escape(attr)}\b")
    for stmt in f.node.body:
        text = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno])
        if f".{attr}" not in text or not word.search(text):
            continue
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            return False
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        reads = any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name)
                    and n.value.id == "self" for n in ast.walk(stmt.value))
        return any(dotted(t) == f"self.{attr}" for t in targets) and not reads
    return True


def _reads_summary(f: FunctionInfo, summaries: dict[int, Summary], lines: list[str],
                   origins: dict[str, set[int] | None] | None = None, only_chains: bool = False) -> bool:
    """Does the function read a size or flag the class summary knows (``only_chains``: inside a boolean
    chain, the one kind of site a method with no other site can gain from the summary)?"""
    summary = summaries.get(id(f.klass)) if f.klass is not None else None
    if summary is None or not (summary.sizes or summary.flags):
        return False
    keys = (*summary.sizes, *summary.flags)
    attrs = {k.partition(".")[2] for k in keys}
    text = "\n".join(lines[f.node.lineno - 1 : f.node.end_lineno])
    if not any(f".{a}" in text for a in attrs):
        return False  # the cheap test first: most methods never name one
    if origins is not None and any(origins.get(k) == {id(f.node)} for k in keys):
        # entries that are this method's own end state, set before it reads them, tell it nothing new
        attrs = {k.partition(".")[2] for k in keys
                 if not (origins.get(k) == {id(f.node)} and _set_before_read(f, k.partition(".")[2], lines))}
        if not attrs:
            return False
    if not only_chains:
        # any read of one, by the text: `.attr` not followed by a plain `=` (a few stores read as reads, which
        # costs a walk that was not needed, never a missed one)
        reads = re.compile(rf"\.(?:{'|'.join(map(re.escape, sorted(attrs)))})\b(?![ \t]*=(?!=))")
        return reads.search(text) is not None
    roots = [n for n in ast.walk(f.node) if isinstance(n, ast.BoolOp)]
    for node in (n for root in roots for n in ast.walk(root)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in attrs:
            return True
    return False
