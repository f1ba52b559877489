"""The read / re-read / write / read-back loop against an in-memory issue store with edit hooks.

The store is a real (tiny) implementation of the two calls the loop uses; hooks let a test land a "human"
edit at an exact point between the loop's reads and writes. The same cases run against the fake GitHub
server through bot.github in test_track_github.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from bot.track.issue_body import END, START, MarkerError
from bot.track.issue_update import UpdateConflict, update_issue

TABLE = "| Area | Remaining |\n|---|---:|\n| MoE | 3 |\n"


class Store:
    def __init__(self, body: str | None) -> None:
        self.body = body
        self.reads = 0
        self.writes: list[str] = []
        self.on_read: dict[int, Callable[[Store], None]] = {}  # after the n-th read (1-based) returns
        self.lock = threading.Lock()

    def issue_body(self, number: int) -> str | None:
        assert number == 7
        with self.lock:
            self.reads += 1
            body, n = self.body, self.reads
        hook = self.on_read.get(n)
        if hook is not None:
            hook(self)  # the world changes after this read was answered
        return body

    def edit_issue_body(self, number: int, body: str) -> None:
        assert number == 7
        with self.lock:
            self.body = body
            self.writes.append(body)


def no_sleep(_: float) -> None:
    pass


BODY = f"# RFC\r\n\r\nintro\r\n{START}\r\nold\r\n{END}\r\n\r\n## Notes\r\nhuman text\r\n"


def test_writes_once_and_keeps_the_outside_bytes() -> None:
    store = Store(BODY)
    result = update_issue(store, 7, TABLE, sleep=no_sleep)
    assert result.written and result.attempts == 1 and len(store.writes) == 1
    assert store.body is not None
    assert store.body.split(START)[0] == BODY.split(START)[0]
    assert store.body.split(END)[1] == BODY.split(END)[1]


def test_unchanged_section_is_not_written() -> None:
    store = Store(BODY)
    update_issue(store, 7, TABLE, sleep=no_sleep)
    store.writes.clear()
    result = update_issue(store, 7, TABLE, sleep=no_sleep)
    assert not result.written and store.writes == []


def test_human_edit_between_read_and_write_is_kept() -> None:
    store = Store(BODY)

    def human(s: Store) -> None:
        s.body = (s.body or "").replace("human text", "human text, edited while the bot ran")

    store.on_read[1] = human  # after the bot's first read, before its re-read and write
    result = update_issue(store, 7, TABLE, sleep=no_sleep)
    assert result.written and result.attempts == 2
    assert "edited while the bot ran" in (store.body or "")
    assert TABLE.replace("\n", "\r\n") in (store.body or "")
    assert len(store.writes) == 1  # the stale body was never written


def test_edit_right_after_the_write_is_kept_and_the_section_restored() -> None:
    store = Store(BODY)
    write = store.edit_issue_body

    def write_then_human_saves(number: int, body: str) -> None:
        write(number, body)
        if len(store.writes) == 1:
            # a browser tab opened before the bot ran saves the old section plus a new paragraph
            store.body = BODY + "late paragraph\r\n"

    store.edit_issue_body = write_then_human_saves  # type: ignore[method-assign]
    result = update_issue(store, 7, TABLE, sleep=no_sleep)
    assert result.written and result.attempts == 2 and len(store.writes) == 2
    assert (store.body or "").endswith("late paragraph\r\n")
    assert TABLE.replace("\n", "\r\n") in (store.body or "")


def test_gives_up_after_bounded_attempts_when_the_body_keeps_changing() -> None:
    store = Store(BODY)
    counter = iter(range(1000))

    def churn(s: Store) -> None:
        s.body = BODY + f"edit {next(counter)}\r\n"

    for n in range(1, 100):
        store.on_read[n] = churn
    with pytest.raises(UpdateConflict, match="3 attempts"):
        update_issue(store, 7, TABLE, attempts=3, sleep=no_sleep)
    assert store.writes == []


def test_broken_markers_stop_before_any_write() -> None:
    store = Store(f"{START}\nno end marker\n")
    with pytest.raises(MarkerError):
        update_issue(store, 7, TABLE, sleep=no_sleep)
    assert store.writes == []


def test_two_runs_at_once_keep_a_human_edit() -> None:
    """Two bot runs (different tables) and a human edit interleave; the human's text survives."""
    store = Store(BODY)
    barrier = threading.Barrier(2)

    def human(s: Store) -> None:
        s.body = (s.body or "").replace("intro", "intro (edited)")

    store.on_read[1] = human
    tables = [TABLE, TABLE.replace("3", "2")]
    results: list[object] = []

    def run(table: str) -> None:
        barrier.wait()
        results.append(update_issue(store, 7, table, attempts=10, pause=0.01))

    threads = [threading.Thread(target=run, args=(t,)) for t in tables]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    body = store.body or ""
    assert len(results) == 2
    assert "intro (edited)" in body and body.endswith("## Notes\r\nhuman text\r\n")
    assert any(t.replace("\n", "\r\n") in body for t in tables)
