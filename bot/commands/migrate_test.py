"""`pg-bot migrate-test CHECKOUT`: prove the migration on the project's own tests, before vs after the fix.

Exit codes: 0 no regression (and every touched module imports, every created test passes), 1 a regression,
an import failure or a failing created test, 2 usage error or the tests could not be run.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from bot.commands.common import fail
from bot.migrate import pipeline, report
from bot.migrate.pytest_run import PytestError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkout", type=Path, help="the project's checkout (never written to: a copy is fixed)")
    parser.add_argument("--area", action="append", default=[], metavar="NAME",
                        help="fix only this rules.yaml area and run its tests (repeatable; default: every area "
                        "the fix touches)")
    parser.add_argument("--tests", action="append", default=[], metavar="PATH",
                        help="run these test paths or node ids instead of the areas' tests (repeatable)")
    parser.add_argument("--python", default=sys.executable,
                        help="the target project's interpreter, with its dependencies installed (default: this one)")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply the fixes that need review")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="environment for the tests (repeatable); KEY alone unsets it. Defaults: "
                        + " ".join(f"{k}={v}" for k, v in pipeline.DEFAULT_ENV.items()))
    parser.add_argument("--pytest-args", action="append", default=[], metavar="ARGS",
                        help="extra pytest arguments, split as a shell would (repeatable): --pytest-args='-k Singleton'")
    parser.add_argument("--workdir", type=Path, help="where the copy, reports and logs go (default: a new temp folder)")
    parser.add_argument("--timeout", type=float, help="seconds for each pytest run and for the import check")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the full result as JSON")
    parser.add_argument("--config", type=Path, help="rules.yaml (default: the checkout's, else the built-in one)")


def parse_env(items: list[str]) -> dict[str, str | None]:
    env: dict[str, str | None] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not key or not key.replace("_", "a").isalnum():
            raise pipeline.MigrateError(f"--env {item!r}: expected KEY=VALUE (or KEY to unset)")
        env[key] = value if sep else None
    return env


def run(args: argparse.Namespace) -> int:
    try:
        options = pipeline.Options(
            checkout=args.checkout,
            python=args.python,
            areas=tuple(args.area),
            tests=tuple(args.tests),
            unsafe=args.unsafe_fixes,
            env=parse_env(args.env),
            pytest_args=tuple(arg for chunk in args.pytest_args for arg in shlex.split(chunk)),
            workdir=args.workdir,
            config=args.config,
            timeout=args.timeout,
        )
        result = pipeline.run(options)
    except (pipeline.MigrateError, PytestError) as exc:
        return fail(str(exc))
    sys.stdout.write(report.text(result))
    if args.json is not None:
        args.json.write_text(json.dumps(report.as_json(result), indent=2) + "\n", encoding="utf-8")
    return 0 if result.ok else 1
