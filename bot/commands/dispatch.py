"""``pg-bot dispatch``: label-triggered distributed CI.

Modes:
  pg-bot dispatch [--event FILE]     handle a pull_request_target event (labeled / synchronize)
  pg-bot dispatch check-inputs ...   re-validate workflow inputs in the job; write them to $GITHUB_OUTPUT
  pg-bot dispatch run-tests ...      the shared run step of the XPU job and its CPU twin

Exit codes (bot.commands.exits): 0 done, 1 the dispatch was refused or the tests failed (pytest's own code is
printed), 2 usage/config error or refused inputs (no token: checked before any network call), 3 GitHub API
failure, 4 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from bot.ci.dispatch import DispatchClient
from bot.commands import exits
from bot.commands.common import github_token
from bot.config import Config, ConfigError, load

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_GITHUB = exits.OK, exits.FINDINGS, exits.USAGE, exits.GITHUB
DEFAULT_API = "https://api.github.com"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="rules.yaml (default: nearest one above the cwd)")
    parser.add_argument("--event", type=Path, help="event JSON (default: $GITHUB_EVENT_PATH)")
    parser.add_argument("--event-name", help="event name (default: $GITHUB_EVENT_NAME, if set)")
    parser.add_argument("--api-url", help=f"GitHub API base URL (default: $GITHUB_API_URL or {DEFAULT_API})")
    parser.add_argument("--dry-run", action="store_true",
                        help="read from the API but only print the label removal, comment and dispatch")
    parser.add_argument("--bot-login", default=os.environ.get("PG_BOT_LOGIN") or None, metavar="LOGIN",
                        help="the login GITHUB_TOKEN acts as, for a GitHub App's installation token: "
                             "`<app-slug>[bot]` (default: $PG_BOT_LOGIN; else GET /user for a user token, and "
                             "github-actions[bot] for Actions' own token). Only this login's comment is updated")
    modes = parser.add_subparsers(dest="mode", metavar="MODE")

    check = modes.add_parser("check-inputs", help="validate workflow inputs; print them as key=value")
    check.set_defaults(_parser=check)  # an unknown option prints this mode's usage (bot.cli)
    _input_args(check)
    check.add_argument("--github-output", type=Path,
                       help="append the validated inputs to this file (in a job: \"$GITHUB_OUTPUT\")")

    run = modes.add_parser("run-tests", help="validate, check the checkout, run the selected tests")
    run.set_defaults(_parser=run)
    _input_args(run)
    run.add_argument("--workdir", type=Path, default=Path("."), help="checkout of the PR at --sha")
    run.add_argument("--python", default=sys.executable, help="interpreter that has the tested code installed")
    run.add_argument("--min-world-size", type=int, default=2,
                     help="deselect tests that declare only smaller world sizes (default 2)")
    run.add_argument("--dry-run", action="store_true", dest="run_dry", help="print the command, do not run it")


def _input_args(p: argparse.ArgumentParser) -> None:
    # Pass values as --name=VALUE: then even a value starting with '-' reaches validation instead of argparse.
    for name in ("repo", "sha", "pr", "tests"):
        p.add_argument(f"--{name}", required=True, help=f"workflow input `{name}`")
    p.add_argument("--config", type=Path, dest="mode_config", help="rules.yaml (default: as above)")


def run(args: argparse.Namespace) -> int:
    try:
        config = load(getattr(args, "mode_config", None) or args.config, search_from=Path.cwd())
    except ConfigError as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.mode == "check-inputs":
        return _check_inputs(args, config)
    if args.mode == "run-tests":
        return _run_tests(args, config)
    return _handle_event(args, config)


def _raw_inputs(args: argparse.Namespace) -> dict[str, object]:
    return {"repo": args.repo, "sha": args.sha, "pr": args.pr, "tests": args.tests}


def _check_inputs(args: argparse.Namespace, config: Config) -> int:
    from bot.ci.run_selected import ValidationError, check_inputs, github_output_lines

    try:
        inputs = check_inputs(_raw_inputs(args), config.ci)
    except ValidationError as exc:
        print(f"pg-bot: refusing the workflow inputs: {exc}", file=sys.stderr)
        return EXIT_USAGE
    lines = github_output_lines(inputs)
    sys.stdout.write(lines)
    if args.github_output is not None:
        with args.github_output.open("a", encoding="utf-8") as out:
            out.write(lines)
    return EXIT_OK


def _run_tests(args: argparse.Namespace, config: Config) -> int:
    from bot.ci.run_selected import RunError, ValidationError, check_inputs, plan, run_tests

    try:
        inputs = check_inputs(_raw_inputs(args), config.ci)
        p = plan(inputs, args.workdir, python=args.python, min_world_size=args.min_world_size)
    except (ValidationError, RunError) as exc:
        print(f"pg-bot: not running the tests: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"pg-bot: in {p.cwd}: {shlex.join(p.argv)}", file=sys.stderr, flush=True)
    if args.run_dry:
        return EXIT_OK
    code = run_tests(p)
    if code != 0:  # pytest's codes (2 interrupted, 4 usage, 5 nothing ran) would collide with pg-bot's own
        print(f"pg-bot: the tests failed (pytest exited {code})", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def _handle_event(args: argparse.Namespace, config: Config) -> int:
    from bot.ci.dispatch import EventError, handle, parse_event

    path = args.event or (Path(os.environ["GITHUB_EVENT_PATH"]) if os.environ.get("GITHUB_EVENT_PATH") else None)
    if path is None:
        print("pg-bot: no event: pass --event FILE or set GITHUB_EVENT_PATH", file=sys.stderr)
        return EXIT_USAGE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        event = parse_event(data, args.event_name or os.environ.get("GITHUB_EVENT_NAME") or None)
    except OSError as exc:
        print(f"pg-bot: cannot read the event {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except json.JSONDecodeError as exc:
        print(f"pg-bot: {path} is not JSON: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except EventError as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    token = github_token(event.repo)  # before any network call: exit 2 without one
    api_url = args.api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API
    from bot.github import GitHubClient, GitHubError

    try:
        real = GitHubClient(token, event.repo, base_url=api_url, login=args.bot_login)
        client: DispatchClient = DryRunClient(real) if args.dry_run else real
        outcome = handle(event, client, config)
    except GitHubError as exc:
        print(f"pg-bot: GitHub API error: {exc}", file=sys.stderr)
        return EXIT_GITHUB
    print(f"pg-bot dispatch: {outcome.action}: {outcome.message}")
    if outcome.inputs is not None:
        print(json.dumps(outcome.inputs, indent=2))
    return EXIT_FAIL if outcome.action == "refused" else EXIT_OK


class DryRunClient:
    """Reads through to GitHub; prints the writes (label removal, comment, dispatch) instead of making them."""

    def __init__(self, client: DispatchClient) -> None:
        self._client = client

    def pull(self, n: int) -> Any:
        return self._client.pull(n)

    def pull_files(self, n: int) -> Any:
        return self._client.pull_files(n)

    def permission(self, user: str) -> str:
        return self._client.permission(user)

    def remove_label(self, n: int, label: str) -> bool:
        print(f"[dry run] would remove label {label!r} from #{n}")
        return True

    def upsert_marked_comment(self, n: int, marker: str, body: str) -> int:
        print(f"[dry run] would post or update the {marker} comment on #{n}:\n{body}")
        return 0

    def dispatch_workflow(self, workflow_file: str, ref: str, inputs: dict[str, Any]) -> bool:
        print(f"[dry run] would dispatch {workflow_file} on {ref} with {json.dumps(inputs)}")
        return True
