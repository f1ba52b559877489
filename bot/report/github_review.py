"""Plan and post one PR review: pure planning over findings, suggestions and the comments already on the PR,
then a poster that turns the plan into a bounded number of requests (one review create, however many findings).

Every inline comment starts with ``<!-- pg-bot:finding CODE path fingerprint -->``. The fingerprint
(``bot.fingerprint``, the same one SARIF gives code scanning) hashes what the finding is (rule, file, function,
group, the flagged text, its occurrence) and not its line number, so a rerun
or a push that only moves code recognises the comment already made; a comment whose finding is gone is edited to
say so (``... resolved -->``), and one GitHub marks outdated while its finding lives on is superseded by a new one.

Trust: only comments written by pg-bot's own identity (``me``), with the marker at the very start of the body,
count as pg-bot's; anyone else's comment is never skipped for, edited or resolved, whatever it quotes. Everything
echoed from the PR goes through ``bot.report.markdown`` (inert code spans and text, no ``<!--``).

Lines: findings and suggestions come numbered as Python counts lines (a lone ``\\r`` ends one); comments are
placed, and suggestions cut, by git's numbering (only ``\\n`` does), which is what GitHub's diff uses.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from bot import links
from bot.analyze import RULES
from bot.diff import FileChange, LineMap
from bot.fingerprint import fingerprints
from bot.fix import Suggestion
from bot.github import Comment, GitHubError
from bot.model import Confidence, FileError, FileResult, Finding, Span
from bot.report.markdown import code_block, prose

SUMMARY_MARKER = "<!-- pg-bot:summary -->"
SUMMARY_WHEN_FINDINGS, SUMMARY_ALWAYS = "when-findings", "always"  # rules.yaml `review.summary`
_FINDING_MARKER = re.compile(
    r"<!-- pg-bot:finding (?P<code>PG\d+) (?P<path>\S+) (?P<fp>[0-9a-f]{12})(?: (?P<state>resolved|superseded))? -->"
)

Suggest = Callable[[str, Finding], Suggestion | None]


@dataclass(frozen=True)
class AnalyzedFile:
    """One file of the PR as the reviewer sees it. ``skipped`` says why a file was not analysed on purpose
    (binary, not Python, removed); ``result.error`` or ``error`` why it could not be."""

    change: FileChange
    source: str | None = None
    result: FileResult | None = None
    skipped: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Item:
    """A finding with its fingerprint, suggestion and where it goes. The finding's and the suggestion's lines
    are git's here (``plan_review`` translates them), as GitHub shows the file."""

    finding: Finding
    fingerprint: str
    suggestion: Suggestion | None
    start_line: int | None = None  # inline comment range (None: the summary takes it)
    line: int | None = None
    one_click: bool = False  # the range matches the suggestion, so it is a ```suggestion block
    reason: str = ""  # why it is not inline
    not_one_click: str = "outside this diff's hunk"  # why an inline comment's suggestion is not one-click

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.finding.code, self.finding.path, self.fingerprint)

    @property
    def marker(self) -> str:
        return marker(*self.key)


@dataclass
class ReviewPlan:
    head_sha: str
    new: list[Item] = field(default_factory=list)  # findings on added lines, to comment
    already: list[Item] = field(default_factory=list)  # commented at an earlier run (not posted again)
    to_summary: list[Item] = field(default_factory=list)  # new findings whose lines cannot take a comment
    pre_existing: list[Finding] = field(default_factory=list)  # in touched files, not on added lines
    edits: list[tuple[int, str, str]] = field(default_factory=list)  # (comment id, new body, why)
    analysed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    resolved_before: int = 0  # comments an earlier run already marked resolved
    notes: list[Item] = field(default_factory=list)  # medium-confidence findings on added lines: summary notes only
    summary_mode: str = SUMMARY_WHEN_FINDINGS  # rules.yaml `review.summary`

    @property
    def comments(self) -> list[dict[str, Any]]:
        """The inline comments of the one review, as the API takes them."""
        return [comment_payload(i) for i in self.new]

    def count(self, why: str) -> int:
        return sum(1 for e in self.edits if e[2] == why)

    def has_findings(self, outcome: Outcome) -> bool:
        """Whether the PR adds findings (inline or not, medium-confidence notes included) or has a Python file that
        could not be analysed (a silent pass would hide it): what the full summary is for."""
        return bool(self.new or self.already or self.to_summary or self.notes or outcome.rejected or self.errors)

    def summary_action(self, outcome: Outcome) -> str:
        """``post``: create the sticky summary, or edit it in place; ``update``: only edit one an earlier run
        posted, never create one. Posted when the PR adds findings, when this run resolved earlier ones, and with
        ``review.summary: always`` on any PR that changes a Python file."""
        if self.has_findings(outcome) or self.count("resolved"):
            return "post"
        touches_python = bool(self.analysed or self.errors)
        return "post" if self.summary_mode == SUMMARY_ALWAYS and touches_python else "update"


