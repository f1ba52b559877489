"""Per-file failures never escape: absurd nesting, LibCST failing or not round-tripping, a failed write. And
removing a predicate copy keeps the comments above it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot import config as config_module
from bot.analyze import analyze_source
from bot.cli import main
from bot.fix import explain, fix_source, suggestion_for
from bot.model import CopyPayload

CONFIG = config_module.load()
GOOD = (
    "import deepspeed.comm as dist\n\n\ndef f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(group=g) > 1:\n        dist.all_reduce(t, group=g)\n"
)


def deep(n: int = 500) -> str:
    """A guard under `n` nested `not`s, then a partial guard: what made an --unsafe-fixes run stop."""
    return (
        "import deepspeed.comm as dist\n\n\ndef f(t, g=None):\n"
        f"    if {'not ' * n}(g is None or dist.get_world_size(group=g) <= 1):\n        dist.all_reduce(t, group=g)\n"
        "    if g is None:\n        return t\n    dist.all_reduce(t, group=g)\n"
    )


@pytest.mark.parametrize("unsafe", [False, True])
def test_deep_nesting_is_a_refusal_not_an_exception(unsafe: bool) -> None:
    source = deep()
    findings = analyze_source("m.py", source, CONFIG).findings
    # an even number of `not`s: the body runs when g is None, so its all_reduce is unguarded (PG105) too
    assert {f.code for f in findings} == {"PG102", "PG103", "PG105"}
    result = fix_source(source, findings, CONFIG, unsafe=unsafe)
    assert {f.code for f, _ in result.refused} | {f.code for f in result.applied} == {"PG102", "PG103", "PG105"}
    assert all(why for _, why in result.refused)
    if not unsafe:
        assert result.source == source
    for finding in findings:  # the reviewer's entry points do not raise either
        suggestion_for(source, finding, CONFIG)
        assert explain(source, finding, CONFIG)


def test_a_run_goes_on_past_a_file_that_cannot_be_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a_good.py").write_text(GOOD)
    (pkg / "b_deep.py").write_text(deep())
    (pkg / "c_good.py").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--write", "--unsafe-fixes", "--show-refused", "pkg"]) == 0
    err = capsys.readouterr().err
    assert "pg_utils.is_parallel(g)" in (pkg / "a_good.py").read_text()
    assert "pg_utils.is_parallel(g)" in (pkg / "c_good.py").read_text()  # the file after the bad one too
    # LibCST fails on it (a RecursionError, or a KeyError it raises while handling one): reported per finding
    assert "pkg/b_deep.py:5:" in err and "PG102 not fixed: internal error" in err
    assert "Traceback" not in err


def test_an_unexpected_fixer_crash_costs_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import bot.commands.fix as fix_command

    real = fix_command.fix_source

    def flaky(source: str, *args: object, **kwargs: object) -> object:
        if "boom" in source:
            raise KeyError(object())  # a KeyError holding a node: its str() must not be relied on
        return real(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fix_command, "fix_source", flaky)
    (tmp_path / "a.py").write_text(GOOD + "# boom\n")
    (tmp_path / "b.py").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--write", "."]) == 1  # b.py is fixed; a.py could not be: not a clean run
    err = capsys.readouterr().err
    assert "a.py: cannot fix: KeyError" in err and "pg_utils" in (tmp_path / "b.py").read_text()
    assert (tmp_path / "a.py").read_text() == GOOD + "# boom\n"


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.py").write_text(GOOD)
    (tmp_path / "a.py").chmod(0o640)
    monkeypatch.chdir(tmp_path)

    def refuse(*_: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", refuse)
        assert main(["fix", "--write", "a.py"]) == 1  # not written: the run is not clean
    assert "a.py: cannot write" in capsys.readouterr().err
    assert (tmp_path / "a.py").read_text() == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]  # no temporary file left behind
    assert main(["fix", "--write", "a.py"]) == 0
    assert "pg_utils" in (tmp_path / "a.py").read_text() and (tmp_path / "a.py").stat().st_mode & 0o777 == 0o640


# ------------------------------------------------------------------ LibCST must reproduce the file exactly


@pytest.mark.parametrize(
    "source",
    [GOOD + "\r", GOOD.replace("\ndef f", "\n\x0cdef f")],  # LibCST drops a final lone CR, a form feed before code
    ids=["final-lone-cr", "form-feed"],
)
def test_a_file_libcst_does_not_reproduce_byte_for_byte_is_not_rewritten(source: str) -> None:
    findings = analyze_source("m.py", source, CONFIG).findings
    assert findings
    result = fix_source(source, findings, CONFIG)
    assert result.source == source and not result.applied
    assert "does not reproduce this file byte for byte" in result.refused[0][1]


# ------------------------------------------------------------------ PG107: comments above a removed copy stay

COPY = '''import deepspeed.comm as dist


def first(t):
    return t


# Copyright (c) the authors. Licensed under Apache-2.0.
# TODO(someone): move the parallel helpers to one module.

def _tp_active(group):
    """A copy of the predicate."""
    # an inner comment goes with the copy
    return group is not None and dist.get_world_size(group=group) > 1


def forward(t, group=None):
    if _tp_active(group):
        dist.all_reduce(t, group=group)
    return t


class Layer:
    def run(self):
        return self._active(self.mp_group)

    # Layer-level note that must stay.
    def _active(self, group):
        return group is not None and dist.get_world_size(group=group) > 1
    # trailing note of the class
'''


def test_removing_a_copy_keeps_the_comment_block_above_it() -> None:
    findings = [f for f in analyze_source("m.py", COPY, CONFIG).findings if f.code == "PG107"]
    assert {f.payload.name for f in findings if isinstance(f.payload, CopyPayload)} == {"_tp_active", "_active"}
    result = fix_source(COPY, findings, CONFIG)
    assert len(result.applied) == 2, result.refused
    new = result.source
    assert "def _tp_active" not in new and "def _active" not in new and "inner comment" not in new
    assert (
        "    return t\n\n\n# Copyright (c) the authors. Licensed under Apache-2.0.\n"
        "# TODO(someone): move the parallel helpers to one module.\n\n\ndef forward(t, group=None):\n"
    ) in new
    assert "        return pg_utils.is_parallel(self.mp_group)\n\n    # Layer-level note that must stay.\n" in new
    assert "# trailing note of the class" in new
    compile(new, "m.py", "exec")  # the result is valid Python (our own output, never run)
    assert fix_source(new, analyze_source("m.py", new, CONFIG).findings, CONFIG).source == new
