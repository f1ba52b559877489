"""bot.fingerprint: the one finding identity of review markers, SARIF and the tracker."""

from __future__ import annotations

from bot.fingerprint import fingerprints
from bot.model import Finding, Span

SOURCE = (
    "import deepspeed.comm as dist\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
)


def findings(shift: int = 0, indent: int = 0) -> list[Finding]:
    return [
        Finding("PG101", "m", "pkg/m.py", Span(3 + shift, 7 + indent, 3 + shift, 51 + indent), group="g", function="f"),
        Finding("PG101", "m", "pkg/m.py", Span(5 + shift, 7 + indent, 5 + shift, 51 + indent), group="g", function="f"),
        Finding("PG105", "m", "pkg/m.py", Span(4 + shift, 8 + indent, 4 + shift, 34 + indent), group="g", function="f"),
    ]


def test_the_values_are_those_already_in_review_markers_on_open_pull_requests() -> None:
    # Computed with the reviewer's fingerprint before it moved here: a change would orphan posted comments.
    assert fingerprints(findings(), SOURCE) == ["a0112606fbcc", "928ded6322c3", "eeb5283591b3"]


def test_moving_or_reindenting_code_keeps_them_and_twins_differ() -> None:
    moved = "# a new first line\n\n" + SOURCE.replace("\n    ", "\n        ")
    assert fingerprints(findings(shift=2, indent=4), moved) == fingerprints(findings(), SOURCE)
    assert len(set(fingerprints(findings(), SOURCE))) == 3


def test_without_the_text_the_occurrence_still_tells_twins_apart_and_a_path_can_be_given() -> None:
    blind = fingerprints(findings(), None)
    assert len(set(blind)) == 3
    assert fingerprints(findings(), SOURCE, path="other/m.py") != fingerprints(findings(), SOURCE)
