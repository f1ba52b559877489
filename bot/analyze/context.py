"""Per-file resolution of calls: which calls are collectives (and on which group), world-size queries, the
predicate, and expressions that name the world group. Names resolve through the file's imports."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from bot.analyze.elsewhere import ProjectHelpers
from bot.analyze.group_methods import method_receiver
from bot.analyze.names import Names, dotted
from bot.analyze.scan import GROUP_NAME, SIZE_HELPER, WRAPPER_NAME
from bot.analyze.source import ParsedSource
from bot.analyze.terms import is_none
from bot.config import Config

# Where the group sits when it is passed positionally, by API family (torch.distributed / deepspeed.comm,
# torch.distributed._functional_collectives, torch.distributed.nn.functional).
_C10D_GROUP_INDEX = {
    "all_reduce": 2, "inference_all_reduce": 2, "all_reduce_coalesced": 2, "all_gather": 2,
    "all_gather_into_tensor": 2, "all_gather_base": 2, "_all_gather_base": 2, "all_gather_coalesced": 2,
    "allgather_fn": 2, "all_gather_object": 2, "reduce": 3, "reduce_scatter": 3, "reduce_scatter_tensor": 3,
    "reduce_scatter_base": 3, "_reduce_scatter_base": 3, "reduce_scatter_fn": 3, "all_to_all": 2,
    "all_to_all_single": 4, "broadcast": 2, "broadcast_object_list": 2, "gather": 3, "gather_object": 3,
    "scatter": 3, "scatter_object_list": 3, "barrier": 0, "monitored_barrier": 0,
    "send": 2, "recv": 2, "isend": 2, "irecv": 2, "P2POp": 3,
}
_FUNCOL_GROUP_INDEX = {
    "all_reduce": 2, "all_gather_tensor": 2, "all_gather_tensor_autograd": 2, "reduce_scatter_tensor": 3,
    "reduce_scatter_tensor_autograd": 3, "all_to_all_single": 3, "all_to_all_single_autograd": 3,
    "broadcast": 2, "all_reduce_coalesced": 2, "all_gather_into_tensor_coalesced": 1,
    "reduce_scatter_tensor_coalesced": 3,
}
_NN_FUNCTIONAL_GROUP_INDEX = {
    "all_reduce": 2, "broadcast": 2, "all_gather": 1, "reduce_scatter": 3, "all_to_all_single": 4,
    "all_to_all": 2, "reduce": 3, "gather": 2, "scatter": 2,
}
# the functional families' own names (`all_gather_tensor_autograd`): the prefilter and the hot lines look for them
FUNCTIONAL_COLLECTIVES = frozenset({*_FUNCOL_GROUP_INDEX, *_NN_FUNCTIONAL_GROUP_INDEX})
_FUNCOL = "_functional_collectives"
_NN_FUNCTIONAL = "nn.functional"
# Names of expressions that are the world group itself (an explicit fallback to the world).
# (`get_default_group` also ends torch's `_get_default_group`; projects wrap it under that name: mmengine)
_WORLD_SUFFIXES = ("group.WORLD", "GroupMember.WORLD", "get_default_group", "get_world_group",
                   "_clone_world_group", "_WORLD")


class Collective(NamedTuple):
    name: str
    group: ast.expr | None  # the group argument as written (None when none is passed)
    family: str  # "c10d", "funcol", "nn", or "wrapper" (a project's function named for one: bot.analyze.scan)


_RUNS_LATER = {"functools.partial", "partial", "asyncio.to_thread"}  # first argument: the function it runs


def group_method(call: ast.Call) -> Collective | None:
    """`pg.allreduce(x)`: a collective on the group it is called on (bot.analyze.group_methods). None there raises
    instead of reaching the world, so only guards are judged, as for a project's wrapper (never an unguarded call)."""
    receiver = method_receiver(call)
    if receiver is None or not isinstance(call.func, ast.Attribute):
        return None
    return Collective(call.func.attr, receiver, "wrapper")


