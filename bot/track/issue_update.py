"""Write the status section into the tracking issue without losing concurrent edits.

GitHub has no conditional write for an issue body (no If-Match on PATCH), so the loop narrows the window
instead: read, compute, re-read and compare just before writing, then read back; any difference means
someone else wrote, and the loop starts over from their text. What remains is an edit landing during the one
PATCH round trip itself; the workflow's concurrency group keeps two bot runs from racing each other.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot.track.issue_body import DEFAULT_HEADING, with_section


class IssueClient(Protocol):
    def issue_body(self, number: int) -> str | None: ...

    def edit_issue_body(self, number: int, body: str) -> None: ...


class UpdateConflict(RuntimeError):
    """The body kept changing under us; nothing more is written."""


@dataclass(frozen=True)
class UpdateResult:
    written: bool
    attempts: int
    body: str


def update_issue(
    client: IssueClient,
    number: int,
    content: str,
    *,
    heading: str = DEFAULT_HEADING,
    attempts: int = 5,
    pause: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> UpdateResult:
    """Put ``content`` between the markers of issue ``number``; no write when it is already there."""
    for attempt in range(1, attempts + 1):
        before = client.issue_body(number) or ""
        after = with_section(before, content, heading)  # MarkerError: leave a broken body to a human
        if after == before:
            return UpdateResult(written=False, attempts=attempt, body=before)
        if (client.issue_body(number) or "") == before:
            client.edit_issue_body(number, after)
            if (client.issue_body(number) or "") == after:
                return UpdateResult(written=True, attempts=attempt, body=after)
        # someone edited between our reads (or right after our write): start over from their text;
        # jitter so two runs that collided do not collide again in lockstep
        if attempt < attempts:
            sleep(pause * attempt * (0.5 + random.random()))
    raise UpdateConflict(f"issue #{number}: the body changed on each of {attempts} attempts; not written")
