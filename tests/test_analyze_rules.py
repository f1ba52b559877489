"""Each rule's documented examples are its tests: every invalid example is flagged, no valid one is."""

from __future__ import annotations

import pytest

from bot.analyze import RULES, analyze_source
from bot.config import load

CONFIG = load()
CASES = [
    pytest.param(code, kind, i, example, id=f"{code}-{kind}-{i}")
    for code, rule in RULES.items()
    for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
    for i, example in enumerate(examples)
]


@pytest.mark.parametrize(("code", "kind", "index", "example"), CASES)
def test_rule_example(code: str, kind: str, index: int, example: str) -> None:
    result = analyze_source("example.py", example, CONFIG)
    assert result.error is None
    codes = [f.code for f in result.findings]
    if kind == "invalid":
        assert code in codes, f"{code} missed its invalid example #{index}"
    else:
        assert code not in codes, f"{code} flagged its valid example #{index}: {result.findings}"


def test_every_rule_documents_itself() -> None:
    assert sorted(RULES) == [f"PG10{i}" for i in range(1, 9)]
    for rule in RULES.values():
        assert rule.invalid and rule.valid and rule.why and rule.fix and rule.summary
