"""PG106: a world size cached on the instance (no None fallback) and later compared with 1 to guard a collective."""

from __future__ import annotations

import ast

from bot.analyze.rules.base import Reporter, code_span
from bot.analyze.terms import SizeOf
from bot.model import CachedSizePayload, Invalid, Rule

RULE = Rule(
    code="PG106",
    name="cached-world-size-guard",
    summary=(
        "`self.ws = get_world_size(group=self.g)` cached (no None fallback; plain or annotated, in any method) and "
        "later `self.ws > 1` (or an `== 1` early exit) guarding a collective on a g that can be None; also read "
        "through a module-level instance of the class (`LAYOUT.ws > 1`)."
    ),
    why=(
        "The cached size of a None group is the WORLD size, so the cached test passes when the dimension is "
        "absent, and the collective runs over the world. Caching the predicate keeps the single convention."
    ),
    fix="Cache `self.is_<dim>_parallel = pg_utils.is_parallel(g)` where the size is cached, and test that.",
    fix_safety="Needs `--unsafe-fixes` (a cached size is the world size for None).",
    invalid=(
        Invalid(  # a functools.cached_property keeps the first answer on the instance: a cache with no assignment
            "from functools import cached_property\n"
            "import torch.distributed as dist\n"
            "class Dispatch:\n"
            "    def __init__(self, ep_group=None):\n"
            "        self.ep_group = ep_group\n"
            "    @cached_property\n"
            "    def ep_size(self):\n"
            "        return dist.get_world_size(group=self.ep_group)\n"
            "    def run(self, x):\n"
            "        if self.ep_size > 1:\n"
            "            dist.all_reduce(x, group=self.ep_group)\n",
            flagged="self.ep_size > 1",
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "class Layer:\n"
            "    def __init__(self, mp_group=None):\n"
            "        self.mp_group = mp_group\n"
            "        self.mp_world_size = dist.get_world_size(group=self.mp_group)\n"
            "    def forward(self, x):\n"
            "        if self.mp_world_size > 1:\n"
            "            dist.all_reduce(x, group=self.mp_group)\n"
            "        return x\n",
            flagged="self.mp_world_size > 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class Layer:\n"
            "    def __init__(self, mp_group=None):\n"
            "        self.mp_group = mp_group\n"
            "        self.mp_world_size = dist.get_world_size(group=self.mp_group)\n"
            "        self.is_mp_parallel = pg_utils.is_parallel(self.mp_group)\n"
            "    def forward(self, x):\n"
            "        if self.is_mp_parallel:\n"
            "            dist.all_reduce(x, group=self.mp_group)\n"
            "        return x\n",
            unsafe=True,
        ),
        Invalid(
            "import deepspeed.comm as dist\n"
            "class Layer:\n"
            "    def __init__(self, ep_group=None):\n"
            "        self.ep_group = ep_group\n"
            "        self.ep_size: int = dist.get_world_size(self.ep_group)\n"
            "    def forward(self, x):\n"
            "        if self.ep_size == 1:\n"
            "            return x\n"
            "        dist.all_to_all_single(x, x, group=self.ep_group)\n"
            "        return x\n",
            flagged="self.ep_size == 1",
        ),
        # a module-level instance of the class (`LAYOUT = Layout(...)`, here or under `global`) caches it too
        Invalid(
            "import deepspeed.comm as dist\n"
            "class Layout:\n"
            "    def __init__(self, col_group=None):\n"
            "        self.col_group = col_group\n"
            "        self.col_size = dist.get_world_size(group=self.col_group)\n"
            "LAYOUT = Layout()\n"
            "def sum_cols(x):\n"
            "    if LAYOUT.col_size > 1:\n"
            "        dist.all_reduce(x, group=LAYOUT.col_group)\n"
            "    return x\n",
            flagged="LAYOUT.col_size > 1",
            fixed="import deepspeed.comm as dist\n"
            "from deepspeed.comm import pg_utils\n\n"
            "class Layout:\n"
            "    def __init__(self, col_group=None):\n"
            "        self.col_group = col_group\n"
            "        self.col_size = dist.get_world_size(group=self.col_group)\n"
            "        self.is_col_parallel = pg_utils.is_parallel(self.col_group)\n"
            "LAYOUT = Layout()\n"
            "def sum_cols(x):\n"
            "    if LAYOUT.is_col_parallel:\n"
            "        dist.all_reduce(x, group=LAYOUT.col_group)\n"
            "    return x\n",
            unsafe=True,
        ),
    ),
    valid=(
        # a comment right above the line that sets the group says None is the world: `ws(None)` is meant
        "import deepspeed.comm as dist\n"
        "class Reducer:\n"
        "    def __init__(self, dp_process_group=None):\n"
        "        # None selects the default (world) data-parallel group\n"
        "        self.dp_process_group = dp_process_group\n"
        "        self.partition_count = dist.get_world_size(group=self.dp_process_group)\n"
        "    def average(self, flat):\n"
        "        if self.partition_count > 1:\n"
        "            dist.all_reduce(flat, group=self.dp_process_group)\n"
        "        return flat\n",
        "from deepspeed.comm import pg_utils\n"
        "import deepspeed.comm as dist\n"
        "class Layer:\n"
        "    def __init__(self, mp_group=None):\n"
        "        self.mp_group = mp_group\n"
        "        self.is_mp_parallel = pg_utils.is_parallel(mp_group)\n"
        "    def forward(self, x):\n"
        "        if self.is_mp_parallel:\n"
        "            dist.all_reduce(x, group=self.mp_group)\n",
        # the group is always constructed: the cached size is the group's own
        "import deepspeed.comm as dist\n"
        "class Layer:\n"
        "    def __init__(self, mp_group):\n"
        "        self.mp_group = mp_group\n"
        "        self.ws = dist.get_world_size(group=self.mp_group)\n"
        "    def forward(self, x):\n"
        "        if self.ws > 1:\n"
        "            dist.all_reduce(x, group=self.mp_group)\n",
    ),
)


