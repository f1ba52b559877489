"""suggestion_for: the exact line range and text of a GitHub ```suggestion block, per finding."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot import config as config_module
from bot.analyze import analyze_source
from bot.fix import explain, fix_source, suggestion_for
from bot.fix.text import split_lines
from bot.model import CachedSizePayload, Finding, NoneOnlyPayload, Span, UnguardedPayload

CONFIG = config_module.load()
FIX = Path(__file__).parent / "fixtures" / "fix"


def fixture(name: str) -> tuple[str, list[Finding]]:
    source = (FIX / name).read_text()
    return source, analyze_source(name, source, CONFIG).findings


def apply_suggestion(source: str, start: int, end: int, text: str) -> str:
    lines = split_lines(source)
    replacement = [line + "\n" for line in text.split("\n")] if text else []
    return "".join(lines[: start - 1] + replacement + lines[end:])


def without_import(fixed: str, original: str) -> str:
    line = "from deepspeed.comm import pg_utils\n"
    return fixed if line in original else fixed.replace(line, "", 1)


def test_multiline_guard_suggestion_covers_exactly_its_lines_with_indentation() -> None:
    source, found = fixture("chain_multiline.py")
    first = next(f for f in found if f.line == 11)
    s = suggestion_for(source, first, CONFIG)
    assert s is not None and (s.start_line, s.end_line) == (11, 12)
    assert s.text == "                and pg_utils.is_parallel(self.mp_group)"
    assert s.safe and "equivalent" in s.note and "from deepspeed.comm import pg_utils" in s.note


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("*.py")))
def test_applying_a_suggestion_equals_the_single_fix_without_the_import(name: str) -> None:
    source, found = fixture(name)
    for finding in found:
        s = suggestion_for(source, finding, CONFIG)
        if s is None:
            assert "no automatic fix" in explain(source, finding, CONFIG)
            continue
        suggested = apply_suggestion(source, s.start_line, s.end_line, s.text)
        ast.parse(suggested)
        assert (s.start_line <= finding.span.end_line and s.end_line >= finding.span.line) or finding.code == "PG107"
        single = fix_source(source, [finding], CONFIG, unsafe=True)
        if finding.code in ("PG106", "PG107"):
            continue  # their full fix spans several places; the block is one self-contained part of it
        if not single.applied:  # suggestion only: never applied by `fix`, and the note says why
            assert not s.safe and "never auto-applied" in s.note
            continue
        assert suggested == without_import(single.source, source), finding


def test_unsafe_suggestion_is_marked_and_explains_the_states() -> None:
    source, found = fixture("partial.py")
    s = suggestion_for(source, found[0], CONFIG)
    assert s is not None and not s.safe
    assert "single-rank group (size 1)" in s.note and "non-member" in s.note


def test_wrap_suggestion_replaces_one_line_with_the_guarded_block() -> None:
    source, found = fixture("unguarded.py")
    s = suggestion_for(source, found[0], CONFIG)
    assert s is not None and (s.start_line, s.end_line) == (6, 6)
    assert s.text == "    if pg_utils.is_parallel(group):\n        dist.all_reduce(t, group=group)  # in place"


def test_no_suggestion_where_the_fix_is_refused_and_explain_says_why() -> None:
    source, found = fixture("unguarded.py")
    used = next(f for f in found if isinstance(f.payload, UnguardedPayload) and f.payload.result_used)
    assert suggestion_for(source, used, CONFIG) is None
    assert "is used" in explain(source, used, CONFIG)


def test_cached_size_suggestion_merges_near_edits_and_names_far_ones() -> None:
    source, found = fixture("cached.py")
    near, far = found
    assert isinstance(near.payload, CachedSizePayload)
    flag = near.payload.cache_attribute  # the name the analyzer's message gives
    s = suggestion_for(source, near, CONFIG)  # the construction line is two lines above the test: one block
    assert s is not None and (s.start_line, s.end_line) == (8, 10)
    assert s.text.split("\n") == [
        f"        {flag} = pg_utils.is_parallel(self.mp_group)",
        "",
        "    def forward(self, x):",
        f"        if {flag}:",
    ]
    s = suggestion_for(source, far, CONFIG)
    assert s is not None and (s.start_line, s.end_line) == (15, 15)
    assert s.text == f"        if not {flag}:"
    assert f"add after line 7: `{flag} = pg_utils.is_parallel(self.mp_group)`" in s.note


def test_copy_suggestion_makes_the_copy_delegate() -> None:
    source, found = fixture("copies.py")
    copy = next(f for f in found if f.code == "PG107")
    s = suggestion_for(source, copy, CONFIG)
    assert s is not None and (s.start_line, s.end_line) == (5, 5)
    assert s.text == "    return pg_utils.is_parallel(group)" and "line" in s.note


def test_crlf_source_gives_plain_newline_text() -> None:
    source, found = fixture("unguarded.py")
    crlf = source.replace("\n", "\r\n")
    f = analyze_source("unguarded.py", crlf, CONFIG).findings[0]
    s = suggestion_for(crlf, f, CONFIG)
    assert s is not None and "\r" not in s.text and s.text == suggestion_for(source, found[0], CONFIG).text


def test_output_buffer_collective_gets_a_suggestion_only_with_the_reason() -> None:
    source, found = fixture("unguarded.py")
    gather = next(f for f in found if isinstance(f.payload, UnguardedPayload) and f.payload.collective == "all_gather")
    s = suggestion_for(source, gather, CONFIG)
    assert s is not None and not s.safe and (s.start_line, s.end_line) == (24, 24)
    assert s.text == "    if pg_utils.is_parallel(group):\n        dist.all_gather(out, t, group=group)"
    assert "output buffer" in s.note and "fill the" in s.note
    # one reason per state, and none contradicting "a single-rank group's call still fills the buffer"
    assert "no-op" not in s.note and "over one rank it only copies the input into the output buffer" in s.note
    assert fix_source(source, [gather], CONFIG, unsafe=True).applied == []


def test_auto_says_whether_pg_bot_fix_applies_the_suggestion() -> None:
    for name in sorted(p.name for p in FIX.glob("*.py")):
        source, found = fixture(name)
        for finding in found:
            s = suggestion_for(source, finding, CONFIG)
            if s is None or finding.code in ("PG106", "PG107"):
                continue  # (their full fix spans several places: not comparable one finding at a time)
            applied = bool(fix_source(source, [finding], CONFIG, unsafe=True).applied)
            assert s.auto == applied, (name, finding.line, s.note)
            if s.safe:
                assert fix_source(source, [finding], CONFIG).applied == [finding]


def test_a_prepared_file_is_parsed_once_for_all_its_findings_and_gives_the_same_blocks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import libcst

    from bot.fix.suggest import prepare

    source, found = fixture("unguarded.py")
    assert len(found) >= 3
    alone = [suggestion_for(source, f, CONFIG) for f in found]
    calls = {"cst": 0, "ast": 0}
    real_cst, real_ast = libcst.parse_module, ast.parse

    def count_cst(text: str, *args: object, **kwargs: object) -> libcst.Module:
        calls["cst"] += text == source
        return real_cst(text, *args, **kwargs)  # type: ignore[arg-type]

    def count_ast(text: str, *args: object, **kwargs: object) -> ast.AST:
        calls["ast"] += text == source  # (expressions are parsed too, to prove each rewrite)
        return real_ast(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(libcst, "parse_module", count_cst)
    monkeypatch.setattr(ast, "parse", count_ast)
    prepared = prepare(source, CONFIG, "unguarded.py")
    shared = [suggestion_for(source, f, CONFIG, prepared) for f in found]
    assert shared == alone
    assert calls == {"cst": 1, "ast": 1}  # the file's two parses, whatever the number of findings


def test_a_none_only_note_names_the_rest_of_its_condition() -> None:
    source = ("import deepspeed.comm as dist\n\n\ndef f(t, group=None, tp_world_size=1):\n"
              "    if group is None or tp_world_size == 1:\n        return t\n"
              "    dist.all_reduce(t, group=group)\n    return t\n")
    finding = Finding("PG103", "m", "m.py", Span(5, 7, 5, 20), group="group", kind="negative", function="f",
                      payload=NoneOnlyPayload("group is None", "all_reduce"))
    s = suggestion_for(source, finding, CONFIG)
    assert s is not None and s.text == "    if not pg_utils.is_parallel(group) or tp_world_size == 1:"
    assert "wherever the rest of the condition, `tp_world_size == 1`, did not stop them" in s.note
    assert "also let single-rank" not in s.note
    alone = source.replace(" or tp_world_size == 1", "")
    s = suggestion_for(alone, finding, CONFIG)
    assert s is not None and "also let single-rank and non-member groups through" in s.note
    assert "rest of the condition" not in s.note


def test_a_multi_line_guard_keeps_its_inline_comment_in_the_suggestion_and_the_fix() -> None:
    source = ("import deepspeed.comm as dist\n\n\ndef f(t, group=None):\n"
              "    if (group is not None  # None without expert parallelism\n"
              "            and dist.get_world_size(group=group) > 1):  # one rank: nothing to do\n"
              "        dist.all_reduce(t, group=group)\n")
    (finding,) = analyze_source("m.py", source, CONFIG).findings
    s = suggestion_for(source, finding, CONFIG)
    assert s is not None and (s.start_line, s.end_line) == (5, 6) and s.safe
    assert s.text == ("    # None without expert parallelism\n"
                      "    if pg_utils.is_parallel(group):  # one rank: nothing to do")
    fixed = fix_source(source, [finding], CONFIG).source
    assert "    # None without expert parallelism\n    if pg_utils.is_parallel(group):  # one rank" in fixed
    ast.parse(fixed)
