"""`pg-bot review --repo --pr` end to end against the fake GitHub, with the real analyzer and fixer: one review,
one sticky summary, no duplicates on reruns, resolution after a fixing push, and each injected fault."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from fake_github import FakeGitHub
from markdown_it import MarkdownIt

from bot.cli import main
from bot.report.github_review import SUMMARY_MARKER, parse_marker

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pr"
REPO = "deepspeedai/DeepSpeed"
# A finding every analyzer version reports (PG101, a full guard), for tests about anything but the analysis.
GUARDED = ("import deepspeed.comm as dist\n\n\ndef f(t, g=None):\n"
           "    if g is not None and dist.get_world_size(group=g) > 1:\n        dist.all_reduce(t, group=g)\n")


def read_tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    """The example PR's base tree and its head, made with `git apply` (independent of bot.diff)."""
    work = tmp_path_factory.mktemp("example") / "tree"
    shutil.copytree(EXAMPLE / "base", work)
    subprocess.run(["git", "apply", str(EXAMPLE / "change.patch")], cwd=work, check=True)
    return read_tree(EXAMPLE / "base"), read_tree(work)


@pytest.fixture
def fake(fake_github: FakeGitHub, trees: tuple[dict[str, str], dict[str, str]],
         monkeypatch: pytest.MonkeyPatch) -> FakeGitHub:
    base, head = trees
    fake_github.token = "t0ken"
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    fake_github.add_repo(REPO, default_branch="master")
    fake_github.add_pull(REPO, number=42, base=base, head=head, head_repo="someone/DeepSpeed", base_ref="master")
    return fake_github


def review(fake: FakeGitHub, *extra: str) -> int:
    return main(["review", "--repo", REPO, "--pr", "42", "--api-url", fake.url, "--backoff", "0.01", *extra])


def summaries(fake: FakeGitHub) -> list[dict]:
    return [c for c in fake.pull(REPO, 42).comments if SUMMARY_MARKER in c["body"]]


def keys(fake: FakeGitHub) -> list[tuple[str, str, str]]:
    out = []
    for c in fake.pull(REPO, 42).review_comments:
        parsed = parse_marker(c["body"])
        assert parsed is not None
        out.append(parsed[0])
    return out


def test_three_runs_post_one_review_one_summary_and_no_duplicates(fake: FakeGitHub) -> None:
    for _ in range(3):
        assert review(fake) == 1  # new findings on added lines
    pr = fake.pull(REPO, 42)
    assert len(pr.reviews) == 1 and pr.reviews[0]["commit_id"] == pr.head_sha
    assert len(pr.review_comments) == 4 and len(set(keys(fake))) == 4
    assert len(summaries(fake)) == 1 and len(pr.comments) == 1
    assert len(fake.requests("POST", r"/reviews$")) == 1
    assert len(fake.requests("POST", r"/issues/42/comments$")) == 1
    assert fake.requests("PATCH") == []  # nothing changed, so nothing was edited
    lines = {(c["path"], c["start_line"], c["line"]) for c in pr.review_comments}
    assert ("deepspeed/moe/expert_reduce.py", 25, 26) in lines  # the two-line guard: one range comment
    assert all("```suggestion" in c["body"] for c in pr.review_comments)
    summary = summaries(fake)[0]["body"]
    assert "**1** pre-existing" in summary and "pg-bot fix --write" in summary and "1 non-Python" in summary
    # the unguarded `ep_group` call: its only evidence is a same-named attribute, so a note, not a comment
    assert not any("PG105" in c["body"] for c in pr.review_comments)
    assert "### Notes (medium confidence, not commented inline)\n- `deepspeed/moe/expert_reduce.py:32` **PG105**" in summary
    assert "— evidence: `ep_group` is checked for None before a collective elsewhere in this file." in summary


