"""How the guards that dominate one collective treat its group: shared by the partial, cached-size and
unguarded rules, so the three agree on what counts as guarded."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from bot.analyze.base import RuleInput, operands
from bot.analyze.context import NoneCheck, SizeCheck
from bot.analyze.names import dotted
from bot.analyze.walker import CollectiveCall

# A test on one of these is a guard on a separately supplied size or mode (out of scope, and not "unguarded").
_SIZE_LIKE = re.compile(r"size|world|parallel|rank|degree|num_|group|enabled|_mp|_tp|_ep|_sp", re.I)


@dataclass
class GuardView:
    group: str
    none_checks: list[tuple[ast.expr, NoneCheck, bool]] = field(default_factory=list)  # (node, check, negated)
    size_checks: list[tuple[ast.expr, SizeCheck, bool]] = field(default_factory=list)
    predicate: bool = False
    full: bool = False  # a PG101/PG102-style chain on this group guards the call
    other: bool = False  # some other test that may well be a guard (a supplied size, a mode flag)


def view(inp: RuleInput, coll: CollectiveCall, group: str) -> GuardView:
    ctx = inp.ctx
    result = GuardView(group)
    for guard in coll.guards:
        mentions = _mentions(guard.test)
        if group in mentions and _calls_predicate(inp, guard.test):
            result.predicate = True
            continue
        found = False
        for node in operands(guard):
            none = ctx.none_check(node) or ctx.truthiness(node)
            if none is not None and none.group == group:
                result.none_checks.append((node, none, guard.negated))
                found = True
                continue
            size = ctx.size_check(node, coll.scope.sizes)
            if size is not None and size.group == group:
                result.size_checks.append((node, size, guard.negated))
                found = True
        if not found and (group in mentions or any(_SIZE_LIKE.search(m) for m in mentions) or _has_len(guard.test)):
            result.other = True
    result.full = bool(result.none_checks) and bool(result.size_checks)
    return result


def _mentions(test: ast.expr) -> set[str]:
    return {text for node in ast.walk(test) if (text := dotted(node)) is not None}


def _calls_predicate(inp: RuleInput, test: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and inp.ctx.is_predicate(n) for n in ast.walk(test))


def _has_len(test: ast.expr) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" for n in ast.walk(test)
    )


def consistent(asserts_absent: bool, negated: bool) -> bool:
    """A sub-test really guards the collective when it asserts presence in a positive test
    (`if g is not None: ...`) or absence in an early exit / else branch (`if g is None: return`)."""
    return asserts_absent == negated
