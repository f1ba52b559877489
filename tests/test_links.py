"""Rule links come from one place: $PG_BOT_DOCS_URL, else the package's Project-URL "Documentation"."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot import links
from bot.cli import main

ROOT = Path(__file__).resolve().parents[1]
MINE = "https://docs.example.org/pg-bot/rules.html"


@pytest.fixture(autouse=True)
def fresh_metadata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(links.ENV_VAR, raising=False)
    links._project_urls.cache_clear()
    yield
    links._project_urls.cache_clear()


def test_the_environment_wins_over_the_package_metadata() -> None:
    page, warning = links.choose_page({links.ENV_VAR: MINE}, ["Documentation, https://a.example/rules.md"])
    assert (page, warning) == (MINE, None)


def test_the_metadata_documentation_url_is_the_default_whatever_the_label_case() -> None:
    urls = ["Homepage, https://h.example", "DOCUMENTATION , https://a.example/rules.md"]
    assert links.choose_page({links.ENV_VAR: ""}, urls) == ("https://a.example/rules.md", None)


def test_a_value_that_is_not_a_web_url_is_refused_with_a_warning() -> None:
    for bad in ("javascript:alert(1)", "https://x.example/a) [y](https://evil", "docs/rules.md"):
        page, warning = links.choose_page({links.ENV_VAR: bad}, ["Documentation, https://a.example/r.md"])
        assert page == "https://a.example/r.md"
        assert warning is not None and links.ENV_VAR in warning


def test_without_metadata_the_fallback_is_the_url_pyproject_declares() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert links.choose_page({}, []) == (declared["Documentation"], None)
    assert declared["Documentation"] == links.FALLBACK


def test_rule_url_is_the_page_at_the_rule_anchor() -> None:
    assert links.rule_url("PG105", MINE) == MINE + "#pg105"
    assert links.rule_url("PG105", MINE + "#top") == MINE + "#pg105"


def test_the_anchor_exists_in_the_shipped_rule_reference() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for code in ("PG101", "PG105", "PG108"):
        anchor = links.rule_url(code, "https://x.example/rules.md").split("#")[1]
        assert f'<a id="{anchor}"></a>' in text


def test_installed_metadata_is_read_through_importlib_metadata(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "pg_bot-9.9.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pg-bot\nVersion: 9.9\n"
                                   "Project-URL: Documentation, https://pkg.example/rules.md\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert links.rules_page() == "https://pkg.example/rules.md"
    monkeypatch.setenv(links.ENV_VAR, MINE)
    assert links.rules_page() == MINE


def test_sarif_help_and_information_uris_follow_the_setting(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(links.ENV_VAR, MINE)
    main(["check", "--format", "sarif", str(ROOT / "examples" / "tp_layer.py")])
    driver = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == MINE
    assert {r["helpUri"] for r in driver["rules"]} == {f"{MINE}#{r['id'].lower()}" for r in driver["rules"]}


def test_review_comments_and_summary_link_the_setting(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(links.ENV_VAR, MINE)
    pr = ROOT / "examples" / "pr"
    main(["review", "--diff", str(pr / "change.patch"), "--source", str(pr / "base"), "--dry-run",
          "--format", "json"])
    out = capsys.readouterr().out
    targets = set(re.findall(r"\]\((https?://[^)\s]+)\)", out))
    rule_targets = {t for t in targets if re.search(r"#pg\d{3}$", t)}
    assert rule_targets and all(t.startswith(MINE + "#") for t in rule_targets)
    assert "deepspeedai/pg-bot" not in out
