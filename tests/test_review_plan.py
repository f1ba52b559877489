"""Review planning (pure): which findings are commented, where, with what; dedupe, updates, resolution; and the
summary's content. Findings and suggestions are built by hand here, so the planner is tested on its own."""

from __future__ import annotations

from bot import links
from bot.diff import from_api_file
from bot.fingerprint import fingerprints
from bot.fix import Suggestion
from bot.github import Comment, GitHubError, PullFile
from bot.model import FileResult, Finding, Span
from bot.report import summary
from bot.report.github_review import (
    SUMMARY_MARKER,
    AnalyzedFile,
    Outcome,
    marker,
    parse_marker,
    plan_review,
    post,
)

SOURCE = "\n".join(f"line {i}" for i in range(1, 31)) + "\n"
HEAD = "f" * 40


def ApiFile(filename: str, status: str, patch: str | None, previous_filename: str | None = None) -> PullFile:
    """An entry of GET /pulls/{n}/files, as bot.github hands it to bot.diff."""
    return PullFile(filename=filename, status=status, previous_filename=previous_filename, patch=patch, sha=None)


def finding(line: int, end_line: int | None = None, code: str = "PG101", path: str = "m.py") -> Finding:
    return Finding(code=code, message=f"msg {code}", path=path, span=Span(line, 4, end_line or line, 20),
                   group="g", function="f")


def change(patch: str | None = "@@ -8,6 +8,8 @@\n ctx\n ctx\n ctx\n+add\n+add\n ctx\n ctx\n ctx", path: str = "m.py"):
    # new-side hunk covers lines 8..15; lines 11 and 12 are added
    return from_api_file(ApiFile(path, "modified", patch))


def suggest_lines(start: int, end: int, safe: bool = True, text: str = "        if pg_utils.is_parallel(g):"):
    def suggest(source: str, f: Finding) -> Suggestion | None:
        return Suggestion(start, end, text, safe, "equivalent" if safe else "changes X")

    return suggest


def no_suggestion(source: str, f: Finding) -> Suggestion | None:
    return None


def analysed(findings: list[Finding], ch=None, source: str = SOURCE) -> AnalyzedFile:
    ch = ch or change()
    return AnalyzedFile(ch, source=source, result=FileResult(ch.path, findings=findings))


def test_only_findings_on_added_lines_are_commented_others_counted() -> None:
    plan = plan_review([analysed([finding(11), finding(3), finding(13)])], [], HEAD, suggest_lines(11, 11))
    assert [i.finding.line for i in plan.new] == [11]
    assert [f.line for f in plan.pre_existing] == [3, 13]
    text = summary.render(plan)
    assert "**1** finding(s) on lines this pull request adds" in text and "**2** pre-existing" in text


def test_multi_line_suggestion_becomes_a_range_comment() -> None:
    plan = plan_review([analysed([finding(11, 12)])], [], HEAD, suggest_lines(11, 12))
    (payload,) = plan.comments
    assert payload["start_line"] == 11 and payload["line"] == 12 and payload["side"] == payload["start_side"] == "RIGHT"
    assert "```suggestion\n        if pg_utils.is_parallel(g):\n```" in payload["body"]
    assert payload["body"].startswith(marker("PG101", "m.py", plan.new[0].fingerprint))
    assert f"({links.rule_url('PG101')})" in payload["body"]


def test_suggestion_outside_the_hunk_is_shown_but_not_one_click() -> None:
    plan = plan_review([analysed([finding(12)])], [], HEAD, suggest_lines(5, 12))  # 5 is outside the hunk
    (payload,) = plan.comments
    assert payload["line"] == 12 and "start_line" not in payload
    assert "```suggestion" not in payload["body"] and "```python" in payload["body"]


def test_unsafe_suggestion_is_flagged() -> None:
    plan = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11, safe=False))
    assert "Check before applying:** changes X" in plan.comments[0]["body"]


