"""Shared fixtures. `fake_github`: a running fake GitHub (see tests/fake_github/__init__.py for seeding)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import FakeGitHub, serve


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake
