"""`pg-bot migrate-test`: prove a migration on the project's own tests.

copy the checkout -> import the modules the fix will change and run the areas' tests (before) -> fix the copy
(as `pg-bot fix --write`, plus the predicate module when missing) -> import every touched module -> run the same
tests and the created ones (after) -> compare per module and per test. The checkout itself is never written to. Files under ``ci.test_root`` are never fixed: the
tests are the yardstick and must be the same before and after.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot import config as config_module
from bot.commands.fix import Tally, fix_file, write_atomically
from bot.config import Config, path_matches
from bot.files import iter_python_files
from bot.fix import FIXABLE
from bot.migrate.compare import Comparison, compare
from bot.migrate.imports import ImportCheck, ImportResult, broken_imports, check_imports
from bot.migrate.pytest_run import PytestRun, run_tests
from bot.migrate.scaffold import create_missing

# DeepSpeed's multi-rank tests on CPU: the CPU accelerator, and LOCAL_SIZE as its "device" count (without it
# DistributedTest skips them as "not enough GPUs"). The caller's environment and --env win over these.
DEFAULT_ENV = {"DS_ACCELERATOR": "cpu", "LOCAL_SIZE": "4"}
_COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", "*.pyc")


class MigrateError(Exception):
    """The run cannot go on (bad option, missing test path, pytest failed to report); exit 2."""


@dataclass(frozen=True)
class Options:
    checkout: Path
    python: str
    areas: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()  # explicit selection (pytest node ids allowed); else the areas' tests
    unsafe: bool = False
    env: Mapping[str, str | None] = field(default_factory=dict)  # None unsets
    pytest_args: tuple[str, ...] = ()
    workdir: Path | None = None
    config: Path | None = None
    timeout: float | None = None


@dataclass
class FixOutcome:
    files: list[str] = field(default_factory=list)  # fixed, relative to the tree
    created: list[str] = field(default_factory=list)
    applied: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)


@dataclass
class Result:
    checkout: Path
    tree: Path
    areas: list[str]
    tests: list[str]
    added_tests: list[str]
    fix: FixOutcome
    imports_before: ImportCheck  # the modules the fix changes, before it
    imports: ImportCheck  # every touched module, after the fix
    before: PytestRun
    after: PytestRun
    comparison: Comparison
    seconds: dict[str, float]

    @property
    def import_regressions(self) -> list[ImportResult]:
        """Touched modules that fail after the fix and did not before (or are new)."""
        return broken_imports(self.imports_before, self.imports)

    @property
    def ok(self) -> bool:
        return (self.imports.error is None and not self.import_regressions and not self.comparison.regressions
                and not self.comparison.new_failures)


def environment_for_tests(base: Mapping[str, str], overrides: Mapping[str, str | None], tree: Path) -> dict[str, str]:
    """The tests' environment: ``base`` with the CPU defaults filled in, ``overrides`` applied, and the tree
    first on PYTHONPATH (so an installed, unfixed copy of the package cannot stand in for the fixed one)."""
    env = dict(base)
    for key, default in DEFAULT_ENV.items():
        env.setdefault(key, default)
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    return env


def copy_tree(checkout: Path, workdir: Path) -> Path:
    tree = workdir / "tree"
    if tree.exists():
        raise MigrateError(f"{tree} already exists: give an empty --workdir")
    shutil.copytree(checkout, tree, symlinks=True, ignore=_COPY_IGNORE)
    return tree


def selected_areas(config: Config, wanted: tuple[str, ...], changed: list[str]) -> list[str]:
    """--area names (checked), else the areas of the files the fix changes, in rules.yaml's order."""
    known = [a.name for a in config.areas]
    unknown = [a for a in wanted if a not in known]
    if unknown:
        raise MigrateError(f"unknown area(s): {', '.join(unknown)} (rules.yaml has: {', '.join(known)})")
    if wanted:
        return [a for a in known if a in wanted]
    touched = {area.name for path in changed if (area := config.area_of(path)) is not None}
    return [a for a in known if a in touched]


def selected_tests(config: Config, areas: list[str], explicit: tuple[str, ...]) -> list[str]:
    if explicit:
        return list(explicit)
    tests: dict[str, None] = {}
    for area in config.areas:
        if area.name in areas:
            tests.update(dict.fromkeys(area.tests))
    return list(tests)


def missing_tests(tree: Path, tests: list[str]) -> list[str]:
    return [t for t in tests if not (tree / t.split("::", 1)[0]).exists()]


@dataclass(frozen=True)
class Planned:
    old: str
    new: str
    encoding: str
    applied: Counter[str]
    refused: Counter[str]


def plan_fixes(tree: Path, config: Config, unsafe: bool) -> tuple[dict[Path, Planned], list[str]]:
    """Every Python file outside the test root: what `fix` would make of it. Nothing is written."""
    test_root = config.ci.test_root.strip("/")
    planned: dict[Path, Planned] = {}
    errors: list[str] = []
    for entry in iter_python_files([tree]):
        file = entry.path
        rel = file.relative_to(tree).as_posix()
        if test_root and path_matches(rel, test_root):
            continue
        tally = Tally()  # one per file: with --area only some files are written, and only they count
        # Shown (and exemption-matched) as the path from the tree's root, wherever pg-bot runs from.
        outcome = fix_file(entry, rel, config, set(FIXABLE), unsafe, tally)
        errors.extend(tally.errors)
        if outcome is not None:
            planned[file] = Planned(*outcome, tally.applied, tally.refused)
    return planned, errors


def in_scope(tree: Path, config: Config, file: Path, areas: list[str], restrict: bool) -> bool:
    """With ``restrict`` (--area), only the files of those areas are fixed."""
    area = config.area_of(file.relative_to(tree).as_posix())
    return not restrict or (area is not None and area.name in areas)


def apply_fixes(tree: Path, config: Config, planned: dict[Path, Planned], areas: list[str], restrict: bool) -> FixOutcome:
    """Write the planned fixes (only in ``areas`` when ``restrict``), then create the predicate module."""
    outcome = FixOutcome()
    texts: list[tuple[Path, str]] = []
    for file, plan in planned.items():
        rel = file.relative_to(tree).as_posix()
        if not in_scope(tree, config, file, areas, restrict):
            texts.append((file, plan.old))
            continue
        outcome.refused.update(plan.refused)
        if plan.old == plan.new:
            texts.append((file, plan.old))
            continue
        try:
            write_atomically(file, plan.new.encode(plan.encoding))
        except (OSError, UnicodeEncodeError) as exc:
            outcome.errors.append(f"{rel}: cannot write: {exc}")
            texts.append((file, plan.old))
            continue
        outcome.files.append(rel)
        outcome.applied.update(plan.applied)
        texts.append((file, plan.new))
    created = create_missing(texts, config, write=True, show_diff=False,
                             display=lambda p: p.relative_to(tree).as_posix())
    outcome.created = [shown for shown, _ in created.files]
    outcome.errors.extend(created.errors + created.notes)
    return outcome


def run(options: Options, *, base_env: Mapping[str, str] | None = None) -> Result:
    checkout = options.checkout.resolve()
    if not checkout.is_dir():
        raise MigrateError(f"{options.checkout}: not a folder")
    try:
        config = config_module.load(options.config, search_from=checkout)
    except config_module.ConfigError as exc:
        raise MigrateError(str(exc)) from exc
    workdir = (options.workdir or Path(tempfile.mkdtemp(prefix="pg-bot-migrate-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, float] = {}

    started = time.monotonic()
    tree = copy_tree(checkout, workdir)
    planned, plan_errors = plan_fixes(tree, config, options.unsafe)
    changed = [f.relative_to(tree).as_posix() for f, p in planned.items() if p.old != p.new]
    areas = selected_areas(config, options.areas, changed)
    tests = selected_tests(config, areas, options.tests)
    if not tests:
        raise MigrateError(
            f"no tests selected: the fix touches {', '.join(areas) or 'no area'}, and rules.yaml gives them no "
            "tests; pass --area or --tests"
        )
    missing = missing_tests(tree, tests)
    if missing:
        raise MigrateError(
            f"test path(s) not in {checkout}: {', '.join(missing)} (check rules.yaml with `pg-bot config check "
            f"--tree {checkout}`)"
        )
    env = environment_for_tests(os.environ if base_env is None else base_env, options.env, tree)
    restrict = bool(options.areas)
    # The same modules imported before the fix: one that already fails (an optional dependency such as triton
    # missing here) is reported, not blamed on the fix.
    to_fix = [f for f, p in planned.items() if p.old != p.new and in_scope(tree, config, f, areas, restrict)]
    shown = {f: f.relative_to(tree).as_posix() for f in to_fix}
    imports_before = check_imports(to_fix, python=options.python, env=env, timeout=options.timeout, display=shown)
    seconds["copy, plan, imports before"] = time.monotonic() - started

    before = run_tests(options.python, tree, tests, junit_xml=workdir / "before.xml", log=workdir / "before.log",
                       env=env, extra=options.pytest_args, timeout=options.timeout)
    seconds["tests before"] = before.seconds
    if not before.outcomes:
        raise MigrateError(f"no test ran before the fix (pytest exited with {before.returncode}; log: "
                           f"{before.log}): nothing would prove the migration")

    started = time.monotonic()
    fixed = apply_fixes(tree, config, planned, areas, restrict)
    fixed.errors[:0] = plan_errors
    touched = [tree / f for f in fixed.files + fixed.created if not _is_test(f, config)]
    imports = check_imports(touched, python=options.python, env=env, timeout=options.timeout,
                            display={tree / f: f for f in fixed.files + fixed.created})
    seconds["fix and imports after"] = time.monotonic() - started

    added = [f for f in fixed.created if _is_test(f, config)]
    after = run_tests(options.python, tree, tests + added, junit_xml=workdir / "after.xml", log=workdir / "after.log",
                      env=env, extra=options.pytest_args, timeout=options.timeout)
    seconds["tests after"] = after.seconds
    return Result(checkout, tree, areas, tests, added, fixed, imports_before, imports, before, after,
                  compare(before.outcomes, after.outcomes), seconds)


def _is_test(rel: str, config: Config) -> bool:
    root = config.ci.test_root.strip("/")
    return bool(root) and path_matches(rel, root)

