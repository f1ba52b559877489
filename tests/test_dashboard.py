"""The dashboard page's content, parsed back as HTML: table rows, chart, a link to every site and rule, the data
files, inert messages, and the same bytes for the same status.

``Page`` (an html.parser reader) is also used on the DOM a real browser dumps, in test_dashboard_browser.py.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_track_history import Repo, module

from bot import config as config_module
from bot import links
from bot.cli import main
from bot.model import FileResult, Finding, Span
from bot.track.dashboard import DATA_FILES, render_html, site_url
from bot.track.status import FileSummary, tally

SHA = "0123456789abcdef0123456789abcdef01234567"


class Page(HTMLParser):
    """Rows of table#status (cell texts), images, links, the classes of the state cells, the texts of <code>
    elements, every tag seen, and any scripts."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.state_classes: list[str] = []
        self.images: list[dict[str, str]] = []
        self.links: list[tuple[str, str]] = []
        self.codes: list[str] = []
        self.tags: set[str] = set()
        self.scripts = 0
        self._code: list[str] | None = None
        self._in_table = False
        self._cell: list[str] | None = None
        self._link: tuple[str, list[str]] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        if tag == "code":
            self._code = []
        if tag == "table" and a.get("id") == "status":
            self._in_table = True
        elif tag == "tr" and self._in_table:
            self.rows.append([])
        elif tag in ("td", "th") and self._in_table:
            self._cell = []
            if "state" in a.get("class", "").split():
                self.state_classes.append(a["class"])
        elif tag == "img":
            self.images.append(a)
        elif tag == "a":
            self._link = (a.get("href", ""), [])
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code is not None:
            self.codes.append("".join(self._code))
            self._code = None
        if tag == "table":
            self._in_table = False
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "a" and self._link is not None:
            self.links.append((self._link[0], "".join(self._link[1])))
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._code is not None:
            self._code.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._link is not None:
            self._link[1].append(data)


def summary(path: str, lines: list[int], migrated: int = 0, message: str = "guard here") -> FileSummary:
    findings = [Finding(code="PG101", message=message, path=path, span=Span(n, 7, n, 40)) for n in lines]
    return FileSummary.from_result(FileResult(path=path, findings=findings, migrated=migrated))


DOCS = "https://docs.example.org/pg-bot/rules.html"


def html_for(*summaries: FileSummary, **kwargs: object) -> str:
    status = tally(summaries, config_module.load())
    kwargs.setdefault("rules_page", DOCS)
    return render_html(status, repo="org/ds", sha=SHA, **kwargs)  # type: ignore[arg-type]


def page_for(*summaries: FileSummary, **kwargs: object) -> Page:
    return Page(html_for(*summaries, **kwargs))


def test_table_rows_match_the_counts() -> None:
    page = page_for(
        summary("deepspeed/moe/layer.py", [6, 11], migrated=1),
        summary("deepspeed/runtime/zero/stage3.py", [], migrated=2),
    )
    header, *body = page.rows
    assert header == ["Area", "Remaining", "Migrated", "%", "State", "Files to look at"]
    by_area = {r[0]: r[1:] for r in body}
    assert by_area["MoE"] == ["2 (PG101 2)", "1", "33%", "in progress", "deepspeed/moe/layer.py (2)"]
    assert by_area["ZeRO model-parallel reductions"][:4] == ["0", "2", "100%", "done"]
    assert by_area["Total"][:3] == ["2", "3", "60%"]
    assert "state state-in-progress" in page.state_classes and "state state-done" in page.state_classes
    assert page.scripts == 0


