"""Options and helpers shared by the verbs: config and rule selection (check, fix), the GitHub token (every
verb that talks to GitHub), usage errors."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from bot import config as config_module
from bot.commands.exits import USAGE, UsageError
from bot.config import Config, ConfigError

TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")  # Actions' name first, then the GitHub CLI's
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="rules.yaml, .pg-bot.yaml or pyproject.toml to use (default: "
                        "the nearest one above the checked files; see docs/configuration.md)")
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
    return USAGE


def github_token(repo: str | None = None) -> str:
    """The token to talk to GitHub with: $GITHUB_TOKEN, else $GH_TOKEN. Called before any network call, so a
    missing token (or, with ``repo``, a repository that is not OWNER/NAME) is a usage error (exit 2), never a
    failed request (exit 3)."""
    if repo is not None and not _REPO.fullmatch(repo):
        raise UsageError(f"--repo wants OWNER/NAME, got {repo!r}")
    for name in TOKEN_VARIABLES:
        token = os.environ.get(name, "").strip()
        if token:
            return token
    raise UsageError("no GitHub token: set GITHUB_TOKEN (or GH_TOKEN, as `gh` does), e.g. "
                     "`GITHUB_TOKEN=$(gh auth token) pg-bot ...`")