def test_a_push_that_fixes_one_finding_resolves_its_comment_and_updates_the_summary(
        fake: FakeGitHub, trees: tuple[dict[str, str], dict[str, str]]) -> None:
    _, head = trees
    assert review(fake) == 1
    path = "deepspeed/moe/expert_reduce.py"
    fixed = dict(head)
    fixed[path] = head[path].replace(
        "        if self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1:\n"
        "            dist.all_reduce(out, group=self.mp_group)",
        "        if pg_utils.is_parallel(self.mp_group):\n            dist.all_reduce(out, group=self.mp_group)",
    ).replace("import deepspeed.comm as dist\n", "import deepspeed.comm as dist\nfrom deepspeed.comm import pg_utils\n")
    assert fixed[path] != head[path]
    new_sha = fake.push(REPO, 42, fixed)
    assert review(fake) == 1
    pr = fake.pull(REPO, 42)
    states = [parse_marker(c["body"])[1] for c in pr.review_comments]  # type: ignore[index]
    assert states.count("resolved") == 1 and states.count(None) == 3
    resolved = next(c for c in pr.review_comments if "resolved -->" in c["body"])
    assert new_sha[:7] in resolved["body"]
    assert len(pr.reviews) == 1  # nothing new to say: no second review
    assert len(summaries(fake)) == 1 and "1 earlier comment(s) marked resolved" in summaries(fake)[0]["body"]
    # the file now imports pg_utils, so the other comments' notes were updated in place to stop asking for it
    live = [c for c in pr.review_comments if "resolved -->" not in c["body"] and c["path"] == path]
    assert live and all("Needs `from deepspeed.comm import pg_utils`" not in c["body"] for c in live)
    edits = len(fake.requests("PATCH"))
    assert review(fake) == 1
    assert len(fake.requests("PATCH")) == edits  # a rerun repeats neither the resolution nor the updates


def test_a_push_adding_a_finding_gets_exactly_one_new_comment(
        fake: FakeGitHub, trees: tuple[dict[str, str], dict[str, str]]) -> None:
    _, head = trees
    review(fake)
    path = "deepspeed/runtime/grad_sync.py"
    more = dict(head)
    more[path] = head[path] + ("\n\ndef mean(t, mp_group=None):\n"
                               "    if mp_group is not None and dist.get_world_size(group=mp_group) > 1:\n"
                               "        dist.all_reduce(t, group=mp_group)\n    return t\n")
    fake.push(REPO, 42, more)
    review(fake)
    review(fake)
    pr = fake.pull(REPO, 42)
    assert len(pr.reviews) == 2 and len(pr.review_comments) == 5 and len(set(keys(fake))) == 5
    assert len(summaries(fake)) == 1


@pytest.mark.parametrize(
    ("status", "method", "path", "headers", "times"),
    [
        (500, "GET", r"/pulls/42/files$", {}, 2),
        (502, "GET", r"/contents/deepspeed/moe/expert_reduce.py$", {}, 2),
        (502, "POST", r"/pulls/42/reviews$", {}, 2),
        (403, "POST", r"/pulls/42/reviews$", {"Retry-After": "1"}, 1),  # secondary rate limit
        (403, "GET", r"/pulls/42/comments$", {"Retry-After": "1"}, 1),
    ],
)
def test_transient_faults_are_retried_to_the_same_result(fake: FakeGitHub, status: int, method: str, path: str,
                                                          headers: dict[str, str], times: int) -> None:
    fake.fail(status, method=method, path=path, times=times, headers=headers)
    start = time.monotonic()
    assert review(fake) == 1
    if "Retry-After" in headers:
        assert time.monotonic() - start >= 1.0  # waited as told
    hits = [r.status for r in fake.requests(method, path)]
    assert hits[:times] == [status] * times and hits[times] < 300
    pr = fake.pull(REPO, 42)
    assert len(pr.reviews) == 1 and len(pr.review_comments) == 4 and len(summaries(fake)) == 1


