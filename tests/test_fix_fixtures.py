"""The fixer on the analyzer's real findings for every fixture spelling: parses, preserves, idempotent."""

from __future__ import annotations

import ast
import difflib
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from bot import config as config_module
from bot.analyze import analyze_source
from bot.fix import fix_source
from bot.model import Finding, Span

CONFIG = config_module.load()
FIXTURES = sorted((Path(__file__).parent / "fixtures" / "fix").glob("*.py"))
IMPORT = "from deepspeed.comm import pg_utils"


def findings(path: str, source: str) -> list[Finding]:
    result = analyze_source(path, source, CONFIG)
    assert result.error is None, result.error
    return result.findings


def _spans(value: Any) -> list[Span]:
    if isinstance(value, Span):
        return [value]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _spans(v)]
    return []


def allowed_lines(applied: list[Finding]) -> set[int]:
    lines: set[int] = set()
    for f in applied:
        payload = [getattr(f.payload, x.name) for x in fields(f.payload)] if f.payload is not None else []
        for span in [f.span, *_spans(payload)]:
            lines.update(range(span.line, span.end_line + 1))
    return lines


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fix_parses_touches_only_findings_and_is_idempotent(path: Path, unsafe: bool) -> None:
    source = path.read_text()
    found = findings(path.name, source)
    assert found, "every fixture has something to fix"
    result = fix_source(source, found, CONFIG, unsafe=unsafe)
    ast.parse(result.source)
    assert {id(f) for f in result.applied} | {id(f) for f, _ in result.refused} == {id(f) for f in found}
    # Old lines that changed all belong to an applied finding (or are blank lines before a removed copy).
    allowed = allowed_lines(result.applied)
    old = source.splitlines()
    matcher = difflib.SequenceMatcher(None, old, result.source.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            stray = [n for n in range(i1 + 1, i2 + 1) if n not in allowed and old[n - 1].strip()]
            assert not stray, f"lines {stray} changed but hold no applied finding"
    if any(f.code != "PG108" for f in result.applied):
        assert result.source.count(IMPORT) == 1
    # Nothing fixable is left: a second run applies nothing and changes nothing.
    again = fix_source(result.source, findings(path.name, result.source), CONFIG, unsafe=unsafe)
    assert again.applied == [] and again.source == result.source
    left = {f.code for f in findings(path.name, result.source)}
    assert left <= {f.code for f, _ in result.refused}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_crlf_fixture_gives_the_same_fix_with_crlf_endings(path: Path) -> None:
    lf = path.read_text()
    crlf = lf.replace("\n", "\r\n")
    fixed_lf = fix_source(lf, findings(path.name, lf), CONFIG, unsafe=True).source
    fixed_crlf = fix_source(crlf, findings(path.name, crlf), CONFIG, unsafe=True).source
    assert fixed_crlf == fixed_lf.replace("\n", "\r\n")


def fixture(name: str) -> tuple[str, list[Finding]]:
    source = (Path(__file__).parent / "fixtures" / "fix" / name).read_text()
    return source, findings(name, source)


def test_safe_mode_applies_full_guards_and_refuses_the_non_equivalent_early_exit() -> None:
    source, found = fixture("early_exit.py")
    result = fix_source(source, found, CONFIG)
    assert [f.line for f in result.applied] == [5, 12]
    [(refused, why)] = result.refused
    assert refused.line == 20 and "non-member group (size -1)" in why


def test_multiline_chain_fixture_keeps_comment_quotes_and_blank_lines() -> None:
    source, found = fixture("chain_multiline.py")
    new = fix_source(source, found, CONFIG).source
    for kept in ("        label = 'single' + \"double\"   # quoting stays as written\n\n\n",
                 "        if (config.mlp_after_attn  # only after attention\n",
                 "                and pg_utils.is_parallel(self.mp_group)\n                and config.enabled):\n"):
        assert kept in new
    assert "    if flag and pg_utils.is_parallel(group):\n" in new


def test_existing_import_is_reused() -> None:
    source, found = fixture("with_import.py")
    new = fix_source(source, found, CONFIG).source
    assert new.count(IMPORT) == 1 and new.count("pg_utils.is_parallel(ep_group)") == 2


def test_copy_fixture_removes_the_unused_copy_and_keeps_the_referenced_one() -> None:
    source, found = fixture("copies.py")
    result = fix_source(source, found, CONFIG)
    assert "def _tp_active" not in result.source
    assert "def _ep_active(group):\n    return pg_utils.is_parallel(group)\n" in result.source
    assert "HOOKS = [_ep_active]" in result.source