def test_file_without_api_patch_goes_to_summary_not_lost() -> None:
    big = from_api_file(ApiFile("big.py", "modified", None))
    big = type(big)(path="big.py", status="modified", added=frozenset({11}), patch_missing=True)
    plan = plan_review([analysed([finding(11, path="big.py")], big)], [], HEAD, suggest_lines(11, 11))
    assert plan.new == [] and [i.finding.path for i in plan.to_summary] == ["big.py"]
    text = summary.render(plan)
    assert "### Not commented inline" in text and "`big.py:11`" in text and "too large" in text
    assert "pg_utils.is_parallel(g)" in text  # the suggestion travels with it


def test_rerun_does_not_repost_and_edits_only_what_changed() -> None:
    first = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11))
    posted = [Comment(id=7, body=first.comments[0]["body"], user="bot", path="m.py", line=11)]
    again = plan_review([analysed([finding(11)])], posted, HEAD, suggest_lines(11, 11), me="bot")
    assert again.new == [] and len(again.already) == 1 and again.edits == []
    changed = plan_review([analysed([finding(11)])], posted, HEAD, suggest_lines(11, 11, text="    other"), me="bot")
    assert changed.new == [] and [(i, why) for i, _, why in changed.edits] == [(7, "updated")]


def test_fingerprint_survives_moving_code_and_tells_twins_apart() -> None:
    moved = "\n" * 5 + SOURCE
    a = fingerprints([finding(11)], SOURCE)
    b = fingerprints([Finding("PG101", "msg PG101", "m.py", Span(16, 4, 16, 20), group="g", function="f")], moved)
    assert a == b
    twins = "x = g\nx = g\n"
    fps = fingerprints([finding(1), finding(2)], twins)
    assert fps[0] != fps[1]


def test_fixed_finding_marks_comment_resolved() -> None:
    first = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11))
    posted = [Comment(id=7, body=first.comments[0]["body"], user="bot", path="m.py", line=11)]
    fixed = plan_review([analysed([])], posted, "a" * 40, suggest_lines(11, 11), me="bot")
    ((cid, body, why),) = fixed.edits
    assert (cid, why) == (7, "resolved")
    assert parse_marker(body) == (("PG101", "m.py", first.new[0].fingerprint), "resolved")
    assert "```suggestion" not in body and "`aaaaaaa`" in body
    # once resolved, a later run leaves it alone
    assert plan_review([analysed([])], [Comment(7, body, "bot", path="m.py", line=11)], HEAD, no_suggestion, me="bot").edits == []
    assert "1 earlier comment(s) marked resolved" in summary.render(fixed)


def test_unreadable_file_keeps_its_comments_and_is_reported() -> None:
    first = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11))
    posted = [Comment(id=7, body=first.comments[0]["body"], user="bot", path="m.py", line=11)]
    broken = AnalyzedFile(change(), error="reading m.py: not found")
    plan = plan_review([broken], posted, HEAD, no_suggestion, me="bot")
    assert plan.edits == []
    assert "### Files that could not be analysed\n- `m.py`: reading m.py: not found" in summary.render(plan)


def test_outdated_comment_on_a_live_finding_is_superseded_by_one_new_comment() -> None:
    first = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11))
    outdated = [Comment(id=7, body=first.comments[0]["body"], user="bot", path="m.py", line=None)]
    plan = plan_review([analysed([finding(11)])], outdated, HEAD, suggest_lines(11, 11), me="bot")
    assert len(plan.new) == 1 and [why for _, _, why in plan.edits] == ["superseded"]


def test_skipped_files_and_marker_paths_with_spaces() -> None:
    skipped = AnalyzedFile(change(path="img.png"), skipped="binary file(s)")
    plan = plan_review([skipped, analysed([])], [], HEAD, no_suggestion, summary="always")
    assert plan.skipped == [("img.png", "binary file(s)")]
    assert "Skipped: 1 binary file(s)." in summary.render(plan)
    assert parse_marker(marker("PG105", "dir with space/x.py", "0123456789ab")) == (
        ("PG105", "dir with space/x.py", "0123456789ab"), None)


def test_clean_pr_summary_and_fix_command_quoting() -> None:
    plan = plan_review([analysed([])], [], HEAD, no_suggestion, summary="always")
    text = summary.render(plan)
    assert text.startswith(SUMMARY_MARKER) and "No hand-written process-group guards" in text
    quiet = plan_review([analysed([])], [], HEAD, no_suggestion)  # when-findings: only an earlier one is edited
    assert quiet.summary_action(Outcome()) == "update"
    text = summary.render(quiet)
    assert text.startswith(SUMMARY_MARKER) and "**Nothing to report** as of `fffffff`: no process-group guard" in text
    assert summary.fix_command(["a b.py", "c.py"]) == "pg-bot fix --write 'a b.py' c.py"


