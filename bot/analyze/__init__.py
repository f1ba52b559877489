"""Analyzer: one module per rule family; pure functions from (path, source) to findings.

A cheap textual prefilter keeps the parse for files that can matter; the parse itself is the standard
library's `ast` (LibCST is only needed to rewrite, in the fixer).
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from bot.analyze.context import FUNCTIONAL_COLLECTIVES, Context, is_wrapper
from bot.analyze.elsewhere import ProjectHelpers
from bot.analyze.group_methods import GROUP_METHODS
from bot.analyze.module import analyze_module
from bot.analyze.names import Names, package_of
from bot.analyze.parallel import map_forked
from bot.analyze.rules import MODULES, RULES, Reporter
from bot.analyze.scan import (
    CallSites,
    Words,
    calls_with_group,
    first_word_hit,
    group_sizes,
    imported_names,
    imported_wrappers,
    led,
)

__all__ = ["RULES", "analyze_paths", "analyze_source"]  # the file walk and project root: bot.files
from bot.analyze.source import UnreadableSource, parse
from bot.analyze.verdicts import decide
from bot.config import Config
from bot.files import (
    SourceError,
    SourcePath,
    display_path,
    iter_python_files,
    project_reader,
    project_relative,
)
from bot.model import FileError, FileResult, Finding


class _Prefilter:
    """Cheap text tests that decide whether a file is worth parsing: it must name a comm module (or the
    predicate's module) and mention a world-size call, a collective or the predicate. Every pattern is
    literal-led (bot.analyze.scan): most files are read only by fast string searches."""

    def __init__(self, config: Config) -> None:
        self.words = Words({"get_world_size", config.predicate_function, *config.collectives, *FUNCTIONAL_COLLECTIVES,
                            *GROUP_METHODS})
        modules = []
        listed = (*config.comm_modules, f"{config.predicate_module}.{config.predicate_name}")
        # a submodule's name holds its parent's (`deepspeed.comm.comm`, `deepspeed.comm.pg_utils`): the parent's
        # patterns find it too
        named = [m for m in listed if not any(m.startswith(f"{other}.") for other in listed)]
        # every pattern below matches text that holds its module's last name (`comm`, `distributed`): one fast
        # search for those first spares the patterns most files
        self._leaves = tuple(sorted({m.rpartition(".")[2].encode() for m in named}))
        for module in named:
            modules.append(led(re.escape(module)))
            parent, _, leaf = module.rpartition(".")
            if parent:  # `from deepspeed import comm`
                modules.append(led(rf"from\s+{re.escape(parent)}\s+import\b[^\n]*\b{re.escape(leaf)}\b"))
        self._modules = modules
        # Every rule needs one of these: a sized get_world_size, a `group=` argument, a `.contiguous()` argument,
        # or the predicate (counted as migrated); a renamed import (`get_world_size as ws`) keeps the file too.
        fn = re.escape(config.predicate_function)
        # (`pg.allreduce(x)`: a group's own collective, bot.analyze.group_methods)
        self._needs = [led(r"get_world_size\(\s*[^)\s]"), led(r"\.contiguous\(\)"), led(r"get_world_size\s+as\b"),
                       led(r"\.all(?:reduce|gather|toall)\w*\("), led(r"pg\.(?:broadcast|barrier|reduce)"),
                       led(r"group\.(?:broadcast|barrier|reduce)"), led(r"\._(?:allgather|reduce_scatter)_base\(")]
        self._needs_words = [led(r"group\s*="), led(rf"{fn}\s*\("), led(rf"{fn}\s+as\b"), led(r"barrier\(\s*\w")]
        # a group passed positionally: a collective called with three or more arguments (last: the only
        # pattern that is not literal-led, reached only by files that passed every other test)
        collectives = "|".join(map(re.escape, sorted(config.collectives)))
        self._positional = re.compile(
            rf"\b(?:{collectives})\s*\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*,[^()\n]*,".encode())

    def wanted(self, source: str | bytes) -> bool:
        # On bytes, so a file that is skipped is never decoded; a file with NUL bytes goes on to be reported.
        data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
        if b"\0" in data:
            return True
        if not any(leaf in data for leaf in self._leaves) or \
                not any(p[1].search(data) is not None for p in self._modules):
            return self._through_the_project(data)
        if self.words.search(data) and (any(p[1].search(data) is not None for p in self._needs)
                                        or any(first_word_hit(p, data) for p in self._needs_words)
                                        or self._positional.search(data) is not None):
            return True
        return self._through_the_project(data)

    def _through_the_project(self, data: bytes) -> bool:
        """No torch collective here (or no comm module named at all: a layer that only calls its project's
        helpers), but a group's own size (`tp_group.size() == 1`) or a project's function named for a collective
        called with a group (`reduce_scatter_coalesced(ts, dp_group)`, `AllGather.apply(x, tp_group)`,
        `distributed_utils.broadcast(t, 0, group)`). Decoded only when a byte test finds a `.size()`, an imported
        name that may be such a function, or a collective's name called as a module's function."""
        sized = b".size()" in data
        wrapped = _MAY_IMPORT_WRAPPER.search(data) is not None
        # `distributed_utils.broadcast(t, 0, group)`: a module's function named as a collective
        named = any(call in data for call in _MODULE_CALLS)
        # `if tp_group is not None: check_parallel_match(x, tp_group)`: a group's None test before an imported
        # helper handed the group, which may communicate on it (read in its own file, bot.analyze.elsewhere)
        tested = any(_GROUP_END.search(data, max(0, m.start() - 40), m.start()) for m in _NONE_TEST.finditer(data))
        if not (sized or wrapped or named or tested):
            return False
        text = data.decode("utf-8", "replace")
        if sized and group_sizes(text):
            return True
        if named and calls_with_group(text, self.words):
            return True
        wrappers = imported_wrappers(text) if wrapped else []
        if wrappers and calls_with_group(text, Words(wrappers)):
            return True
        imported = imported_names(text) if tested else []
        return bool(imported) and bool(calls_with_group(text, Words(imported)))


_PREFILTERS: dict[tuple[object, ...], _Prefilter] = {}
_WORD = re.compile(r"\w+")
# (the collectives' own names only: `.gather(` and `.reduce(` are mostly tensors' and functools')
_MODULE_CALLS = (b".all_", b".broadcast", b".reduce_scatter")  # `.all_` finds all_reduce, all_gather, all_to_all
_NONE_TEST = re.compile(rb" is (?:not )?None\b")  # (literal-led; what it tests is read right before it)
_GROUP_END = re.compile(rb"(?:group|_pg|grp)\Z")
# an import naming something that may be a collective's wrapper (bot.analyze.scan.WRAPPER_NAME says for sure)
_MAY_IMPORT_WRAPPER = re.compile(
    rb"import\b(?:[ \t]*\([^)]*?|[^\n]*?)(?:[Rr]educe|[Gg]ather|[Ss]catter|[Bb]roadcast|[Tt]o_?[Aa]ll)")


def _prefilter_for(config: Config) -> _Prefilter:
    """Cached per policy that shapes it (not per object: ids are reused once a config is collected)."""
    key = (config.comm_modules, config.collectives, config.predicate_module, config.predicate_name,
           config.predicate_function)
    if key not in _PREFILTERS:
        _PREFILTERS[key] = _Prefilter(config)
    return _PREFILTERS[key]


def analyze_source(
    path: str, source: str | bytes, config: Config, *, project_path: str | None = None, prefiltered: bool = False,
    helpers: ProjectHelpers | None = None,
) -> FileResult:
    """Findings for one file. Never raises for bad input: an unreadable file comes back with ``error`` set.

    ``path`` is what findings show; ``project_path`` (default: ``path``) is the file's path from its project
    root, which rules.yaml's exemption globs are written against; ``prefiltered`` says the caller has already
    found it worth parsing; ``helpers`` reads the project's other files for the size helpers this one imports
    (bot.analyze.elsewhere; without it, only this file is read)."""
    prefilter = _prefilter_for(config)
    if not prefiltered and not prefilter.wanted(source):
        return FileResult(path)
    try:
        parsed = parse(source, prefilter.words)
    except UnreadableSource as exc:
        return FileResult(path, error=FileError(path, str(exc)))
    project_path = project_path or path
    names = Names.of(parsed.tree, package_of(project_path))
    renamed = _renamed_functions(names, config)
    wrappers = _wrapper_functions(names, config)
    if helpers is not None:
        wrappers = sorted({*wrappers, *_communicating_imports(names, config, parsed.text, helpers, project_path)})
    if renamed or not set(wrappers) <= set(parsed.wrappers):
        # `get_world_size as ws`, or a wrapper (`all_gather_raw(t, g)`) the text scan missed: their lines matter
        before = parsed.hot_lines
        parsed.find_hot(prefilter.words | renamed, wrappers)
        if parsed.trimmed and not set(parsed.hot_lines) <= set(before):  # a function left out may matter now
            parsed = parse(source, prefilter.words | renamed, wrappers)
    ctx = Context(path, parsed, names, config, helpers)
    try:
        module = analyze_module(ctx)
        reporter = Reporter(decide(module))
        for rule in MODULES:
            rule.check(reporter)
    except RecursionError:
        return FileResult(path, error=FileError(path, "too deeply nested to analyse"))
    configured = (_configured(f, ctx, config, project_path) for f in reporter.findings)
    kept = sorted((f for f in configured if f is not None), key=lambda f: (f.span, f.code))
    return FileResult(path, findings=kept, migrated=len(module.sites.predicate_calls))


def _renamed_functions(names: Names, config: Config) -> list[str]:
    modules = (*config.comm_modules, f"{config.predicate_module}.{config.predicate_name}")
    return sorted(
        local
        for local, target in names.aliases.items()
        if local != target.rpartition(".")[2]
        and any((parent := target.rpartition(".")[0]) == m or parent.startswith(f"{m}.") for m in modules)
    )


def _communicating_imports(names: Names, config: Config, text: str, helpers: ProjectHelpers,
                           project_path: str) -> list[str]:
    """Local names of functions imported from the file's own top-level package that this file calls with a group
    and that run a collective on a group they are given, or autograd Functions run with one (`Fn.apply(x, g)`)
    that communicate on a group (read there, bot.analyze.elsewhere). The package is the
    folder of the file's path that the import names first, wherever it sits (`pkg/`, `src/pkg/`, `python/pkg/`)."""
    folders = project_path.split("/")[:-1]
    collectives = frozenset(config.collectives)
    calls: CallSites | None = None
    out = []
    for local, target in names.aliases.items():
        head = target.partition(".")[0]
        if head not in folders or "." not in target:
            continue
        at = folders.index(head)  # (any import of the package shows where it sits, a wrapper's too)
        helpers.locate(head, "/".join(folders[:at]), folders[at + 1] if at + 1 < len(folders) else "")
        if is_wrapper(target, config):
            continue
        calls = calls or CallSites(text)
        if (calls.with_group(local) and helpers.communicates(target, collectives)) or \
                (calls.with_group("apply", local) and helpers.applies(target, collectives)):
            out.append(local)
        # a module of the project, its functions called through it: `utils.sync_params(model, pg)`
        out.extend(fn for fn in sorted(calls.called_on(local))
                   if calls.with_group(fn, local) and helpers.communicates(f"{target}.{fn}", collectives))
    return out


def _wrapper_functions(names: Names, config: Config) -> list[str]:
    """Local names of the wrappers the file imports (bot.analyze.context.is_wrapper)."""
    return sorted(local for local, target in names.aliases.items() if is_wrapper(target, config))


def _configured(finding: Finding, ctx: Context, config: Config, project_path: str) -> Finding | None:
    setting = config.rule(finding.code)
    if not setting.enabled:
        return None
    if config.exempt(project_path, finding.code, finding.function, finding.group) is not None:
        return None
    if ctx.source.ignored(finding.code, finding.span):
        return None
    return replace(finding, severity=setting.severity)


def analyze_paths(
    paths: Iterable[Path | SourcePath], config: Config, *, relative_to: Path | None = None, jobs: int | None = None
) -> Iterator[FileResult]:
    """Results in file order, one per entry of bot.files' walk; a file that cannot be read (or a folder that
    cannot be listed) comes back with ``error`` set. Files are read, prefiltered and parsed on ``jobs``
    processes (default: one per core, forked, when there are enough files to pay for it), each taking the next
    file, largest first, until none is left (bot.analyze.parallel)."""
    with _fewer_collections():
        yield from _analyze_paths(paths, config, relative_to, jobs)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Parsing makes many objects and few cycles: at the default thresholds the cyclic collector runs
    thousands of times and costs about a tenth of the run. Raised for the run (and its forked workers),
    restored after."""
    before = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _analyze_paths(
    paths: Iterable[Path | SourcePath], config: Config, relative_to: Path | None, jobs: int | None
) -> Iterator[FileResult]:
    entries = list(iter_python_files(paths))
    workers = _workers(jobs, len(entries))
    _prefilter_for(config)  # built once, before the fork
    if workers <= 1:
        for entry in entries:
            yield _analyze_entry(entry, config, relative_to)
        return
    # Reading and prefiltering go to the workers too: they are a tenth of a whole-package check. The config
    # and the entries reach the forked workers by inheritance, never pickled.
    yield from map_forked(lambda entry: _analyze_entry(entry, config, relative_to), entries,
                          [_size(entry) for entry in entries], workers)


def _analyze_entry(entry: SourcePath, config: Config, relative_to: Path | None) -> FileResult:
    shown = display_path(entry.path, relative_to)
    try:
        data = entry.read(config.max_file_bytes)
    except SourceError as exc:
        return FileResult(shown, error=FileError(shown, str(exc)))
    if not _prefilter_for(config).wanted(data):
        return FileResult(shown)
    return analyze_source(shown, data, config, project_path=project_relative(entry.path), prefiltered=True,
                          helpers=_helpers_for(entry.path, config.max_file_bytes))


_HELPERS: dict[Path, ProjectHelpers] = {}  # project root -> its helpers, read once per process


def _helpers_for(file: Path, max_bytes: int) -> ProjectHelpers | None:
    found = project_reader(file, max_bytes)
    if found is None:
        return None
    root, reader = found
    if root not in _HELPERS:
        _HELPERS[root] = ProjectHelpers(reader)
    return _HELPERS[root]


def _size(entry: SourcePath) -> int:
    """What orders the workers' queue: a file's size (reading it tells what went wrong, if anything)."""
    try:
        return os.stat(entry.path).st_size if entry.problem is None else 0
    except OSError:
        return 0


_PARALLEL_MIN_FILES = 24


def _workers(jobs: int | None, files: int) -> int:
    if not hasattr(os, "fork"):
        return 1
    if jobs is not None:
        return max(1, min(jobs, files))
    if files < _PARALLEL_MIN_FILES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, 8)
