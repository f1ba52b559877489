"""Command line: one verb per module, imported only when that verb runs (keeps `pg-bot check` fast, and
`pg-bot --version` free of any verb's imports).

Exit codes shared by every verb (bot.commands.exits; the table is in docs/configuration.md): 0 clean,
1 findings, 2 usage or config error, 3 GitHub API failure, 4 internal error: an exception pg-bot did not expect
(a bug; the traceback goes to stderr). An unexpected exception must never exit 1, which workflows read as
"findings".
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

from bot import __version__
from bot.commands import exits

# verb -> (module implementing `register(parser)` and `run(args) -> int`, one-line help)
VERBS: dict[str, tuple[str, str]] = {
    "check": ("bot.commands.check", "find hand-rolled process-group guards"),
    "fix": ("bot.commands.fix", "rewrite findings to pg_utils.is_parallel"),
    "review": ("bot.commands.review", "review a pull request (or a local diff with --dry-run)"),
    "status": ("bot.commands.status", "migration status table per area"),
    "history": ("bot.commands.history", "status over the first-parent history (burndown)"),
    "dashboard": ("bot.commands.dashboard", "static HTML dashboard of the migration"),
    "dispatch": ("bot.commands.dispatch", "label-triggered distributed CI dispatch"),
    "rule": ("bot.commands.rule", "explain a rule: pg-bot rule PG101"),
    "migrate-test": ("bot.commands.migrate_test", "fix a copy of a checkout; its tests before vs after"),
    "import-check": ("bot.commands.import_check", "import every module the fix touched, in the project's Python"),
    "config": ("bot.commands.config", "check rules.yaml against a real tree: pg-bot config check --tree DIR"),
}

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CRASH = exits.OK, exits.FINDINGS, exits.USAGE, exits.CRASH
# Verbs that only read files and print: nothing of theirs runs at interpreter exit, so the console script leaves
# without tearing the interpreter down (freeing every parsed tree one by one cost a whole-package check about
# 0.02-0.03 s; mypy leaves the same way).
QUICK_EXIT_VERBS = frozenset({"check"})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every verb; only ``only``'s module is imported and registers its options (the others keep
    bare parsers: their help line is in VERBS). Without ``only`` no verb module is imported at all."""
    parser = argparse.ArgumentParser(
        prog="pg-bot",
        description="Migrate hand-rolled process-group guards to deepspeed.comm.pg_utils.is_parallel.",
    )
    parser.add_argument("--version", action="version", version=f"pg-bot {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb, (module_name, help_text) in VERBS.items():
        p = sub.add_parser(verb, help=help_text, description=help_text)
        p.set_defaults(_module=module_name, _parser=p)  # _parser: whose usage an unknown option prints
        module = _load(module_name) if only == verb else None
        if module is not None:
            module.register(p)
    return parser


def _load(module_name: str) -> ModuleType | None:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None  # verb not built yet
        raise


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    with _no_collections():  # importing a verb's modules makes many objects and no garbage
        parser = _parser_for(argv)
        args, unknown = parser.parse_known_args(argv)
        module = _load(args._module) if getattr(args, "verb", None) else None
    if unknown:  # argparse would blame the top-level parser and print its usage; the verb's is the useful one
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "verb", None):
        parser.print_help()
        return EXIT_USAGE
    if module is None:
        print(f"pg-bot: the `{args.verb}` verb is not available in this build", file=sys.stderr)
        return EXIT_USAGE
    try:
        return int(module.run(args))
    except exits.UsageError as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except BrokenPipeError:  # `pg-bot ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except Exception:  # a bug: say so with its own exit code (Python's default, 1, would read as "findings")
        import traceback  # only for a crash

        traceback.print_exc()
        print(f"pg-bot: internal error in `{args.verb}` (exit {EXIT_CRASH}); please report it with the traceback "
              "above", file=sys.stderr)
        return EXIT_CRASH


@contextlib.contextmanager
def _no_collections() -> Iterator[None]:
    """The cyclic collector off while modules load: it ran about 25 times during `check`'s imports, a tenth of
    them, finding nothing to free."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _parser_for(argv: list[str]) -> argparse.ArgumentParser:
    # Only the chosen verb's module is imported, so a fast verb never pays for a slow one's imports.
    verb = _verb(argv)
    return build_parser(only=verb if verb in VERBS else None)


def _verb(argv: Sequence[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def entry() -> None:
    """The `pg-bot` console script: main(), then exit; after a QUICK_EXIT_VERBS verb, once the output is
    flushed, without the interpreter's teardown."""
    code = main()
    if _verb(sys.argv[1:]) not in QUICK_EXIT_VERBS:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        # a reader that left (`| head`) or a closed stream: nothing more to say
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
