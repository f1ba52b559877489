"""A process group's own collectives: torch's c10d `ProcessGroup` methods (`pg.allreduce(x)`, `pg.broadcast(t, 0)`)."""

from __future__ import annotations

import ast
import re

from bot.analyze.scan import PROCESS_GROUP_NAME

# Spelled without the underscore, they are no other object's: any group-named receiver.
GROUP_METHODS = frozenset({"allreduce", "allreduce_coalesced", "allgather", "allgather_coalesced",
                           "allgather_into_tensor_coalesced", "alltoall", "alltoall_base",
                           "reduce_scatter_tensor_coalesced", "_allgather_base", "_reduce_scatter_base"})
# Spelled like the module's functions, they are also a coordinator's (vLLM's `tp_group.broadcast(...)`, which is
# no process group): only on a receiver named as a process group itself (`pg`, `process_group`), or called as c10d
# calls them, on a list of tensors (`group.broadcast([t], opts)`; a coordinator takes the tensor).
_SHARED = frozenset({"broadcast", "barrier", "reduce_scatter", "reduce"})
_PG_RECEIVER = re.compile(r"(^|_)pg(_|$)|process_?group", re.I)
# c10d's gathers, scatters and all-to-alls take an output and an input: a one-argument `group.allgather(x)` is a
# wrapper's own method (Galvatron's `CommGroup.allgather(input)`)
_OUTPUT_AND_INPUT = GROUP_METHODS - {"allreduce", "allreduce_coalesced"}


def method_receiver(call: ast.Call) -> ast.Name | ast.Attribute | None:
    """The group a call of one of its own collectives runs on (`pg` of `pg.allreduce(x)`), else None."""
    func = call.func
    # (asked of every call the flow walks: the method's name first, the receiver's only for these few)
    if not isinstance(func, ast.Attribute) or (func.attr not in GROUP_METHODS and func.attr not in _SHARED) \
            or not isinstance(func.value, (ast.Name, ast.Attribute)):
        return None
    receiver = func.value
    leaf = receiver.attr if isinstance(receiver, ast.Attribute) else receiver.id
    if func.attr in GROUP_METHODS:
        if func.attr in _OUTPUT_AND_INPUT and len(call.args) + len(call.keywords) < 2:
            return None
        return receiver if PROCESS_GROUP_NAME.search(leaf) else None
    c10d = bool(call.args) and isinstance(call.args[0], ast.List) and PROCESS_GROUP_NAME.search(leaf) is not None
    return receiver if c10d or _PG_RECEIVER.search(leaf) else None
