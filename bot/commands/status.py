"""`pg-bot status [--source DIR | --ref REF] [--update-issue OWNER/NAME#N]`: the status table per area.

Exit codes (bot.commands.exits): 0 done, 2 usage/config error (with --update-issue: no token, checked before
anything is computed; markers in the issue that cannot be used), 3 GitHub API failure (or the issue kept changing
under us), 4 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bot.commands import exits
from bot.commands.common import github_token
from bot.config import ConfigError
from bot.track import options
from bot.track.gitread import GitError, rev_parse
from bot.track.issue_body import DEFAULT_HEADING, MarkerError
from bot.track.status import Status
from bot.track.table import render_markdown
from bot.track.trees import status_at_ref, status_of_dir

DEFAULT_API_URL = "https://api.github.com"


def register(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--source", type=Path, help="count the files of this folder (default: .)")
    where.add_argument("--ref", help="count the tree of this commit of --repo-dir (read from git, no checkout)")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("--update-issue", metavar="OWNER/NAME#N", help="write the table into this tracking issue")
    parser.add_argument("--heading", default=DEFAULT_HEADING, help="heading to put the markers under when absent")
    parser.add_argument("--files", type=int, default=3, help="files named per area (default: 3)")
    parser.add_argument("--repo", help="OWNER/NAME whose files the table links to (default: the issue's repository)")
    parser.add_argument("--link-base", help="URL prefix for file links (default with --update-issue or --repo: "
                        "<server>/OWNER/NAME/blob/HEAD, i.e. the default branch)")
    parser.add_argument("--api-url", default=os.environ.get("GITHUB_API_URL", DEFAULT_API_URL))
    parser.add_argument("--server-url", default=os.environ.get("GITHUB_SERVER_URL", "https://github.com"))
    options.add_common(parser)


def compute(args: argparse.Namespace) -> Status:
    """The status of --source or --ref; raises ConfigError, GitError or OSError with a clear message."""
    if args.ref is not None:
        config = options.load_config(args, Path.cwd())
        reader = options.make_reader(args, config)
        status = status_at_ref(args.repo_dir, rev_parse(args.repo_dir, args.ref), reader, args.under)
    else:
        source = args.source or Path(".")
        config = options.load_config(args, source)
        reader = options.make_reader(args, config)
        status = status_of_dir(source, reader, args.under)
    reader.cache.save()
    return status


def run(args: argparse.Namespace) -> int:
    try:
        issue = options.parse_issue(args.update_issue) if args.update_issue else None
        token = github_token(issue.repo) if issue else None  # before the work and any network call
        linked = options.parse_repo(args.repo) if args.repo else (issue.repo if issue else None)
        status = compute(args)
    except (options.UsageError, ConfigError, GitError, OSError) as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return exits.USAGE
    link_base = args.link_base
    if link_base is None and linked is not None:
        link_base = f"{args.server_url.rstrip('/')}/{linked}/blob/HEAD"
    table = render_markdown(status, files_limit=args.files, link_base=link_base)
    if args.format == "json":
        print(json.dumps({"areas": status.counts(), "errors": status.errors}, indent=1))
    else:
        print(table, end="")
    if issue is None or token is None:
        return exits.OK
    return _update(issue, table, token, args)


def _update(issue: options.IssueRef, table: str, token: str, args: argparse.Namespace) -> int:
    from bot.github import GitHubClient, GitHubError  # only this path needs the network
    from bot.track.issue_update import UpdateConflict, update_issue

    try:
        client = GitHubClient(token, issue.repo, base_url=args.api_url)
        result = update_issue(client, issue.number, table, heading=args.heading)
    except MarkerError as exc:  # the issue's text, not GitHub, is at fault: fix the markers by hand
        print(f"pg-bot: {issue.repo}#{issue.number}: {exc}", file=sys.stderr)
        return exits.USAGE
    except (GitHubError, UpdateConflict) as exc:
        print(f"pg-bot: {issue.repo}#{issue.number}: {exc}", file=sys.stderr)
        return exits.GITHUB
    verdict = "updated" if result.written else "unchanged, not written"
    print(f"pg-bot: {issue.repo}#{issue.number}: {verdict} (attempt {result.attempts})", file=sys.stderr)
    return exits.OK
