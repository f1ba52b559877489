"""A payload in a reviewed file never runs: `fix` (diff, --write, with and without --unsafe-fixes), `review
--dry-run` offline and `review` against the fake GitHub. Each payload would create its own canary file if any
part of pg-bot evaluated the text; none may appear. The rewrites around a payload are then not applied, and the
suggestion says why (the proof cannot vouch for code outside its allow-list)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_github import FakeGitHub

from bot import config as config_module
from bot.analyze import analyze_source
from bot.cli import main
from bot.fix import fix_source, suggestion_for
from bot.model import CopyPayload, Finding

CONFIG = config_module.load()
PATH = "deepspeed/moe/evil.py"


def escape(canary: Path) -> str:
    """Opens ``canary`` for writing even under restricted builtins (the escape the old prover fell to)."""
    return (
        '[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "catch_warnings"][0]()'
        f'._module.__builtins__["open"]({str(canary)!r}, "w")'
    )


def hostile(root: Path) -> tuple[str, dict[str, Path]]:
    """A module whose every guard-shaped expression carries a payload, and the canary each payload writes."""
    root.mkdir(parents=True, exist_ok=True)  # so that a payload that ran would succeed in writing its canary
    c = {name: root / f"canary-{name}" for name in (
        "kwarg", "import", "open", "positional", "moved", "kept", "or", "size", "copy", "cached", "walrus")}
    source = f'''import deepspeed.comm as dist


def kwarg(t, g=None):
    if g is not None and dist.get_world_size(group=g, _={escape(c["kwarg"])}) > 1:
        dist.all_reduce(t, group=g)


def imported(t, g=None):
    if g is not None and dist.get_world_size(group=g, _=__import__("os").system("touch {c["import"]}")) > 1:
        dist.all_reduce(t, group=g)


def opened(t, g=None):
    if g is not None and dist.get_world_size(group=g, _=open({str(c["open"])!r}, "w")) > 1:
        dist.all_reduce(t, group=g)


def positional(t, g=None):
    if g is not None and dist.get_world_size(g, {escape(c["positional"])}) > 1:
        dist.all_reduce(t, group=g)


def moved(t, g=None):
    if g is not None and {escape(c["moved"])} and dist.get_world_size(group=g) > 1:
        dist.all_reduce(t, group=g)


def kept(t, g=None):
    if {escape(c["kept"])} and g is not None and dist.get_world_size(group=g) > 1:
        dist.all_reduce(t, group=g)


def early_exit(t, g=None):
    if g is None or dist.get_world_size(g, _={escape(c["or"])}) <= 1:
        return t
    dist.all_reduce(t, group=g)
    return t


def size_only(t, g=None):
    if dist.get_world_size(group=g, _={escape(c["size"])}) > 1:
        dist.all_reduce(t, group=g)


def walrus(t, g=None):
    if g is not None and (w := dist.get_world_size(group=g, _={escape(c["walrus"])})) > 1:
        dist.all_reduce(t, group=g)


def _tp_active(g):
    return g is not None and dist.get_world_size(group=g, _={escape(c["copy"])}) > 1


def copied(t, g=None):
    if _tp_active(g):
        dist.all_reduce(t, group=g)


class Cached:
    def __init__(self, g=None):
        self.g = g
        self.ws = dist.get_world_size(group=self.g, _={escape(c["cached"])})

    def forward(self, t):
        if self.ws > 1:
            dist.all_reduce(t, group=self.g)
'''
    return source, c


# The findings whose own rewrite would drop or move a payload: never applied, and the note says why.
UNPROVABLE = {
    ("PG101", "kwarg"), ("PG101", "imported"), ("PG101", "opened"), ("PG101", "positional"), ("PG101", "moved"),
    ("PG102", "early_exit"), ("PG104", "size_only"), ("PG107", "_tp_active"), ("PG106", "Cached.forward"),
    ("PG101", "walrus"),  # the walrus binds `w`: dropping it would change the program
}


@pytest.fixture
def evil(tmp_path: Path) -> tuple[str, dict[str, Path]]:
    return hostile(tmp_path / "canaries")


def assert_no_canary(canaries: dict[str, Path]) -> None:
    assert canaries and not [name for name, path in canaries.items() if path.exists()]
    assert not any(canaries["kwarg"].parent.iterdir())


def label(finding: Finding) -> tuple[str, str]:
    """(code, enclosing function), or (PG107, the copy's name)."""
    if finding.code == "PG107":
        assert isinstance(finding.payload, CopyPayload)
        return finding.code, finding.payload.name
    return finding.code, str(finding.function)


def test_the_analyzer_finds_every_payload_guard(evil: tuple[str, dict[str, Path]]) -> None:
    source, _ = evil
    found = {label(f) for f in analyze_source(PATH, source, CONFIG).findings}
    assert found >= UNPROVABLE and ("PG101", "kept") in found


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe-fixes"])
def test_fix_source_and_suggestions_never_run_a_payload_nor_drop_it(
        evil: tuple[str, dict[str, Path]], unsafe: bool) -> None:
    source, canaries = evil
    findings = analyze_source(PATH, source, CONFIG).findings
    result = fix_source(source, findings, CONFIG, unsafe=unsafe)
    refused = {label(f): why for f, why in result.refused}
    for key in UNPROVABLE:
        assert key in refused and "cannot prove the rewrite" in refused[key], key
    # every payload is still in the file; the one in a kept operand survives the rewrite around it
    assert result.source.count("__subclasses__") == source.count("__subclasses__")
    assert [label(f) for f in result.applied if f.code == "PG101"] == [("PG101", "kept")]
    for finding in findings:
        suggestion = suggestion_for(source, finding, CONFIG)
        if label(finding) in UNPROVABLE:
            assert suggestion is not None and not suggestion.safe and "cannot prove" in suggestion.note, finding
    assert_no_canary(canaries)


def test_cannot_prove_names_what_it_cannot_prove(evil: tuple[str, dict[str, Path]]) -> None:
    source, _ = evil
    findings = analyze_source(PATH, source, CONFIG).findings
    why = {label(f): r for f, r in fix_source(source, findings, CONFIG).refused}
    assert "`dist.get_world_size` is called with more than the group" in why[("PG101", "kwarg")]
    assert "holds a call to" in why[("PG101", "moved")] and "moves it after the size check" in why[("PG101", "moved")]
    assert "not even with --unsafe-fixes" in why[("PG101", "kwarg")]


@pytest.mark.parametrize("write", [False, True], ids=["diff", "write"])
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe-fixes"])
def test_pg_bot_fix_never_runs_a_payload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], write: bool, unsafe: bool) -> None:
    source, canaries = hostile(tmp_path / "canaries")
    file = tmp_path / "pkg" / "evil.py"
    file.parent.mkdir()
    file.write_text(source)
    monkeypatch.chdir(tmp_path)
    argv = ["fix", "--show-refused", "pkg", *(["--write"] if write else []), *(["--unsafe-fixes"] if unsafe else [])]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert_no_canary(canaries)
    assert err.count("cannot prove the rewrite") == len(UNPROVABLE)
    new = file.read_text() if write else source
    if write:
        assert new != source and "pg_utils.is_parallel(g)" in new  # the provable `kept` guard was fixed
    else:
        assert file.read_text() == source and "+    if " in out
    assert new.count("__subclasses__") == source.count("__subclasses__")


