"""`pg-bot fix` creates the predicate module (and its unit test) when the fixed tree imports it but lacks it."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot import config as config_module
from bot.cli import main
from bot.migrate.predicate import MODULE_TEMPLATE, TEST_TEMPLATE, import_root, imports_predicate, render

GUARDED = textwrap.dedent(
    """\
    import deepspeed.comm as dist


    def expert_all_reduce(tensor, ep_group=None):
        if ep_group is not None and dist.get_world_size(group=ep_group) > 1:
            dist.all_reduce(tensor, group=ep_group)
        return tensor
    """
)
# A torch-free deepspeed.comm: a group is any object with a `size` (as get_world_size would answer).
FAKE_COMM = textwrap.dedent(
    """\
    def get_world_size(group=None):
        return 8 if group is None else group.size


    def all_reduce(tensor, group=None):
        tensor.append(group)
    """
)


def ds_tree(root: Path, *, comm: bool = True, test_base: bool = True, guarded: str = GUARDED) -> Path:
    files = {"setup.py": "", "deepspeed/__init__.py": "", "deepspeed/moe/__init__.py": "",
             "deepspeed/moe/sharded_moe.py": guarded}
    if comm:
        files["deepspeed/comm/__init__.py"] = FAKE_COMM
    if test_base:
        files["tests/unit/__init__.py"] = ""
        files["tests/unit/common.py"] = "class DistributedTest:\n    world_size = 2\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_fix_write_creates_the_predicate_module_and_its_unit_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = ds_tree(tmp_path)
    monkeypatch.chdir(tree)
    assert main(["fix", "--write", "deepspeed"]) == 0
    err = capsys.readouterr().err
    assert "created deepspeed/comm/pg_utils.py" in err and "created tests/unit/comm/test_pg_utils.py" in err

    module = (tree / "deepspeed/comm/pg_utils.py").read_text()
    assert module.startswith(
        "# Copyright (c) Microsoft Corporation.\n# SPDX-License-Identifier: Apache-2.0\n\n# DeepSpeed Team\n"
    )
    assert "import deepspeed.comm as dist" in module and "def is_parallel(group" in module
    assert "**absent**" in module and "**world**" in module  # both meanings of None are documented
    test = (tree / "tests/unit/comm/test_pg_utils.py").read_text()
    assert "from unit.common import DistributedTest" in test and "world_size = [1, 2]" in test
    assert "dist.new_group(ranks=[0])" in test  # a group that excludes rank 1


def test_the_fixed_tree_imports_and_the_created_predicate_answers_each_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the predicate module was created, `from deepspeed.comm import pg_utils` failed on import.
    tree = ds_tree(tmp_path)
    monkeypatch.chdir(tree)
    assert main(["fix", "--write", "deepspeed"]) == 0
    assert "from deepspeed.comm import pg_utils" in (tree / "deepspeed/moe/sharded_moe.py").read_text()
    probe = textwrap.dedent(
        """\
        from types import SimpleNamespace as G
        from deepspeed.comm import pg_utils
        from deepspeed.moe.sharded_moe import expert_all_reduce
        states = [None, G(size=-1), G(size=1), G(size=2)]
        print([pg_utils.is_parallel(g) for g in states], [len(expert_all_reduce([], g)) for g in states])
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "[False, False, False, True] [0, 0, 0, 1]"


def test_an_existing_predicate_module_is_never_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = ds_tree(tmp_path)
    (tree / "deepspeed/comm/pg_utils.py").write_text("# ours\n")
    monkeypatch.chdir(tree)
    assert main(["fix", "--write", "deepspeed"]) == 0
    assert (tree / "deepspeed/comm/pg_utils.py").read_text() == "# ours\n"
    assert not (tree / "tests/unit/comm").exists()
    assert "created" not in capsys.readouterr().err


