"""`pg-bot config check --tree DIR`: rules.yaml's areas, tests, exemptions and CI paths against a real tree."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from bot import config as config_module
from bot.cli import main
from bot.config_check import check_tree, qualified_functions

TREE = {
    "setup.py": "",
    "deepspeed/moe/sharded_moe.py": "class MOELayer:\n    def forward(self):\n        pass\n",
    "deepspeed/inference/engine.py": "def init():\n    pass\n",
    "tests/unit/v1/moe/test_moe.py": "class TestMoE:\n    def test_a(self):\n        pass\n",
    "tests/unit/inference/test_engine.py": "def test_b():\n    pass\n",
}

GOOD = textwrap.dedent(
    """\
    version: 1
    exemptions:
      - path: deepspeed/moe/sharded_moe.py
        function: MOELayer.forward
        reason: the forward pass reduces over the world by design
    areas:
      - name: moe
        paths: [deepspeed/moe/**]
        tests: [tests/unit/v1/moe, "tests/unit/v1/moe/test_moe.py::TestMoE::test_a[1-2]"]
      - name: inference
        paths: [deepspeed/inference/**]
        tests: [tests/unit/inference/test_engine.py]
      - name: other
        paths: ["**"]
        tests: []
    ci:
      test_root: tests
      full_suite: [tests/unit]
      run_all_when: [setup.py]
    """
)

BAD = textwrap.dedent(
    """\
    version: 1
    exemptions:
      - path: deepspeed/moe/sharded_moe.py
        function: MOELayer.backward
        reason: a method this tree does not have
      - path: deepspeed/ragged/**
        reason: a folder this tree does not have
    areas:
      - name: moe
        paths: [deepspeed/moe/**, deepspeed/moe/sharded_moe.py]
        tests: [tests/unit/moe, "tests/unit/v1/moe/test_moe.py::TestMoE::test_c"]
      - name: inference
        paths: [deepspeed/moe/**, deepspeed/inference/v2/**]
        tests: [tests/unit/inference]
      - name: other
        paths: ["**"]
    ci:
      test_root: tests
      full_suite: [tests/unit, tests/nightly]
      run_all_when: [requirements/**]
    """
)


def make_tree(root: Path) -> Path:
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_config_that_fits_the_tree_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = make_tree(tmp_path / "tree")
    (tmp_path / "rules.yaml").write_text(GOOD)
    assert main(["config", "check", "--tree", str(tree), "--config", str(tmp_path / "rules.yaml")]) == 0
    assert "0 problem(s)" in capsys.readouterr().out


def test_every_path_glob_test_and_function_that_is_not_in_the_tree_is_reported_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = make_tree(tmp_path / "tree")
    rules = tmp_path / "rules.yaml"
    rules.write_text(BAD)
    assert main(["config", "check", "--tree", str(tree), "--config", str(rules)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:-1] == [
        f"{rules}:11: areas[0].tests[0]: area moe: test path `tests/unit/moe` does not exist",
        f"{rules}:11: areas[0].tests[1]: area moe: tests/unit/v1/moe/test_moe.py has no TestMoE.test_c",
        f"{rules}:13: areas[1].paths[0]: area inference: every file `deepspeed/moe/**` matches belongs to an "
        "earlier area (the first matching area wins)",
        f"{rules}:13: areas[1].paths[1]: area inference: `deepspeed/inference/v2/**` matches no file",
        f"{rules}:4: exemptions[0].function: `MOELayer.backward` is not defined in deepspeed/moe/sharded_moe.py "
        "matched by `deepspeed/moe/sharded_moe.py`",
        f"{rules}:6: exemptions[1].path: `deepspeed/ragged/**` matches no file",
        f"{rules}:19: ci.full_suite[1]: `tests/nightly` does not exist",
        f"{rules}:20: ci.run_all_when[0]: `requirements/**` matches no file",
    ]
    assert out[-1] == f"8 problem(s) in {rules} against {tree}"


def test_a_glob_through_a_symlinked_folder_is_explained(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "tree")
    (tree / "accelerator").mkdir()
    (tree / "accelerator/cpu.py").write_text("")
    os.symlink("../accelerator", tree / "deepspeed/accelerator")
    config = config_module.parse(GOOD.replace("run_all_when: [setup.py]", "run_all_when: [deepspeed/accelerator/**]"))
    [problem] = check_tree(config, tree)
    assert problem.where == "ci.run_all_when[0]"
    assert "`deepspeed/accelerator` is a symlink to `../accelerator`" in problem.message


def test_an_unparsable_test_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "tree")
    (tree / "tests/unit/v1/moe/test_moe.py").write_text("def broken(:\n")
    [problem] = check_tree(config_module.parse(GOOD), tree)
    assert problem.message == "area moe: tests/unit/v1/moe/test_moe.py cannot be parsed"


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", "--tree", str(tmp_path / "missing")]) == 2
    (tmp_path / "rules.yaml").write_text("version: 1\nareas: 3\n")
    assert main(["config", "check", "--tree", str(tmp_path), "--config", str(tmp_path / "rules.yaml")]) == 2
    assert "areas" in capsys.readouterr().err


def test_qualified_function_names_follow_the_exemption_spelling() -> None:
    source = textwrap.dedent(
        """\
        class A:
            def m(self):
                def inner():
                    pass
            if True:
                def conditional(self):
                    pass
        try:
            def f():
                pass
        except ImportError:
            def g():
                pass
        """
    )
    assert qualified_functions(source) == {"A", "A.m", "A.m.inner", "A.conditional", "f", "g"}


@pytest.mark.skipif(not os.environ.get("PG_BOT_DEEPSPEED"), reason="PG_BOT_DEEPSPEED is not set")
def test_the_shipped_rules_fit_the_deepspeed_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", "--tree", os.environ["PG_BOT_DEEPSPEED"],
                 "--config", str(config_module.default_path())]) == 0, capsys.readouterr().out
