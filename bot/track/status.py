"""Count the migration per area: sites remaining (findings, by rule) and sites migrated (predicate calls).

Pure: FileSummaries in, a Status out. A FileSummary is the compact, cacheable part of a FileResult that the
tracker needs, so history can keep one per blob instead of whole results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.config import Config
from bot.model import FileResult

OTHER = "other"

DONE, IN_PROGRESS, NOT_STARTED = "done", "in progress", "not started"
NO_SITES = "no sites"  # nothing found and nothing migrated: "done" would claim work that never existed


@dataclass(frozen=True, order=True)
class Site:
    """One remaining site: where it is and which rule found it."""

    code: str
    line: int
    col: int
    message: str = ""


@dataclass(frozen=True)
class FileSummary:
    path: str
    sites: tuple[Site, ...] = ()
    migrated: int = 0
    error: str | None = None

    @classmethod
    def from_result(cls, result: FileResult) -> FileSummary:
        sites = tuple(
            sorted(Site(f.code, f.span.line, f.span.col, f.message) for f in result.findings)
        )
        error = result.error.message if result.error is not None else None
        return cls(path=result.path, sites=sites, migrated=result.migrated, error=error)

    def to_json(self) -> dict[str, Any]:
        return {
            "s": [[s.code, s.line, s.col, s.message] for s in self.sites],
            "m": self.migrated,
            "e": self.error,
        }

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> FileSummary:
        sites = tuple(Site(str(c), int(ln), int(col), str(msg)) for c, ln, col, msg in data["s"])
        return cls(path=path, sites=sites, migrated=int(data["m"]), error=data.get("e"))

    def at(self, path: str) -> FileSummary:
        """The same analysis under another path (the cache stores summaries without binding them to one)."""
        return self if path == self.path else FileSummary(path, self.sites, self.migrated, self.error)


@dataclass
class AreaStatus:
    name: str
    title: str
    remaining_by_rule: Counter[str] = field(default_factory=Counter)
    migrated: int = 0
    files: Counter[str] = field(default_factory=Counter)  # path -> remaining sites in it
    errors: list[str] = field(default_factory=list)  # paths that did not parse

    @property
    def remaining(self) -> int:
        return sum(self.remaining_by_rule.values())

    @property
    def total(self) -> int:
        return self.remaining + self.migrated

    @property
    def percent(self) -> float | None:
        """Share of sites migrated; None when the area has no sites at all."""
        return None if self.total == 0 else 100.0 * self.migrated / self.total

    @property
    def state(self) -> str:
        if self.total == 0:
            return NO_SITES
        if self.remaining == 0:
            return DONE
        return NOT_STARTED if self.migrated == 0 else IN_PROGRESS

    def add(self, summary: FileSummary, sign: int = 1) -> None:
        """Add (sign=1) or take away (sign=-1) one file's contribution; history updates areas this way."""
        for site in summary.sites:
            self.remaining_by_rule[site.code] += sign
        if summary.sites:
            self.files[summary.path] += sign * len(summary.sites)
        self.migrated += sign * summary.migrated
        if summary.error is not None:
            if sign > 0:
                self.errors.append(summary.path)
            else:
                self.errors.remove(summary.path)
        # drop zero entries so equal states compare equal however they were reached
        self.remaining_by_rule = +self.remaining_by_rule
        self.files = +self.files

    def counts(self) -> dict[str, Any]:
        return {
            "remaining": self.remaining,
            "migrated": self.migrated,
            "by_rule": dict(sorted(self.remaining_by_rule.items())),
        }


@dataclass
class Status:
    areas: dict[str, AreaStatus]
    sites: dict[str, FileSummary] = field(default_factory=dict)  # path -> summary, for links to each site

    @property
    def remaining(self) -> int:
        return sum(a.remaining for a in self.areas.values())

    @property
    def migrated(self) -> int:
        return sum(a.migrated for a in self.areas.values())

    @property
    def errors(self) -> list[str]:
        return sorted(p for a in self.areas.values() for p in a.errors)

    def counts(self) -> dict[str, dict[str, Any]]:
        return {name: a.counts() for name, a in self.areas.items()}


def empty_status(config: Config) -> Status:
    """One row per configured area, in rules.yaml order; "other" is always present as the catch-all."""
    areas = {a.name: AreaStatus(a.name, a.title) for a in config.areas}
    areas.setdefault(OTHER, AreaStatus(OTHER, "Other"))
    return Status(areas=areas)


def area_name(config: Config, path: str) -> str:
    area = config.area_of(path)
    return area.name if area is not None else OTHER


def tally(summaries: Iterable[FileSummary], config: Config) -> Status:
    status = empty_status(config)
    for summary in summaries:
        status.areas[area_name(config, summary.path)].add(summary)
        if summary.sites or summary.error:
            status.sites[summary.path] = summary
    return status
