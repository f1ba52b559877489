"""Each rule's documented examples are its tests: every INVALID example is flagged with exactly its expected span
and fixes to exactly its expected code; no VALID example is flagged."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from bot.analyze import RULES, analyze_source
from bot.analyze.rules import MODULES
from bot.config import load
from bot.fix import fix_source
from bot.model import (
    CachedSizePayload,
    ContiguousPayload,
    CopyPayload,
    Finding,
    GuardPayload,
    Invalid,
    NoneOnlyPayload,
    SizeOnlyPayload,
    Span,
    SplitGuardPayload,
    UnguardedPayload,
)

CONFIG = load()
INVALID = [
    pytest.param(code, i, example, id=f"{code}-invalid-{i}")
    for code, rule in RULES.items()
    for i, example in enumerate(rule.invalid)
]
VALID = [
    pytest.param(code, i, example, id=f"{code}-valid-{i}")
    for code, rule in RULES.items()
    for i, example in enumerate(rule.valid)
]


def _text(source: str, finding: Finding) -> str:
    lines = source.split("\n")
    s = finding.span
    if s.line == s.end_line:
        return lines[s.line - 1][s.col : s.end_col]
    return "\n".join([lines[s.line - 1][s.col :], *lines[s.line : s.end_line - 1], lines[s.end_line - 1][: s.end_col]])


@pytest.mark.parametrize(("code", "index", "example"), INVALID)
def test_invalid_example_is_flagged_at_its_span(code: str, index: int, example: Invalid) -> None:
    result = analyze_source("example.py", example.source, CONFIG)
    assert result.error is None
    mine = [f for f in result.findings if f.code == code]
    assert mine, f"{code} missed its invalid example #{index}: {result.findings}"
    assert example.flagged in [_text(example.source, f) for f in mine], (
        f"{code} flagged {[_text(example.source, f) for f in mine]}, expected {example.flagged!r}")


@pytest.mark.parametrize(("code", "index", "example"), INVALID)
def test_invalid_example_fixes_to_its_expected_code(code: str, index: int, example: Invalid) -> None:
    findings = [f for f in analyze_source("example.py", example.source, CONFIG).findings if f.code == code]
    fixed = fix_source(example.source, findings, CONFIG, unsafe=example.unsafe)
    if example.fixed is None:
        assert fixed.source == example.source, f"{code} #{index} documents no automatic fix, but one was applied"
        return
    assert fixed.source == example.fixed
    if not example.unsafe:  # a safe fix is applied by default; an unsafe one only with --unsafe-fixes
        return
    assert fix_source(example.source, findings, CONFIG, unsafe=False).source == example.source


# The contract (docs/contracts.md): which payload type each (code, kind) carries.
PAYLOADS: dict[tuple[str, str], type] = {
    **{(c, k): GuardPayload for c in ("PG101", "PG102") for k in ("and", "or")},  # `or` / `and` under `not`
    **{(c, "split"): SplitGuardPayload for c in ("PG101", "PG102")},
    **{("PG103", k): NoneOnlyPayload for k in ("positive", "negative")},
    **{("PG104", k): SizeOnlyPayload for k in ("positive", "negative")},
    ("PG105", "call"): UnguardedPayload,
    **{("PG106", k): CachedSizePayload for k in ("positive", "negative")},
    ("PG107", "def"): CopyPayload,
    ("PG107", "lambda"): CopyPayload,
    ("PG108", "call"): ContiguousPayload,
}


def _spans(value: object) -> list[Span]:
    if isinstance(value, Span):
        return [value]
    return [s for v in value for s in _spans(v)] if isinstance(value, tuple) else []


@pytest.mark.parametrize(("code", "index", "example"), INVALID)
def test_invalid_example_carries_the_typed_payload_of_its_kind(code: str, index: int, example: Invalid) -> None:
    lines = example.source.split("\n")
    for f in analyze_source("example.py", example.source, CONFIG).findings:
        assert type(f.payload) is PAYLOADS[(f.code, f.kind)], (f.code, f.kind, f.payload)
        values = [getattr(f.payload, x.name) for x in fields(f.payload)]
        for span in (s for v in values for s in _spans(v)):  # every span locates real source text
            assert 1 <= span.line <= span.end_line <= len(lines) and span.end_col <= len(lines[span.end_line - 1])
        doc = json.loads(json.dumps(f.to_dict()))  # JSON output: the payload as a dict named by its type
        assert doc["payload"]["type"] == type(f.payload).__name__
        assert set(doc["payload"]) == {"type", *(x.name for x in fields(f.payload))}
        assert "data" not in doc


@pytest.mark.parametrize(("code", "index", "example"), VALID)
def test_valid_example_is_not_flagged(code: str, index: int, example: str) -> None:
    result = analyze_source("example.py", example, CONFIG)
    assert result.error is None
    assert code not in [f.code for f in result.findings], f"{code} flagged its valid example #{index}"


def test_registry_is_derived_from_the_rule_modules() -> None:
    assert [m.rule.code for m in MODULES] == sorted(RULES)
    for m in MODULES:
        assert m.module.__name__.rsplit(".", 1)[1].startswith(m.rule.code.lower())
        rule = m.rule
        assert rule.invalid and rule.valid and rule.why and rule.fix and rule.summary and rule.fix_safety


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    from pathlib import Path

    from bot.analyze.rules import docs

    path = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
    assert path.read_text() == docs.markdown(list(RULES.values())), "regenerate: pg-bot rule --markdown > docs/rules.md"
