"""`pg-bot fix [PATHS]`: print a unified diff (default), `--write` it in place, or `--check` (exit 1 if any change).
`--output-file FILE` writes the diff to FILE in every mode (with --check: the patch CI can keep as an artifact).

Exit codes (bot.commands.exits): 0 done (or nothing to change); 1 `--check` found changes, or a file could not
be read, parsed or written (reported on stderr; the run goes on without it); 2 usage/config error; 4 internal
error. `--exit-zero` turns 1 into 0. `--write` replaces each file in one step (a temporary file renamed over
it), so a failure never leaves a file half-written.
"""

from __future__ import annotations

import argparse
import difflib
import io
import os
import sys
import tempfile
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bot.analyze import RULES, analyze_source
from bot.commands import colour, exits
from bot.commands.common import add_config_options, fail, load_config, selected
from bot.config import Config, ConfigError
from bot.files import SourceError, SourcePath, display_path, iter_python_files, project_relative
from bot.fix import FIXABLE, fix_source
from bot.fix.text import error_text, split_lines
from bot.migrate.scaffold import Created, create_missing
from bot.model import Finding
from bot.report.escape import line_start


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="apply the fixes in place")
    mode.add_argument("--check", action="store_true", help="print nothing but the summary; exit 1 if a file would change")
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply fixes that change behaviour by design (partial guards, unguarded collectives, ...)",
    )
    parser.add_argument("--show-refused", action="store_true", help="list every fix not applied, with the reason")
    parser.add_argument("--output-file", "-o", type=Path, metavar="FILE",
                        help="write the diff to FILE (in every mode; without it only the default mode prints it)")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when --check finds changes or a file could not be fixed")
    add_config_options(parser)


@dataclass
class Tally:
    files_changed: int = 0
    applied: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    created: Created = field(default_factory=Created)


def _read(entry: SourcePath, max_bytes: int) -> tuple[str, str]:
    """Text and encoding, line endings untouched (the diff and --write must keep CRLF files CRLF)."""
    data = entry.read(max_bytes)  # the same walk and safe read as `check`
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def fix_file(entry: SourcePath, shown: str, config: Config, wanted: set[str], unsafe: bool, tally: Tally) -> tuple[str, str, str] | None:
    """(old, new, encoding) for one file, or None when it cannot be processed (recorded in ``tally``)."""
    try:
        source, encoding = _read(entry, config.max_file_bytes)
    except SourceError as exc:
        tally.errors.append(f"{shown}: {exc}")
        return None
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        tally.errors.append(f"{shown}: cannot read: {exc}")
        return None
    # Exemptions match the path from the project root, exactly as in `check`, wherever fix is run from.
    result = analyze_source(shown, source, config, project_path=project_relative(entry.path))
    if result.error is not None:
        tally.errors.append(f"{shown}: {result.error.message}")
        return None
    findings = [f for f in result.findings if f.code in wanted]
    if not findings:
        return source, source, encoding
    try:
        fixed = fix_source(source, findings, config, unsafe=unsafe)
    except Exception as exc:  # fix_source reports per finding; this is the last line of defence for the run
        tally.errors.append(f"{shown}: cannot fix: {error_text(exc)}")
        return None
    tally.applied.update(f.code for f in fixed.applied)
    tally.refused.update(f.code for f, _ in fixed.refused)
    tally.refusals.extend(_refusal(shown, f, why) for f, why in fixed.refused)
    return source, fixed.source, encoding


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path``'s content in one rename, keeping its permissions: it holds the old or the new text."""
    target = path.resolve()  # through a symlink, as a plain write would go
    mode = target.stat().st_mode & 0o7777
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".pg-bot", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _refusal(path: str, finding: Finding, why: str) -> str:
    return f"{path}:{finding.span.line}:{finding.span.col + 1}: {finding.code} not fixed: {why}"


def _diff(shown: str, old: str, new: str) -> str:
    # as git does for a path outside the work tree: `a/tmp/x.py`, not `a//tmp/x.py` (`patch -p1` from `/` applies it)
    name = shown.lstrip("/")
    lines = difflib.unified_diff(split_lines(old), split_lines(new), f"a/{name}", f"b/{name}")
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths]
    missing = [p for p in paths if not p.exists()]
    if missing:
        return fail(f"no such file or folder: {', '.join(map(str, missing))}")
    try:
        config = load_config(args, paths)
        wanted = selected(args, set(RULES)) & set(FIXABLE)
    except ConfigError as exc:
        return fail(str(exc))
    try:
        diff_file = _open(args.output_file) if args.output_file is not None else None
    except OSError as exc:
        return fail(f"cannot write --output-file {args.output_file}: {exc.strerror or exc}")
    try:
        tally = _fix_all(args, paths, config, wanted, diff_file)
    finally:
        if diff_file is not None:
            diff_file.close()
    _summary(tally, args)
    failed = bool(tally.errors) or (args.check and (tally.files_changed > 0 or bool(tally.created.files)))
    return exits.FINDINGS if failed and not args.exit_zero else exits.OK


def _open(path: Path) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("w", encoding="utf-8", newline="")  # the diff keeps each file's own line endings


def _fix_all(args: argparse.Namespace, paths: list[Path], config: Config, wanted: set[str],
             diff_file: IO[str] | None) -> Tally:
    tally = Tally()
    texts: list[tuple[Path, str]] = []  # every file's fixed text: does the tree now import a missing module?
    coloured = diff_file is None and colour.wanted(sys.stdout)
    for entry in iter_python_files(paths):
        shown = line_start(display_path(entry.path, Path.cwd()))  # a hostile name must not break the output
        outcome = fix_file(entry, shown, config, wanted, args.unsafe_fixes, tally)
        if outcome is not None:
            texts.append((entry.path, outcome[1]))
        if outcome is None or outcome[0] == outcome[1]:
            continue
        old, new, encoding = outcome
        tally.files_changed += 1
        if args.write:
            try:
                write_atomically(entry.path, new.encode(encoding))
            except (OSError, UnicodeEncodeError) as exc:
                tally.errors.append(f"{shown}: cannot write: {error_text(exc)}")
        if diff_file is not None:
            diff_file.write(_diff(shown, old, new))
        elif coloured and not (args.write or args.check):
            colour.print_diff(_diff(shown, old, new), sys.stdout)
        elif not (args.write or args.check):
            sys.stdout.write(_diff(shown, old, new))
    tally.created = create_missing(texts, config, write=args.write, show_diff=not args.check,
                                   display=lambda p: line_start(display_path(p, Path.cwd())))
    return tally


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{code} {n}" for code, n in sorted(counter.items())) or "none"


def _summary(tally: Tally, args: argparse.Namespace) -> None:
    out = sys.stderr
    for error in tally.errors + tally.created.errors + tally.created.notes:
        print(f"pg-bot: {error}", file=out)
    for created, why in tally.created.files:
        print(f"{'created' if args.write else 'would create'} {created} ({why})", file=out)
    if args.show_refused:
        for line in tally.refusals:
            print(line, file=out)
    verb = "fixed" if args.write else "would fix"
    print(
        f"{verb} {sum(tally.applied.values())} finding(s) in {tally.files_changed} file(s) ({_counts(tally.applied)}); "
        f"not fixed {sum(tally.refused.values())} ({_counts(tally.refused)})"
        + ("" if args.unsafe_fixes or not tally.refused else "; unsafe fixes need --unsafe-fixes")
        + ("" if args.show_refused or not tally.refused else "; --show-refused lists why"),
        file=out,
    )
