"""Only the text between the status markers changes; every other byte of the body stays."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.track.issue_body import (
    DEFAULT_HEADING,
    END,
    START,
    MarkerError,
    current_section,
    needs_update,
    with_section,
)

TABLE = "| Area | Remaining |\n|---|---:|\n| MoE | 3 |\n"


def test_replaces_only_between_the_markers() -> None:
    before = f"# RFC\n\nintro\n\n{START}\nold table\n{END}\n\n## Notes\nhuman text\n"
    after = with_section(before, TABLE)
    head, tail = before.split(START)[0], before.split(END)[1]
    assert after.startswith(head + START) and after.endswith(END + tail)
    assert current_section(after) == "\n" + TABLE
    assert "old table" not in after


def test_crlf_body_keeps_crlf_everywhere() -> None:
    before = f"# RFC\r\n\r\nintro\r\n{START}\r\nold\r\n{END}\r\ntrailer\r\n"
    after = with_section(before, TABLE)
    assert after.split(START)[0] == before.split(START)[0]
    assert after.split(END)[1] == before.split(END)[1]
    assert "\n" not in after.replace("\r\n", "")  # no bare LF was introduced
    assert current_section(after) == "\r\n" + TABLE.replace("\n", "\r\n")


def test_markers_inserted_under_an_existing_heading() -> None:
    before = "# RFC\n\n## Migration status\nThe hand-written table below is kept.\n| a | b |\n"
    after = with_section(before, TABLE)
    heading_end = before.index("## Migration status\n") + len("## Migration status\n")
    inserted = f"\n{START}\n{TABLE}{END}\n"
    assert after == before[:heading_end] + inserted + before[heading_end:]


def test_heading_on_the_last_line_without_a_line_break() -> None:
    before = "intro\n## Migration status"
    after = with_section(before, TABLE)
    assert after == f"{before}\n\n{START}\n{TABLE}{END}\n"


def test_markers_appended_with_a_heading_when_there_is_none() -> None:
    before = "# RFC\r\n\r\nno status yet"
    after = with_section(before, TABLE)
    assert after.startswith(before)
    assert after[len(before) :] == (
        f"\r\n\r\n{DEFAULT_HEADING}\r\n\r\n{START}\r\n" + TABLE.replace("\n", "\r\n") + f"{END}\r\n"
    )


def test_empty_or_missing_body() -> None:
    for body in ("", None):
        assert with_section(body, TABLE) == f"{DEFAULT_HEADING}\n\n{START}\n{TABLE}{END}\n"


def test_second_application_is_a_no_op() -> None:
    once = with_section("# RFC\n", TABLE)
    assert with_section(once, TABLE) == once
    assert not needs_update(once, TABLE)
    assert needs_update(once, TABLE.replace("3", "2"))


def test_marker_spacing_typed_by_a_human_is_accepted() -> None:
    before = "a\n<!--pg-bot:status:start-->\nold\n<!--  pg-bot:status:end  -->\nb\n"
    after = with_section(before, TABLE)
    assert after == "a\n<!--pg-bot:status:start-->\n" + TABLE + "<!--  pg-bot:status:end  -->\nb\n"


@pytest.mark.parametrize(
    "body",
    [
        f"{START}\nno end\n",
        f"no start\n{END}\n",
        f"{END}\nreversed\n{START}\n",
        f"{START}\na\n{END}\n{START}\nb\n{END}\n",
    ],
)
def test_broken_markers_are_a_clear_error(body: str) -> None:
    with pytest.raises(MarkerError, match="marker"):
        with_section(body, TABLE)


_text = st.text(alphabet=st.sampled_from(list("ab #|\r\n\t-é")), max_size=40)


@given(head=_text, old=_text, tail=_text, crlf=st.booleans())
def test_outside_bytes_identical_for_any_body(head: str, old: str, tail: str, crlf: bool) -> None:
    nl = "\r\n" if crlf else "\n"
    body = head + START + old + END + tail
    after = with_section(body, TABLE)
    assert after.startswith(head + START)
    assert after.endswith(END + tail)
    if not crlf and "\r\n" not in body:
        assert current_section(after) == nl + TABLE
