"""Inputs for the distributed-test workflow: allow-listed, bounded, never an option or a shell word."""

from __future__ import annotations

import pytest

from bot.ci.validate import (
    DispatchInputs,
    ValidationError,
    split_tests,
    validate_pr,
    validate_repo,
    validate_sha,
    validate_test_path,
    validate_tests,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_sha_accepts_exactly_forty_lowercase_hex() -> None:
    assert validate_sha(SHA) == SHA


@pytest.mark.parametrize("bad", [SHA[:-1], SHA + "0", SHA.upper(), "g" * 40, "HEAD", "main", "", None,
                                 SHA[:39] + "\n", f"{SHA[:20]};rm -rf /{SHA[:8]}"])
def test_sha_rejects_anything_else(bad: object) -> None:
    with pytest.raises(ValidationError, match="sha"):
        validate_sha(bad)


@pytest.mark.parametrize("good", ["deepspeedai/DeepSpeed", "a/b", "user-1/repo.name_x-y", "A1/.github"])
def test_repo_accepts_github_names(good: str) -> None:
    assert validate_repo(good) == good


@pytest.mark.parametrize("bad", ["deepspeed", "a/b/c", "-a/b", "a-/b", "a--b/c", "a/..", "a/.", "a/b.git",
                                 "a/b c", "a/$(id)", "a/b;ls", "a/`x`", "o/" + "n" * 101, "o" * 40 + "/n",
                                 "", None, "../x"])
def test_repo_rejects_other_shapes(bad: object) -> None:
    with pytest.raises(ValidationError, match="repo"):
        validate_repo(bad)


def test_pr_number() -> None:
    assert validate_pr(7) == 7
    assert validate_pr("7") == 7
    for bad in ("0", "-1", "7a", "", True, None, "٣"):
        with pytest.raises(ValidationError, match="pr"):
            validate_pr(bad)


@pytest.mark.parametrize("good", ["tests", "tests/unit", "tests/unit/moe/", "tests/unit/moe/test_moe.py",
                                  "tests/unit/v1/a-b.c_d"])
def test_test_path_inside_root(good: str) -> None:
    assert validate_test_path(good, "tests") == good.rstrip("/")


@pytest.mark.parametrize("bad, why", [
    ("-k", "option"), ("--collect-only", "option"), ("tests/../setup.py", r"'\.\.'"), ("../tests", r"'\.\.'"),
    ("tests/./unit", r"'\.\.'"), ("tests//unit", "empty"), ("/tests/unit", "absolute"),
    ("docs/test_x.py", "not inside"), ("testsuite/x", "not inside"), ("tests/a b", "character"),
    ("tests/$(id).py", "character"), ("tests/a;b", "character"), ("tests/a|b", "character"),
    ("tests/a`b`", "character"), ("tests/a\nb", "character"), ("tests/-x", "character"),
    ("tests/x::test_a", "character"), ("tests/" + "a" * 300, "longer"), ("", "non-empty"),
])
def test_test_path_rejections(bad: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        validate_test_path(bad, "tests")


def test_test_root_with_several_components() -> None:
    assert validate_test_path("tests/unit/moe", "tests/unit") == "tests/unit/moe"
    with pytest.raises(ValidationError, match="not inside"):
        validate_test_path("tests/other", "tests/unit")


def test_tests_are_deduplicated_and_bounded() -> None:
    assert validate_tests(["tests/a", "tests/b", "tests/a/"], "tests", 2) == ("tests/a", "tests/b")
    with pytest.raises(ValidationError, match="more than the limit of 2"):
        validate_tests(["tests/a", "tests/b", "tests/c"], "tests", 2)
    with pytest.raises(ValidationError, match="no test path"):
        validate_tests([], "tests", 2)


def test_split_tests_refuses_newlines_and_tabs() -> None:
    assert split_tests("tests/a tests/b") == ["tests/a", "tests/b"]
    for bad in ("tests/a\ntests/b", "tests/a\ttests/b", 3):
        with pytest.raises(ValidationError, match="tests"):
            split_tests(bad)


def test_inputs_round_trip_through_workflow_strings() -> None:
    inputs = DispatchInputs.create(repo="o/r", sha=SHA, pr=12, tests=["tests/unit/moe"], test_root="tests",
                                   max_paths=4)
    strings = inputs.as_inputs()
    assert strings == {"repo": "o/r", "sha": SHA, "pr": "12", "tests": "tests/unit/moe"}
    assert all(isinstance(v, str) for v in strings.values())
    assert DispatchInputs.from_inputs(strings, "tests", 4) == inputs


def test_from_inputs_rejects_unknown_and_missing_keys() -> None:
    good = {"repo": "o/r", "sha": SHA, "pr": "1", "tests": "tests"}
    with pytest.raises(ValidationError, match="unknown inputs: 'extra'"):
        DispatchInputs.from_inputs({**good, "extra": "x"}, "tests", 4)
    with pytest.raises(ValidationError, match="missing inputs: sha"):
        DispatchInputs.from_inputs({k: v for k, v in good.items() if k != "sha"}, "tests", 4)


def test_error_messages_are_bounded_for_huge_input() -> None:
    with pytest.raises(ValidationError) as info:
        validate_sha("x" * 100_000)
    assert len(str(info.value)) < 200
