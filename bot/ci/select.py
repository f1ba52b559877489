"""Changed files -> test paths, through the areas in rules.yaml. Pure; fails safe to the full suite.

Whenever the selection cannot be sure it covers what a change can break, it returns ``ci.full_suite``: a path
listed in ``ci.run_all_when``, a file matching no area, an area with no tests, a Python file in the catch-all
area whose diff touches a collective or a process group (or whose diff GitHub did not send), a changed test
helper, too many files, a file list cut short by pagination, or more test paths than ``ci.max_test_paths``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bot.ci.validate import ValidationError, validate_test_path
from bot.config import Area, Config, path_matches
from bot.report.markdown import code_span

# More changed files than this and no per-file reasoning is trusted (GitHub lists at most 3000 per PR).
MAX_CHANGED_FILES = 300
# Words in a diff line that mean a change can alter distributed behaviour, beyond the configured collectives.
PROCESS_GROUP_WORDS = ("get_world_size", "get_rank", "new_group", "is_parallel", "process_group",
                       "init_distributed", "init_process_group", "group=")


@dataclass(frozen=True)
class ChangedFile:
    """One file of a pull request, as the API lists it; ``patch`` is None when GitHub sends no diff."""

    path: str
    status: str = "modified"  # added | removed | modified | renamed | copied | changed | unchanged
    previous_path: str | None = None
    patch: str | None = None


@dataclass(frozen=True)
class Selection:
    tests: tuple[str, ...]
    full: bool
    reasons: tuple[str, ...] = ()  # why: one line per decision, for the PR comment
    areas: tuple[str, ...] = ()  # areas whose tests were selected
    changed: int = 0  # how many changed files were looked at


@dataclass
class _Acc:
    tests: dict[str, None] = field(default_factory=dict)  # ordered set
    areas: dict[str, None] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    full_reasons: list[str] = field(default_factory=list)


def full_suite(config: Config, reason: str, changed: int = 0) -> Selection:
    return Selection(tests=tuple(config.ci.full_suite), full=True, reasons=(reason,), changed=changed)


def select_tests(files: Sequence[ChangedFile], config: Config, *, truncated: bool = False,
                 max_files: int = MAX_CHANGED_FILES) -> Selection:
    """Test paths for a PR's changed files. ``truncated``: the file list is known to be incomplete."""
    if truncated:
        return full_suite(config, "the changed-file list was cut short (pagination cap): running the full suite",
                          len(files))
    if len(files) > max_files:
        return full_suite(config, f"{len(files)} changed files (more than {max_files}): running the full suite",
                          len(files))
    if not files:
        return full_suite(config, "no changed files listed: running the full suite")
    acc = _Acc()
    collective_words = _collective_regex(config)
    for f in files:
        for path in dict.fromkeys(p for p in (f.path, f.previous_path) if p):
            _classify(path, f, config, collective_words, acc)
    if acc.full_reasons:
        return Selection(tests=tuple(config.ci.full_suite), full=True, reasons=tuple(acc.full_reasons),
                         changed=len(files))
    tests = _drop_nested(acc.tests)
    if not tests:
        return full_suite(config, "no area of the changed files lists tests: running the full suite", len(files))
    if len(tests) > config.ci.max_test_paths:
        return full_suite(config, f"{len(tests)} test paths selected (more than ci.max_test_paths = "
                          f"{config.ci.max_test_paths}): running the full suite", len(files))
    return Selection(tests=tests, full=False, reasons=tuple(acc.reasons), areas=tuple(acc.areas),
                     changed=len(files))


def _classify(path: str, f: ChangedFile, config: Config, collective_words: re.Pattern[str], acc: _Acc) -> None:
    shown = code(path)
    trigger = next((g for g in config.ci.run_all_when if path_matches(path, g)), None)
    if trigger is not None:
        acc.full_reasons.append(f"{shown} matches `ci.run_all_when` {code(trigger)}")
        return
    if _under(path, config.ci.test_root):
        if _is_test_file(path):
            # a removed test has nothing left to run; a renamed one runs under its new name only
            if path != f.path or f.status == "removed":
                return
            try:
                acc.tests[validate_test_path(path, config.ci.test_root)] = None
                acc.reasons.append(f"{shown}: changed test file")
            except ValidationError:
                acc.full_reasons.append(f"{shown} is not a safe test path to hand to the workflow")
            return
        if path.endswith(".py"):
            acc.full_reasons.append(f"{shown}: changed test helper, may affect any test")
        return  # test data and docs under the test tree select nothing by themselves
    area = config.area_of(path)
    if area is None:
        acc.full_reasons.append(f"{shown} is in no area of rules.yaml")
        return
    if area.tests:
        new = [t for t in area.tests if t not in acc.tests]
        acc.tests.update(dict.fromkeys(area.tests))
        if area.name not in acc.areas:
            acc.areas[area.name] = None
            acc.reasons.append(f"area `{area.name}` ({shown}{', ...' if not new else ''}): "
                               + ", ".join(code(t) for t in area.tests))
        return
    if not _is_catch_all(area):
        acc.full_reasons.append(f"{shown} is in area `{area.name}`, which lists no tests")
        return
    if not path.endswith(".py"):
        return  # docs, images, ... in the catch-all area cannot break a distributed test
    if f.patch is None:
        acc.full_reasons.append(f"{shown} (area `{area.name}`): GitHub sent no diff to inspect")
    elif collective_words.search(_changed_lines(f.patch)):
        acc.full_reasons.append(f"{shown} (area `{area.name}`) changes lines that use a collective or a "
                                "process group")


def _collective_regex(config: Config) -> re.Pattern[str]:
    words = sorted(set(config.collectives) | {w for w in PROCESS_GROUP_WORDS if w.isidentifier()})
    alternatives = [rf"\b{re.escape(w)}\b" for w in words]
    alternatives += [re.escape(w) for w in PROCESS_GROUP_WORDS if not w.isidentifier()]
    return re.compile("|".join(alternatives))


def _changed_lines(patch: str) -> str:
    """The added and removed lines of a unified diff hunk list (context lines cannot change behaviour)."""
    return "\n".join(line[1:] for line in patch.splitlines()
                     if line[:1] in "+-" and not line.startswith(("+++", "---")))


def _under(path: str, root: str) -> bool:
    root = root.strip("/")
    return path == root or path.startswith(root + "/")


def _is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _is_catch_all(area: Area) -> bool:
    return "**" in area.paths


def _drop_nested(paths: Iterable[str]) -> tuple[str, ...]:
    """Drop a path already covered by a selected folder above it (pytest would run it twice)."""
    ordered = list(dict.fromkeys(paths))
    return tuple(p for p in ordered
                 if not any(q != p and (p.startswith(q.rstrip("/") + "/")) for q in ordered))


def code(text: str, limit: int = 120) -> str:
    """Untrusted text (a file name) as one inline code span (bot.report.markdown.code_span), bounded length."""
    return code_span(text, limit)