def marker(code: str, path: str, fingerprint: str, state: str | None = None) -> str:
    quoted = urllib.parse.quote(path, safe="/._-")  # a marker field never holds a space
    return f"<!-- pg-bot:finding {code} {quoted} {fingerprint}{' ' + state if state else ''} -->"


def parse_marker(body: str) -> tuple[tuple[str, str, str], str | None] | None:
    """The finding marker that starts ``body`` (a marker anywhere else is a quote, not ours)."""
    m = _FINDING_MARKER.match(body)
    if m is None:
        return None
    return (m["code"], urllib.parse.unquote(m["path"]), m["fp"]), m["state"]


def rule_link(code: str) -> str:
    return links.rule_url(code)


def comment_body(item: Item, rule_name: str = "") -> str:
    f, s = item.finding, item.suggestion
    title = f"**[{f.code}]({rule_link(f.code)})**{' ' + rule_name if rule_name else ''}: {prose(f.message)}"
    parts = [item.marker, title]
    if s is not None:
        if not item.one_click:
            parts.append(f"Suggested replacement for lines {s.start_line}-{s.end_line} ({item.not_one_click}, "
                         "so not a one-click suggestion):")
        parts.append(code_block(s.text, "suggestion" if item.one_click else "python", verbatim=item.one_click))
        if s.note:
            parts.append(("" if s.safe else "**Check before applying:** ") + prose(s.note))
    else:
        parts.append("No automatic rewrite for this one; see the rule's explanation for the fix.")
    parts.append(f"Why and how: [`pg-bot rule {f.code}`]({rule_link(f.code)})")
    return "\n\n".join(parts)


def comment_payload(item: Item) -> dict[str, Any]:
    assert item.line is not None
    rule = RULES.get(item.finding.code)
    body = comment_body(item, rule.name if rule else "")
    payload: dict[str, Any] = {"path": item.finding.path, "line": item.line, "side": "RIGHT", "body": body}
    if item.start_line is not None and item.start_line < item.line:
        payload.update(start_line=item.start_line, start_side="RIGHT")
    return payload


def _touches_added(f: Finding, change: FileChange) -> bool:
    return any(line in change.added for line in range(f.span.line, f.span.end_line + 1))


QUOTES_COMMENT = "it contains an HTML comment opener, which pg-bot never posts verbatim"


def _place(f: Finding, fp: str, s: Suggestion | None, change: FileChange) -> Item:
    if s is not None and change.commentable(s.start_line, s.end_line):
        if "<!--" not in s.text:  # a one-click suggestion is applied verbatim: it cannot be defused
            return Item(f, fp, s, s.start_line, s.end_line, one_click=True)
        return Item(f, fp, s, s.end_line, s.end_line, not_one_click=QUOTES_COMMENT)
    if change.patch_missing or not change.hunks:
        return Item(f, fp, s, reason="GitHub shows no diff for this file (too large), so it takes no inline comments")
    first = next((ln for ln in range(f.span.line, f.span.end_line + 1) if ln in change.added), f.span.line)
    if change.commentable(first, first):
        return Item(f, fp, s, first, first)
    return Item(f, fp, s, reason="its line is outside the diff GitHub shows")


def finding_to_git(lines: LineMap, f: Finding) -> Finding:
    """``f`` with git's line numbers (its columns stay Python's: the review places whole lines only)."""
    if lines.identical:
        return f
    return replace(f, span=Span(lines.to_git(f.span.line), f.span.col, lines.to_git(f.span.end_line), f.span.end_col))


