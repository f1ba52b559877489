"""`pg-bot check [PATHS]`: report findings.

Exit codes (bot.commands.exits): 0 clean; 1 findings, or a file that could not be analysed (reported as PG000:
a file pg-bot cannot read or parse is not a clean file); 2 usage/config error; 4 internal error. `--exit-zero`
turns 1 into 0 (a usage or config error still exits 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.analyze import RULES, analyze_paths, analyze_source
from bot.commands import colour, exits
from bot.commands.common import add_config_options, fail, load_config, selected
from bot.config import Config, ConfigError
from bot.files import SourceError, SourcePath, display_path, iter_python_files
from bot.model import FileResult
from bot.report import formats

if TYPE_CHECKING:
    from bot.commands.fixable import Fixable

_PROGRESS_MIN_FILES = 50
_STATISTICS_FORMATS = ("text", "json")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders; `-` reads stdin")
    parser.add_argument("--format", choices=formats.FORMATS, default="text")
    parser.add_argument("--statistics", action="store_true",
                        help="print only the number of findings per rule (as text, or JSON with --format json)")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when there are findings (a usage or config error still exits 2)")
    parser.add_argument("--output-file", "-o", type=Path, metavar="FILE",
                        help="write the report to FILE instead of stdout (never coloured)")
    parser.add_argument("--stdin-filename", default="<stdin>", help="path to report for `-` (and to match rules.yaml)")
    parser.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    parser.add_argument("--jobs", "-j", type=int, help="processes to parse with (default: one per core)")
    add_config_options(parser)


@dataclass
class Run:
    """What a run found, and where to read each file with findings again (to count what `fix` would do)."""

    results: list[FileResult] = field(default_factory=list)
    sources: dict[str, SourcePath | bytes] = field(default_factory=dict)


def run(args: argparse.Namespace) -> int:
    if args.statistics and args.format not in _STATISTICS_FORMATS:
        return fail(f"--statistics prints counts as text or json, not --format {args.format}")
    paths = [Path(p) for p in args.paths if p != "-"]
    missing = [p for p in paths if not p.exists()]
    if missing:
        return fail(f"no such file or folder: {', '.join(map(str, missing))}")
    try:
        config = load_config(args, paths)
        wanted = selected(args, set(RULES))
    except ConfigError as exc:
        return fail(str(exc))
    try:  # opened before the work, so a path that cannot be written costs nothing
        out = _open(args.output_file) if args.output_file is not None else sys.stdout
    except OSError as exc:
        return fail(f"cannot write --output-file {args.output_file}: {exc.strerror or exc}")
    try:
        found = _check(args, paths, config, wanted)
        report = _report(args, found, config)
        if report:
            if out is sys.stdout and args.format == "text" and colour.wanted(out):
                colour.print_report(report, out)
            else:
                print(report, file=out)
    finally:
        if out is not sys.stdout:
            out.close()
    failed = any(r.findings or r.error for r in found.results)
    return exits.FINDINGS if failed and not args.exit_zero else exits.OK


def _open(path: Path) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("w", encoding="utf-8", newline="\n")


def _check(args: argparse.Namespace, paths: list[Path], config: Config, wanted: set[str]) -> Run:
    found = Run()
    if "-" in args.paths:
        data = sys.stdin.buffer.read()
        found.sources[args.stdin_filename] = data
        found.results.append(_only(analyze_source(args.stdin_filename, data, config), wanted))
    if paths:
        files = list(iter_python_files(paths))
        cwd = Path.cwd()
        found.sources.update((display_path(f.path, cwd), f) for f in files)  # the name analyze_paths gives it
        found.results.extend(_only(r, wanted) for r in _progress(args, files, config))
    return found


def _progress(args: argparse.Namespace, files: list[SourcePath], config: Config) -> Iterator[FileResult]:
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


def _report(args: argparse.Namespace, found: Run, config: Config) -> str:
    results = found.results
    if args.statistics:  # the counts only
        return _statistics_json(results) if args.format == "json" else formats.statistics(results, RULES)
    if args.format != "text":
        return {"json": formats.as_json, "sarif": lambda rs: formats.sarif(rs, RULES, config), "github": formats.github}[
            args.format
        ](results)
    text = formats.text(results)
    findings = sum(len(r.findings) for r in results)
    unanalysed = sum(1 for r in results if r.error)
    if findings or unanalysed:  # only then: a clean run costs nothing more
        from bot.commands import fixable  # the fixer's planner: only this closing line needs it

        text += "\n" + fixable.closing_line(findings, _fixable(found, config), unanalysed)
    return text


def _fixable(found: Run, config: Config) -> Fixable:
    from bot.commands import fixable

    total = fixable.Fixable()
    for result in found.results:
        if not result.findings:
            continue
        where = found.sources.get(result.path)
        try:
            data = where if isinstance(where, bytes) else where.read(config.max_file_bytes) if where else None
            if data is not None:
                total += fixable.count(fixable.decode(data), result.findings, config)
        except (SourceError, SyntaxError, UnicodeDecodeError, LookupError):
            continue  # changed or gone since it was analysed: it is simply not counted
    return total


def _statistics_json(results: list[FileResult]) -> str:
    counts = Counter(f.code for r in results for f in r.findings)
    rows = [{"code": code, "name": RULES[code].name, "count": n} for code, n in sorted(counts.items())]
    unanalysed = sum(1 for r in results if r.error)
    if unanalysed:
        rows.append({"code": "PG000", "name": "could-not-analyse", "count": unanalysed})
    return json.dumps(rows, indent=2)


def _only(result: FileResult, wanted: set[str]) -> FileResult:
    if all(f.code in wanted for f in result.findings):
        return result
    return FileResult(result.path, [f for f in result.findings if f.code in wanted], result.error, result.migrated)