def test_nothing_is_created_when_the_predicate_comes_from_an_installed_deepspeed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = ds_tree(tmp_path, comm=False)  # a project that uses deepspeed.comm but does not hold it
    monkeypatch.chdir(tree)
    assert main(["fix", "--write", "deepspeed"]) == 0
    assert "pg_utils.is_parallel" in (tree / "deepspeed/moe/sharded_moe.py").read_text()
    assert not (tree / "deepspeed/comm").exists()
    assert "create" not in capsys.readouterr().err


def test_without_a_distributed_test_base_only_the_module_is_created_and_the_reason_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = ds_tree(tmp_path, test_base=False)
    monkeypatch.chdir(tree)
    assert main(["fix", "--write", "deepspeed"]) == 0
    err = capsys.readouterr().err
    assert (tree / "deepspeed/comm/pg_utils.py").is_file() and not (tree / "tests").exists()
    assert "test_pg_utils.py: not created: the tree has no tests/unit/common.py" in err


def test_diff_mode_prints_a_patch_that_creates_the_module_and_check_fails_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Already migrated (imports the predicate, no guard left) but the module is missing: only the creation.
    migrated = "from deepspeed.comm import pg_utils\n\n\ndef f(g):\n    return pg_utils.is_parallel(g)\n"
    tree = ds_tree(tmp_path, guarded=migrated)
    monkeypatch.chdir(tree)
    assert main(["fix", "deepspeed"]) == 0
    captured = capsys.readouterr()
    assert "--- /dev/null\n+++ b/deepspeed/comm/pg_utils.py\n@@ -0,0 +1," in captured.out
    assert "would create deepspeed/comm/pg_utils.py" in captured.err
    assert not (tree / "deepspeed/comm/pg_utils.py").exists()
    assert main(["fix", "--check", "deepspeed"]) == 1

    # The printed diff is a complete patch: git applies it and the result is what --write makes.
    patch = tmp_path / "change.patch"
    patch.write_text(captured.out)
    subprocess.run(["git", "apply", str(patch)], cwd=tree, check=True)
    applied = (tree / "deepspeed/comm/pg_utils.py").read_text()
    (tree / "deepspeed/comm/pg_utils.py").unlink()
    (tree / "tests/unit/comm/test_pg_utils.py").unlink()
    assert main(["fix", "--write", "deepspeed"]) == 0
    assert (tree / "deepspeed/comm/pg_utils.py").read_text() == applied
    assert main(["fix", "--check", "deepspeed"]) == 0


def test_templates_render_for_the_configured_predicate() -> None:
    config = config_module.parse("version: 1\npredicate: {module: deepspeed.comm, name: groups, function: active}\n")
    module, test = render(MODULE_TEMPLATE, config), render(TEST_TEMPLATE, config)
    ast.parse(module)
    ast.parse(test)
    assert "def active(group: Optional[Any]) -> bool:" in module
    assert "from deepspeed.comm import groups" in test and "groups.active(None) is False" in test
    assert "$" not in module + test


def test_imports_predicate_spellings() -> None:
    config = config_module.load()
    assert imports_predicate("from deepspeed.comm import pg_utils\n", config)
    assert imports_predicate("from deepspeed.comm import get_rank, pg_utils as pgu\n", config)
    assert imports_predicate("import deepspeed.comm.pg_utils\n", config)
    assert imports_predicate("from deepspeed.comm.pg_utils import is_parallel\n", config)
    assert not imports_predicate("from pg_utils import is_parallel\n", config)  # pg-bot's reference package
    assert not imports_predicate("# from deepspeed.comm import pg_utils\n", config)
    assert not imports_predicate("from deepspeed.comm import pg_utils(\n", config)  # does not parse


def test_import_root(tmp_path: Path) -> None:
    tree = ds_tree(tmp_path)
    assert import_root(tree / "deepspeed/moe/sharded_moe.py") == (tree.resolve(), "deepspeed.moe.sharded_moe")
    assert import_root(tree / "deepspeed/moe/__init__.py") == (tree.resolve(), "deepspeed.moe")
    assert import_root(tree / "setup.py") is None
