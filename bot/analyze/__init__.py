"""Analyzer: one module per rule family; pure functions from (path, source) to findings.

A cheap textual prefilter keeps the parse for files that can matter; the parse itself is the standard
library's `ast` (LibCST is only needed to rewrite, in the fixer).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from bot.analyze import cached, contiguous, copies, guards, partial, unguarded
from bot.analyze.base import RuleInput
from bot.analyze.context import Context
from bot.analyze.names import Names, package_of
from bot.analyze.optional import OptionalFacts
from bot.analyze.source import UnreadableSource, parse
from bot.analyze.walker import collect
from bot.config import Config
from bot.model import FileError, FileResult, Finding, Rule

# Order matters: copies first, so guards inside a copy are reported as the copy (PG107), not as PG101.
_FAMILIES = (copies, guards, partial, cached, unguarded, contiguous)
RULES: dict[str, Rule] = {rule.code: rule for family in _FAMILIES for rule in family.RULES}
RULES = dict(sorted(RULES.items()))

_SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", ".tox", "build", "dist"}


def _prefilter(config: Config) -> re.Pattern[str]:
    words = {"get_world_size", config.predicate_function, *config.collectives}
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words))) + r")\b")


_PREFILTERS: dict[int, re.Pattern[str]] = {}


def analyze_source(path: str, source: str | bytes, config: Config) -> FileResult:
    """Findings for one file. Never raises for bad input: an unreadable file comes back with ``error`` set."""
    pattern = _PREFILTERS.setdefault(id(config), _prefilter(config))
    probe = source if isinstance(source, str) else source.decode("latin-1")
    if not pattern.search(probe) and "\0" not in probe:
        return FileResult(path)
    try:
        parsed = parse(source)
    except UnreadableSource as exc:
        return FileResult(path, error=FileError(path, str(exc)))
    ctx = Context(path, parsed, Names.of(parsed.tree, package_of(path)), config)
    facts = collect(ctx)
    inp = RuleInput(ctx, facts, OptionalFacts.of(parsed.tree))
    for family in _FAMILIES:
        family.check(inp)
    configured = (_configured(f, inp, config) for f in inp.findings)
    kept = sorted((f for f in configured if f is not None), key=lambda f: (f.span, f.code))
    return FileResult(path, findings=kept, migrated=facts.predicate_calls)


def _configured(finding: Finding, inp: RuleInput, config: Config) -> Finding | None:
    setting = config.rule(finding.code)
    if not setting.enabled:
        return None
    if config.exempt(finding.path, finding.code, finding.function) is not None:
        return None
    if inp.ctx.source.ignored(finding.code, finding.span):
        return None
    return replace(finding, severity=setting.severity)


def iter_python_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Files as given, folders walked (sorted, VCS and virtualenv folders skipped) for `*.py`."""
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield Path(root) / name
        else:
            yield path


def analyze_paths(paths: Iterable[Path], config: Config, *, relative_to: Path | None = None) -> Iterator[FileResult]:
    for file in iter_python_files(paths):
        shown = _display(file, relative_to)
        try:
            data = file.read_bytes()
        except OSError as exc:
            yield FileResult(shown, error=FileError(shown, f"cannot read: {exc.strerror or exc}"))
            continue
        yield analyze_source(shown, data, config)


def _display(file: Path, relative_to: Path | None) -> str:
    if relative_to is not None:
        try:
            return file.resolve().relative_to(relative_to.resolve()).as_posix()
        except ValueError:
            pass
    return file.as_posix()
