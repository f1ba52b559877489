"""Property test: random small programs with hand-rolled guards (any spelling, extra operands in random order,
`and` and `or` chains) inserted at random places, through the real analyzer and fixer. Every applied fix parses,
keeps every non-guard operand (as text, in order), touches only its own line (plus the import), and a second run
changes nothing. Operands that would write a canary file if anything ran them never write it."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import config as config_module
from bot.analyze import analyze_source
from bot.fix import fix_source

CONFIG = config_module.load()
IMPORT = "from deepspeed.comm import pg_utils"
_COUNTER = itertools.count()

NONE_CHECK = {"and": ["{g} is not None", "{g} != None", "None is not {g}", "{g}"], "or": ["{g} is None", "{g} == None", "not {g}"]}
SIZE_CALL = ["dist.get_world_size({g}{extra})", "dist.get_world_size(group={g}{extra})"]
SIZE_CHECK = {"and": ["{ws} > 1", "{ws} >= 2", "1 < {ws}", "{ws} != 1"], "or": ["{ws} <= 1", "{ws} < 2", "2 > {ws}", "{ws} == 1"]}
PURE = ["flag", "step % 4 == 0", "cfg.enabled", "ready is not None", "not flag", "(flag or ready)", "step > 2"]
IMPURE = ["open({c!r}, 'w')", "log(open({c!r}, 'w'))", "__import__('os').system('touch {c}')",
          "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()"
          "._module.__builtins__['open']({c!r}, 'w')"]
PLAIN = ["x = t + 1", "print(t)", "for i in range(3):\n    t = t * 2", "# a comment", "if flag:\n    t = t - 1",
         "dist.barrier()", "", "open({c!r}, 'w').write('ran')"]


@dataclass(frozen=True)
class Guard:
    op: str
    group: str
    parts: tuple[str, ...]  # the chain's operands in source order
    extras: tuple[str, ...]  # the non-guard operands, in order

    @property
    def line(self) -> str:
        return f" {self.op} ".join(self.parts)


@pytest.fixture(scope="module")
def canaries(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("canaries")


def _canary(folder: Path) -> str:
    return str(folder / f"ran-{next(_COUNTER)}")


@st.composite
def guards(draw: st.DrawFn, folder: Path, group: str) -> Guard:
    op = draw(st.sampled_from(["and", "or"]))
    extra_arg = draw(st.sampled_from(["", "", "", ", _=open({c!r}, 'w')"])).format(c=_canary(folder))
    size = draw(st.sampled_from(SIZE_CALL)).format(g=group, extra=extra_arg)
    checks = [draw(st.sampled_from(NONE_CHECK[op])).format(g=group), draw(st.sampled_from(SIZE_CHECK[op])).format(ws=size)]
    pool = st.one_of(st.sampled_from(PURE), st.sampled_from(IMPURE).map(lambda s: s.format(c=_canary(folder))))
    extras = draw(st.lists(pool, max_size=3))
    parts = draw(st.permutations([*checks, *extras]))
    return Guard(op, group, tuple(parts), tuple(p for p in parts if p in extras))


@st.composite
def programs(draw: st.DrawFn, folder: Path) -> tuple[str, list[tuple[int, Guard]]]:
    """(source, [(1-based line of each guard's `if`, guard)]). A function and a method, guards anywhere."""
    lines = ["import deepspeed.comm as dist", "", ""]
    placed: list[tuple[int, Guard]] = []
    for header, group, indent in (("def f(t, g=None, flag=False, step=0, ready=None, cfg=None):", "g", "    "),
                                  ("class Layer:\n    def forward(self, t, flag=False, step=0, ready=None, cfg=None):",
                                   "self.mp_group", "        ")):
        lines.extend(header.split("\n"))
        statements = draw(st.lists(st.one_of(
            st.sampled_from(PLAIN).map(lambda s: ("plain", s.format(c=_canary(folder)))),
            guards(folder, group).map(lambda g: ("guard", g)),
        ), min_size=1, max_size=5))
        for kind, item in statements:
            if kind == "plain":
                assert isinstance(item, str)
                lines.extend(indent + s if s else "" for s in item.split("\n"))
                continue
            assert isinstance(item, Guard)
            nested = draw(st.booleans())  # inside a loop, one level deeper
            pad = indent + ("    " if nested else "")
            if nested:
                lines.append(f"{indent}for step in range(2):")
            placed.append((len(lines) + 1, item))
            lines.append(f"{pad}if {item.line}:")
            body = "return t" if item.op == "or" else f"dist.all_reduce(t, group={group})"
            lines.append(f"{pad}    {body}")
        lines.extend([f"{indent}return t", "", ""])
    return "\n".join(lines).rstrip("\n") + "\n", placed


def _without_import(old: str, new: str) -> list[str]:
    """The new lines, minus the one import line the fix adds after `import deepspeed.comm as dist`."""
    lines = new.split("\n")
    if IMPORT in lines and IMPORT not in old.split("\n"):
        assert lines.index(IMPORT) == 1, "the import goes right after the comm import"
        lines.remove(IMPORT)
    return lines


@pytest.mark.timeout(120)
def test_applied_fixes_parse_keep_operands_stay_local_and_are_idempotent(canaries: Path) -> None:
    @settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(program=programs(canaries), unsafe=st.booleans())
    def check(program: tuple[str, list[tuple[int, Guard]]], unsafe: bool) -> None:
        source, placed = program
        ast.parse(source)
        findings = analyze_source("m.py", source, CONFIG).findings
        result = fix_source(source, findings, CONFIG, unsafe=unsafe)
        assert {id(f) for f in result.applied} | {id(f) for f, _ in result.refused} == {id(f) for f in findings}
        ast.parse(result.source)
        old_lines, new_lines = source.split("\n"), _without_import(source, result.source)
        assert len(old_lines) == len(new_lines), "single-line guards stay single lines"
        applied_lines = {f.span.line for f in result.applied}
        guards_at = dict(placed)
        for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
            if old == new:
                continue
            assert number in applied_lines, f"line {number} changed without an applied finding: {old!r} -> {new!r}"
            guard = guards_at[number]
            kept = ".*".join(re.escape(e) for e in guard.extras)
            assert re.search(kept, new), f"non-guard operands lost or reordered: {old!r} -> {new!r}"
            assert f"pg_utils.is_parallel({guard.group})" in new and "get_world_size" not in new
            for extra in guard.extras:
                assert new.count(extra) == old.count(extra), (extra, old, new)
        for number, guard in placed:  # a guard whose checks are not separated by an impure operand and
            sound = not any(sound_breaker(guard, e) for e in guard.extras)  # is spelled right is always fixed
            if sound and "_=open" not in guard.line and not re.search(r"[!=]= 1\b", guard.line):
                assert number in applied_lines, guard.line
        again = fix_source(result.source, analyze_source("m.py", result.source, CONFIG).findings, CONFIG, unsafe=unsafe)
        assert again.source == result.source and not again.applied
        assert not any(canaries.iterdir()), "an operand of the analysed source was executed"

    check()


def sound_breaker(guard: Guard, extra: str) -> bool:
    """An impure operand between the two checks: the fix must not move it, so it is not applied."""
    positions = [i for i, p in enumerate(guard.parts) if p not in guard.extras]
    where = guard.parts.index(extra)
    return extra not in PURE and positions[0] < where < positions[-1]