def _new_file_patch(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
            f"+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}")


def test_review_dry_run_never_runs_a_payload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, canaries = hostile(tmp_path / "canaries")
    (tmp_path / "base").mkdir()
    patch = tmp_path / "change.patch"
    patch.write_text(_new_file_patch(PATH, source))
    assert main(["review", "--diff", str(patch), "--source", str(tmp_path / "base"), "--dry-run",
                 "--format", "json"]) == 1
    planned = json.loads(capsys.readouterr().out)
    assert_no_canary(canaries)
    bodies = [c["body"] for c in planned["review"]["comments"]]
    assert sum("cannot prove the rewrite" in b for b in bodies) == len(UNPROVABLE)
    assert all("Check before applying" in b for b in bodies if "cannot prove" in b)


def test_online_review_never_runs_a_payload(fake_github: FakeGitHub, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    source, canaries = hostile(tmp_path / "canaries")
    fake_github.token = "secret-t0ken"
    monkeypatch.setenv("GITHUB_TOKEN", "secret-t0ken")
    fake_github.add_pull("o/r", number=1, base={"README.md": "x\n"}, head={"README.md": "x\n", PATH: source})
    assert main(["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url, "--backoff", "0.01"]) == 1
    assert_no_canary(canaries)
    comments = fake_github.pull("o/r", 1).review_comments
    assert sum("cannot prove the rewrite" in c["body"] for c in comments) == len(UNPROVABLE)
