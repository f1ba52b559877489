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


COPY = '''import torch.distributed as dist


def gather(x, group=None):
    if not group:
        return x
    dist.all_reduce(x, group=group)
    return x
'''
# the same function, moved down, re-laid out and commented: still a word-for-word copy
MOVED = '''import torch.distributed as dist

X = 1


def gather(x, group=None):
    # a copy
    if not group:
        return x
    dist.all_reduce(x,
                    group=group)
    return x
'''


def _site(source: str, line: int, kind: str) -> object:
    return score.labels_of({"sites": [{"path": "a.py", "line": line, "kind": kind, "reason": "mpu-size"}]},
                           source)[0]


def test_copies_of_one_statement_share_a_key_whatever_their_layout() -> None:
    assert score.statement_key(COPY, 5) == score.statement_key(MOVED, 8)
    assert score.statement_key(COPY, 7) == score.statement_key(MOVED, 10)
    assert score.statement_key(COPY, 5) != score.statement_key(COPY, 7)
    assert score.statement_key(COPY, 1) is None  # outside any function
    assert score.statement_key("def (", 1) is None


def test_a_changed_function_is_no_copy() -> None:
    changed = COPY.replace("if not group:", "if group is None:")
    assert score.statement_key(changed, 5) != score.statement_key(COPY, 5)


def test_readers_who_disagree_on_a_copy_make_a_dispute() -> None:
    key = score.statement_key(COPY, 5)
    a, b = _site("one", 5, "none-only-guard"), _site("two", 8, "out-of-scope")
    assert score.disputes([(key, a), (key, b)]) == [[a, b]]
    # readers who agree, or one who cannot decide, make none
    same = _site("two", 8, "none-only-guard")
    unsure = _site("three", 8, "ambiguous")
    assert score.disputes([(key, a), (key, same), (key, unsure)]) == []


def test_a_disputed_site_is_scored_as_ambiguous() -> None:
    s = score.Score()
    lab = score.replace(_site("one", 5, "none-only-guard"), disputed=True)
    s.add([lab], [_finding(5, "PG103")])
    assert s.summary()["precision"] == "n/a"  # the finding on it is neither right nor wrong
    assert s.summary()["recall_overall"] == "n/a"
    assert s.false_positives == []


def test_mark_disputes_marks_both_sides_and_leaves_the_rest() -> None:
    one = score.LabelledFile("one", "a.py", COPY, [_site("one", 5, "none-only-guard"),
                                                 _site("one", 7, "out-of-scope")], [])
    two = score.LabelledFile("two", "a.py", MOVED, [_site("two", 8, "out-of-scope"),
                                                   _site("two", 10, "out-of-scope")], [])
    found = score.mark_disputes([one, two])
    assert len(found) == 1
    assert [lab.disputed for lab in one.labels + two.labels] == [True, False, True, False]
