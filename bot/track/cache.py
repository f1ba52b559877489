"""On-disk cache of per-file analyses, keyed by git blob id (and path: exemptions depend on it).

One JSON file per fingerprint of (pg-bot version, analyzer code, config), so changing a rule or the
analyzer starts a fresh cache instead of serving stale counts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from bot import __version__
from bot.config import Config
from bot.track.status import FileSummary

DEFAULT_DIR = Path(".pg-bot-cache")
FORMAT = 1
GITIGNORE = "# Created by pg-bot: the analysis cache is never committed.\n*\n"


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob, so a working tree and a commit share cache entries."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _canonical(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def fingerprint(config: Config) -> str:
    h = hashlib.sha256()
    h.update(f"{FORMAT}:{__version__}".encode())
    settings = dataclasses.asdict(config)
    settings.pop("source", None)  # where the config came from does not change results
    h.update(json.dumps(_canonical(settings), sort_keys=True).encode())
    analyze = resources.files("bot") / "analyze"
    for item in sorted(analyze.iterdir(), key=lambda t: t.name):
        if item.name.endswith(".py"):
            h.update(item.name.encode() + b"\0" + item.read_bytes())
    return h.hexdigest()[:20]


class AnalysisCache:
    def __init__(self, directory: Path | None, config: Config) -> None:
        self.fingerprint = fingerprint(config)
        self.path = None if directory is None else directory / f"analysis-{self.fingerprint}.json"
        self._entries: dict[str, dict[str, Any]] = {}
        self._dirty = False
        self.hits = self.misses = 0
        if self.path is not None and self.path.is_file():
            self._entries = self._read(self.path)

    @staticmethod
    def _read(path: Path) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = data["entries"]
            if not isinstance(entries, dict):
                raise TypeError("entries is not a mapping")
            return entries
        except (OSError, ValueError, KeyError, TypeError):
            return {}  # a damaged cache is only a slower run, never a wrong one

    @staticmethod
    def key(blob: str, path: str) -> str:
        return f"{blob} {path}"

    def get(self, blob: str, path: str) -> FileSummary | None:
        raw = self._entries.get(self.key(blob, path))
        if raw is None:
            self.misses += 1
            return None
        try:
            summary = FileSummary.from_json(path, raw)
        except (KeyError, TypeError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return summary

    def put(self, blob: str, summary: FileSummary) -> None:
        self._entries[self.key(blob, summary.path)] = summary.to_json()
        self._dirty = True

    def __contains__(self, item: tuple[str, str]) -> bool:
        return self.key(*item) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def save(self) -> None:
        """Write atomically (temp file + rename): a concurrent run sees the old file or the new one."""
        if self.path is None or not self._dirty:
            return
        _make_cache_dir(self.path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".analysis-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"format": FORMAT, "fingerprint": self.fingerprint, "entries": self._entries}, fh)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._dirty = False


def _make_cache_dir(folder: Path) -> None:
    """The folder, with a `.gitignore` of `*` so that git never offers the cache for a commit. It is written
    only into a folder pg-bot creates or that holds nothing but its cache files: `--cache-dir .` must never
    hide a whole project from git."""
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if ignore.exists():
        return
    if created or all(_is_cache_file(entry.name) for entry in folder.iterdir()):
        ignore.write_text(GITIGNORE, encoding="utf-8")


def _is_cache_file(name: str) -> bool:
    return (name.startswith("analysis-") and name.endswith(".json")) or name.startswith(".analysis-")  # or a temp
