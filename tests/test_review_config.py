"""rules.yaml `review.summary`: when the PR reviewer posts its sticky summary comment."""

from __future__ import annotations

import pytest

from bot.config import ConfigError, load, parse


def test_the_default_is_when_findings_packaged_and_when_left_out() -> None:
    assert load().review.summary == "when-findings"
    assert parse("version: 1\n", "r.yaml").review.summary == "when-findings"


def test_always_is_accepted() -> None:
    assert parse("version: 1\nreview:\n  summary: always\n", "r.yaml").review.summary == "always"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("version: 1\nreview:\n  summary: sometimes\n", "r.yaml:3: `review.summary`: 'sometimes' is not one of"),
        ("version: 1\nreview:\n  sumary: always\n", "r.yaml:3: unknown key `review.sumary` (known: summary)"),
        ("version: 1\nreview: always\n", "r.yaml:2: `review`: 'always' is not of type 'object'"),
    ],
)
def test_a_wrong_value_names_the_key_and_the_line(text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        parse(text, "r.yaml")
    assert expected in str(err.value)
