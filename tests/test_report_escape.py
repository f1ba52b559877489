"""Hostile file names and messages in every output format of `check`: nothing a terminal or GitHub's
runner would act on gets through, one finding stays one line, and the name still reads back exactly where
the format allows it (json, sarif, annotations)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from bot.analyze import RULES
from bot.cli import main
from bot.model import FileError, FileResult, Finding, Span
from bot.report import formats
from bot.report.escape import line_start, printable

GUARDED = (
    "import deepspeed.comm as dist\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
)
INJECTED = "b\n::error file=x.py,line=1::pwned"
OLD_STYLE = "c##[set-output name=x]y"
# What GitHub's runner acts on: a line starting with `::` (after blanks), or `##[` anywhere in a line.
COMMAND_AT_START = ("::", " ::", "\t::")


def runner_commands(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def finding(path: str, message: str = "hand-rolled guard") -> Finding:
    return Finding(code="PG101", message=message, path=path, span=Span(3, 7, 3, 51))


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("pkg/a.py", "pkg/a.py"),
        ("pkg/b\n::error x::y.py", "pkg/b\\n::error x::y.py"),
        ("a\rb\tc\x1b[31m.py", "a\\rb\\tc\\x1b[31m.py"),
        ("evil\u202egnp.py", "evil\\u202egnp.py"),  # a bidi override would reorder the line on screen
        ("line\u2028sep.py", "line\\u2028sep.py"),
        ("bad\udcff.py", "bad\\udcff.py"),  # an undecodable byte of a file name
        ("x##[error]y.py", "x##\\x5berror]y.py"),
        ("back\\slash.py", "back\\slash.py"),
        ("café.py", "café.py"),
    ],
)
def test_printable(raw: str, shown: str) -> None:
    assert printable(raw) == shown
    assert "\n" not in printable(raw) and "\r" not in printable(raw)


def test_line_start_escapes_a_leading_workflow_command() -> None:
    assert line_start("::error file=x::y.py") == "\\x3a:error file=x::y.py"
    assert line_start("  ::add-mask::y.py") == "  \\x3a:add-mask::y.py"
    assert line_start("pkg/::error::y.py") == "pkg/::error::y.py"  # not at the start: inert


@pytest.mark.parametrize("name", [INJECTED, OLD_STYLE, "::warning::z", "q\x1b]8;;http://e.vil\x07r"])
def test_text_output_keeps_one_finding_per_line_and_no_command(name: str) -> None:
    results = [FileResult(name, [finding(name, "quotes `a\nb`")]), FileResult(name, error=FileError(name, "x\n::error::y"))]
    out = formats.text(results)
    assert len(out.splitlines()) == 2
    assert runner_commands(out) == []
    assert "\x1b" not in out and "\x07" not in out


@pytest.mark.parametrize("name", [INJECTED, OLD_STYLE, "d%0Ae,f:g.py"])
def test_annotations_escape_what_the_runner_unescapes(name: str) -> None:
    out = formats.github([FileResult(name, [finding(name, "m ##[error]n\r\n::x")]), FileResult(name, error=FileError(name, "e"))])
    lines = out.splitlines()
    assert len(lines) == 2 and all(line.startswith(("::error file=", "::warning file=")) for line in lines)
    prop = lines[0].split("file=", 1)[1].split(",line=", 1)[0]
    # The runner undoes %0D, %0A, %3A, %2C and %25 in a property: the annotation lands on the real file.
    undone = prop.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
    assert undone == name.replace("##[", "##\\x5b")
    data = lines[0].split("::", 2)[2]
    assert "\n" not in data and "##[" not in data


def test_json_and_sarif_round_trip_a_hostile_name_without_a_command() -> None:
    name = INJECTED + OLD_STYLE + "\udcff"
    results = [FileResult(name, [finding(name)]), FileResult(name + "2", error=FileError(name + "2", "e"))]
    as_json = formats.as_json(results)
    assert runner_commands(as_json) == [] and as_json.isascii()
    assert json.loads(as_json)["findings"][0]["path"] == name
    sarif = formats.sarif(results, RULES)
    assert runner_commands(sarif) == []
    run = json.loads(sarif)["runs"][0]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert "\n" not in uri and "#" not in uri and " " not in uri
    assert unquote(uri, errors="surrogateescape") == name


def test_sarif_uris_of_ordinary_paths_are_unchanged() -> None:
    sarif = json.loads(formats.sarif([FileResult("deepspeed/moe/layer.py", [finding("deepspeed/moe/layer.py")])], RULES))
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deepspeed/moe/layer.py"


@pytest.mark.skipif(sys.platform == "win32", reason="such file names are POSIX-only")
@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_check_on_hostile_file_names_through_the_cli(tmp_path: Path, fmt: str) -> None:
    # A real run, with a strict UTF-8 stdout as on a GitHub runner: an undecodable name must not crash it.
    for name in (INJECTED, OLD_STYLE, "::error file=z::w", os.fsdecode(b"bad\xff")):
        (tmp_path / f"{name}.py").write_text(GUARDED)
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "check", ".", "--format", fmt], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False, env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if fmt == "github":  # exactly our four commands, each one line
        assert len(lines) == 4 and all(line.startswith("::error file=") and "##[" not in line for line in lines)
    else:
        assert runner_commands(proc.stdout) == []
    if fmt == "text":  # four findings, one line each, and the closing line
        assert len(lines) == 5 and lines[-1].startswith("Found 4 findings (")


def test_fix_output_names_hostile_files_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / f"{INJECTED}.py").write_text(GUARDED)
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "."]) == 0
    out, err = capsys.readouterr()
    assert runner_commands(out) == [] and runner_commands(err) == []
    assert "+++ b/b\\n::error file=x.py,line=1::pwned.py" in out
