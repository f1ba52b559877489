"""`pg-bot review`: review a pull request, or print offline the review a local patch would get.

    pg-bot review --repo OWNER/NAME --pr N            # token from GITHUB_TOKEN; --api-url for GHE
    pg-bot review --diff FILE.patch --source DIR --dry-run

Exit codes: 0 no new findings, 1 new findings (on added lines), 2 usage/config error, 3 GitHub API failure,
4 internal error (bot.cli). A file that cannot be read or analysed is listed in the summary; the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.analyze import analyze_source
from bot.commands.common import fail, github_token
from bot.config import Config, ConfigError
from bot.config import load as load_config
from bot.diff import (
    DiffError,
    FileChange,
    apply,
    from_api_files,
    from_texts,
    holds_new_side,
    is_python,
    parse_patch,
)
from bot.fix import Suggestion, suggestion_for
from bot.github import DEFAULT_API_URL, DEFAULT_APP_LOGIN, GitHubClient, GitHubError, PullFacts, default_retry
from bot.model import Finding
from bot.report import summary
from bot.report.escape import printable
from bot.report.github_review import (
    AnalyzedFile,
    Outcome,
    ReviewPlan,
    Suggest,
    comment_payload,
    plan_review,
    post,
    review_body,
)

if TYPE_CHECKING:
    from bot.fix.suggest import Prepared

EXIT_GITHUB = 3


def register(parser: argparse.ArgumentParser) -> None:
    online = parser.add_argument_group("a pull request on GitHub")
    online.add_argument("--repo", help="OWNER/NAME")
    online.add_argument("--pr", type=int, help="pull request number")
    online.add_argument("--api-url", default=os.environ.get("GITHUB_API_URL", DEFAULT_API_URL),
                        help="REST API root (GitHub Enterprise: https://HOST/api/v3; default: $GITHUB_API_URL or "
                             "api.github.com)")
    online.add_argument("--bot-login", default=os.environ.get("PG_BOT_LOGIN") or None, metavar="LOGIN",
                        help="the login GITHUB_TOKEN acts as, when it is a GitHub App's installation token: "
                             f"`<app-slug>[bot]` (default: $PG_BOT_LOGIN; else asked of GET /user for a user "
                             f"token, and {DEFAULT_APP_LOGIN} for Actions' own token). Only comments by this login "
                             "are taken for pg-bot's")
    online.add_argument("--retries", type=int, default=6, help="retries on 5xx / rate limits (default 6)")
    online.add_argument("--backoff", type=float, default=1.0,
                        help="exponential backoff factor in seconds (Retry-After wins when GitHub sends it)")
    offline = parser.add_argument_group("a local patch")
    offline.add_argument("--diff", type=Path, metavar="FILE.patch", help="unified diff (git diff / format-patch)")
    offline.add_argument("--source", type=Path, metavar="DIR",
                         help="the tree the patch applies to (a tree that already has it applied works too)")
    parser.add_argument("--dry-run", action="store_true", help="print the review instead of posting it")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="dry-run output: readable text, or the exact API payloads as JSON")
    parser.add_argument("--config", type=Path, help="rules.yaml (default: with --diff the nearest one above "
                        "--source; for a PR the packaged defaults, never one from the PR)")


def run(args: argparse.Namespace) -> int:
    if args.diff is not None:
        if args.repo or args.pr:
            return fail("use either --diff/--source or --repo/--pr, not both")
        if not args.dry_run:
            return fail("--diff reviews are offline: add --dry-run (there is no PR to post to)")
        if args.source is None:
            return fail("--diff needs --source DIR (the tree the patch applies to)")
    elif not (args.repo and args.pr):
        return fail("give --repo OWNER/NAME --pr N, or --diff FILE.patch --source DIR --dry-run")
    try:
        # Online, policy is --config or the packaged defaults: never a rules.yaml that a PR could have put here.
        config = load_config(args.config, search_from=args.source if args.diff is not None else None)
    except ConfigError as exc:
        return fail(str(exc))
    suggest = _suggester(config)
    if args.diff is not None:
        try:
            text = _read(args.diff)
        except (OSError, UnicodeDecodeError) as exc:
            return fail(f"cannot read {args.diff}: {exc}")
        if not args.source.is_dir():
            return fail(f"--source {args.source} is not a folder")
        try:
            files = offline_files(text, args.source, config)
        except DiffError as exc:
            return fail(f"{args.diff}: {exc}")
        plan = plan_review(files, [], _patch_sha(text), suggest, summary=config.review.summary)
        print(render_dry_run(plan, args.format))
        return 1 if plan.new or plan.to_summary else 0
    token = github_token(args.repo)  # before any network call: no token or a bad --repo is exit 2
    try:
        client = GitHubClient(token, args.repo, base_url=args.api_url, login=args.bot_login,
                              retry=default_retry(total=args.retries, backoff_factor=args.backoff))
        facts = client.pull(args.pr)
        files = online_files(client, facts, config)
        plan = plan_review(files, client.list_review_comments(args.pr), facts.head_sha, suggest,
                           me=client.identity(), summary=config.review.summary)
        if args.dry_run:
            print(render_dry_run(plan, args.format))
        else:
            outcome = post(client, args.pr, plan, summary.render)
            print(f"pg-bot: review on #{args.pr}: {len(outcome.posted)} new comment(s), {len(plan.already)} already "
                  f"there, {len(plan.edits)} edited, summary comment {outcome.summary_id or 'none (nothing to report)'}",
                  file=sys.stderr)
    except GitHubError as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return EXIT_GITHUB
    return 1 if plan.new or plan.to_summary or plan.already else 0


def _suggester(config: Config) -> Suggest:
    """Suggestions for one finding at a time, parsing each file once: the planner calls this for a file's
    findings in a row, so the last file's parse is kept (one slot, so memory stays one file's worth)."""
    held: list[Prepared] = []

    def suggest(source: str, finding: Finding) -> Suggestion | None:
        from bot.fix.suggest import prepare  # LibCST loads only when a review has something to suggest

        try:
            if not held or held[0].source is not source:
                held[:] = [prepare(source, config, finding.path)]
            return suggestion_for(source, finding, config, held[0])
        except Exception as exc:  # a fixer bug must not sink the whole review: comment without a suggestion
            # the job log runs workflow commands: a PR's file name is printed only escaped
            print(f"pg-bot: no suggestion for {printable(finding.path)}:{finding.line} {finding.code}: "
                  f"{printable(repr(exc))}", file=sys.stderr)
            return None

    return suggest


def _skip_reason(change: FileChange) -> str | None:
    if change.status == "removed":
        return "removed file(s)"
    if change.binary:
        return "binary file(s)"
    if not is_python(change.path):
        return "non-Python file(s)"
    return None


def _analysed(change: FileChange, data: bytes, config: Config) -> AnalyzedFile:
    if b"\0" in data:
        return AnalyzedFile(change, skipped="binary file(s)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return AnalyzedFile(change, error=f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    try:
        result = analyze_source(change.path, text, config)
    except Exception as exc:  # e.g. RecursionError on a pathological file: it costs that file, not the review
        traceback.print_exc()
        return AnalyzedFile(change, error=f"pg-bot failed on this file ({type(exc).__name__}: {exc})")
    return AnalyzedFile(change, source=text, result=result)


def offline_files(patch_text: str, source: Path, config: Config) -> list[AnalyzedFile]:
    """Each file of the patch with its new text: the patch applied to ``source`` (or ``source`` as is, when it
    already holds the new text)."""
    out = []
    for change in parse_patch(patch_text):
        reason = _skip_reason(change)
        if reason:
            out.append(AnalyzedFile(change, skipped=reason))
            continue
        try:
            new = _new_text(source, change)
        except DiffError as exc:
            out.append(AnalyzedFile(change, error=str(exc).removeprefix(f"{change.path}:").strip()))
            continue
        out.append(_analysed(change, new.encode("utf-8"), config))
    return out


def _new_text(source: Path, change: FileChange) -> str:
    """The file's new text: as it is under ``source`` when it already holds the patch's new side (a tree after
    the patch), else the patch applied to its old file there. Every problem (missing, unreadable, not UTF-8,
    not applying) is a DiffError for this file."""
    base = source / (change.old_path or change.path)
    here = source / change.path
    try:
        if here.is_file() and holds_new_side(data := here.read_bytes(), change):
            return data.decode("utf-8")  # checked before applying: appended code's context matches here too
        if change.status != "added" and not base.is_file():
            raise DiffError(f"{change.path}: {base} is not in --source")
        old = _read(base) if change.status != "added" else ""
        return apply(old, change) if change.patched is not None else old
    except (OSError, UnicodeDecodeError) as exc:
        raise DiffError(f"cannot read {here if here.is_file() else base}: {exc}") from exc


def _read(path: Path) -> str:
    """A file's text exactly: no newline translation (``read_text`` turns a lone CR into a line break, which
    would move every line after it against the patch, which git numbers)."""
    return path.read_bytes().decode("utf-8")


def online_files(client: GitHubClient, facts: PullFacts, config: Config) -> list[AnalyzedFile]:
    """The PR's files read through the API as data (never checked out or run). Requests grow with the number
    of Python files touched, not with the number of findings."""
    out = []
    for change in from_api_files(client.pull_files(facts.number)):
        if isinstance(change, DiffError):  # e.g. a patch GitHub sent that does not parse: that file only
            out.append(_unparsed(change))
            continue
        reason = _skip_reason(change)
        if reason:
            out.append(AnalyzedFile(change, skipped=reason))
            continue
        try:
            data = client.file_bytes(change.path, facts.head_sha)
            if change.patch_missing:  # too large for the files API: diff the whole texts here
                old = None
                if change.status != "added":
                    old = client.file_bytes(change.old_path or change.path, facts.base_sha).decode("utf-8", "replace")
                new = data.decode("utf-8", "replace")
                whole = from_texts(change.path, old, new, status=change.status, old_path=change.old_path)
                change = replace(whole, hunks=(), patch_missing=True)
        except GitHubError as exc:
            if exc.status in (401, 403):
                raise
            out.append(AnalyzedFile(change, error=str(exc)))
            continue
        out.append(_analysed(change, data, config))
    return out


def _unparsed(error: DiffError) -> AnalyzedFile:
    path = error.path or "?"
    return AnalyzedFile(FileChange(path=path, status="modified"), error=str(error).removeprefix(f"{path}: "))


def _patch_sha(text: str) -> str:
    m = re.search(r"^From ([0-9a-f]{40}) ", text, re.MULTILINE)
    return m.group(1) if m else "0" * 40


def render_dry_run(plan: ReviewPlan, fmt: str = "text") -> str:
    """Exactly what would be posted: the one review (body + inline comments), the edits, the summary (and
    whether it would be created, or only edit one an earlier run posted)."""
    comments = plan.comments
    outcome = Outcome(posted=list(plan.new))
    summary_text = summary.render(plan, outcome)
    action = plan.summary_action(outcome)
    if fmt == "json":
        review = ({"commit_id": plan.head_sha, "event": "COMMENT", "body": review_body(plan, plan.new),
                   "comments": comments} if comments else None)
        return json.dumps({"review": review, "edits": [{"comment_id": i, "body": b, "why": w}
                                                       for i, b, w in plan.edits],
                           "summary": summary_text, "summary_action": action}, indent=2)
    out = []
    if comments:
        out.append(f"=== review (event COMMENT, commit {plan.head_sha[:12]}, {len(comments)} inline comments) ===")
        out.append(review_body(plan, plan.new))
        for item, c in zip(plan.new, comments, strict=True):
            where = f"{c['start_line']}-{c['line']}" if "start_line" in c else f"{c['line']}"
            out.append(f"--- inline comment: {item.finding.path} line {where} ---")
            out.append(comment_payload(item)["body"])
    else:
        out.append("=== no review: nothing new to comment inline ===")
    for comment_id, body, why in plan.edits:
        out.append(f"--- edit review comment {comment_id} ({why}) ---")
        out.append(body)
    if action == "post":
        out.append("=== summary comment (created, or edited in place) ===")
    else:
        out.append("=== no summary comment: nothing to report (an earlier pg-bot summary on the PR would be "
                   "edited to this) ===")
    out.append(summary_text.rstrip("\n"))
    return "\n\n".join(out)
