"""bot.github.GitHubClient against the fake GitHub server: data, pagination, writes, errors and retries."""

from __future__ import annotations

import time

import pytest
from fake_github import FakeGitHub

from bot.github import GitHubClient, GitHubError, default_retry

BASE = {"pkg/a.py": "x = 1\ny = 2\n", "pkg/old.py": "o = 1\n", "gone.py": "g = 1\n"}
HEAD = {"pkg/a.py": "x = 1\ny = 3\nz = 4\n", "pkg/new.py": "o = 1\n", "b.bin": b"\x00\x01"}


def client(fake: FakeGitHub, token: str | None = None, **kw: object) -> GitHubClient:
    kw.setdefault("retry", default_retry(total=3, backoff_factor=0.01, secondary_rate_wait=0.05))
    return GitHubClient(token, "org/repo", base_url=fake.url, throttle=False, **kw)  # type: ignore[arg-type]


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_repo("org/repo", collaborators={"alice": "maintain", "bob": "triage", "carol": "admin"})
    fake_github.add_repo("fork/repo")
    fake_github.add_pull("org/repo", number=5, base=BASE, head=HEAD, renames={"pkg/old.py": "pkg/new.py"},
                         labels=["ci/xpu-distributed", "bug"], author="dave", head_repo="fork/repo")
    return fake_github


def test_pull_facts(fake: FakeGitHub) -> None:
    facts = client(fake).pull(5)
    pr = fake.pull("org/repo", 5)
    assert (facts.number, facts.head_sha, facts.base_sha) == (5, pr.head_sha, pr.base_sha)
    assert facts.head_repo == "fork/repo"
    assert facts.base_ref == "main" and facts.author == "dave" and facts.state == "open"
    assert facts.labels == ("ci/xpu-distributed", "bug")


def test_pull_files_statuses_renames_binary(fake: FakeGitHub) -> None:
    files = {f.filename: f for f in client(fake).pull_files(5)}
    assert set(files) == {"pkg/a.py", "pkg/new.py", "b.bin", "gone.py"}
    assert files["pkg/new.py"].status == "renamed" and files["pkg/new.py"].previous_filename == "pkg/old.py"
    assert files["gone.py"].status == "removed"
    assert files["b.bin"].patch is None
    assert files["pkg/a.py"].patch is not None and "+z = 4" in files["pkg/a.py"].patch


def test_pagination_follows_link_headers(fake: FakeGitHub) -> None:
    head = {f"m{i:03}.py": f"v = {i}\n" for i in range(250)}
    fake.add_pull("org/repo", number=9, base={}, head=head)
    files = client(fake, per_page=100).pull_files(9)
    assert sorted(f.filename for f in files) == sorted(head)
    pages = fake.requests("GET", r"/pulls/9/files$")
    assert len(pages) == 3 and [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]


def test_file_bytes_small_and_over_contents_limit(fake: FakeGitHub) -> None:
    big = "w = 0\n" * 50
    fake.content_limit = 100
    fake.add_pull("org/repo", number=11, base={}, head={"big.py": big, "small.py": "s = 1\n"})
    head = fake.pull("org/repo", 11).head_sha
    c = client(fake)
    assert c.file_text("small.py", head) == "s = 1\n"
    assert c.file_text("big.py", head) == big
    assert len(fake.requests("GET", r"/git/blobs/")) == 1  # only the big one needed the blob API
    with pytest.raises(GitHubError) as err:
        c.file_text("nope.py", head)
    assert err.value.status == 404 and "not found" in str(err.value)


