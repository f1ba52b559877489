"""Options and setup shared by the tracker's verbs (status, history, dashboard)."""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from bot import config as config_module
from bot.config import Config
from bot.track.cache import DEFAULT_DIR, AnalysisCache
from bot.track.trees import TreeReader

ISSUE_RE = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>[1-9][0-9]*)$")
REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class UsageError(ValueError):
    """Bad command-line input; the verb prints it and exits 2."""


@dataclass(frozen=True)
class IssueRef:
    repo: str
    number: int


def parse_issue(text: str) -> IssueRef:
    m = ISSUE_RE.match(text.strip())
    if m is None:
        raise UsageError(f"--update-issue wants OWNER/NAME#NUMBER (e.g. deepspeedai/DeepSpeed#7), got {text!r}")
    return IssueRef(m["repo"], int(m["number"]))


def parse_repo(text: str | None, option: str = "--repo") -> str:
    if not text or not REPO_RE.match(text):
        raise UsageError(f"{option} wants OWNER/NAME (or set GITHUB_REPOSITORY), got {text!r}")
    return text


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-dir", type=Path, default=Path("."), help="git repository to read (default: .)")
    parser.add_argument("--config", type=Path, help="rules.yaml to use (default: nearest rules.yaml, else built-in)")
    parser.add_argument(
        "--under", action="append", default=[], metavar="PREFIX",
        help="only count files under this folder (repeatable; default: every .py file)",
    )
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_DIR, help=f"analysis cache (default: {DEFAULT_DIR})")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="analysis processes")


def load_config(args: argparse.Namespace, near: Path) -> Config:
    return config_module.load(args.config, search_from=near)


def make_reader(args: argparse.Namespace, config: Config) -> TreeReader:
    cache = AnalysisCache(None if args.no_cache else args.cache_dir, config)
    return TreeReader(config=config, cache=cache, workers=max(1, args.workers))


def area_titles(config: Config) -> dict[str, str]:
    titles = {a.name: a.title for a in config.areas}
    titles.setdefault("other", "Other")
    return titles
