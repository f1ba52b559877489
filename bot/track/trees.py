"""Analyze a tree (a folder, or a git commit read as data) into per-file summaries, through the cache."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Config
from bot.files import SourceError, SourcePath, iter_python_files, project_relative
from bot.model import FileResult
from bot.track import gitread
from bot.track.cache import AnalysisCache, blob_id
from bot.track.status import FileSummary, Status, tally

Analyzer = Callable[[str, bytes, Config], FileResult]
BlobReader = Callable[[list[str]], Iterable[tuple[str, bytes]]]

PARALLEL_MIN = 48  # below this many new files a process pool costs more than it saves


def default_analyzer() -> Analyzer:
    from bot.analyze import analyze_source  # imported late: the tracker's pure parts do not need it

    return analyze_source


def tracked(path: str, prefixes: Sequence[str] = ()) -> bool:
    """Python files, optionally only those under one of ``prefixes`` (e.g. ``deepspeed/``)."""
    if not path.endswith(".py"):
        return False
    return not prefixes or any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def analyze_one(analyzer: Analyzer, path: str, data: bytes, config: Config) -> FileSummary:
    try:
        return FileSummary.from_result(analyzer(path, data, config)).at(path)
    except Exception as exc:  # an analyzer bug on one file must not end the whole run
        return FileSummary(path=path, error=f"analyzer failed: {type(exc).__name__}: {exc}")


def _analyze_batch(args: tuple[Analyzer, Config, list[tuple[str, str, bytes]]]) -> list[tuple[str, FileSummary]]:
    analyzer, config, items = args
    return [(blob, analyze_one(analyzer, path, data, config)) for blob, path, data in items]


@dataclass
class TreeReader:
    config: Config
    cache: AnalysisCache
    analyzer: Analyzer = field(default_factory=default_analyzer)
    workers: int = 1
    analyzed: int = 0  # files actually analysed (cache misses), for reports and tests

    def ensure(self, wanted: Iterable[tuple[str, str]], read: BlobReader) -> None:
        """Analyse every (blob, path) not yet cached, reading each missing blob once."""
        by_blob: dict[str, list[str]] = defaultdict(list)
        for blob, path in dict.fromkeys(wanted):
            if (blob, path) not in self.cache:
                by_blob[blob].append(path)
        if not by_blob:
            return
        items = ((blob, path, data) for blob, data in read(list(by_blob)) for path in by_blob[blob])
        for blob, summary in self._analyze(items, sum(map(len, by_blob.values()))):
            self.cache.put(blob, summary)
            self.analyzed += 1

    def _analyze(self, items: Iterator[tuple[str, str, bytes]], count: int) -> Iterator[tuple[str, FileSummary]]:
        if self.workers <= 1 or count < PARALLEL_MIN:
            for blob, path, data in items:
                yield blob, analyze_one(self.analyzer, path, data, self.config)
            return
        batch = max(8, count // (self.workers * 8))
        chunks = _chunks(items, batch)
        with ProcessPoolExecutor(max_workers=self.workers) as pool:
            for done in pool.map(_analyze_batch, ((self.analyzer, self.config, c) for c in chunks)):
                yield from done

    def summary(self, blob: str, path: str) -> FileSummary:
        found = self.cache.get(blob, path)
        if found is None:
            raise KeyError(f"{path} ({blob}) was not analysed; call ensure() first")
        return found


def _chunks(items: Iterator[tuple[str, str, bytes]], size: int) -> Iterator[list[tuple[str, str, bytes]]]:
    chunk: list[tuple[str, str, bytes]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def status_at_ref(repo: Path, ref: str, reader: TreeReader, prefixes: Sequence[str] = ()) -> Status:
    tree = {p: b for p, b in gitread.ls_tree(repo, ref).items() if tracked(p, prefixes)}
    reader.ensure(((b, p) for p, b in tree.items()), lambda shas: gitread.read_blobs(repo, shas))
    return tally((reader.summary(b, p) for p, b in sorted(tree.items())), reader.config)


def walk_sources(root: Path, prefixes: Sequence[str] = ()) -> Iterator[tuple[str, SourcePath]]:
    """(project path, entry) for each tracked entry of bot.files' walk, the same walk `check` and `fix` use.

    Paths are from the project root (as in `check`, and as git names them at a ref), from ``root`` when
    there is no project root. A folder that cannot be listed is an entry too, with ``problem`` set."""
    for entry in iter_python_files([root]):
        rel = project_relative(entry.path, fallback=root)
        if tracked(rel, prefixes) if entry.problem is None else _may_hold(rel, prefixes):
            yield rel, entry


def _may_hold(folder: str, prefixes: Sequence[str]) -> bool:
    """Whether an unlisted folder may hold tracked files: it is under a prefix, or a prefix is under it."""
    return not prefixes or any(tracked(f"{folder}/x.py", [p]) or p.startswith(folder.rstrip("/") + "/") for p in prefixes)


def status_of_dir(root: Path, reader: TreeReader, prefixes: Sequence[str] = ()) -> Status:
    if not root.is_dir():
        raise NotADirectoryError(f"{root}: not a folder")
    contents: dict[str, bytes] = {}
    tree: dict[str, str] = {}
    unreadable: dict[str, FileSummary] = {}  # per-file problems: counted as errors, the run goes on
    for rel, entry in walk_sources(root, prefixes):
        try:
            data = entry.read(reader.config.max_file_bytes)
        except SourceError as exc:
            unreadable[rel] = FileSummary(path=rel, error=str(exc))
            continue
        tree[rel] = blob_id(data)
        contents[tree[rel]] = data
    reader.ensure(((b, p) for p, b in tree.items()), lambda shas: ((s, contents[s]) for s in shas))
    summaries = {p: reader.summary(b, p) for p, b in tree.items()} | unreadable
    return tally((summaries[p] for p in sorted(summaries)), reader.config)