class Recorder:
    """A ReviewAPI that records calls and fails create_review with the given statuses first."""

    def __init__(self, failures: list[int], existing: list[Comment] | None = None) -> None:
        self.failures = failures
        self.reviews: list[list[dict]] = []
        self.edits: list[int] = []
        self.summaries: list[str] = []
        self.existing = existing or []

    def create_review(self, n, commit_id, body, comments, event="COMMENT"):  # type: ignore[no-untyped-def]
        if self.failures:
            raise GitHubError(self.failures.pop(0), "rejected")
        self.reviews.append(comments)
        return 1

    def edit_review_comment(self, comment_id, body):  # type: ignore[no-untyped-def]
        self.edits.append(comment_id)

    def upsert_marked_comment(self, n, marker, body):  # type: ignore[no-untyped-def]
        self.summaries.append(body)
        return 2

    def list_issue_comments(self, n):  # type: ignore[no-untyped-def]
        return self.existing

    def is_own(self, comment):  # type: ignore[no-untyped-def]
        return comment.user == "bot"


def test_post_retries_422_with_single_line_comments_then_falls_back_to_summary() -> None:
    plan = plan_review([analysed([finding(11, 12)])], [], HEAD, suggest_lines(11, 12))
    api = Recorder([422])
    outcome = post(api, 1, plan, summary.render)
    assert len(api.reviews) == 1 and "start_line" not in api.reviews[0][0] and outcome.rejected == []
    api = Recorder([422, 422])
    outcome = post(api, 1, plan, summary.render)
    assert api.reviews == [] and len(outcome.rejected) == 1
    assert "HTTP 422" in api.summaries[0] and "`m.py:11-12`" in api.summaries[0]


def test_post_makes_no_review_when_nothing_is_new() -> None:
    api = Recorder([])
    post(api, 1, plan_review([analysed([finding(3)])], [], HEAD, no_suggestion, summary="always"), summary.render)
    assert api.reviews == [] and len(api.summaries) == 1


def test_a_pr_adding_no_finding_gets_no_summary_unless_one_is_there_to_correct() -> None:
    only_old = [analysed([finding(3)])]  # a finding in a touched file, but not on a line the PR adds
    api = Recorder([])
    outcome = post(api, 1, plan_review(only_old, [], HEAD, no_suggestion), summary.render)
    assert api.reviews == [] and api.summaries == [] and outcome.summary_id is None
    mine = Comment(5, SUMMARY_MARKER + "\n**2** finding(s) ...", "bot")
    for existing in ([Comment(4, SUMMARY_MARKER + " forged", "mallory")], [mine]):
        api = Recorder([], existing)
        post(api, 1, plan_review(only_old, [], HEAD, no_suggestion), summary.render)
        if existing == [mine]:  # ours, now stale: edited to say so
            assert len(api.summaries) == 1 and "**Nothing to report** as of `fffffff`" in api.summaries[0]
        else:  # someone else's copy is never adopted
            assert api.summaries == []


def test_news_gets_a_summary_findings_resolutions_and_unreadable_files() -> None:
    api = Recorder([])
    post(api, 1, plan_review([analysed([finding(11)])], [], HEAD, no_suggestion), summary.render)
    assert len(api.summaries) == 1 and "**1** finding(s) on lines this pull request adds" in api.summaries[0]
    first = plan_review([analysed([finding(11)])], [], HEAD, no_suggestion)
    posted = [Comment(id=7, body=first.comments[0]["body"], user="bot", path="m.py", line=11)]
    fixed = plan_review([analysed([])], posted, HEAD, no_suggestion, me="bot")
    assert fixed.summary_action(Outcome()) == "post"
    assert "1 earlier comment(s) marked resolved" in summary.render(fixed)
    broken = plan_review([AnalyzedFile(change(), error="not UTF-8 text")], [], HEAD, no_suggestion)
    assert broken.summary_action(Outcome()) == "post"


