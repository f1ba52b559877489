"""Shared fixtures. `fake_github`: a running fake GitHub (see tests/fake_github/__init__.py for seeding)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import FakeGitHub, serve

# A DeepSpeed-shaped project with its own conftest.py and tests: `pg-bot migrate-test` runs them on a copy.
collect_ignore = ["fixtures/deepspeed_like"]


@pytest.fixture(autouse=True)
def github_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verbs that talk to GitHub refuse to start without a token (exit 2). Tests only ever talk to the fake,
    so each gets a fake token, and never a real one from the environment; a test about the token sets its own."""
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake
