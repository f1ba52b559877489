"""`pg-bot history --since REV | --last N`: counts per commit on the first-parent line, CSV + JSON + chart."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bot.config import ConfigError
from bot.track import options
from bot.track.export import write_csv, write_json
from bot.track.gitread import GitError, default_branch, git, rev_parse
from bot.track.history import Point, compute_history
from bot.track.status import Status
from bot.track.trees import TreeReader


def register(parser: argparse.ArgumentParser) -> None:
    add_range(parser, required=True)
    parser.add_argument("--out", type=Path, default=Path("out"), help="folder for history.csv/.json, burndown.png/.svg")
    options.add_common(parser)


def add_range(parser: argparse.ArgumentParser, *, required: bool) -> None:
    since = parser.add_mutually_exclusive_group(required=required)
    since.add_argument("--since", metavar="REV", help="first commit of the history (its state is the first point)")
    since.add_argument("--last", type=int, metavar="N", help="the last N first-parent commits (--since TIP~N)")
    parser.add_argument("--until", metavar="REV", help="last commit (default: the default branch)")


def resolve_range(args: argparse.Namespace) -> tuple[str, str]:
    """(base, tip) as commit ids; raises GitError or UsageError. ``--last N`` on a shorter line starts at
    its root commit (so a workflow's fixed N also works on a young repository)."""
    tip = rev_parse(args.repo_dir, args.until or default_branch(args.repo_dir))
    if args.last is not None:
        if args.last < 1:
            raise options.UsageError(f"--last wants a positive number, got {args.last}")
        line = git(args.repo_dir, "rev-list", "--first-parent", f"--max-count={args.last + 1}", tip).split()
        return line[-1].decode(), tip
    return rev_parse(args.repo_dir, args.since), tip


def history(args: argparse.Namespace) -> tuple[list[Point], Status, TreeReader, float]:
    base, tip = resolve_range(args)
    config = options.load_config(args, Path.cwd())
    reader = options.make_reader(args, config)
    started = time.perf_counter()
    points, status = compute_history(args.repo_dir, base, tip, reader, args.under)
    reader.cache.save()
    return points, status, reader, time.perf_counter() - started


def write_outputs(points: list[Point], reader: TreeReader, out: Path, meta: dict[str, object]) -> list[Path]:
    from bot.track.chart import write_chart  # matplotlib: only when a chart is drawn, never for --help

    out.mkdir(parents=True, exist_ok=True)
    write_json(points, out / "history.json", meta)
    write_csv(points, out / "history.csv")
    charts = write_chart(points, options.area_titles(reader.config), out / "burndown.png", out / "burndown.svg")
    return [out / "history.json", out / "history.csv", *charts]


def run(args: argparse.Namespace) -> int:
    try:
        points, _, reader, seconds = history(args)
        meta = {"base": points[0].sha, "tip": points[-1].sha, "under": args.under}
        written = write_outputs(points, reader, args.out, meta)
    except (options.UsageError, ConfigError, GitError, OSError, ValueError) as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return 2
    first, last = points[0], points[-1]
    print(
        f"pg-bot: {len(points)} points ({first.sha[:9]}..{last.sha[:9]}): remaining {first.remaining} -> "
        f"{last.remaining}, migrated {first.migrated} -> {last.migrated}; {reader.analyzed} files analysed, "
        f"{len(reader.cache)} cached, {seconds:.1f}s",
        file=sys.stderr,
    )
    for path in written:
        print(path)
    return 0