def test_422_on_the_review_falls_back_without_losing_findings(fake: FakeGitHub) -> None:
    fake.fail(422, method="POST", path=r"/reviews$", times=2, message="Pull request review thread line must be part "
              "of the diff")
    assert review(fake) == 1
    pr = fake.pull(REPO, 42)
    assert pr.reviews == [] and pr.review_comments == []
    summary = summaries(fake)[0]["body"]
    assert summary.count("GitHub rejected an inline comment on this line (HTTP 422)") == 4
    assert review(fake) == 1  # the fault is gone: now the review goes up, and the summary is edited in place
    assert len(pr.reviews) == 1 and len(pr.review_comments) == 4 and len(summaries(fake)) == 1
    assert "HTTP 422" not in summaries(fake)[0]["body"]


def test_one_422_retries_with_single_line_comments(fake: FakeGitHub) -> None:
    fake.fail(422, method="POST", path=r"/reviews$", times=1)
    review(fake)
    pr = fake.pull(REPO, 42)
    assert len(pr.reviews) == 1 and len(pr.review_comments) == 4
    assert all(c["start_line"] is None for c in pr.review_comments)


def test_auth_and_missing_pr_fail_clearly(fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    assert review(fake) == 3
    assert "GITHUB_TOKEN" in capsys.readouterr().err
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    assert main(["review", "--repo", REPO, "--pr", "404", "--api-url", fake.url]) == 3
    assert "not found" in capsys.readouterr().err
    fake.fail(403, method="POST", path=r"/reviews$", message="Resource not accessible by integration")
    assert review(fake) == 3
    assert "permission" in capsys.readouterr().err
    assert fake.pull(REPO, 42).reviews == []


def test_requests_do_not_grow_with_the_number_of_findings(fake_github: FakeGitHub) -> None:
    def requests_for(n_findings: int, number: int) -> int:
        body = "import deepspeed.comm as dist\n\n\n" + "".join(
            f"def f{i}(t, g=None):\n    if g is not None and dist.get_world_size(group=g) > 1:\n"
            "        dist.all_reduce(t, group=g)\n\n\n" for i in range(n_findings))
        fake_github.add_pull("o/r", number=number, base={}, head={"m.py": body})
        before = len(fake_github.log)
        main(["review", "--repo", "o/r", "--pr", str(number), "--api-url", fake_github.url])
        assert len(fake_github.pull("o/r", number).review_comments) == n_findings
        return len(fake_github.log) - before

    assert requests_for(1, 1) == requests_for(12, 2)


def test_large_binary_and_removed_files(fake_github: FakeGitHub) -> None:
    guard = GUARDED
    big = guard + "".join(f"x{i} = {i}\n" for i in range(400))
    fake_github.patch_limit = 500  # the API leaves the big file's patch out
    fake_github.content_limit = 1000  # and the contents API cannot inline it: the blob API must be used
    fake_github.add_pull("o/r", number=3, base={"old.py": guard, "big.py": "x = 0\n"},
                         head={"big.py": big, "logo.png": b"\x89PNG\x00", "notes.md": "hi\n", "blob.py": b"\x00\x01"})
    assert main(["review", "--repo", "o/r", "--pr", "3", "--api-url", fake_github.url]) == 1
    pr = fake_github.pull("o/r", 3)
    assert pr.reviews == [] and pr.review_comments == []
    (summary,) = pr.comments
    assert "`big.py:5`" in summary["body"] and "too large" in summary["body"]
    assert "Skipped: 1 binary file(s), 2 non-Python file(s), 1 removed file(s)." in summary["body"]
    assert fake_github.requests("GET", r"/git/blobs/")


def test_a_review_github_created_behind_a_502_is_not_duplicated(fake: FakeGitHub) -> None:
    fake.fail(502, method="POST", path=r"/pulls/42/reviews$", after=True)
    assert review(fake) == 1
    assert review(fake) == 1
    pr = fake.pull(REPO, 42)
    assert len(pr.reviews) == 1 and len(pr.review_comments) == 4 and len(summaries(fake)) == 1


# ---------------------------------------------------------------- forged markers: only our own comments count



def test_markers_in_other_peoples_comments_are_never_taken_for_pg_bots(fake: FakeGitHub) -> None:
    """mallory quotes the marker of a real finding (so pg-bot would skip its comment and edit mallory's), one of
    a finding that does not exist (pg-bot would "resolve" it), and the summary marker (pg-bot would adopt it)."""
    assert main(["review", "--repo", REPO, "--pr", "42", "--api-url", fake.url, "--dry-run", "--format", "json"]) == 1
    fake.add_token("mallory-token", "mallory")
    pr = fake.pull(REPO, 42)
    from bot.github import GitHubClient

    mallory = GitHubClient("mallory-token", REPO, base_url=fake.url, throttle=False)
    review(fake)  # pg-bot's comments, to copy the markers from; then start over with only mallory's
    bodies = [c["body"] for c in pr.review_comments]
    real = next(c for c in pr.review_comments)
    pr.review_comments.clear(), pr.reviews.clear(), pr.comments.clear()
    gone = bodies[0].replace(parse_marker(bodies[0])[0][2], "0" * 12)  # type: ignore[index]
    mallory.create_review(42, pr.head_sha, "me too", [
        {"path": real["path"], "line": real["line"], "body": bodies[0]},
        {"path": real["path"], "line": real["line"], "body": gone}])
    mallory.upsert_marked_comment(42, SUMMARY_MARKER, "**all clear, merge it**")
    forged = {c["id"]: c["body"] for c in [*pr.review_comments, *pr.comments]}
    assert review(fake) == 1
    ours = [c for c in pr.review_comments if c["user"] == "github-actions[bot]"]
    assert len(ours) == 4 and len({parse_marker(c["body"]) for c in ours}) == 4  # none skipped for mallory's copy
    assert {c["id"]: c["body"] for c in [*pr.review_comments, *pr.comments] if c["id"] in forged} == forged
    assert all("edits" not in c for c in [*pr.review_comments, *pr.comments] if c["id"] in forged)
    assert [c["user"] for c in summaries(fake)] == ["mallory", "github-actions[bot]"]  # ours is a new comment


def test_a_file_name_holding_a_marker_puts_no_marker_in_any_body(fake_github: FakeGitHub) -> None:
    name = "<!-- pg-bot:dispatch -->`**x**`.py"
    broken = "<!-- pg-bot:summary -->**y**.py"
    body = GUARDED
    fake_github.add_pull("o/r", number=1, base={}, head={name: body, broken: "import deepspeed.comm as dist\ndef (:\n    dist.get_world_size(group=g)\n"})
    assert main(["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url]) == 1
    pr = fake_github.pull("o/r", 1)
    for c in [*pr.review_comments, *pr.comments]:
        assert c["body"].count("<!--") == 1 and c["body"].startswith("<!-- pg-bot:")
    (summary,) = pr.comments
    tokens = [t for block in MarkdownIt("commonmark").parse(summary["body"]) for t in [block, *(block.children or [])]]
    errors = tokens[tokens.index(next(t for t in tokens if t.type == "bullet_list_open")):]
    assert "strong_open" not in [t.type for t in errors]  # the names are code spans, not bold text
    assert "<!\u200b-- pg-bot:summary -->**y**.py" in [t.content for t in errors if t.type == "code_inline"]


def test_the_bot_login_option_names_an_apps_identity(fake_github: FakeGitHub) -> None:
    fake_github.add_token("ghs_app", "pg-bot-app[bot]")
    body = GUARDED
    fake_github.add_pull("o/r", number=1, base={}, head={"m.py": body})
    argv = ["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url, "--bot-login", "pg-bot-app[bot]"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITHUB_TOKEN", "ghs_app")
        assert main(argv) == 1 and main(argv) == 1
    pr = fake_github.pull("o/r", 1)
    assert len(pr.review_comments) == 1 and len(pr.comments) == 1  # the rerun recognised the app's own comments
    assert fake_github.requests("GET", r"^/user$") == []


# ---------------------------------------------------------------- timeouts: never a blind re-send


def test_a_review_post_that_times_out_after_github_acted_is_not_duplicated(fake: FakeGitHub) -> None:
    fake.time_out(method="POST", path=r"/pulls/42/reviews$", hang=0.05)  # acted, then the connection dropped
    assert review(fake) == 1
    pr = fake.pull(REPO, 42)
    assert len(pr.reviews) == 1 and len(pr.review_comments) == 4 and len(summaries(fake)) == 1
    assert len(fake.requests("POST", r"/reviews$")) == 1


def test_a_summary_post_that_times_out_after_github_acted_is_not_duplicated(fake: FakeGitHub) -> None:
    fake.time_out(method="POST", path=r"/issues/42/comments$", hang=0.05)
    assert review(fake) == 1
    assert len(summaries(fake)) == 1 and len(fake.requests("POST", r"/issues/42/comments$")) == 1


def test_a_502_on_an_edit_is_retried_not_fatal(fake: FakeGitHub,
                                                trees: tuple[dict[str, str], dict[str, str]]) -> None:
    _, head = trees
    assert review(fake) == 1
    path = "deepspeed/moe/expert_reduce.py"
    fake.push(REPO, 42, {**head, path: head[path].replace("import deepspeed.comm as dist\n",
                                                           "import deepspeed.comm as dist\nfrom deepspeed.comm "
                                                           "import pg_utils\n")})
    fake.fail(502, method="PATCH")
    assert review(fake) == 1  # the comments' notes change (the import is there now): edits, one of them 502s
    assert [r.status for r in fake.requests("PATCH")][:2] == [502, 200]
    assert all("Needs `from deepspeed.comm import pg_utils`" not in c["body"]
               for c in fake.pull(REPO, 42).review_comments if c["path"] == path)


# ---------------------------------------------------------------- per-file problems; crashes


def test_a_newline_in_a_file_name_is_reviewed_like_any_other(fake_github: FakeGitHub) -> None:
    body = GUARDED
    fake_github.add_pull("o/r", number=1, base={}, head={"a\nb.py": body, "m.py": body})
    assert main(["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url]) == 1
    pr = fake_github.pull("o/r", 1)
    assert sorted(c["path"] for c in pr.review_comments) == ["a\nb.py", "m.py"]
    assert "2 Python file(s) analysed" in pr.comments[0]["body"] and "could not be analysed" not in pr.comments[0]["body"]


def test_a_patch_that_does_not_parse_costs_only_its_file(fake_github: FakeGitHub) -> None:
    body = GUARDED
    pr = fake_github.add_pull("o/r", number=1, base={}, head={"bad.py": body, "m.py": body})
    next(f for f in pr.files if f.filename == "bad.py").patch = "@@ -1,3 +1,4 @@\n+only one line"
    assert main(["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url]) == 1
    assert [c["path"] for c in pr.review_comments] == ["m.py"]
    (summary,) = pr.comments
    assert "### Files that could not be analysed\n- `bad.py`: the API" in summary["body"]


# ---------------------------------------------------------------- git's line numbering (a lone CR)


def test_comments_and_suggestions_follow_gits_lines_after_a_lone_cr(fake_github: FakeGitHub) -> None:
    base = ("import deepspeed.comm as dist\n\n\ndef f(t, g=None):\n    x = 1\r    y = 2\n"
            "    dist.all_reduce(t, group=g)\n")
    head = base.replace("    dist.all_reduce", "    if g is not None and dist.get_world_size(group=g) > 1:\n"
                                              "        dist.all_reduce")
    fake_github.add_pull("o/r", number=1, base={"m.py": base}, head={"m.py": head})
    assert main(["review", "--repo", "o/r", "--pr", "1", "--api-url", fake_github.url]) == 1
    (comment,) = fake_github.pull("o/r", 1).review_comments
    lines = head.split("\n")  # git's lines: the lone CR does not end one
    guard = next(i for i, text in enumerate(lines, 1) if "get_world_size" in text)
    assert comment["line"] == guard and comment["start_line"] in (None, guard)
    suggestion = comment["body"].split("```suggestion\n", 1)[1].split("\n```", 1)[0]
    applied = "\n".join([*lines[:guard - 1], suggestion, *lines[guard:]])  # what accepting it does
    assert applied == head.replace("if g is not None and dist.get_world_size(group=g) > 1:",
                                   "if pg_utils.is_parallel(g):")


# ---------------------------------------------------------------- quiet when there is nothing to say


def test_a_pr_that_changes_no_python_file_gets_no_comment_at_all(fake_github: FakeGitHub) -> None:
    fake_github.add_pull("o/r", number=5, base={"README.md": "a\n", "m.py": GUARDED},
                         head={"README.md": "b\n", "docs/x.md": "c\n", "m.py": GUARDED})
    assert main(["review", "--repo", "o/r", "--pr", "5", "--api-url", fake_github.url]) == 0
    pr = fake_github.pull("o/r", 5)
    assert pr.comments == [] and pr.reviews == [] and pr.review_comments == []
    assert fake_github.requests("POST") == [] and fake_github.requests("PATCH") == []


def test_a_pr_adding_no_finding_is_quiet_unless_the_policy_says_always(fake_github: FakeGitHub,
                                                                      tmp_path: Path) -> None:
    base = {"m.py": GUARDED}  # a finding that is already there: counted by the tracker, not this PR's doing
    head = {"m.py": GUARDED + "\n\ndef g():\n    return 1\n"}
    fake_github.add_pull("o/r", number=6, base=base, head=head)
    assert main(["review", "--repo", "o/r", "--pr", "6", "--api-url", fake_github.url]) == 0
    assert fake_github.pull("o/r", 6).comments == []
    always = tmp_path / "rules.yaml"
    always.write_text("version: 1\nreview:\n  summary: always\n")
    assert main(["review", "--repo", "o/r", "--pr", "6", "--api-url", fake_github.url, "--config", str(always)]) == 0
    (summary,) = fake_github.pull("o/r", 6).comments
    assert "**1** pre-existing in the files it touches" in summary["body"]


def test_a_summary_whose_findings_are_gone_says_so_instead_of_going_stale(fake_github: FakeGitHub) -> None:
    fake_github.add_pull("o/r", number=7, base={"m.py": "x = 1\n"}, head={"m.py": GUARDED})
    argv = ["review", "--repo", "o/r", "--pr", "7", "--api-url", fake_github.url]
    assert main(argv) == 1
    assert "**1** finding(s) on lines this pull request adds" in fake_github.pull("o/r", 7).comments[0]["body"]
    sha = fake_github.push("o/r", 7, {"m.py": "x = 2\n"})  # the author dropped the guard
    assert main(argv) == 0
    (summary,) = fake_github.pull("o/r", 7).comments
    assert f"**Nothing to report** as of `{sha[:7]}`: no process-group guard findings" in summary["body"]
    assert "1 earlier comment(s) marked resolved" in summary["body"]
    patches = len(fake_github.requests("PATCH"))
    assert main(argv) == 0
    assert len(fake_github.requests("PATCH")) == patches and len(fake_github.pull("o/r", 7).comments) == 1
    fake_github.push("o/r", 7, {"notes.md": "only docs now\n"})  # and then changed no Python file at all
    assert main(argv) == 0
    assert "this pull request adds or modifies no Python file" in fake_github.pull("o/r", 7).comments[0]["body"]