def test_review_is_one_request_for_many_comments(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    comments = [{"path": "pkg/a.py", "line": 3, "side": "RIGHT", "body": f"c{i}"} for i in range(40)]
    review_id = client(fake).create_review(5, pr.head_sha, "summary", comments)
    assert len(fake.requests("POST")) == 1
    assert [r["id"] for r in pr.reviews] == [review_id]
    assert len(pr.review_comments) == 40
    listed = client(fake, per_page=7).list_review_comments(5)
    assert len(listed) == 40 and all(c.path == "pkg/a.py" and c.line == 3 for c in listed)
    client(fake).edit_review_comment(listed[0].id, "edited")
    assert pr.review_comments[0]["body"] == "edited"


def test_review_on_line_outside_diff_is_a_clear_422(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    with pytest.raises(GitHubError) as err:
        client(fake).create_review(5, pr.head_sha, "s", [{"path": "pkg/a.py", "line": 40, "body": "x"}])
    assert err.value.status == 422 and "part of the diff" in str(err.value)
    assert pr.reviews == []


def test_upsert_marked_comment_creates_once_then_edits(fake: FakeGitHub) -> None:
    marker = "<!-- pg-bot:summary -->"
    c = client(fake)
    first = c.upsert_marked_comment(5, marker, "one")
    fake.pull("org/repo", 5).comments.insert(0, {"id": 1, "issue": 5, "user": "human", "body": "hello"})
    again = c.upsert_marked_comment(5, marker, "two")
    same = c.upsert_marked_comment(5, marker, "two")
    bodies = [x["body"] for x in fake.pull("org/repo", 5).comments]
    assert first == again == same
    assert bodies == ["hello", f"{marker}\ntwo"]
    assert len(fake.requests("PATCH", r"/issues/comments/")) == 1  # the unchanged third call edits nothing


def test_summary_comment_created_behind_a_5xx_is_not_created_twice(fake: FakeGitHub) -> None:
    fake.fail(502, method="POST", path=r"/issues/5/comments$", after=True)
    client(fake).upsert_marked_comment(5, "<!-- m -->", "body")
    assert len(fake.pull("org/repo", 5).comments) == 1
    assert len(fake.requests("POST")) == 1


def test_issue_body_and_labels(fake: FakeGitHub) -> None:
    fake.add_issue("org/repo", number=7, body="before", labels=["tracking"])
    c = client(fake)
    assert c.issue_body(7) == "before"
    c.edit_issue_body(7, "after")
    assert fake.pull("org/repo", 7).body == "after"
    c.add_labels(5, ["ci/xpu-distributed", "new"])
    assert c.label_names(5) == ["ci/xpu-distributed", "bug", "new"]
    assert c.remove_label(5, "ci/xpu-distributed") is True
    assert c.remove_label(5, "ci/xpu-distributed") is False
    assert fake.pull("org/repo", 5).labels == ["bug", "new"]


def test_permissions(fake: FakeGitHub) -> None:
    c = client(fake)
    assert [c.permission(u) for u in ("alice", "bob", "carol", "mallory")] == ["maintain", "triage", "admin", "none"]


def test_dispatch_and_status(fake: FakeGitHub) -> None:
    repo = fake.repos["org/repo"]
    repo.workflows = {"xpu-distributed.yml"}
    c = client(fake)
    assert c.dispatch_workflow("xpu-distributed.yml", "master", {"tests": "tests/unit/moe"}) is True
    assert repo.dispatches == [{"workflow": "xpu-distributed.yml", "ref": "master",
                                "inputs": {"tests": "tests/unit/moe"}}]
    with pytest.raises(GitHubError) as err:
        c.dispatch_workflow("missing.yml", "master", {})
    assert err.value.status == 404
    sha = fake.pull("org/repo", 5).head_sha
    c.create_status(sha, "pending", "pg-bot/xpu", "dispatched", "https://ci.example/1")
    assert [(s["sha"], s["state"], s["context"]) for s in repo.statuses] == [(sha, "pending", "pg-bot/xpu")]


def test_token_is_sent_and_bad_token_is_a_clear_401(fake: FakeGitHub) -> None:
    fake.token = "s3cret"
    assert client(fake, token="s3cret").pull(5).number == 5
    assert fake.log[-1].authorization == "token s3cret"
    with pytest.raises(GitHubError) as err:
        client(fake, token="wrong").pull(5)
    assert err.value.status == 401 and "GITHUB_TOKEN" in str(err.value)


@pytest.mark.parametrize("status", [500, 502])
def test_5xx_is_retried(fake: FakeGitHub, status: int) -> None:
    fake.fail(status, path=r"/pulls/5/files$", times=2)
    assert len(client(fake).pull_files(5)) == 4
    assert [r.status for r in fake.requests("GET", r"/pulls/5/files$")] == [status, status, 200]


def test_5xx_on_review_create_is_retried_without_duplicating(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    fake.fail(502, method="POST", path=r"/reviews$")
    client(fake).create_review(5, pr.head_sha, "s", [{"path": "pkg/a.py", "line": 3, "body": "x"}])
    assert len(pr.reviews) == 1 and len(pr.review_comments) == 1


def test_review_created_behind_a_5xx_is_found_not_posted_twice(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    fake.fail(502, method="POST", path=r"/reviews$", after=True)  # GitHub acted, then the gateway said 502
    review_id = client(fake).create_review(5, pr.head_sha, "unique body", [{"path": "pkg/a.py", "line": 3,
                                                                             "body": "x"}])
    assert [r["id"] for r in pr.reviews] == [review_id] and len(pr.review_comments) == 1
    assert len(fake.requests("POST", r"/reviews$")) == 1 and len(fake.requests("GET", r"/reviews$")) == 1


def test_review_lost_behind_a_5xx_is_sent_again(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    fake.fail(502, method="POST", path=r"/reviews$")  # not carried out
    client(fake).create_review(5, pr.head_sha, "unique body", [{"path": "pkg/a.py", "line": 3, "body": "x"}])
    assert len(pr.reviews) == 1 and [r.status for r in fake.requests("POST")] == [502, 200]


def test_persistent_5xx_gives_up_with_clear_error(fake: FakeGitHub) -> None:
    fake.fail(503, path=r"/pulls/5$", times=100)
    with pytest.raises(GitHubError) as err:
        client(fake).pull(5)
    assert "gave up after retries" in str(err.value) and "pull request #5" in str(err.value)
    assert len(fake.requests("GET", r"/pulls/5$")) == 4  # the first try and 3 retries


def test_secondary_rate_limit_honours_retry_after(fake: FakeGitHub) -> None:
    fake.fail(403, method="POST", path=r"/issues/5/comments$", headers={"Retry-After": "1"})
    start = time.monotonic()
    client(fake).upsert_marked_comment(5, "<!-- m -->", "body")
    assert time.monotonic() - start >= 1.0
    assert [r.status for r in fake.requests("POST")] == [403, 201]
    assert len(fake.pull("org/repo", 5).comments) == 1


def test_plain_403_and_404_fail_clearly_without_retry(fake: FakeGitHub) -> None:
    fake.fail(403, path=r"/pulls/5$", message="Resource not accessible by integration")
    with pytest.raises(GitHubError) as err:
        client(fake).pull(5)
    assert err.value.status == 403 and "permission" in str(err.value)
    assert len(fake.requests("GET", r"/pulls/5$")) == 1
    with pytest.raises(GitHubError) as err:
        client(fake).pull(404)
    assert err.value.status == 404


def test_bad_repo_name_is_rejected() -> None:
    with pytest.raises(GitHubError, match="OWNER/NAME"):
        GitHubClient(None, "no-slash")


def test_enterprise_style_base_url(fake: FakeGitHub) -> None:
    c = GitHubClient(None, "org/repo", base_url=fake.url + "/api/v3", throttle=False, per_page=2)
    assert len(c.pull_files(5)) == 4
    assert all(r.path.startswith("/repos/") for r in fake.log)


# ---------------------------------------------------------------- no blind re-sends; idempotent edits retried


def test_review_created_behind_a_timeout_is_found_not_posted_twice(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    fake.time_out(method="POST", path=r"/reviews$", hang=2.0)  # GitHub acts; the answer never comes
    review_id = client(fake, timeout=1).create_review(5, pr.head_sha, "unique body",
                                                        [{"path": "pkg/a.py", "line": 3, "body": "x"}])
    assert [r["id"] for r in pr.reviews] == [review_id] and len(pr.review_comments) == 1
    assert [r.status for r in fake.requests("POST")] == [0]  # sent once, never re-sent


def test_summary_created_behind_a_timeout_is_not_created_twice(fake: FakeGitHub) -> None:
    fake.time_out(method="POST", path=r"/issues/5/comments$", hang=0.05)  # the connection drops, no answer
    comment_id = client(fake).upsert_marked_comment(5, "<!-- m -->", "body")
    assert [c["id"] for c in fake.pull("org/repo", 5).comments] == [comment_id]
    assert len(fake.requests("POST")) == 1


def test_a_post_lost_behind_a_timeout_is_looked_for_then_sent_again(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    fake.time_out(method="POST", path=r"/reviews$", after=False, hang=0.05)  # GitHub never got it
    client(fake).create_review(5, pr.head_sha, "body", [{"path": "pkg/a.py", "line": 3, "body": "x"}])
    assert len(pr.reviews) == 1 and [r.status for r in fake.requests("POST")] == [0, 200]
    assert len(fake.requests("GET", r"/reviews$")) == 1  # looked before sending again


@pytest.mark.parametrize("fault", ["502", "timeout"])
def test_an_edit_is_retried_after_a_502_or_a_timeout(fake: FakeGitHub, fault: str) -> None:
    c = client(fake, timeout=1)
    comment_id = c.upsert_marked_comment(5, "<!-- m -->", "one")
    if fault == "502":
        fake.fail(502, method="PATCH")
    else:
        fake.time_out(method="PATCH", hang=2.0)
    c.upsert_marked_comment(5, "<!-- m -->", "two")  # an edit: PATCH with the whole new body, safe to repeat
    assert [x["body"] for x in fake.pull("org/repo", 5).comments] == ["<!-- m -->\ntwo"]
    assert [r.status for r in fake.requests("PATCH")] == [502 if fault == "502" else 0, 200]
    assert fake.pull("org/repo", 5).comments[0]["id"] == comment_id


def test_a_label_add_is_retried_after_a_502(fake: FakeGitHub) -> None:
    fake.fail(502, method="POST", path=r"/labels$")
    client(fake).add_labels(5, ["new"])
    assert [r.status for r in fake.requests("POST", r"/labels$")] == [502, 200]
    assert fake.pull("org/repo", 5).labels == ["ci/xpu-distributed", "bug", "new"]


# ---------------------------------------------------------------- identity and forged markers


def test_identity_of_a_user_token_is_asked_once(fake: FakeGitHub) -> None:
    fake.add_token("pat", "maintainer-bot")
    c = client(fake, token="pat")
    assert c.identity() == c.identity() == "maintainer-bot"
    assert len(fake.requests("GET", r"^/user$")) == 1


def test_identity_of_an_installation_token_is_the_configured_app_or_github_actions(fake: FakeGitHub) -> None:
    fake.add_token("ghs_actions", "github-actions[bot]")
    assert client(fake, token="ghs_actions").identity() == "github-actions[bot]"  # /user: 403 for an app
    fake.add_token("ghs_app", "pg-bot-app[bot]")
    c = client(fake, token="ghs_app", login="pg-bot-app[bot]")
    assert c.identity() == "pg-bot-app[bot]"
    assert len(fake.requests("GET", r"^/user$")) == 1  # the configured login needs no request


def test_a_comment_by_someone_else_holding_the_marker_is_never_adopted(fake: FakeGitHub) -> None:
    fake.add_token("mallory-token", "mallory")
    forged = client(fake, token="mallory-token").upsert_marked_comment(5, "<!-- m -->", "I am the summary now")
    fake.pull("org/repo", 5).comments.append(  # our own comment, quoting the marker later in its body
        {"id": 2, "issue": 5, "user": "github-actions[bot]", "body": "see <!-- m --> above"})
    ours = client(fake).upsert_marked_comment(5, "<!-- m -->", "summary")
    again = client(fake).upsert_marked_comment(5, "<!-- m -->", "summary, edited")
    comments = {c["id"]: c for c in fake.pull("org/repo", 5).comments}
    assert ours == again and ours not in (forged, 2)
    assert comments[forged]["body"] == "<!-- m -->\nI am the summary now" and "edits" not in comments[forged]
    assert comments[2]["body"] == "see <!-- m --> above"
    assert comments[ours]["body"] == "<!-- m -->\nsummary, edited" and comments[ours]["user"] == "github-actions[bot]"


def test_a_forged_review_with_our_body_is_not_taken_for_ours(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 5)
    fake.add_token("mallory-token", "mallory")
    client(fake, token="mallory-token").create_review(5, pr.head_sha, "predictable body", [])
    fake.fail(502, method="POST", path=r"/reviews$")  # not carried out: pg-bot looks, must not find mallory's
    review_id = client(fake).create_review(5, pr.head_sha, "predictable body", [])
    assert [r["user"] for r in pr.reviews] == ["mallory", "github-actions[bot]"] and pr.reviews[1]["id"] == review_id


def test_a_wrong_identity_is_reported_when_our_first_comment_shows_who_we_are(
        fake: FakeGitHub, capsys: pytest.CaptureFixture[str]) -> None:
    fake.add_token("ghs_app", "pg-bot-app[bot]")  # an app token, and no login given: taken for github-actions[bot]
    client(fake, token="ghs_app").upsert_marked_comment(5, "<!-- m -->", "body")
    err = capsys.readouterr().err
    assert "'pg-bot-app[bot]'" in err and "--bot-login" in err
    client(fake, token="ghs_app", login="pg-bot-app[bot]").upsert_marked_comment(5, "<!-- m -->", "body")
    assert capsys.readouterr().err == ""
