"""Run one function over many items on forked processes, results in item order.

Every process (the parent too) pulls the next item from one shared queue, heaviest first, until it is empty:
no process idles while another still has a backlog, whatever the items turn out to cost (most files of a
package are dropped by the prefilter in microseconds, a few take tens of milliseconds). The queue is a pipe
filled before the fork; each child sends its results back, pickled, through a pipe of its own. No executor
threads or per-item round trips (a process pool cost about a tenth of a whole-package check).
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

_TOKEN = struct.Struct("<I")
# Tokens are written before any process reads, so they must fit the pipe's buffer (16 KiB at least on the
# systems with fork): more items than this go out in batches of several per token.
_MAX_TOKENS = 16 * 1024 // _TOKEN.size


class WorkerFailed(RuntimeError):
    """A forked worker raised or died; the message says what happened there."""


def batches(weights: Sequence[int]) -> list[list[int]]:
    """Item indexes, heaviest first, in at most _MAX_TOKENS consecutive batches: the queue's tokens."""
    order = sorted(range(len(weights)), key=lambda i: -weights[i])
    per = max(1, -(-len(order) // _MAX_TOKENS))
    return [order[k : k + per] for k in range(0, len(order), per)]


def map_forked(fn: Callable[[T], R], items: Sequence[T], weights: Sequence[int], workers: int) -> list[R]:
    """``[fn(x) for x in items]`` on ``workers`` processes (this one and ``workers - 1`` forked children).
    ``weights`` orders the queue (heaviest first), so a costly item is not the last one taken."""
    queue = batches(weights)
    tokens_read, tokens_write = os.pipe()
    os.write(tokens_write, b"".join(_TOKEN.pack(k) for k in range(len(queue))))
    os.close(tokens_write)  # every process sees the end of the queue once the tokens are taken

    def pull() -> list[tuple[int, R]]:
        done: list[tuple[int, R]] = []
        # A read of one token is whole: a pipe hands out what it holds under its lock, and every token was
        # written before any read.
        while token := os.read(tokens_read, _TOKEN.size):
            for i in queue[_TOKEN.unpack(token)[0]]:
                done.append((i, fn(items[i])))
        return done

    children: list[tuple[int, int]] = []  # (pid, read end of its results)
    try:
        for _ in range(max(1, min(workers, len(queue))) - 1):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # child: never returns into the caller's code
                os.close(read)
                code = 0
                try:
                    payload = pickle.dumps(("ok", pull()), protocol=pickle.HIGHEST_PROTOCOL)
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
            children.append((pid, read))
        results = dict(pull())
    finally:
        os.close(tokens_read)
        received = [_receive(pid, read) for pid, read in children]
    for status, value in received:
        if status != "ok":
            raise WorkerFailed(str(value))
        results.update(cast("list[tuple[int, R]]", value))
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
