"""Shared fixtures. `fake_github`: a running fake GitHub (see tests/fake_github/__init__.py for seeding)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import FakeGitHub, serve

# A DeepSpeed-shaped project with its own conftest.py and tests: `pg-bot migrate-test` runs them on a copy.
collect_ignore = ["fixtures/deepspeed_like"]


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake
