"""Changed files -> test paths; every doubt falls back to the full suite."""

from __future__ import annotations

import pytest

from bot import config as cfg
from bot.ci.select import ChangedFile, code, select_tests

RULES = """
version: 1
areas:
  - name: moe
    paths: [deepspeed/moe/**]
    tests: [tests/unit/moe]
  - name: zero
    paths: [deepspeed/runtime/zero/**]
    tests: [tests/unit/runtime/zero, tests/unit/runtime/zero/test_zero.py]
  - name: autotp
    paths: [deepspeed/module_inject/**]
    tests: [tests/unit/model_parallelism, tests/unit/module_inject]
  - name: untested
    paths: [deepspeed/profiling/**]
    tests: []
  - name: other
    paths: ["**"]
ci:
  test_root: tests
  full_suite: [tests/unit]
  max_test_paths: 3
  run_all_when: [deepspeed/comm/**, .github/**, tests/conftest.py]
"""


@pytest.fixture
def config() -> cfg.Config:
    return cfg.parse(RULES)


def f(path: str, patch: str | None = "@@ -1 +1 @@\n-a = 1\n+a = 2\n", **kw: str) -> ChangedFile:
    return ChangedFile(path=path, patch=patch, **kw)


def test_moe_file_selects_moe_tests_only(config: cfg.Config) -> None:
    sel = select_tests([f("deepspeed/moe/sharded_moe.py")], config)
    assert (sel.tests, sel.full, sel.areas) == (("tests/unit/moe",), False, ("moe",))
    assert "area `moe`" in sel.reasons[0]


def test_packaged_rules_map_moe_to_the_moe_tests() -> None:
    config = cfg.load()
    moe = next(a for a in config.areas if a.name == "moe")
    sel = select_tests([f("deepspeed/moe/layer.py")], config)
    assert sel.tests == moe.tests and not sel.full


def test_several_areas_union_in_order_without_nested_duplicates(config: cfg.Config) -> None:
    sel = select_tests([f("deepspeed/runtime/zero/stage3.py"), f("deepspeed/moe/layer.py")], config)
    # tests/unit/runtime/zero/test_zero.py lies inside tests/unit/runtime/zero: run once
    assert sel.tests == ("tests/unit/runtime/zero", "tests/unit/moe")
    assert sel.areas == ("zero", "moe")


@pytest.mark.parametrize("path", ["deepspeed/comm/comm.py", ".github/workflows/x.yml", "tests/conftest.py"])
def test_run_all_when_globs_select_the_full_suite(config: cfg.Config, path: str) -> None:
    sel = select_tests([f("deepspeed/moe/layer.py"), f(path)], config)
    assert sel.full and sel.tests == ("tests/unit",)
    assert "ci.run_all_when" in sel.reasons[0]


def test_rename_out_of_a_run_all_path_counts_the_old_path(config: cfg.Config) -> None:
    sel = select_tests([f("deepspeed/moe/comm_moved.py", status="renamed",
                          previous_path="deepspeed/comm/backend.py")], config)
    assert sel.full


def test_other_python_file_touching_a_collective_runs_full_suite(config: cfg.Config) -> None:
    patch = "@@ -3,2 +3,2 @@\n x = 1\n-dist.all_reduce(t)\n+dist.all_reduce(t, group=g)\n"
    sel = select_tests([f("deepspeed/runtime/engine.py", patch), f("deepspeed/moe/layer.py")], config)
    assert sel.full and "collective" in sel.reasons[0]


@pytest.mark.parametrize("line", ["+if get_world_size(g) > 1:", "-    group=self.mp_group,",
                                  "+g = dist.new_group(ranks)", "+ok = pg_utils.is_parallel(g)"])
def test_process_group_words_count_as_collective_use(config: cfg.Config, line: str) -> None:
    sel = select_tests([f("deepspeed/runtime/engine.py", f"@@ -1 +1 @@\n{line}\n")], config)
    assert sel.full


def test_collective_only_in_context_lines_does_not_force_full(config: cfg.Config) -> None:
    patch = "@@ -3,3 +3,3 @@\n dist.all_reduce(t)\n-x = 1\n+x = 2\n"
    sel = select_tests([f("deepspeed/runtime/engine.py", patch), f("deepspeed/moe/layer.py")], config)
    assert sel.tests == ("tests/unit/moe",) and not sel.full


def test_word_boundaries_avoid_false_collective_hits(config: cfg.Config) -> None:
    patch = "@@ -1 +1 @@\n+my_all_reduce_count = 3\n"
    sel = select_tests([f("deepspeed/runtime/engine.py", patch), f("deepspeed/moe/layer.py")], config)
    assert not sel.full


def test_other_python_file_without_a_diff_runs_full_suite(config: cfg.Config) -> None:
    sel = select_tests([f("deepspeed/runtime/engine.py", None), f("deepspeed/moe/layer.py")], config)
    assert sel.full and "no diff" in sel.reasons[0]


def test_docs_only_change_runs_full_suite_because_nothing_was_selected(config: cfg.Config) -> None:
    sel = select_tests([f("docs/index.md", None), f("README.md")], config)
    assert sel.full and "no area" in sel.reasons[0]


def test_area_without_tests_is_unsure(config: cfg.Config) -> None:
    sel = select_tests([f("deepspeed/profiling/flops.py"), f("deepspeed/moe/layer.py")], config)
    assert sel.full and "lists no tests" in sel.reasons[0]


def test_file_in_no_area_is_unsure() -> None:
    config = cfg.parse(RULES.replace('  - name: other\n    paths: ["**"]\n', ""))
    sel = select_tests([f("setup.cfg"), f("deepspeed/moe/layer.py")], config)
    assert sel.full and "no area" in sel.reasons[0]


def test_changed_test_file_is_selected_directly(config: cfg.Config) -> None:
    sel = select_tests([f("tests/unit/moe/test_moe.py"), f("tests/unit/v1/test_new.py", status="added")], config)
    assert sel.tests == ("tests/unit/moe/test_moe.py", "tests/unit/v1/test_new.py") and not sel.full


def test_removed_test_file_selects_nothing_but_its_renamed_copy_does(config: cfg.Config) -> None:
    sel = select_tests([f("tests/unit/test_gone.py", status="removed"), f("deepspeed/moe/layer.py"),
                        f("tests/unit/test_new.py", status="renamed", previous_path="tests/unit/test_old.py")],
                       config)
    assert sel.tests == ("tests/unit/moe", "tests/unit/test_new.py")


def test_changed_test_helper_runs_full_suite(config: cfg.Config) -> None:
    sel = select_tests([f("tests/unit/util.py"), f("deepspeed/moe/layer.py")], config)
    assert sel.full and "helper" in sel.reasons[0]


@pytest.mark.parametrize("name", ["tests/unit/test_$(curl evil).py", "tests/unit/test_a;rm -rf ~.py",
                                  "tests/unit/test_`id`.py", "tests/unit/test_x\n.py"])
def test_test_file_with_shell_metacharacters_is_never_selected(config: cfg.Config, name: str) -> None:
    sel = select_tests([f(name)], config)
    assert sel.full and sel.tests == ("tests/unit",)
    assert all(name not in t for t in sel.tests)
    # the reason quotes the name as one harmless code span
    assert "\n" not in sel.reasons[0] and sel.reasons[0].count("`") % 2 == 0


def test_too_many_test_paths_fall_back_to_full_suite(config: cfg.Config) -> None:
    files = [f(f"tests/unit/test_{i}.py") for i in range(4)]  # max_test_paths is 3
    sel = select_tests(files, config)
    assert sel.full and "max_test_paths" in sel.reasons[0]
    assert not select_tests(files[:3], config).full


def test_too_many_files_and_truncated_lists_run_full_suite(config: cfg.Config) -> None:
    files = [f(f"deepspeed/moe/m{i}.py") for i in range(10_000)]
    sel = select_tests(files, config)
    assert sel.full and "10000 changed files" in sel.reasons[0] and sel.changed == 10_000
    assert not select_tests(files[:3], config).full
    assert select_tests(files[:3], config, truncated=True).full
    assert select_tests(files[:3], config, max_files=2).full


def test_empty_file_list_runs_full_suite(config: cfg.Config) -> None:
    assert select_tests([], config).full


def test_code_span_neutralises_untrusted_text() -> None:
    assert code("a`b\nc") == "``a`b\\nc``"  # bot.report.markdown.code_span, cut to the limit
    assert len(code("x" * 1000)) <= 122