def test_every_remaining_site_links_to_its_line_at_the_commit() -> None:
    page = page_for(summary("deepspeed/moe/layer.py", [6, 11]), summary("deepspeed/moe/my file.py", [3]))
    site_links = [(h, t) for h, t in page.links if "/org/ds/blob/" in h]
    assert site_links == [
        (f"https://github.com/org/ds/blob/{SHA}/deepspeed/moe/layer.py#L6", "deepspeed/moe/layer.py:6"),
        (f"https://github.com/org/ds/blob/{SHA}/deepspeed/moe/layer.py#L11", "deepspeed/moe/layer.py:11"),
        (f"https://github.com/org/ds/blob/{SHA}/deepspeed/moe/my%20file.py#L3", "deepspeed/moe/my file.py:3"),
    ]
    assert (f"https://github.com/org/ds/commit/{SHA}", SHA[:12]) in page.links
    assert site_url("o/n", SHA, "a.py", 4, "https://ghe.example.com/") == f"https://ghe.example.com/o/n/blob/{SHA}/a.py#L4"


def test_text_from_the_code_is_escaped() -> None:
    page = page_for(summary("deepspeed/moe/x.py", [1], message="<script>alert(1)</script> & more"))
    assert page.scripts == 0
    html = render_html(tally([summary("deepspeed/moe/x.py", [1], message="<b>&")], config_module.load()),
                       repo="org/ds", sha=SHA)
    assert "&lt;b&gt;&amp;" in html


def test_chart_is_referenced_only_when_there_is_one() -> None:
    with_chart = page_for(summary("a.py", [1]))
    assert [i["src"] for i in with_chart.images] == ["burndown.png"]
    assert with_chart.images[0]["alt"]
    assert page_for(summary("a.py", [1]), chart=None).images == []


def test_done_migration_says_so() -> None:
    html = html_for(summary("deepspeed/moe/layer.py", [], migrated=3))
    page = Page(html)
    rows = {r[0]: r[1:] for r in page.rows[1:]}
    assert rows["MoE"][:4] == ["0", "3", "100%", "done"]
    assert not [h for h, _ in page.links if "/org/ds/blob/" in h]
    assert "the migration is done" in html


def test_an_area_with_no_sites_at_all_reads_no_sites_not_done() -> None:
    page = page_for(summary("deepspeed/moe/layer.py", [], migrated=3), summary("deepspeed/launcher/x.py", [2]))
    rows = {r[0]: r[1:] for r in page.rows[1:]}
    assert rows["MoE"][3] == "done"
    assert rows["Other"][3] == "not started"
    assert rows["AutoTP layers"][:4] == ["0", "0", "–", "no sites"]
    assert page.state_classes.count("state state-no-sites") == len(rows) - 3  # all but MoE, Other and Total
    # nothing found anywhere: not "done" either
    html = html_for(summary("deepspeed/moe/layer.py", []))
    assert "the migration is done" not in html and "no sites were found" in html


def test_messages_render_their_code_spans_and_nothing_else() -> None:
    message = ("guard `g is not None and get_world_size(g) > 1` <b>bold</b> *em* [link](https://evil.example) "
               "&amp; `<script>x</script>`")
    html = html_for(summary("deepspeed/moe/x.py", [1], message=message))
    page = Page(html)
    assert "g is not None and get_world_size(g) > 1" in page.codes
    assert "<script>x</script>" in page.codes  # as text inside <code>, not an element
    assert page.scripts == 0 and "em" not in page.tags
    assert "`" not in html.split('<ul class="sites">', 1)[1].split("</ul>", 1)[0]
    assert "&lt;b&gt;bold&lt;/b&gt; *em* [link](https://evil.example) &amp;amp;" in html
    assert not [h for h, _ in page.links if "evil" in h]


def test_rule_codes_link_to_their_documentation() -> None:
    page = page_for(summary("deepspeed/moe/x.py", [1, 2]), summary("deepspeed/launcher/y.py", [3]))
    rule_links = [(h, t) for h, t in page.links if t == "PG101"]
    # once per area row that has the rule, and once per site
    assert rule_links == [(f"{DOCS}#pg101", "PG101")] * (2 + 3)
    assert (DOCS, "the rule reference") in page.links


def test_rule_links_follow_the_configured_docs_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(links.ENV_VAR, "https://mirror.example/rules.md")
    page = page_for(summary("deepspeed/moe/x.py", [1]), rules_page=None)
    assert ("https://mirror.example/rules.md#pg101", "PG101") in page.links


