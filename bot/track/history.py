"""Status counts for every commit on the first-parent line, computed incrementally.

The tree of the base commit is analysed once; after that each commit only re-analyses the files it changed
(and only blobs the cache has not seen), and the per-area counts are updated by taking away the old file's
contribution and adding the new one's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bot.track import gitread
from bot.track.gitread import Commit, GitError
from bot.track.status import Status, area_name, tally
from bot.track.trees import TreeReader, tracked


@dataclass(frozen=True)
class Point:
    """The counts at one commit: area -> {remaining, migrated, by_rule}."""

    sha: str
    time: int
    subject: str
    areas: dict[str, dict[str, Any]]

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.time, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    @property
    def remaining(self) -> int:
        return sum(a["remaining"] for a in self.areas.values())

    @property
    def migrated(self) -> int:
        return sum(a["migrated"] for a in self.areas.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "date": self.date,
            "time": self.time,
            "subject": self.subject,
            "remaining": self.remaining,
            "migrated": self.migrated,
            "areas": self.areas,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Point:
        return cls(sha=data["sha"], time=int(data["time"]), subject=data.get("subject", ""), areas=data["areas"])


def _point(commit: Commit, status: Status) -> Point:
    return Point(sha=commit.sha, time=commit.time, subject=commit.subject, areas=status.counts())


def compute_history(
    repo: Path, base: str, tip: str, reader: TreeReader, prefixes: Sequence[str] = ()
) -> tuple[list[Point], Status]:
    """One Point for ``base`` and one for each commit after it up to ``tip``; also the full status at tip."""
    base_commit = gitread.commit_info(repo, base)
    commits = gitread.first_parent_commits(repo, base, tip)
    if commits and commits[0].parents[:1] != (base_commit.sha,):
        raise GitError(f"{base} is not on the first-parent line of {tip}; pick a commit of that line")

    tree = {p: b for p, b in gitread.ls_tree(repo, base_commit.sha).items() if tracked(p, prefixes)}
    wanted = [(b, p) for p, b in tree.items()]
    wanted += [(c.blob, c.path) for commit in commits for c in commit.changes if c.is_file and tracked(c.path, prefixes)]
    reader.ensure(wanted, lambda shas: gitread.read_blobs(repo, shas))

    config = reader.config
    status = tally((reader.summary(b, p) for p, b in sorted(tree.items())), config)
    points = [_point(base_commit, status)]
    for commit in commits:
        for change in commit.changes:
            if not tracked(change.path, prefixes):
                continue
            area = status.areas[area_name(config, change.path)]
            old = tree.pop(change.path, None)
            if old is not None:
                area.add(reader.summary(old, change.path), -1)
                status.sites.pop(change.path, None)
            if change.is_file:
                tree[change.path] = change.blob
                new = reader.summary(change.blob, change.path)
                area.add(new)
                if new.sites or new.error:
                    status.sites[change.path] = new
        points.append(_point(commit, status))
    return points, status
