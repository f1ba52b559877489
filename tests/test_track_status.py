"""Counting per area and the Markdown status table, over FileResults built here."""

from __future__ import annotations

import pytest

from bot import config as config_mod
from bot.model import FileError, FileResult, Finding, Span
from bot.track.status import DONE, IN_PROGRESS, NO_SITES, NOT_STARTED, FileSummary, tally
from bot.track.table import render_markdown


@pytest.fixture(scope="module")
def config() -> config_mod.Config:
    return config_mod.load()


def finding(path: str, code: str, line: int) -> Finding:
    return Finding(code=code, message=f"{code} here", path=path, span=Span(line, 4, line, 20))


def result(path: str, codes: list[str], migrated: int = 0) -> FileSummary:
    findings = [finding(path, c, 10 + i) for i, c in enumerate(codes)]
    return FileSummary.from_result(FileResult(path=path, findings=findings, migrated=migrated))


def test_counts_go_to_the_first_matching_area(config: config_mod.Config) -> None:
    status = tally(
        [
            result("deepspeed/moe/sharded_moe.py", ["PG101", "PG101", "PG105"], migrated=1),
            result("deepspeed/moe/layer.py", ["PG103"]),
            # moe_inference.py matches both moe and inference; moe comes first in rules.yaml
            result("deepspeed/ops/transformer/inference/moe_inference.py", ["PG104"]),
            result("deepspeed/runtime/zero/stage3.py", [], migrated=4),
            result("deepspeed/runtime/utils.py", ["PG106"], migrated=2),
            result("deepspeed/launcher/runner.py", ["PG101"]),
        ],
        config,
    )
    moe = status.areas["moe"]
    assert moe.remaining == 5
    assert dict(moe.remaining_by_rule) == {"PG101": 2, "PG105": 1, "PG103": 1, "PG104": 1}
    assert moe.migrated == 1
    assert moe.state == IN_PROGRESS
    assert dict(moe.files) == {
        "deepspeed/moe/sharded_moe.py": 3,
        "deepspeed/moe/layer.py": 1,
        "deepspeed/ops/transformer/inference/moe_inference.py": 1,
    }
    assert status.areas["inference"].remaining == 0
    assert status.areas["zero"].state == DONE and status.areas["zero"].percent == 100.0
    assert status.areas["runtime-norms"].percent == pytest.approx(200 / 3)
    assert status.areas["other"].state == NOT_STARTED
    assert status.areas["sequence"].percent is None and status.areas["sequence"].state == NO_SITES
    assert list(status.areas) == [a.name for a in config.areas]
    assert status.remaining == 7 and status.migrated == 7


def test_add_then_remove_restores_the_counts(config: config_mod.Config) -> None:
    before = tally([result("deepspeed/moe/layer.py", ["PG101"])], config)
    area = before.areas["moe"]
    snapshot = area.counts(), dict(area.files)
    extra = result("deepspeed/moe/experts.py", ["PG105", "PG105"], migrated=3)
    area.add(extra)
    assert area.remaining == 3 and area.migrated == 3
    area.add(extra, -1)
    assert (area.counts(), dict(area.files)) == snapshot


def test_parse_errors_are_counted_not_fatal(config: config_mod.Config) -> None:
    broken = FileSummary.from_result(
        FileResult(path="deepspeed/moe/broken.py", error=FileError("deepspeed/moe/broken.py", "invalid syntax"))
    )
    status = tally([broken, result("deepspeed/moe/layer.py", ["PG101"])], config)
    assert status.errors == ["deepspeed/moe/broken.py"]
    assert status.areas["moe"].remaining == 1
    assert "Not analysed (does not parse): `deepspeed/moe/broken.py`" in render_markdown(status)


def test_summary_round_trips_through_json() -> None:
    summary = result("deepspeed/moe/layer.py", ["PG105", "PG101"], migrated=2)
    back = FileSummary.from_json(summary.path, summary.to_json())
    assert back == summary
    assert [s.code for s in back.sites] == ["PG101", "PG105"]  # sorted by code, then line


def _rows(markdown: str) -> dict[str, list[str]]:
    rows = {}
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| Area"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0]] = cells[1:]
    return rows


def test_markdown_table_has_one_row_per_area_and_a_total(config: config_mod.Config) -> None:
    summaries = [result(f"deepspeed/moe/f{i}.py", ["PG101"] * i) for i in range(1, 6)]
    summaries.append(result("deepspeed/runtime/zero/stage3.py", [], migrated=3))
    status = tally(summaries, config)
    md = render_markdown(status, link_base="https://github.com/o/n/blob/master")
    rows = _rows(md)
    assert set(rows) == {a.title for a in config.areas} | {"**Total**"}
    remaining, migrated, pct, state, files = rows["MoE"]
    assert (remaining, migrated, pct, state) == ("15 (PG101 15)", "0", "0%", "not started")
    # the three files with most sites, most first, linked; the rest summarised
    assert files == (
        "[`deepspeed/moe/f5.py`](https://github.com/o/n/blob/master/deepspeed/moe/f5.py) (5), "
        "[`deepspeed/moe/f4.py`](https://github.com/o/n/blob/master/deepspeed/moe/f4.py) (4), "
        "[`deepspeed/moe/f3.py`](https://github.com/o/n/blob/master/deepspeed/moe/f3.py) (3), +2 more"
    )
    assert rows["ZeRO model-parallel reductions"][:4] == ["0", "3", "100%", "done"]
    assert rows["Sequence parallel (vocab-parallel ops, cross-entropy)"][:4] == ["0", "0", "–", "no sites"]
    assert rows["**Total**"][:4] == ["**15**", "**3**", "**17%**", "in progress"]


def test_markdown_is_stable_for_equal_counts(config: config_mod.Config) -> None:
    a = tally([result("deepspeed/moe/a.py", ["PG101"]), result("deepspeed/moe/b.py", ["PG105"])], config)
    b = tally([result("deepspeed/moe/b.py", ["PG105"]), result("deepspeed/moe/a.py", ["PG101"])], config)
    assert render_markdown(a) == render_markdown(b)
    c = tally([result("deepspeed/moe/a.py", ["PG101"])], config)
    assert render_markdown(a) != render_markdown(c)


def test_pipes_in_titles_do_not_break_the_table() -> None:
    cfg = config_mod.parse(
        "version: 1\nareas:\n  - name: x\n    title: 'a | b'\n    paths: ['**']\n", "<test>"
    )
    md = render_markdown(tally([result("m.py", ["PG101"])], cfg))
    row = next(line for line in md.splitlines() if line.startswith("| a"))
    assert row.startswith("| a \\| b | 1 (PG101 1) |")


def test_file_links_survive_odd_characters(config: config_mod.Config) -> None:
    md = render_markdown(tally([result("deepspeed/moe/a (old).py", ["PG101"])], config), link_base="https://x/blob/HEAD")
    assert "[`deepspeed/moe/a (old).py`](https://x/blob/HEAD/deepspeed/moe/a%20%28old%29.py) (1)" in md