@dataclass
class Context:
    path: str
    source: ParsedSource
    names: Names
    config: Config
    helpers: ProjectHelpers | None = None  # the project's other files, read for the size helpers they define
    _sizes: frozenset[str] = field(default=frozenset(), init=False)

    def __post_init__(self) -> None:
        self._modules = tuple(self.config.comm_modules)
        self._sizes = frozenset(self.config.size_functions or ("get_world_size",))
        c = self.config  # the predicate's two spellings (`pg_utils.is_parallel` imported from its package or not)
        self._predicates = frozenset((f"{c.predicate_module}.{c.predicate_name}.{c.predicate_function}",
                                      f"{c.predicate_name}.{c.predicate_function}"))

    @functools.cached_property
    def asks_ranks(self) -> bool:
        """Does the file ask for a group's members as global ranks (bot.analyze.flow follows them to sends)?"""
        text = self.source.text
        return "get_process_group_ranks" in text or "get_global_rank" in text

    # ------------------------------------------------------------ resolution

    def comm_module_of(self, qualified: str) -> str | None:
        """The comm module a dotted name lives in (itself or any submodule of one), else None."""
        module = qualified.rpartition(".")[0]
        for comm in self._modules:
            if module == comm or module.startswith(comm + "."):
                return module
        return None

    def comm_function(self, call: ast.Call) -> str | None:
        """`all_reduce` for `dist.all_reduce(...)` when `dist` resolves to a comm module (or a submodule of one)."""
        qualified = self.names.qualify(call.func)
        if qualified is None or self.comm_module_of(qualified) is None:
            return None
        return qualified.rpartition(".")[2]

    def collective(self, call: ast.Call) -> Collective | None:
        method = group_method(call)
        if method is not None and not (isinstance(method.group, ast.Name) and method.group.id in self.names.aliases):
            return method  # (not a module imported under a group-like name)
        qualified = self.names.qualify(call.func)
        if qualified is None:
            return None
        module = self.comm_module_of(qualified)
        if module is None:
            return self._wrapper(call, qualified)
        name = qualified.rpartition(".")[2]
        if module.endswith(_FUNCOL):
            family, table = "funcol", _FUNCOL_GROUP_INDEX
        elif module.endswith(_NN_FUNCTIONAL):
            family, table = "nn", _NN_FUNCTIONAL_GROUP_INDEX
        else:
            family, table = "c10d", _C10D_GROUP_INDEX
        if name not in self.config.collectives and name not in table:
            return None
        if family == "c10d" and name not in self.config.collectives:
            return None
        return Collective(name, _argument(call, "group", table.get(name)), family)

    def _wrapper(self, call: ast.Call, qualified: str) -> Collective | None:
        """A function imported from elsewhere in the project and named for a collective (`all_gather_raw`,
        `_fsdp_gather_tensors`), called with a group: a collective on that group as far as the guard around it
        goes. Its body is not here, so what it does with None is unknown: only guards are judged (never an
        unguarded call, never a discarded `.contiguous()`)."""
        func = call.func
        applied = isinstance(func, ast.Attribute) and func.attr == "apply"
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            # `AllGather.apply(x, g)`: an imported autograd Function is run; `distributed_utils.broadcast(t, 0, g)`:
            # an imported module's function (qualify resolved the name, so it is imported, not a local object)
            qualified = qualified.removesuffix(".apply") if applied else qualified
        elif not isinstance(func, ast.Name):
            return None  # `self.x.fn(...)` may be any object's method
        if not is_wrapper(qualified, self.config) and not self.communicates_elsewhere(qualified, applied=applied):
            return None
        name = ast.unparse(func)
        for kw in call.keywords:
            if kw.arg is not None and GROUP_NAME.search(kw.arg):
                return Collective(name, kw.value, "wrapper")
        for arg in call.args:
            if isinstance(arg, (ast.Name, ast.Attribute)) and GROUP_NAME.search(arg.attr if isinstance(arg, ast.Attribute) else arg.id):
                return Collective(name, arg, "wrapper")
        return Collective(name, None, "wrapper")  # no group: over the world (`if g is None: gather(t)`)

    def partial_collective(self, call: ast.Call) -> Collective | None:
        """`functools.partial(dist.all_reduce, group=g)` (or `asyncio.to_thread(dist.all_reduce, t, group=g)`,
        which runs it there): the collective it will run, on g."""
        probe = self.later_call(call)
        return self.collective(probe) if probe is not None else None

    def later_call(self, call: ast.Call) -> ast.Call | None:
        """The call `functools.partial(f, *args, **kwargs)` (or `asyncio.to_thread(...)`) will make: `f(*args,
        **kwargs)`, f a name or attribute."""
        if self.names.qualify(call.func) not in _RUNS_LATER or not call.args:
            return None
        target = call.args[0]
        if not isinstance(target, (ast.Name, ast.Attribute)):
            return None
        return ast.Call(func=target, args=call.args[1:], keywords=call.keywords)

    def is_world_size(self, node: ast.AST) -> bool:
        """`get_world_size()` of a comm module with no group: the world's size."""
        return isinstance(node, ast.Call) and self.comm_function(node) == "get_world_size" \
            and self.world_size_group(node) is None

    def world_size_group(self, node: ast.AST) -> ast.expr | None:
        """The group of `get_world_size(group=g)` / `get_world_size(g)`; None without a group or if not comm."""
        if not isinstance(node, ast.Call):
            return None
        qualified = self.names.qualify(node.func)
        if qualified is None:
            return None
        name = qualified.rpartition(".")[2]
        # a size function of a comm module by its name, or any other by its qualified name (rules.yaml)
        if qualified not in self._sizes and not (name in self._sizes and self.comm_module_of(qualified) is not None):
            return None
        group = _argument(node, "group", 0)
        if group is None or is_none(group):
            return None
        return group

    def communicates_elsewhere(self, qualified: str, *, applied: bool = False) -> bool:
        """A function of the project's other files that runs a collective on a group it is given, or (``applied``:
        `Fn.apply(...)`) an autograd Function there that communicates on a group (bot.analyze.elsewhere): its
        calls are that group's collectives, as a wrapper's are."""
        if self.helpers is None or not self._of_project(qualified):
            return False
        collectives = frozenset(self.config.collectives)
        return self.helpers.applies(qualified, collectives) if applied else \
            self.helpers.communicates(qualified, collectives)

    def sizes_elsewhere(self, call: ast.Call) -> bool:
        """A call of a function of the project's other files that tests the size of the group it is given on the
        way (bot.analyze.elsewhere.ProjectHelpers.tests_size)."""
        qualified = self.names.qualify(call.func)
        return self.helpers is not None and qualified is not None and self._of_project(qualified) and \
            self.helpers.tests_size(qualified)

    def _of_project(self, qualified: str) -> bool:
        """An imported name that can be a function of the project's other files: not torch's, numpy's or a comm
        module's."""
        return "." in qualified and not qualified.startswith(_NOT_WRAPPERS) and self.comm_module_of(qualified) is None

    def elsewhere_size(self, node: ast.AST) -> tuple[ast.expr, int | None] | None:
        """`get_parallel_world_size(g)` imported from another file of the project that defines it as a wrapper of
        get_world_size (bot.analyze.elsewhere): g, and what the size is when g is None (None: the world's)."""
        if self.helpers is None or not isinstance(node, ast.Call) or len(node.args) + len(node.keywords) != 1:
            return None
        arg = node.args[0] if node.args else node.keywords[0].value if node.keywords[0].arg == "group" else None
        func = node.func
        leaf = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if not isinstance(arg, (ast.Name, ast.Attribute)) or "size" not in leaf.lower():
            return None
        qualified = self.names.qualify(func)
        if qualified is None or "." not in qualified or self.comm_module_of(qualified) is not None \
                or qualified.startswith(_NOT_WRAPPERS):
            return None
        size = self.helpers.size_of(qualified)
        return (arg, size.when_none) if size is not None else None

    def size_helper_group(self, node: ast.AST) -> ast.expr | None:
        """The group of a helper that measures one by its name (`get_pg_size(g)`, from anywhere but a comm
        module, whose own size functions are `world_size_group`'s): g's size, with no word on what it is for
        None (such helpers usually answer 1), so it is never reported alone, only beside a None test."""
        if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
            return None
        func = node.func
        leaf = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if not leaf.endswith("_size") or not SIZE_HELPER.match(leaf):
            return None
        qualified = self.names.qualify(node.func)
        if qualified is not None and self.comm_module_of(qualified) is not None:
            return None
        arg = node.args[0]
        return arg if isinstance(arg, (ast.Name, ast.Attribute)) else None

    def is_predicate(self, call: ast.Call) -> bool:
        return self.names.qualify(call.func) in self._predicates

    def predicate_named(self, call: ast.Call) -> bool:
        """An imported function named as the predicate (`from mytrain.dist import is_parallel`) that is not it:
        a project's own copy, defined elsewhere (reported there), whose test is the predicate's."""
        qualified = self.names.qualify(call.func)
        return qualified is not None and qualified.rpartition(".")[2] == self.config.predicate_function and \
            not self.is_predicate(call)

    def mpu_group(self, node: ast.expr) -> bool:
        """A call of an mpu / parallel-state group getter (`parallel_state.get_tensor_model_parallel_group()`,
        `mpu.get_data_parallel_group()`, `self.mpu.get_model_parallel_group()`): a group the parallel state owns,
        whose guards are out of scope by design (the RFC's mpu-based sizes). Not one asked with
        `check_initialized=False`: that may hand back None, an absent dimension the caller tests for."""
        if type(node) is not ast.Call or any(k.arg == "check_initialized" and isinstance(k.value, ast.Constant)
                                             and k.value.value is False for k in node.keywords):
            return False
        text = self.names.qualify(node.func) or dotted(node.func)
        return text is not None and _MPU_GETTER.search(text) is not None

    def parallel_state(self, func: ast.expr) -> bool:
        """Does calling ``func`` make or fetch a parallel-state object (`ParallelState()`, `get_parallel_state()`
        of a module named for the parallel state), whose group getters are mpu getters?"""
        text = self.names.qualify(func)
        return text is not None and _STATE_OBJECT.search(text) is not None

    def is_world(self, node: ast.expr) -> bool:
        """`dist.group.WORLD`, `dist.GroupMember.WORLD`, `_get_default_group()`, ... : the world group itself; and
        `new_group()` (`new_group(backend="gloo")`) with no ranks, a group of every rank: the world again."""
        if isinstance(node, ast.Call) and self.comm_function(node) == "new_group":
            ranks = _argument(node, "ranks", 0)
            return ranks is None or is_none(ranks)
        target = node.func if isinstance(node, ast.Call) else node
        text = self.names.qualify(target) or dotted(target)
        return text is not None and text.endswith(_WORLD_SUFFIXES)


# a group getter's name: `get_tensor_model_parallel_group`, `get_pipeline_model_parallel_group_for_vdp_cross_cloud_tp`,
# `get_group`; not a size or a rank
GROUP_GETTER = r"get_\w*group(?!\w*(?:size|rank|ranks)$)\w*"
# of `mpu`, `parallel_state` or a module named for one (`parallel_state_patch`)
_MPU_GETTER = re.compile(rf"(?:^|\.)(?:mpu|\w*parallel_state\w*)\.{GROUP_GETTER}$")
# a parallel-state object: a class of such a module (`ParallelState()`) or its getter (`get_parallel_state()`)
_STATE_OBJECT = re.compile(r"(?:^|\.)\w*parallel_state\w*\.(?:[A-Z]\w*|get_parallel_state)$")

# Libraries whose functions named for collectives are not the project's wrappers of torch.distributed: torch's
# and numpy's own, and torch_xla's (`xm.all_reduce(op, ts, groups=[[0, 1]])` takes replica lists, not groups)
_NOT_WRAPPERS = ("torch.", "numpy.", "torch_xla.")


def is_wrapper(qualified: str, config: Config) -> bool:
    """An imported function named for a collective (what it is called where it is defined: `x as y` is x),
    from the project, not from torch, numpy, torch_xla or a comm module (whose collectives are known by name)."""
    name = qualified.rpartition(".")[2]
    return bool(WRAPPER_NAME.search(name)) and not name.isupper() and not qualified.startswith(_NOT_WRAPPERS) \
        and not any(qualified.startswith(f"{m}.") for m in config.comm_modules)


def _argument(call: ast.Call, keyword: str, index: int | None) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if index is not None and len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return None