def suggestion_to_git(lines: LineMap, s: Suggestion) -> Suggestion:
    """``s`` (replacing Python lines) as a replacement of whole git lines. Where its first or last line shares a
    git line with other code (after a lone ``\\r``), that code is kept, each Python line on a line of its own."""
    if lines.identical:
        return s
    first, last = lines.to_git(s.start_line), lines.to_git(s.end_line)
    before, after = lines.git_span(s.start_line, s.end_line)
    text = "\n".join([*before, *(s.text.split("\n") if s.text else []), *after])
    note = s.note
    if before or after or last - first != s.end_line - s.start_line:
        note = (f"{note}. " if note else "") + ("It also ends these lines with a newline instead of a lone carriage "
                                                "return (the same code to Python)")
    return replace(s, start_line=first, end_line=last, text=text, note=note)


def trusted(comments: Sequence[Comment], me: str | None) -> list[Comment]:
    """The comments pg-bot itself wrote (``me``: the token's login; None trusts none)."""
    own = (me or "").casefold()
    return [c for c in comments if me and c.user.casefold() == own]


def plan_review(files: Sequence[AnalyzedFile], existing: Sequence[Comment], head_sha: str,
                suggest: Suggest, *, me: str | None = None, summary: str = SUMMARY_WHEN_FINDINGS) -> ReviewPlan:
    """What to post. ``existing``: the PR's review comments; only those by ``me`` that start with a finding
    marker are taken for pg-bot's own (found again, edited, resolved). Only high-confidence findings are
    commented inline; medium ones become notes of the summary. ``summary``: rules.yaml ``review.summary``."""
    plan = ReviewPlan(head_sha=head_sha, summary_mode=summary)
    live: dict[tuple[str, str, str], list[Comment]] = {}
    for c in trusted(existing, me):
        parsed = parse_marker(c.body)
        if parsed is not None and parsed[1] is None:
            live.setdefault(parsed[0], []).append(c)
        elif parsed is not None and parsed[1] == "resolved":
            plan.resolved_before += 1
    current: set[tuple[str, str, str]] = set()
    for af in files:
        path = af.change.path
        if af.skipped:
            plan.skipped.append((path, af.skipped))
            continue
        if af.error or af.result is None or af.source is None or af.result.error:
            message = af.error or (af.result.error.message if af.result and af.result.error else "not analysed")
            plan.errors.append(FileError(path, message))
            continue
        plan.analysed.append(path)
        findings = af.result.findings
        lines = LineMap(af.source)
        for original, fp in zip(findings, fingerprints(findings, af.source), strict=True):
            key = (original.code, original.path, fp)
            current.add(key)
            f = finding_to_git(lines, original)
            if not _touches_added(f, af.change):
                plan.pre_existing.append(f)
                continue
            s = suggest(af.source, original)  # the fixer numbers lines as Python does
            git_s = None if s is None else suggestion_to_git(lines, s)
            if f.confidence is not Confidence.HIGH:  # a note with its evidence; a comment it once had stays
                plan.notes.append(Item(f, fp, git_s, reason=f"{f.confidence.value} confidence"))
                continue
            held = [c for c in live.get(key, []) if c.line is not None]
            item = _place(f, fp, git_s, af.change)
            if held:
                plan.already.append(item)
                if item.line is not None:
                    body = comment_payload(item)["body"]
                    if held[0].body != body:  # the suggestion changed with the code around it
                        plan.edits.append((held[0].id, body, "updated"))
                continue
            for stale in live.get(key, []):  # outdated by GitHub but still present: a fresh comment replaces it
                plan.edits.append((stale.id, _retired(stale.body, "superseded", head_sha), "superseded"))
            (plan.new if item.line is not None else plan.to_summary).append(item)
    failed = {e.path for e in plan.errors}
    for key, comments in live.items():
        if key in current or key[1] in failed:
            continue  # still there, or its file could not be read this time: leave the comment alone
        for c in comments:
            plan.edits.append((c.id, _retired(c.body, "resolved", head_sha), "resolved"))
    return plan


