"""The equivalence check evaluates the real old and new guard expressions under the four group states."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import pg_utils.predicate as reference
from bot.fix.equivalence import STATES, WORLD_SIZE, EvaluationError, _is_parallel, compare, evaluate

P = "pg_utils.is_parallel(g)"
NOT_P = "not pg_utils.is_parallel(g)"


@pytest.mark.parametrize(
    "old",
    [
        "g is not None and dist.get_world_size(g) > 1",
        "g is not None and dist.get_world_size(group=g) > 1",
        "g is not None and get_world_size(group=g) >= 2",
        "g is not None and 1 < torch.distributed.get_world_size(g)",
        "(g is not None\n  # a comment inside the guard\n  and dist.get_world_size(group=g) > 1)",
    ],
)
def test_full_guard_spellings_are_equivalent(old: str) -> None:
    result = compare(old, P, "g")
    assert result.equivalent, result.describe()


@pytest.mark.parametrize(
    "old",
    ["g is None or dist.get_world_size(g) <= 1", "g is None or dist.get_world_size(group=g) < 2"],
)
def test_early_exit_spellings_are_equivalent_to_the_negation(old: str) -> None:
    assert compare(old, NOT_P, "g").equivalent
    assert not compare(old, P, "g").equivalent  # the check really distinguishes the two


def test_not_equal_one_differs_exactly_for_a_non_member() -> None:
    result = compare("g is not None and dist.get_world_size(g) != 1", P, "g")
    assert [o.state.name for o in result.differing] == ["non-member group (size -1)"]
    assert "non-member" in result.describe() and "old True, new False" in result.describe()
    assert result.preserves_parallel


def test_size_only_guard_differs_for_none_because_none_means_the_world() -> None:
    assert evaluate("dist.get_world_size(group=g) > 1", "g", STATES[0]) is (WORLD_SIZE > 1)
    result = compare("dist.get_world_size(group=g) > 1", P, "g")
    assert [o.state.group for o in result.differing] == [None]


def test_none_only_guard_differs_for_single_rank_and_non_member() -> None:
    result = compare("g is not None", P, "g")
    assert {o.state.size for o in result.differing} == {-1, 1}


def test_attribute_group_is_bound_by_its_text() -> None:
    old = "self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1"
    assert compare(old, "pg_utils.is_parallel(self.mp_group)", "self.mp_group").equivalent
    # a different group in the size check is not the same guard
    with pytest.raises(EvaluationError, match="depends on self"):
        compare("self.a is not None and dist.get_world_size(group=self.b) > 1", "pg_utils.is_parallel(self.a)", "self.a")


def test_world_size_of_another_group_is_an_error() -> None:
    with pytest.raises(EvaluationError, match="other than `g`"):
        compare("g is not None and dist.get_world_size(group=h) > 1", P, "g", substitutions={"h": "2"})


def test_substitution_replaces_a_cached_size_by_its_assignment() -> None:
    subs = {"self.ws": "dist.get_world_size(group=g)"}
    result = compare("self.ws > 1", P, "g", substitutions=subs)
    assert [o.state.group for o in result.differing] == [None]


def test_a_changed_multi_rank_outcome_is_detected() -> None:
    result = compare("g is not None and dist.get_world_size(g) > 4", P, "g")
    assert not result.preserves_parallel


@pytest.mark.parametrize(
    ("old", "message"),
    [
        ("flag and g is not None", "depends on flag"),
        ("g is not None and len(g) > 1", "len"),
        ("g is not None and (", "does not parse"),
    ],
)
def test_what_cannot_be_evaluated_alone_is_an_error_not_a_guess(old: str, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        compare(old, P, "g")


def test_custom_predicate_name_is_evaluated() -> None:
    assert compare("g is not None and get_world_size(g) > 1", "pgu.active(g)", "g", predicate=("pgu", "active")).equivalent


def test_mirror_agrees_with_the_reference_predicate(monkeypatch: pytest.MonkeyPatch) -> None:
    for state in STATES:

        def world_size(group=None, _state=state):  # type: ignore[no-untyped-def]
            return WORLD_SIZE if group is None else _state.size

        monkeypatch.setattr(reference, "_comm", lambda ws=world_size: SimpleNamespace(get_world_size=ws))
        assert _is_parallel(state.group, world_size) is reference.is_parallel(state.group), state
