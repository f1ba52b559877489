"""`pg-bot import-check TREE [PATHS]`: import every module a fix touched, in the project's own Python.

Default PATHS: every module of TREE (outside its test root) that imports the predicate, plus the predicate
module itself: what `pg-bot fix --write` touched. With `--baseline DIR` (the unfixed tree) a module that fails
there too is reported but not counted. Exit codes: 0 all import, 1 a module fails, 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot import config as config_module
from bot.commands.common import fail
from bot.commands.migrate_test import parse_env
from bot.config import path_matches
from bot.files import SourceError, iter_python_files
from bot.migrate import report
from bot.migrate.imports import broken_imports, check_imports
from bot.migrate.pipeline import MigrateError, environment_for_tests
from bot.migrate.predicate import imports_predicate


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tree", type=Path, help="the project's root (it goes first on sys.path)")
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to import (default: see above)")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="the unfixed tree: modules that fail to import there too are reported, not counted")
    parser.add_argument("--python", default=sys.executable, help="the project's interpreter (default: this one)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment (repeatable)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds (default 600)")
    parser.add_argument("--config", type=Path, help="rules.yaml (default: the tree's, else the built-in one)")


def run(args: argparse.Namespace) -> int:
    tree = args.tree.resolve()
    if not tree.is_dir():
        return fail(f"{args.tree}: not a folder")
    try:
        config = config_module.load(args.config, search_from=tree)
        env = environment_for_tests(os.environ, parse_env(args.env), tree)
    except (config_module.ConfigError, MigrateError) as exc:
        return fail(str(exc))
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        return fail(f"no such file or folder: {', '.join(map(str, missing))}")
    files = [e.path for e in iter_python_files(args.paths)] if args.paths else _predicate_users(tree, config)
    if not files:
        print("imports: nothing to check (no module imports the predicate)")
        return 0
    shown = {f: _shown(f, tree) for f in files}
    check = check_imports(files, python=args.python, env=env, timeout=args.timeout, display=shown)
    broken = None
    if args.baseline is not None:
        base = args.baseline.resolve()
        if not base.is_dir():
            return fail(f"{args.baseline}: not a folder")
        base_files = {base / rel: rel for rel in shown.values() if (base / rel).is_file()}
        before = check_imports(list(base_files), python=args.python, env=environment_for_tests(
            os.environ, parse_env(args.env), base), timeout=args.timeout, display=base_files)
        broken = broken_imports(before, check)
    print("\n".join(report.imports_text(check, broken)))
    return 0 if check.error is None and not (check.failures if broken is None else broken) else 1


def _predicate_users(tree: Path, config: config_module.Config) -> list[Path]:
    test_root = config.ci.test_root.strip("/")
    module = tree.joinpath(*config.predicate_module.split("."), f"{config.predicate_name}.py")
    users = [module] if module.is_file() else []
    for entry in iter_python_files([tree]):
        file = entry.path
        rel = file.relative_to(tree).as_posix()
        if test_root and path_matches(rel, test_root):
            continue
        try:
            text = entry.read(config.max_file_bytes).decode("utf-8")
        except (SourceError, UnicodeDecodeError):
            continue
        if file != module and imports_predicate(text, config):
            users.append(file)
    return users


def _shown(file: Path, tree: Path) -> str:
    try:
        return file.resolve().relative_to(tree).as_posix()
    except ValueError:
        return str(file)