def _retired(body: str, state: str, head_sha: str) -> str:
    parsed = parse_marker(body)
    assert parsed is not None
    code, path, fp = parsed[0]
    old = re.sub(r"^(\s*`{3,})suggestion$", r"\1python", _FINDING_MARKER.sub("", body).strip(), flags=re.MULTILINE)
    headline = (f"Resolved: this {code} finding is gone as of `{head_sha[:7]}`." if state == "resolved"
                else f"Superseded: this {code} finding moved; see the newer comment (as of `{head_sha[:7]}`).")
    return (f"{marker(code, path, fp, state)}\n**{headline}**\n\n<details><summary>original comment</summary>\n\n"
            f"{old}\n\n</details>")


# ---------------------------------------------------------------- posting


class ReviewAPI(Protocol):  # the part of bot.github.GitHubClient the poster uses
    def create_review(self, n: int, commit_id: str, body: str, comments: list[dict[str, Any]],
                      event: str = "COMMENT") -> int: ...

    def edit_review_comment(self, comment_id: int, body: str) -> None: ...

    def upsert_marked_comment(self, n: int, marker: str, body: str) -> int: ...

    def list_issue_comments(self, n: int) -> list[Comment]: ...

    def is_own(self, comment: Comment) -> bool: ...


@dataclass
class Outcome:
    review_id: int | None = None
    posted: list[Item] = field(default_factory=list)
    rejected: list[Item] = field(default_factory=list)  # GitHub refused them (422): the summary lists them
    summary_id: int | None = None


def review_body(plan: ReviewPlan, items: Sequence[Item]) -> str:
    """The review's text; its marker names the head and a digest of the comments, so that after a 5xx the
    client can tell whether this very review was created."""
    count = len(items)
    digest = hashlib.sha1("".join(i.marker for i in items).encode()).hexdigest()[:12]
    s = "" if count == 1 else "s"
    suggested = sum(1 for i in items if i.suggestion is not None)
    if suggested == count:
        each = "each comment has a suggested rewrite and a link to the rule"
    elif suggested == 0:
        each = "each comment links to the rule; none of these has an automatic rewrite"
    else:
        each = f"{suggested} of the comments have a suggested rewrite, and each links to the rule"
    return (f"<!-- pg-bot:review {plan.head_sha} {digest} -->\npg-bot found {count} process-group guard finding{s} "
            f"on lines this pull request adds; {each}. "
            "Counts, the fix commands and anything that could not be commented are in the pg-bot summary comment.")


def post(client: ReviewAPI, n: int, plan: ReviewPlan, render_summary: Callable[[ReviewPlan, Outcome], str]) -> Outcome:
    """One review (only when there is something new to say), the edits, then the sticky summary: posted or
    edited when ``plan.summary_action`` says so, else only an existing one is edited (never a new one).

    On a 422 (a line GitHub will not take) the review is retried once with single-line comments, then the
    findings go to the summary instead: never lost, and the number of requests stays bounded."""
    outcome = Outcome()
    items = list(plan.new)
    singles = [_single_line(i) for i in items]
    attempts = ([items] if items else []) + ([singles] if singles != items else [])
    for attempt in attempts:
        try:
            outcome.review_id = client.create_review(n, plan.head_sha, review_body(plan, attempt),
                                                     [comment_payload(i) for i in attempt])
            outcome.posted = attempt
            break
        except GitHubError as exc:
            if exc.status != 422:
                raise
    else:
        outcome.rejected = [_rejected(i) for i in items]
    for comment_id, body, _why in plan.edits:
        client.edit_review_comment(comment_id, body)
    if plan.summary_action(outcome) == "post" or _has_summary(client, n):
        outcome.summary_id = client.upsert_marked_comment(n, SUMMARY_MARKER, render_summary(plan, outcome))
    return outcome


def _has_summary(client: ReviewAPI, n: int) -> bool:
    """Whether pg-bot's own summary is on #n already (then it is kept current rather than left stale)."""
    return any(c.body.startswith(SUMMARY_MARKER) and client.is_own(c) for c in client.list_issue_comments(n))


def _single_line(item: Item) -> Item:
    if item.start_line is None or item.start_line == item.line:
        return item
    return Item(item.finding, item.fingerprint, item.suggestion, item.line, item.line, one_click=False)


def _rejected(item: Item) -> Item:
    return Item(item.finding, item.fingerprint, item.suggestion,
                reason="GitHub rejected an inline comment on this line (HTTP 422)")