def test_a_pr_without_python_files_is_left_alone_even_with_summary_always() -> None:
    notes = AnalyzedFile(change(path="notes.md"), skipped="non-Python file(s)")
    for mode in ("when-findings", "always"):
        api = Recorder([])
        post(api, 1, plan_review([notes], [], HEAD, no_suggestion, summary=mode), summary.render)
        assert api.reviews == [] and api.summaries == []
    api = Recorder([], [Comment(5, SUMMARY_MARKER + " old", "bot")])  # it touched Python files before
    post(api, 1, plan_review([notes], [], HEAD, no_suggestion), summary.render)
    assert "this pull request adds or modifies no Python file" in api.summaries[0]


def test_summary_counts_rejected_items(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = plan_review([analysed([finding(11), finding(12, code="PG105")])], [], HEAD, no_suggestion)
    text = summary.render(plan, Outcome(posted=plan.new[:1], rejected=plan.new[1:]))
    assert "(1 commented inline, 1 listed below)" in text
    assert "| 1 | 0 |" in text


def test_pr_controlled_text_cannot_break_out_of_markdown() -> None:
    path = "we`ird.py"
    f = Finding("PG101", 'guard on `g["@team"]`', path, Span(11, 4, 11, 20), group="g", function="f")
    fence_in_code = '        x = """\n```\n"""'
    plan = plan_review([analysed([f], change(path=path))], [], HEAD, suggest_lines(11, 11, text=fence_in_code))
    body = plan.comments[0]["body"]
    assert "@team" not in body and "@\u200bteam" in body  # no notification from quoted PR code
    assert "````suggestion\n" + fence_in_code + "\n````" in body  # a longer fence than any inside
    assert parse_marker(body) == (("PG101", path, plan.new[0].fingerprint), None)
    broken = AnalyzedFile(change(path=path), error="cannot read")
    assert "- ``we`ird.py``: cannot read" in summary.render(plan_review([broken], [], HEAD, no_suggestion))


def test_comments_by_anyone_but_pg_bot_or_with_a_marker_not_at_the_start_are_not_pg_bots() -> None:
    first = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11))
    body = first.comments[0]["body"]
    gone = body.replace(first.new[0].fingerprint, "0" * 12)
    existing = [Comment(7, body, "mallory", path="m.py", line=11),  # a copy of ours, by someone else
                Comment(8, gone, "Mallory-Bot[bot]", path="m.py", line=11),
                Comment(9, "> " + gone, "bot", path="m.py", line=11)]  # ours, but quoting: not at the start
    plan = plan_review([analysed([finding(11)])], existing, HEAD, suggest_lines(11, 11), me="Bot")
    assert len(plan.new) == 1 and plan.already == [] and plan.edits == []  # nothing skipped, edited, resolved
    assert plan_review([analysed([finding(11)])], existing[:1], HEAD, suggest_lines(11, 11)).new  # no `me`: none
    assert parse_marker("x " + body) is None


def test_a_guard_sharing_a_git_line_after_a_lone_cr_gets_that_whole_line() -> None:
    source = "\n".join(f"line {i}" for i in range(1, 11)) + "\rif g is not None:\n" + "\n".join(
        f"line {i}" for i in range(12, 31)) + "\n"  # Python's line 11 is on git's line 10, after a lone CR
    patch = "@@ -8,5 +8,5 @@\n ctx\n ctx\n-old\n+line 10\rif g is not None:\n ctx\n ctx"
    ch = from_api_file(ApiFile("m.py", "modified", patch))
    plan = plan_review([analysed([finding(11)], ch, source)], [], HEAD, suggest_lines(11, 11, text="if p(g):"))
    (payload,) = plan.comments
    assert payload["line"] == 10 and "start_line" not in payload
    assert "```suggestion\nline 10\nif p(g):\n```" in payload["body"]  # the code before the CR is kept
    assert "instead of a lone carriage return" in payload["body"]


def test_a_suggestion_quoting_an_html_comment_is_shown_not_one_click() -> None:
    plan = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11, text='x = "<!-- y -->"'))
    body = plan.comments[0]["body"]
    assert "```suggestion" not in body and "<!--" not in body.split("-->", 1)[1]
    assert "never posts verbatim" in body


