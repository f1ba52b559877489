"""`[tool.pg-bot]` in pyproject.toml: found walking up from the checked files, precedence against rules.yaml,
errors with file, line and key, and the hardening rules.yaml's loader has (tests/test_config_hardening.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, find_config, load, parse_pyproject

GUARDED = (
    "import deepspeed.comm as dist\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
    "    dist.all_reduce(t, group=g)\n"
)
NO_PG105 = '[project]\nname = "demo"\n\n[tool.pg-bot]\nversion = 1\nrules.PG105.enabled = false\n'
NO_PG101 = "[tool.pg-bot]\nversion = 1\n\n[tool.pg-bot.rules.PG101]\nenabled = false\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "mod.py").write_text(GUARDED)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def codes(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    rc = main(["check", "--no-progress", *argv])
    return rc, re.findall(r": (PG\d{3}) ", capsys.readouterr().out)


def test_a_tool_pg_bot_table_is_the_configuration(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert codes(capsys, "pkg") == (1, ["PG101", "PG105"])
    (tree / "pyproject.toml").write_text(NO_PG105)
    assert codes(capsys, "pkg") == (1, ["PG101"])
    assert find_config(tree / "pkg" / "sub") == tree / "pyproject.toml"


def test_a_pyproject_without_the_table_is_passed_over(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pyproject.toml").write_text(NO_PG105)
    (tree / "pkg" / "pyproject.toml").write_text('[project]\nname = "pg-bot-like"\n[tool.ruff]\nline-length = 99\n')
    assert codes(capsys, "pkg/sub/mod.py") == (1, ["PG101"])


def test_the_nearest_folder_wins_whatever_the_format(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "rules.yaml").write_text("version: 1\nrules:\n  PG105: {enabled: false}\n")
    (tree / "pkg" / "pyproject.toml").write_text(NO_PG101)
    assert codes(capsys, "pkg") == (1, ["PG105"])  # pkg/pyproject.toml, not the rules.yaml above it
    (tree / "pkg" / "sub" / ".pg-bot.yaml").write_text("version: 1\n")
    assert codes(capsys, "pkg/sub") == (1, ["PG101", "PG105"])


def test_in_one_folder_yaml_wins_and_the_table_is_named_in_a_warning(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "pyproject.toml").write_text(NO_PG105)
    (tree / "rules.yaml").write_text("version: 1\nrules:\n  PG101: {enabled: false}\n")
    rc = main(["check", "pkg"])
    out, err = capsys.readouterr()
    assert rc == 1 and "PG105" in out and "PG101" not in out
    assert f"{tree / 'pyproject.toml'}: [tool.pg-bot] is ignored: rules.yaml in the same folder" in err


def test_the_warning_is_given_once_per_file(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pyproject.toml").write_text(NO_PG105)
    (tree / "rules.yaml").write_text("version: 1\n")
    for folder in (tree / "pkg", tree / "pkg" / "sub", tree):  # as the flake8 plugin loads it: per folder
        assert load(search_from=folder).source == str(tree / "rules.yaml")
    assert capsys.readouterr().err.count("[tool.pg-bot] is ignored") == 1


def test_config_option_wins_and_takes_a_pyproject(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pyproject.toml").write_text(NO_PG105)
    (tree / "other.toml").write_text(NO_PG101)
    assert codes(capsys, "pkg", "--config", "other.toml") == (1, ["PG105"])
    (tree / "plain.toml").write_text("[tool.black]\n")
    assert main(["check", "pkg", "--config", "plain.toml"]) == 2
    assert "plain.toml:1: no [tool.pg-bot] table" in capsys.readouterr().err


def test_fix_and_status_read_the_table_too(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pyproject.toml").write_text(NO_PG101 + "\n[tool.pg-bot.rules.PG105]\nenabled = false\n")
    assert main(["fix", "pkg"]) == 0
    assert capsys.readouterr().out == ""  # both rules off: nothing to rewrite
    (tree / "pyproject.toml").write_text(
        '[tool.pg-bot]\nversion = 1\n[[tool.pg-bot.areas]]\nname = "mine"\ntitle = "Mine"\npaths = ["pkg/**"]\n'
    )
    assert main(["status", "--source", ".", "--no-cache", "--format", "json"]) == 0
    assert '"mine"' in capsys.readouterr().out


UNKNOWN = """\
[project]
name = "demo"
description = \"\"\"
[tool.pg-bot.not-a-table]
colectives = 1
\"\"\"

[tool.pg-bot]
version = 1
colectives = ["all_reduce"]
exemptions = [
  { path = "a.py", reason = "short" },
]

[tool.pg-bot.rules.PG101]
enabled = false
bogus = 1

[[tool.pg-bot.areas]]
name = "a"
paths = ["a/**"]

