"""`pg-bot check [PATHS]`: report findings; exit 0 clean, 1 findings, 2 usage/config error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from bot.analyze import RULES, analyze_paths, analyze_source
from bot.commands.common import add_config_options, fail, load_config, selected
from bot.config import Config, ConfigError
from bot.files import iter_python_files
from bot.model import FileResult
from bot.report import formats

_PROGRESS_MIN_FILES = 50


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders; `-` reads stdin")
    parser.add_argument("--format", choices=formats.FORMATS, default="text")
    parser.add_argument("--statistics", action="store_true", help="print counts per rule")
    parser.add_argument("--stdin-filename", default="<stdin>", help="path to report for `-` (and to match rules.yaml)")
    parser.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    parser.add_argument("--jobs", "-j", type=int, help="processes to parse with (default: one per core)")
    add_config_options(parser)


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths if p != "-"]
    missing = [p for p in paths if not p.exists()]
    if missing:
        return fail(f"no such file or folder: {', '.join(map(str, missing))}")
    try:
        config = load_config(args, paths)
        wanted = selected(args, set(RULES))
    except ConfigError as exc:
        return fail(str(exc))
    results = [_only(r, wanted) for r in _results(args, paths, config)]
    out = {
        "text": formats.text,
        "json": formats.as_json,
        "sarif": lambda rs: formats.sarif(rs, RULES, config),
        "github": formats.github,
    }[args.format](results)
    if out:
        print(out)
    if args.statistics:
        print(formats.statistics(results, RULES), file=sys.stderr if args.format != "text" else sys.stdout)
    return 1 if any(r.findings for r in results) else 0


def _results(args: argparse.Namespace, paths: list[Path], config: Config) -> Iterator[FileResult]:
    if "-" in args.paths:
        yield analyze_source(args.stdin_filename, sys.stdin.buffer.read(), config)
    if not paths:
        return
    files = list(iter_python_files(paths))
    results = analyze_paths(files, config, relative_to=Path.cwd(), jobs=args.jobs)
    if args.no_progress or len(files) < _PROGRESS_MIN_FILES or not sys.stderr.isatty():
        yield from results
        return
    from rich.console import Console  # only when a person is watching
    from rich.progress import Progress

    with Progress(transient=True, console=Console(stderr=True)) as progress:
        task = progress.add_task("checking", total=len(files))
        for result in results:
            progress.advance(task)
            yield result


def _only(result: FileResult, wanted: set[str]) -> FileResult:
    if all(f.code in wanted for f in result.findings):
        return result
    return FileResult(result.path, [f for f in result.findings if f.code in wanted], result.error, result.migrated)
