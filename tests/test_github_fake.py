"""The fake GitHub's payloads validate against GitHub's published schemas (githubkit's pydantic models), so the
fake cannot drift from the real API unnoticed; and its own behaviour (pagination, faults, outdating) holds."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from fake_github import FakeGitHub

models = pytest.importorskip("githubkit_schemas.latest.models", reason="githubkit (schemas) is not installed")


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_repo("org/repo", files={"a.py": "a = 1\n"}, collaborators={"alice": "write"})
    pr = fake_github.add_pull("org/repo", number=3, base={"a.py": "a = 1\n", "old.py": "o\n"},
                              head={"a.py": "a = 2\nb = 3\n", "new.py": "o\n"}, renames={"old.py": "new.py"},
                              labels=["bug"])
    pr.comments.append({"id": 1, "issue": 3, "user": "alice", "body": "hi"})
    pr.reviews.append({"id": 2, "pull": 3, "user": "alice", "body": "r", "state": "COMMENTED",
                       "commit_id": pr.head_sha})
    pr.review_comments.append({"id": 4, "pull": 3, "review_id": 2, "user": "alice", "path": "a.py", "body": "c",
                               "line": 1, "original_line": 1, "side": "RIGHT", "commit_id": pr.head_sha,
                               "original_commit_id": pr.head_sha, "line_text": "a = 2"})
    fake_github.add_issue("org/repo", number=7, body="tracking")
    fake_github.repos["org/repo"].statuses.append({"id": 5, "sha": pr.head_sha, "state": "success",
                                                   "context": "ci"})
    return fake_github


def get(fake: FakeGitHub, path: str) -> Any:
    r = requests.get(fake.url + path, timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def test_every_read_endpoint_matches_githubs_schema(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 3)
    blob_sha = get(fake, f"/repos/org/repo/contents/a.py?ref={pr.head_sha}")["sha"]
    checks: list[tuple[str, Any, bool]] = [
        ("/repos/org/repo", models.FullRepository, False),
        ("/repos/org/repo/pulls/3", models.PullRequest, False),
        ("/repos/org/repo/pulls/3/files", models.DiffEntry, True),
        (f"/repos/org/repo/contents/a.py?ref={pr.head_sha}", models.ContentFile, False),
        (f"/repos/org/repo/git/blobs/{blob_sha}", models.Blob, False),
        ("/repos/org/repo/pulls/3/comments", models.PullRequestReviewComment, True),
        ("/repos/org/repo/pulls/3/reviews", models.PullRequestReview, True),
        ("/repos/org/repo/issues/3/comments", models.IssueComment, True),
        ("/repos/org/repo/issues/7", models.Issue, False),
        ("/repos/org/repo/issues/3", models.Issue, False),
        ("/repos/org/repo/issues/3/labels", models.Label, True),
        ("/repos/org/repo/collaborators/alice/permission", models.RepositoryCollaboratorPermission, False),
        (f"/repos/org/repo/commits/{pr.head_sha}/statuses", models.Status, True),
    ]
    for path, model, is_list in checks:
        data = get(fake, path)
        items = data if is_list else [data]
        assert items, path
        for item in items:
            model.model_validate(item)  # raises pydantic.ValidationError on any drift


def test_write_responses_match_githubs_schema(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 3)
    base = fake.url + "/repos/org/repo"
    review = requests.post(f"{base}/pulls/3/reviews", json={"commit_id": pr.head_sha, "event": "COMMENT",
                           "body": "b", "comments": [{"path": "a.py", "line": 2, "body": "x"}]}, timeout=5)
    models.PullRequestReview.model_validate(review.json())
    created = requests.post(f"{base}/issues/3/comments", json={"body": "b"}, timeout=5)
    assert created.status_code == 201
    models.IssueComment.model_validate(created.json())
    edited = requests.patch(f"{base}/issues/comments/{created.json()['id']}", json={"body": "c"}, timeout=5)
    models.IssueComment.model_validate(edited.json())
    rc = requests.patch(f"{base}/pulls/comments/4", json={"body": "d"}, timeout=5)
    models.PullRequestReviewComment.model_validate(rc.json())
    status = requests.post(f"{base}/statuses/{pr.head_sha}", json={"state": "pending", "context": "x"}, timeout=5)
    models.Status.model_validate(status.json())
    issue = requests.patch(f"{base}/issues/7", json={"body": "new"}, timeout=5)
    models.Issue.model_validate(issue.json())
    error = requests.get(f"{base}/pulls/99", timeout=5)
    assert error.status_code == 404
    models.BasicError.model_validate(error.json())
    bad = requests.post(f"{base}/pulls/3/reviews", json={"commit_id": pr.head_sha, "event": "COMMENT", "body": "b",
                        "comments": [{"path": "a.py", "line": 99, "body": "x"}]}, timeout=5)
    assert bad.status_code == 422
    models.ValidationErrorSimple.model_validate(bad.json())


def test_pagination_links_and_fault_queue(fake: FakeGitHub) -> None:
    fake.add_pull("org/repo", number=8, base={}, head={f"f{i}.py": "x\n" for i in range(5)})
    r = requests.get(fake.url + "/repos/org/repo/pulls/8/files?per_page=2", timeout=5)
    assert len(r.json()) == 2 and 'rel="next"' in r.headers["Link"] and "page=3" in r.headers["Link"]
    last = requests.get(fake.url + "/repos/org/repo/pulls/8/files?per_page=2&page=3", timeout=5)
    assert len(last.json()) == 1 and 'rel="next"' not in last.headers["Link"]
    fake.fail(502, method="GET", path=r"/pulls/8$", times=1, headers={"X-Test": "1"})
    assert requests.get(fake.url + "/repos/org/repo/pulls/8", timeout=5).status_code == 502
    assert requests.get(fake.url + "/repos/org/repo/pulls/8", timeout=5).status_code == 200


def test_push_outdates_comments_on_changed_lines(fake: FakeGitHub) -> None:
    pr = fake.pull("org/repo", 3)
    base = fake.url + "/repos/org/repo"
    requests.post(f"{base}/pulls/3/reviews", timeout=5, json={
        "commit_id": pr.head_sha, "event": "COMMENT", "body": "b",
        "comments": [{"path": "a.py", "line": 1, "body": "on a"}, {"path": "a.py", "line": 2, "body": "on b"}]})
    fake.push("org/repo", 3, {"a.py": "a = 2\nb = 4\n", "new.py": "o\n"})
    lines = {c["body"]: c["line"] for c in pr.review_comments}
    assert lines["on a"] == 1 and lines["on b"] is None


def test_authors_follow_the_token_and_user_answers_only_users(fake_github: FakeGitHub) -> None:
    fake_github.add_repo("o/r")
    fake_github.add_pull("o/r", number=1, base={}, head={"a.py": "a = 1\n"})
    fake_github.add_token("pat", "alice")
    url = f"{fake_github.url}/repos/o/r/issues/1/comments"
    for auth, login in (("token pat", "alice"), ("token other", "github-actions[bot]"), (None, "github-actions[bot]")):
        headers = {"Authorization": auth} if auth else {}
        made = requests.post(url, json={"body": "hi"}, headers=headers, timeout=5).json()
        assert made["user"]["login"] == login
    assert requests.get(f"{fake_github.url}/user", headers={"Authorization": "token pat"}, timeout=5).json()[
        "login"] == "alice"
    assert requests.get(f"{fake_github.url}/user", timeout=5).status_code == 403  # an installation token
    fake_github.token = "t0ken"  # with a required token, one added with add_token is accepted too
    assert requests.get(url, headers={"Authorization": "token pat"}, timeout=5).status_code == 200
    assert requests.get(url, headers={"Authorization": "token nope"}, timeout=5).status_code == 401


@pytest.mark.parametrize("after", [True, False])
def test_a_time_out_fault_answers_nothing_and_acts_only_with_after(fake_github: FakeGitHub, after: bool) -> None:
    fake_github.add_repo("o/r")
    pr = fake_github.add_pull("o/r", number=1, base={}, head={"a.py": "a = 1\n"})
    fake_github.time_out(method="POST", path=r"/comments$", after=after, hang=0.05)
    with pytest.raises(requests.exceptions.ConnectionError):  # the connection drops without an answer
        requests.post(f"{fake_github.url}/repos/o/r/issues/1/comments", json={"body": "hi"}, timeout=5)
    assert len(pr.comments) == (1 if after else 0)
    assert [r.status for r in fake_github.requests("POST")] == [0]
    with pytest.raises(requests.exceptions.ReadTimeout):  # a hang longer than the client waits: a timeout
        fake_github.time_out(method="GET", path=r"/comments$", hang=1.0)
        requests.get(f"{fake_github.url}/repos/o/r/issues/1/comments", timeout=0.2)