[[tool.pg-bot.areas]]
name = "b"
paths = "b/**"
"""


def test_errors_name_file_line_and_key_as_written(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pyproject.toml").write_text(UNKNOWN)
    assert main(["check", "pkg"]) == 2
    err = capsys.readouterr().err
    path = tree / "pyproject.toml"
    assert f"{path}:10: unknown key `tool.pg-bot.colectives` (known: absent_groups, areas, ci, collectives" in err
    assert f"{path}:17: unknown key `tool.pg-bot.rules.PG101.bogus` (known: enabled, severity)" in err
    assert f"{path}:25: `tool.pg-bot.areas.1.paths`: 'b/**' is not of type 'array'" in err
    # a key inside an inline table has no line of its own: the line of the key that holds it
    assert f"{path}:11: `tool.pg-bot.exemptions.0.reason`: 'short' is too short" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[tool.pg-bot]\nrules = {}\n", "p.toml:1: `tool.pg-bot`: 'version' is a required property"),
        ("[tool]\nx = 1\npg-bot = 3\n", "p.toml:3: `tool.pg-bot` must be a table"),
        ("[tool.pg-bot]\nversion = 1\nversion = 2\n", "p.toml:3: not valid TOML: Cannot overwrite a value"),
        ("[tool.pg-bot]\nversion = 1\nx = [1,\n", "p.toml:4: not valid TOML"),
        ('[tool."pg-bot"]\nversion = 1\n"rul\\u0065s" = {PG101 = {enabled = 1}}\n',
         "p.toml:3: `tool.pg-bot.rules.PG101.enabled`: 1 is not of type 'boolean'"),
        ("[tool.pg-bot]\nversion = 1\nx = " + "[" * 40 + "]" * 40 + "\n", "p.toml:1: `tool.pg-bot` is nested more than"),
        ("[tool.pg-bot]\nversion = 1\nx = " + "[" * 2000 + "]" * 2000 + "\n", "p.toml:1: nested too deeply"),
        ("[tool.pg-bot]\n" + "a." * 40 + "b = 1\n", "p.toml:2: a dotted key or table header of more than 32 parts"),
    ],
)
def test_bad_tables(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_pyproject(text, "p.toml")
    assert expected in str(info.value)


def test_a_valid_table_matches_the_same_rules_yaml() -> None:
    from bot.config import parse

    toml = parse_pyproject('[tool.pg-bot]\nversion = 1\npredicate = {module = "m", name = "u", function = "p"}\n'
                           '[tool.pg-bot.ci]\nlabel = "ci/x"\n')
    yaml = parse("version: 1\npredicate: {module: m, name: u, function: p}\nci: {label: ci/x}\n")
    assert (toml.predicate_call, toml.ci, toml.areas) == (yaml.predicate_call, yaml.ci, yaml.areas)
    assert toml.predicate_import == "from m import u"


def test_the_walk_ignores_other_projects_pyproject_errors_only_when_they_never_mention_pg_bot(tree: Path) -> None:
    (tree / "pyproject.toml").write_text("this is [not toml\n")
    assert load(search_from=tree / "pkg").source.endswith("rules.yaml")  # no `pg-bot` in it: not ours to judge
    (tree / "pyproject.toml").write_text("[tool.pg-bot\nversion = 1\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml:1: not valid TOML"):
        load(search_from=tree / "pkg")


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(b"[tool.pg-bot]\nversion = 1\n[" + b"a." * 500_000 + b"b]\n", "pyproject.toml:3: a dotted key",
                     id="long-header"),  # minutes in tomllib: refused before it
        pytest.param(b"[tool.pg-bot]\nversion = 1\n" + b"".join(b"k%d." % i + b"x." * 300 + b"y = 1\n"
                                                                 for i in range(1700)),
                     "pyproject.toml:3: a dotted key", id="many-long-keys"),
        pytest.param(b"[tool.pg-bot]\nversion = 1\n# caf\xe9\n", "pyproject.toml:3: not UTF-8 text (byte 0xe9)",
                     id="not-utf8"),
        pytest.param(b"[tool.pg-bot]\nversion = 1\n#" + b"x" * (1 << 20) + b"\n", "pyproject.toml:1: too large",
                     id="too-large"),
        pytest.param(b"[tool.pg-bot]\nversion = 1\nx = " + b"{a=" * 5000 + b"1" + b"}" * 5000 + b"\n",
                     "pyproject.toml:1: nested too deeply", id="deep-inline"),
    ],
)
def test_hostile_pyprojects_are_line_numbered_errors_with_exit_2(tmp_path: Path, config: bytes, expected: str) -> None:
    resource = pytest.importorskip("resource")
    (tmp_path / "pyproject.toml").write_bytes(config)
    (tmp_path / "m.py").write_text("x = 1\n")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "check", "m.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert time.monotonic() - start < 30


def test_tomli_is_a_dependency_below_python_3_11() -> None:
    from bot.pyproject import tomllib  # tomli below 3.11

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    tomli = [d for d in project["dependencies"] if d.split(">")[0].split(";")[0].strip() == "tomli"]
    assert len(tomli) == 1 and re.search(r";\s*python_version\s*<\s*['\"]3\.11['\"]", tomli[0])
