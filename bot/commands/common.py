"""Options and helpers shared by the verbs that analyse code (check, fix)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot import config as config_module
from bot.config import Config, ConfigError


def add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="rules.yaml to use (default: nearest rules.yaml, else built-in)")
    parser.add_argument("--select", metavar="CODES", help="only these rule codes, comma-separated (PG101,PG105)")
    parser.add_argument("--ignore", metavar="CODES", help="skip these rule codes, comma-separated")


def codes(value: str | None) -> set[str]:
    return {c.strip().upper() for c in value.split(",") if c.strip()} if value else set()


def load_config(args: argparse.Namespace, paths: list[Path]) -> Config:
    """The config for a run; raises ConfigError (exit 2) with file, line and key."""
    start = next((p if p.is_dir() else p.parent for p in paths if p.exists()), Path.cwd())
    return config_module.load(args.config, search_from=start)


def selected(args: argparse.Namespace, all_codes: set[str]) -> set[str]:
    chosen = codes(args.select) or set(all_codes)
    unknown = (codes(args.select) | codes(args.ignore)) - all_codes
    if unknown:
        raise ConfigError(f"unknown rule code(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(all_codes))})")
    return chosen - codes(args.ignore)


def fail(message: str) -> int:
    print(f"pg-bot: {message}", file=sys.stderr)
    return 2
