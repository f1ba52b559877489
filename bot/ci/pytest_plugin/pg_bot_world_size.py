"""pytest plugin: keep only tests that run on more than one rank, when a test says how many it uses.

Loaded by ``pg-bot dispatch run-tests`` as ``-p pg_bot_world_size`` with ``PG_BOT_MIN_WORLD_SIZE`` set.
A test declares its world size(s) the way DeepSpeed's ``DistributedTest`` does: a ``world_size`` class
attribute (int or list), a ``@pytest.mark.world_size(n, ...)`` marker, or a ``world_size`` parameter. A test
that declares none is kept: it may start its own process group of any size. Standard library + pytest only.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

ENV = "PG_BOT_MIN_WORLD_SIZE"


def declared_world_sizes(item: Any) -> list[int] | None:
    """The world sizes a test item declares, or None when it declares none."""
    sizes: list[Any] = []
    marker = item.get_closest_marker("world_size")
    if marker is not None:
        sizes.extend(marker.args)
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "world_size" in callspec.params:
        sizes.append(callspec.params["world_size"])
    cls = getattr(item, "cls", None)
    if not sizes and cls is not None and hasattr(cls, "world_size"):
        sizes.append(cls.world_size)
    flat: list[int] = []
    for size in sizes:
        flat.extend(size if isinstance(size, (list, tuple)) else [size])
    ints = [s for s in flat if isinstance(s, int) and not isinstance(s, bool)]
    return ints or None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "world_size(n, ...): world sizes a distributed test runs with")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    minimum = int(os.environ.get(ENV, "2"))
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        sizes = declared_world_sizes(item)
        (drop if sizes is not None and max(sizes) < minimum else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
