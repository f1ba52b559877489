"""`pg-bot config check --tree DIR`: does rules.yaml fit a real tree?

Exit codes: 0 every path, glob and function found; 1 problems (one line each: file:line: key: what); 2 usage
or config error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot import config as config_module
from bot.commands.common import fail
from bot.config_check import check_tree, key_lines


def register(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check areas, tests, exemptions and CI paths against a tree")
    check.add_argument("--tree", type=Path, required=True, help="the project's checkout (e.g. DeepSpeed)")
    check.add_argument("--config", type=Path, help="rules.yaml (default: the tree's, else the built-in one)")


def run(args: argparse.Namespace) -> int:
    tree: Path = args.tree
    if not tree.is_dir():
        return fail(f"{tree}: not a folder")
    try:
        config = config_module.load(args.config, search_from=tree)
    except config_module.ConfigError as exc:
        return fail(str(exc))
    problems = check_tree(config, tree.resolve())
    source = Path(config.source)
    try:
        lines = key_lines(source.read_text(encoding="utf-8"))
    except OSError:
        lines = {}
    for problem in problems:
        line = lines.get(problem.key)
        print(f"{source}:{line or '?'}: {problem.where}: {problem.message}")
    print(f"{len(problems)} problem(s) in {source} against {tree}")
    return 1 if problems else 0