def check(r: Reporter) -> None:
    for site, check in r.verdicts.cached:
        term = check.term
        compare = check.compare
        assert isinstance(term, SizeOf) and term.via is not None and compare is not None
        function = site.function
        env = r.verdicts.module.env
        # `LAYOUT.n` of a module-level instance (bot.analyze.env singletons): cached by its class as `self.n`
        head, _, rest = term.via.partition(".")
        single = env.singleton(head, function) if head != "self" else None
        klass = single or (env.class_of(function) if function is not None else None)
        assignment, assigned_in = _assignment(klass.node if klass else None, f"self.{rest}" if single else term.via)
        dim = dimension(term.via, term.group)
        cache = f"self.is_{dim}_parallel"
        group = f"self.{term.group.partition('.')[2]}" if single and term.group.startswith(f"{head}.") else term.group
        tested = f"{head}.is_{dim}_parallel" if single else cache
        r.report(
            RULE, r.span(check.node),
            f"cached world size {code_span(term.via)} guards {code_span(site.collective.name)}: cache "
            f"{code_span(f'{cache} = {r.predicate}({group})')} in {assigned_in or 'the constructor'} and test "
            + (code_span(tested) if single else "that"),
            function, group=term.group, kind="positive" if compare.positive else "negative",
            payload=CachedSizePayload(
                attribute=term.via, assignment=r.span(assignment) if assignment is not None else None,
                assigned_in=assigned_in, cache_attribute=tested, collective=site.collective.name),
        )


def _assignment(klass: ast.ClassDef | None, attribute: str) -> tuple[ast.stmt | None, str | None]:
    if klass is None:
        return None, None
    for item in klass.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(item):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(ast.unparse(t) == attribute for t in targets if isinstance(t, ast.Attribute)):
                        return node, f"{klass.name}.{item.name}"
    return None, None


def dimension(attribute: str, group: str) -> str:
    """The name of the parallel dimension: `self.tp_world_size` -> `tp`; `self.world_size` of `mp_group` -> `mp`.
    The one name guesser: the fixer's cache attribute comes from here (`cache_attribute`)."""
    name = attribute.rsplit(".", 1)[-1]
    for suffix in ("_world_size", "_size"):
        stem = name[: -len(suffix)].strip("_") if name.endswith(suffix) else ""
        if stem and stem != "world":
            return stem
    group_name = group.rsplit(".", 1)[-1]
    for suffix in ("_process_group", "_group"):
        stem = group_name[: -len(suffix)].strip("_") if group_name.endswith(suffix) else ""
        if stem:
            return stem
    return "group"
