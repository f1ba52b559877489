"""bot.report.markdown, judged by a CommonMark renderer (markdown-it-py, with GFM tables and strikethrough): PR text
quoted by pg-bot renders as exactly the code or text it is, never as markup, a link, an image, HTML, a mention
or a marker; and the review comment and summary built from hostile code render only pg-bot's own markup."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from bot.diff import from_api_file
from bot.fix import Suggestion
from bot.github import PullFile
from bot.model import FileResult, Finding, Span
from bot.report import summary
from bot.report.github_review import AnalyzedFile, Outcome, plan_review, rule_link
from bot.report.markdown import ZWSP, code_block, code_span, prose, visible

MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
# Text built from what breaks Markdown: backticks, emphasis, brackets, HTML, entities, mentions, links, newlines.
PIECES = [*"`*_[]()!<>&#@|~-+=.:/\\ \n\r\tab1", "<!--", "-->", "http://", "www.", "**", "```"]
HOSTILE = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
SETTINGS = settings(max_examples=300, deadline=None)


def tokens(markdown: str) -> list[Token]:
    """Every token, block and inline, in document order."""
    out: list[Token] = []

    def walk(ts: list[Token]) -> None:
        for t in ts:
            out.append(t)
            walk(t.children or [])

    walk(MD.parse(markdown))
    return out


def shown(text: str) -> str:
    """What a code span shows for ``text``: control characters escaped, no `<!--`, no bare `@`."""
    return visible(text).replace("<!--", f"<!{ZWSP}--").replace("@", f"@{ZWSP}")


@SETTINGS
@given(st.text(min_size=1, max_size=40) | HOSTILE.filter(bool))
def test_a_code_span_is_one_code_span_showing_the_text(text: str) -> None:
    inline = [t for t in tokens(code_span(text)) if t.type not in ("paragraph_open", "paragraph_close", "inline")]
    assert [t.type for t in inline] == ["code_inline"]
    assert inline[0].content == shown(text)


@SETTINGS
@given(HOSTILE.map(lambda s: s.replace("\r", "")), st.sampled_from(["python", "suggestion", "bash"]))
def test_a_code_block_holds_the_text_exactly(text: str, info: str) -> None:
    # (block texts are lines joined with \n: the fixer's, and the reviewer's after git's line numbering)
    (fence,) = tokens(code_block(text, info, verbatim=True))
    assert fence.type == "fence" and fence.info == info and fence.content == text + "\n"
    (defused,) = tokens(code_block(text, info))  # a block that is not applied verbatim: only `<!--` changes
    assert defused.content == text.replace("<!--", f"<!{ZWSP}--") + "\n" and "<!--" not in defused.content


@SETTINGS
@given(HOSTILE)
@example("    `")  # four spaces would start an indented code block
@example("- `x` 1. * a\n# b\n> c")
def test_prose_is_only_text_and_code_spans(text: str) -> None:
    md = prose(text)
    kinds = {t.type for t in tokens(md)}
    assert kinds <= {"paragraph_open", "paragraph_close", "inline", "text", "code_inline"}, md
    assert "<!--" not in md
    for t in tokens(md):
        if t.type == "text":
            assert "://" not in t.content and not re.search(r"(?i)\bwww\.", t.content)  # no autolink
            assert re.search(f"[@#](?!{ZWSP})", t.content) is None  # no mention, no issue reference


def test_prose_keeps_what_the_analyzer_quotes_and_its_wording() -> None:
    message = "`g is not None` only checks for None before `all_reduce` on `self.g`: use `is_parallel(self.g)`"
    assert prose(message) == message
    assert [t.content for t in tokens(prose(message)) if t.type == "code_inline"] == [
        "g is not None", "all_reduce", "self.g", "is_parallel(self.g)"]


# ---------------------------------------------------------------- whole bodies built from hostile code

PAYLOAD = '`**pwned** [click](https://evil.example) ![x](https://evil.example/x.png) <img src=x> @team #1 `'
HOSTILE_GROUP = f'groups["{PAYLOAD}"]'


def _plan():  # type: ignore[no-untyped-def]
    path = "we`ird <!-- pg-bot:dispatch -->.py"
    patch = "@@ -8,6 +8,8 @@\n ctx\n ctx\n ctx\n+add\n+add\n ctx\n ctx\n ctx"
    change = from_api_file(PullFile(filename=path, status="modified", previous_filename=None, patch=patch, sha=None))
    # as the analyzer words it: the flagged code and the group, each between single backticks
    message = f"`{HOSTILE_GROUP} is not None` only checks for None before `all_reduce` on `{HOSTILE_GROUP}`"
    findings = [Finding("PG103", message, path, Span(11, 4, 11, 20), group=HOSTILE_GROUP, function="f"),
                Finding("PG103", message, path, Span(3, 4, 3, 20), group=HOSTILE_GROUP, function="f")]
    source = "\n".join(f"line {i}" for i in range(1, 31)) + "\n"

    def suggest(src: str, f: Finding) -> Suggestion:
        return Suggestion(f.line, f.line, f"    if is_parallel({HOSTILE_GROUP}):", False,
                          f"changes `{HOSTILE_GROUP}` for None")

    return plan_review([AnalyzedFile(change, source=source, result=FileResult(path, findings=findings)),
                        AnalyzedFile(change, error=f"cannot parse `{HOSTILE_GROUP}`")], [], "f" * 40, suggest)


def _only_our_markup(body: str) -> None:
    assert body.count("<!--") == 1 and body.startswith("<!-- pg-bot:")  # the marker, and only there
    toks = tokens(body)
    assert "image" not in {t.type for t in toks}
    assert {t.content for t in toks if t.type == "html_inline"} <= {"<sub>", "</sub>"}  # the summary's footer
    for t in toks:
        if t.type == "html_block":  # the marker, and the summary's own <details> markup
            assert t.content.startswith(("<!-- pg-bot:", "<details>", "  <details>", "  </details>", "</details>"))
        if t.type == "link_open":
            assert t.attrs["href"].startswith(rule_link("PG")[: -len("pg")])
        if t.type == "text":
            assert "pwned" not in t.content or "**pwned**" in t.content  # shown as text, not bold
            assert "://" not in t.content and "@team" not in t.content
    bold = [toks[i + 1].content for i, t in enumerate(toks) if t.type == "strong_open"]
    assert all("pwned" not in b for b in bold)


def test_a_review_comment_on_hostile_code_renders_only_pg_bots_markup() -> None:
    plan = _plan()
    (payload,) = plan.comments
    _only_our_markup(payload["body"])
    # The message's backticks no longer pair as the analyzer meant (the code has its own), but whatever is not a
    # code span is shown as text: the attacker's markup reads literally, inert.
    shown = "".join(t.content for t in tokens(payload["body"]) if t.type in ("text", "code_inline"))
    assert "**pwned** [click](https:/" in shown and "<img src=x>" in shown
    fences = [t for t in tokens(payload["body"]) if t.type == "fence"]
    assert [f.info for f in fences] == ["suggestion"] and PAYLOAD in fences[0].content  # verbatim, applies as is


def test_the_summary_of_hostile_code_renders_only_pg_bots_markup() -> None:
    plan = _plan()
    rejected = [replace(i, reason="GitHub rejected it") for i in plan.new]  # the summary lists it, with its code
    text = summary.render(plan, Outcome(rejected=rejected))
    _only_our_markup(text)
    assert "we`ird" in "".join(t.content for t in tokens(text) if t.type == "code_inline")


def test_the_tracker_table_quotes_file_names_inertly() -> None:
    from bot import config as config_mod
    from bot.model import FileError
    from bot.track.status import FileSummary, tally
    from bot.track.table import render_markdown

    name = "deepspeed/moe/x`**b**`[l](https://e.example)<!--.py"
    findings = [Finding("PG101", "m", name, Span(3, 0, 3, 1))]
    results = [FileSummary.from_result(FileResult(name, findings=findings)),
               FileSummary.from_result(FileResult(name + "2", error=FileError(name + "2", "does not parse")))]
    md = render_markdown(tally(results, config_mod.load()), link_base="https://x/blob/HEAD")
    toks = tokens(md)
    bold = [toks[i + 1].content for i, t in enumerate(toks) if t.type == "strong_open"]
    assert "<!--" not in md and all(re.fullmatch(r"Total|\d+%?|–", b) for b in bold), bold  # only the totals row
    assert all(str(t.attrs["href"]).startswith("https://x/blob/HEAD/") for t in toks if t.type == "link_open")
    code = [t.content for t in toks if t.type == "code_inline"]
    assert name.replace("<!--", f"<!{ZWSP}--") in code and name.replace("<!--", f"<!{ZWSP}--") + "2" in code