def test_the_review_body_says_which_comments_have_a_suggestion() -> None:
    from bot.report.github_review import review_body

    def some(source: str, f: Finding) -> Suggestion | None:
        return Suggestion(11, 11, "x", True, "") if f.line == 11 else None

    all_of_them = plan_review([analysed([finding(11)])], [], HEAD, suggest_lines(11, 11))
    assert "each comment has a suggested rewrite and a link to the rule" in review_body(all_of_them, all_of_them.new)
    mixed = plan_review([analysed([finding(11), finding(12, code="PG105")])], [], HEAD, some)
    body = review_body(mixed, mixed.new)
    assert "1 of the comments have a suggested rewrite, and each links to the rule" in body
    assert "each comment has a suggest" not in body
    none = plan_review([analysed([finding(12)])], [], HEAD, no_suggestion)
    assert "none of these has an automatic rewrite" in review_body(none, none.new)


def test_the_fix_commands_follow_what_pg_bot_fix_does_with_each_finding() -> None:
    kinds = {11: Suggestion(11, 11, "x", True, "", True), 12: Suggestion(12, 12, "x", False, "", True),
             13: Suggestion(13, 13, "x", False, "never auto-applied", False)}

    def by_line(source: str, f: Finding) -> Suggestion | None:
        return kinds.get(f.line)

    patch = "@@ -8,6 +8,10 @@\n ctx\n ctx\n ctx\n+a\n+b\n+c\n+d\n ctx\n ctx\n ctx"
    files = [analysed([finding(11, path="a.py"), finding(3, path="a.py")], change(patch, "a.py")),
             analysed([finding(12, path="b b.py"), finding(13, path="b b.py"), finding(14, code="PG107", path="b b.py")],
                      change(patch, "b b.py"))]
    text = summary.render(plan_review(files, [], HEAD, by_line))
    assert "pg-bot fix --write a.py  # 1 finding: proven behaviour-preserving\n" in text
    assert "pg-bot fix --write --unsafe-fixes 'b b.py'  # 1 finding: change behaviour on purpose, review each\n" in text
    assert "Review them: `b b.py:12` PG101." in text
    assert "never applies it, not even with `--unsafe-fixes`; its comment says why): `b b.py:13` PG101." in text
    assert "No automatic rewrite (fix by hand; the rule's page shows how): `b b.py:14` PG107." in text
    assert "so also the 1 pre-existing finding there." in text
    only_manual = plan_review([analysed([finding(11)])], [], HEAD, no_suggestion)
    assert "pg-bot fix" not in summary.render(only_manual)  # no command that would fix nothing
    # Findings the PR did not add are not its author's to fix: no command (it used to be `pg-bot fix --write`
    # without --unsafe-fixes, which fixed none of them when they needed it).
    old_only = plan_review([analysed([finding(3)])], [], HEAD, suggest_lines(3, 3, safe=False), summary="always")
    text = summary.render(old_only)
    assert "**1** pre-existing" in text and "pg-bot fix" not in text


def test_medium_confidence_findings_are_summary_notes_with_their_evidence_not_comments() -> None:
    from dataclasses import replace

    from bot.model import Confidence

    medium = replace(finding(12, code="PG105"), confidence=Confidence.MEDIUM,
                     evidence=("`g` is checked for None before a collective elsewhere in this file",))
    plan = plan_review([analysed([finding(11), medium])], [], HEAD, suggest_lines(12, 12))
    assert [i.finding.line for i in plan.new] == [11] and [i.finding.line for i in plan.notes] == [12]
    assert all("PG105" not in c["body"] for c in plan.comments)
    text = summary.render(plan)
    assert "**2** finding(s) on lines this pull request adds (1 commented inline, 0 listed below, " \
           "1 medium-confidence note(s))" in text
    assert ("### Notes (medium confidence, not commented inline)\n- `m.py:12` **PG105** msg PG105 — evidence: "
            "`g` is checked for None before a collective elsewhere in this file.") in text
    assert "equivalent\n  </details>" in text  # the suggestion's note travels with it
    notes_only = plan_review([analysed([medium])], [], HEAD, suggest_lines(12, 12))
    assert notes_only.new == [] and notes_only.summary_action(Outcome()) == "post"
