"""Run one function over many items on forked processes, results in item order.

The parent takes a share itself and each forked child sends its results back, pickled, through a pipe: no
executor threads, queues or per-item round trips (a process pool cost about a tenth of a whole-package check).
Shares are balanced by weight (file size), largest first, so one big file does not leave a core idle at the end.
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


class WorkerFailed(RuntimeError):
    """A forked worker raised or died; the message says what happened there."""


def shares(weights: Sequence[int], workers: int) -> list[list[int]]:
    """Item indexes split into ``workers`` lists of about equal total weight (greedy, heaviest first)."""
    bins: list[list[int]] = [[] for _ in range(max(1, workers))]
    loads = [0] * len(bins)
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        j = loads.index(min(loads))
        bins[j].append(i)
        loads[j] += weights[i]
    return bins


def map_forked(fn: Callable[[T], R], items: Sequence[T], weights: Sequence[int], workers: int) -> list[R]:
    parts = shares(weights, workers)
    children: list[tuple[int, int, list[int]]] = []  # (pid, read end, indexes)
    for part in parts[1:]:
        if not part:
            continue
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never returns into the caller's code
            os.close(read)
            code = 0
            try:
                payload = pickle.dumps(("ok", [fn(items[i]) for i in part]), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # reported to the parent, which raises
                payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
                code = 1
            try:
                with os.fdopen(write, "wb") as out:
                    out.write(struct.pack("<Q", len(payload)))
                    out.write(payload)
            finally:
                os._exit(code)
        os.close(write)
        children.append((pid, read, part))
    results: dict[int, R] = {}
    try:
        for i in parts[0]:
            results[i] = fn(items[i])
    finally:
        received = [(part, _receive(pid, read)) for pid, read, part in children]
    for part, (status, value) in received:
        if status != "ok":
            raise WorkerFailed(str(value))
        results.update(zip(part, cast("list[R]", value), strict=True))
    return [results[i] for i in range(len(items))]


def _receive(pid: int, read: int) -> tuple[str, object]:
    with os.fdopen(read, "rb") as pipe:
        header = pipe.read(8)
        data = pipe.read(struct.unpack("<Q", header)[0]) if len(header) == 8 else b""
    _, status = os.waitpid(pid, 0)
    if not data:
        return "error", f"worker {pid} died (wait status {status})"
    loaded: tuple[str, object] = pickle.loads(data)  # our own child's bytes, never analysed input
    return loaded