def test_the_data_files_and_unparsed_files_are_linked() -> None:
    broken = FileSummary(path="deepspeed/moe/bad.py", error="invalid syntax")
    page = page_for(summary("deepspeed/moe/x.py", [1]), broken)
    data = [h for h, _ in page.links if "/" not in h and not h.startswith("#")]
    assert data == [name for name, _ in DATA_FILES]
    assert {"history.csv", "history.json", "burndown.svg"} <= set(data)
    assert (f"https://github.com/org/ds/blob/{SHA}/deepspeed/moe/bad.py", "deepspeed/moe/bad.py") in page.links


def test_the_same_status_renders_the_same_bytes() -> None:
    first = html_for(summary("deepspeed/moe/x.py", [1]))
    # no build time: a page rendered now and one rendered tomorrow are the same bytes
    now = datetime.now(timezone.utc)
    assert not [d for d in (now, now - timedelta(minutes=1)) if d.strftime("%Y-%m-%d") in first]
    assert html_for(summary("deepspeed/moe/x.py", [1])) == first
    assert html_for(summary("deepspeed/moe/x.py", [2])) != first


def test_dashboard_cli_reuses_a_history_file(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    shas = [repo.commit("a", {"deepspeed/moe/layer.py": module(2, 0)}),
            repo.commit("b", {"deepspeed/moe/layer.py": module(1, 1)}),
            repo.commit("c", {"deepspeed/moe/layer.py": module(0, 2)})]
    common = ["--repo-dir", str(repo.path), "--no-cache"]
    assert main(["history", "--since", shas[0], "--until", shas[1], "--out", str(tmp_path / "h"), *common]) == 0
    out = tmp_path / "site"
    assert main(["dashboard", "--out", str(out), "--repo", "org/ds", "--history", str(tmp_path / "h" / "history.json"),
                 *common]) == 0
    # the table is taken at the commit the history ends at (b), not at the branch tip (c)
    rows = {r[0]: r[1:] for r in Page((out / "index.html").read_text(encoding="utf-8")).rows[1:]}
    assert rows["MoE"][:4] == ["1 (PG101 1)", "1", "50%", "in progress"]
    assert [c["sha"] for c in json.loads((out / "history.json").read_text(encoding="utf-8"))["commits"]] == shas[:2]
    assert {p.name for p in out.iterdir()} == {"index.html", "status.md", "history.json", "history.csv",
                                               "burndown.png", "burndown.svg"}
    # every relative link and image of the page is a file written beside it
    page = Page((out / "index.html").read_text(encoding="utf-8"))
    local = {h for h, _ in page.links if "/" not in h and not h.startswith("#")} | {i["src"] for i in page.images}
    assert local and all((out / name).is_file() for name in local)


def test_dashboard_cli_rewrites_the_same_bytes_for_an_unchanged_status(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    first = repo.commit("a", {"deepspeed/moe/layer.py": module(2, 0)})
    repo.commit("b", {"deepspeed/moe/layer.py": module(1, 1)})
    common = ["--repo", "org/ds", "--since", first, "--repo-dir", str(repo.path), "--no-cache"]
    runs = [tmp_path / "one", tmp_path / "two"]
    for out in runs:
        assert main(["dashboard", "--out", str(out), *common]) == 0
    names = sorted(p.name for p in runs[0].iterdir())
    assert names == sorted(p.name for p in runs[1].iterdir())
    changed = [n for n in names if (runs[0] / n).read_bytes() != (runs[1] / n).read_bytes()]
    assert changed == []


def test_dashboard_cli_rejects_a_bad_history_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    repo = Repo(tmp_path / "repo")
    repo.commit("a", {"deepspeed/moe/layer.py": module(1, 0)})
    bad = tmp_path / "bad.json"
    bad.write_text('{"commits": [{"nope": 1}]}', encoding="utf-8")
    rc = main(["dashboard", "--out", str(tmp_path / "s"), "--repo", "org/ds", "--history", str(bad),
               "--repo-dir", str(repo.path), "--no-cache"])
    assert rc == 2
    assert "not a pg-bot history file" in capsys.readouterr().err
