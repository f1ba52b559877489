"""A guard inside a longer `and` / `or` chain: every other operand stays, in order, and the whole new chain is
proved equivalent to the old one (other operands as opaque booleans); an operand that may have side effects is
never moved past the size check. On the analyzer's real findings."""

from __future__ import annotations

import pytest

from bot import config as config_module
from bot.analyze import analyze_source
from bot.fix import fix_source, suggestion_for

CONFIG = config_module.load()
HEAD = "import deepspeed.comm as dist\n\n\ndef f(t, g=None, step=0, flag=True, ready=None):\n"


def fixed(body: str, unsafe: bool = False, codes: tuple[str, ...] = ("PG101", "PG102")) -> tuple[str, list, list]:
    source = HEAD + body
    findings = [f for f in analyze_source("m.py", source, CONFIG).findings if f.code in codes]
    assert findings, "the analyzer reports the guard"
    result = fix_source(source, findings, CONFIG, unsafe=unsafe)
    return result.source[result.source.index("def f(") :].split("\n", 1)[1], result.applied, result.refused


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # the example: `step % 4 == 0` was deleted
        ("    if g is not None and step % 4 == 0 and dist.get_world_size(group=g) > 1:\n        pass\n",
         "    if pg_utils.is_parallel(g) and step % 4 == 0:\n        pass\n"),
        ("    if flag and g is not None and ready and dist.get_world_size(g) > 1 and step:\n        pass\n",
         "    if flag and pg_utils.is_parallel(g) and ready and step:\n        pass\n"),
        ("    if 1 < dist.get_world_size(group=g) and flag.x and g is not None:\n        pass\n",
         "    if pg_utils.is_parallel(g) and flag.x:\n        pass\n"),
        ("    if g is None or step or dist.get_world_size(group=g) <= 1:\n        return t\n",
         "    if not pg_utils.is_parallel(g) or step:\n        return t\n"),
        ("    if ready or g is None or dist.get_world_size(g) < 2 or flag:\n        return t\n",
         "    if ready or not pg_utils.is_parallel(g) or flag:\n        return t\n"),
        # a call before the guard or after it is not moved: it runs exactly when it ran before
        ("    if check(t) and g is not None and dist.get_world_size(g) > 1 and log(t):\n        pass\n",
         "    if check(t) and pg_utils.is_parallel(g) and log(t):\n        pass\n"),
    ],
)
def test_every_other_operand_is_kept_in_order_and_the_fix_is_applied(body: str, expected: str) -> None:
    new, applied, refused = fixed(body)
    assert new == expected and applied and not refused


@pytest.mark.parametrize(
    ("body", "call"),
    [
        ("    if g is not None and check(t) and dist.get_world_size(group=g) > 1:\n        pass\n", "check"),
        ("    if g is None or log(t) or dist.get_world_size(group=g) <= 1:\n        return t\n", "log"),
        ("    if g is not None and t[0] and dist.get_world_size(group=g) > 1:\n        pass\n", "subscript"),
        ("    if g is not None and (n := step) and dist.get_world_size(group=g) > 1:\n        pass\n", "namedexpr"),
    ],
)
def test_an_operand_with_side_effects_between_the_checks_makes_the_rewrite_unproven(body: str, call: str) -> None:
    new, applied, refused = fixed(body, unsafe=True)
    assert new == body and not applied  # not applied, not even with --unsafe-fixes
    [(finding, why)] = refused
    assert "cannot prove the rewrite" in why and call in why and "after the size check" in why
    suggestion = suggestion_for(HEAD + body, finding, CONFIG)
    assert suggestion is not None and not suggestion.safe and "cannot prove" in suggestion.note


def test_a_state_that_differs_is_named_with_the_other_operands_values() -> None:
    body = "    if g is not None and flag and dist.get_world_size(g) != 1:\n        pass\n"
    new, applied, refused = fixed(body)
    assert new == body and not applied
    [(_, why)] = refused
    assert "non-member group (size -1): old True, new False" in why and "(when `flag` is True)" in why
    assert fixed(body, unsafe=True)[0] == "    if pg_utils.is_parallel(g) and flag:\n        pass\n"


def test_one_click_suggestion_keeps_the_other_operands() -> None:
    source = HEAD + "    if g is not None and step % 4 == 0 and dist.get_world_size(group=g) > 1:\n        pass\n"
    [finding] = analyze_source("m.py", source, CONFIG).findings
    suggestion = suggestion_for(source, finding, CONFIG)
    assert suggestion is not None and suggestion.safe
    assert suggestion.text == "    if pg_utils.is_parallel(g) and step % 4 == 0:"
    assert "the other 1 operand(s) of the chain stay, in order" in suggestion.note


@pytest.mark.parametrize(
    ("body", "expected", "code"),
    [
        ("    if flag and g is not None and step % 4 == 0:\n        dist.all_reduce(t, group=g)\n",
         "    if flag and pg_utils.is_parallel(g) and step % 4 == 0:\n", "PG103"),
        ("    if step or g is None:\n        return t\n    dist.all_reduce(t, group=g)\n",
         "    if step or not pg_utils.is_parallel(g):\n", "PG103"),
        ("    if ready and dist.get_world_size(group=g) > 1 and flag:\n        dist.all_reduce(t, group=g)\n",
         "    if ready and pg_utils.is_parallel(g) and flag:\n", "PG104"),
    ],
)
def test_partial_guards_in_chains_keep_the_other_operands_with_unsafe_fixes(body: str, expected: str, code: str) -> None:
    new, applied, _ = fixed(body, unsafe=True, codes=(code,))
    assert new.startswith(expected) and [f.code for f in applied] == [code]


def test_two_guards_in_one_chain_with_another_operand_between() -> None:
    body = ("    if g is not None and ready is not None and dist.get_world_size(g) > 1 and "
            "dist.get_world_size(ready) > 1 and flag:\n        pass\n")
    new, applied, refused = fixed(body)
    assert new == "    if pg_utils.is_parallel(g) and pg_utils.is_parallel(ready) and flag:\n        pass\n"
    assert len(applied) == 2 and not refused
