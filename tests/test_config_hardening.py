"""Hostile rules.yaml files: every one is a `path:line: message` error with exit 2, and quickly.

Each case that used to exhaust memory or recurse forever runs in a child process with 1 GiB of address
space and a timeout, so a regression fails here instead of taking the machine down.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load, parse, path_matches


def billion_laughs() -> str:
    """Nine levels of nine aliases: under 600 bytes of YAML, 9**9 scalars once expanded."""
    lines = ["version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def check_in_child(tmp_path: Path, config: bytes) -> subprocess.CompletedProcess[str]:
    resource = pytest.importorskip("resource")
    (tmp_path / "rules.yaml").write_bytes(config)
    (tmp_path / "m.py").write_text("x = 1\n")
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "check", "m.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(billion_laughs().encode(), "rules.yaml:2: YAML anchors and aliases", id="billion-laughs"),
        pytest.param(b"version: 1\nareas: &a\n  - name: x\n    paths: *a\n", "rules.yaml:2: YAML anchors and aliases",
                     id="recursive-alias"),
        pytest.param(b"version: 1\n# caf\xe9\n", "rules.yaml:2: not UTF-8 text (byte 0xe9)", id="not-utf8"),
        pytest.param(b"version: 1\nrules:\n  PG101: {enabled: false}\n  PG101: {enabled: true}\n",
                     "rules.yaml:4: duplicate key `PG101` (first given on line 3)", id="duplicate-key"),
        pytest.param(b"version: 1\nci: {label: a\x01b}\n", "rules.yaml:2: not valid YAML: character #x0001", id="control-char"),
        pytest.param(b"version: 1\n? [a, b]\n: 1\n", "rules.yaml:2: keys must be plain names", id="complex-key"),
        pytest.param(b"version: 1\n<<: {ci: {label: x}}\n", "rules.yaml:2: keys must be plain names", id="merge-key"),
        pytest.param(b"version: 1\nx: " + b"[" * 40 + b"]" * 40 + b"\n", "rules.yaml:2: nested more than", id="deep"),
    ],
)
def test_bad_configs_are_line_numbered_errors_with_exit_2(tmp_path: Path, config: bytes, expected: str) -> None:
    start = time.monotonic()
    proc = check_in_child(tmp_path, config)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert time.monotonic() - start < 30


def test_a_duplicate_is_named_even_within_one_line() -> None:
    with pytest.raises(ConfigError, match=r"r.yaml:2: duplicate key `enabled` \(first given on line 2\)"):
        parse("version: 1\nrules: {PG101: {enabled: true, enabled: false}}\n", "r.yaml")


@pytest.mark.timeout(30)
def test_a_glob_with_many_stars_is_fast() -> None:
    # A backtracking regex takes seconds (and grows exponentially with the stars) on this pair.
    pattern, path = "*a" * 30 + "b", "a" * 60
    start = time.monotonic()
    for _ in range(20):
        assert not path_matches(path, pattern)
    assert time.monotonic() - start < 1.0
    assert path_matches("a" * 59 + "b", pattern)


@pytest.mark.timeout(30)
def test_a_config_with_such_a_glob_keeps_check_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = "*a" * 60 + "b"
    (tmp_path / "rules.yaml").write_text(
        f"version: 1\nexemptions:\n  - path: '{pattern}'\n    reason: hostile glob from a policy file\n"
    )
    (tmp_path / ("a" * 100 + ".py")).write_text(
        "import deepspeed.comm as dist\ndef f(t, g=None):\n    if g is not None and dist.get_world_size(g) > 1:\n"
        "        dist.all_reduce(t, group=g)\n"
    )
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    assert main(["check", "."]) == 1
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("deepspeed/moe/**", "deepspeed/moe/layer.py", True),
        ("deepspeed/moe/**", "deepspeed/moe", False),
        ("deepspeed/moe", "deepspeed/moe/layer.py", True),  # a bare folder matches below it
        ("**/stage3.py", "stage3.py", True),
        ("**/stage3.py", "deepspeed/runtime/zero/stage3.py", True),
        ("**/stage3.py", "deepspeed/runtime/zero/xstage3.py", False),
        ("deepspeed/*/layer.py", "deepspeed/moe/layer.py", True),
        ("deepspeed/*/layer.py", "deepspeed/moe/sub/layer.py", False),
        ("deepspeed/**/layer.py", "deepspeed/layer.py", True),
        ("deepspeed/**/layer.py", "deepspeed/a/b/layer.py", True),
        ("deepspeed/**layer.py", "deepspeed/a/b_layer.py", True),
        ("stage?.py", "stage3.py", True),
        ("stage?.py", "stage/.py", False),  # `?` stays within a folder name
        ("tests/conftest.py", "tests/conftest.py", True),
        ("tests/conftest.py", "tests/conftest.pyc", False),
        ("[ab].py", "[ab].py", True),  # only *, ** and ? are special
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert path_matches(path, pattern) is expected


def test_glob_length_is_capped_by_the_schema() -> None:
    with pytest.raises(ConfigError, match=r"r.yaml:5: `areas.0.paths.0`: .* is too long"):
        parse("version: 1\nareas:\n  - name: x\n    paths:\n      - '" + "a" * 300 + "'\n", "r.yaml")


def test_max_file_bytes_is_validated_and_read() -> None:
    with pytest.raises(ConfigError, match=r"r.yaml:2: `max_file_bytes`"):
        parse("version: 1\nmax_file_bytes: 10\n", "r.yaml")
    assert parse("version: 1\nmax_file_bytes: 4096\n", "r.yaml").max_file_bytes == 4096
    assert load().max_file_bytes == 2 * 1024 * 1024


@pytest.mark.timeout(20)
def test_a_config_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    mkfifo = getattr(__import__("os"), "mkfifo", None)
    if mkfifo is None:
        pytest.skip("no FIFOs here")
    mkfifo(tmp_path / "rules.yaml")
    with pytest.raises(ConfigError, match=r"rules.yaml:1: not a regular file \(a named pipe\)"):
        load(tmp_path / "rules.yaml")
