"""The accuracy benchmark's scoring (benchmarks/accuracy/score.py): how findings meet labels."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from bot.model import Finding, Span

ROOT = Path(__file__).resolve().parents[1]


def _score_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("accuracy_score", ROOT / "benchmarks" / "accuracy" / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["accuracy_score"] = module
    spec.loader.exec_module(module)
    return module


score = _score_module()


def _finding(line: int, code: str = "PG101") -> Finding:
    return Finding(code, "m", "a.py", Span(line, 0, line, 10))


def _labels(group: str) -> list:  # type: ignore[type-arg]
    return score.labels_of({"sites": [{"path": "a.py", "line": 10, "end_line": 12, "kind": "full-guard",
                                       "group": group}]}, "set")


def test_a_guard_of_two_groups_takes_one_finding_per_group() -> None:
    s = score.Score()
    s.add(_labels("a_group / b_group"), [_finding(10), _finding(11)])
    assert s.summary()["precision"] == "2/2 = 100.0%"
    assert s.summary()["recall_overall"] == "1/1 = 100.0%"
    assert s.false_positives == []


def test_a_guard_of_one_group_takes_one_finding() -> None:
    s = score.Score()
    s.add(_labels("a_group"), [_finding(10), _finding(11)])
    assert s.summary()["precision"] == "1/2 = 50.0%"
    assert [f.span.line for f, _ in s.false_positives] == [11]


def test_further_groups_take_only_findings_of_the_labels_code() -> None:
    s = score.Score()
    s.add(_labels("a_group / b_group"), [_finding(10), _finding(11, "PG103")])
    assert [f.code for f, _ in s.false_positives] == ["PG103"]
