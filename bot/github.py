"""The only module that talks to GitHub (through PyGithub).

Every list is paginated (PyGithub's PaginatedList follows ``Link`` headers); every request goes through
PyGithub's ``GithubRetry`` (urllib3 Retry): 5xx and secondary rate limits (403 + ``Retry-After`` or a rate-limit
message) are retried with exponential backoff, honouring ``Retry-After``. 401/403/404 and exhausted retries
become one ``GitHubError`` with a message that says what to check. PyGithub runs lazily here, so handles such as
``repo.get_pull(n)`` cost no request until data is read.
"""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubRetry
from urllib3.util.retry import Retry

DEFAULT_API_URL = "https://api.github.com"
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
T = TypeVar("T")


class GitHubError(Exception):
    """A GitHub request failed for good; ``status`` is the HTTP status (0 when no response came back)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class PullFacts:
    number: int
    head_sha: str
    head_repo: str | None  # full_name; None when the fork was deleted
    base_ref: str
    base_sha: str
    labels: tuple[str, ...]
    author: str
    state: str
    title: str = ""


@dataclass(frozen=True)
class PullFile:
    filename: str
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    previous_filename: str | None
    patch: str | None  # None: binary, or too large for the API to include
    sha: str | None
    additions: int = 0
    deletions: int = 0


@dataclass(frozen=True)
class Comment:
    """An issue comment or a review comment (``path``/``line`` set for the latter; ``line`` None = outdated)."""

    id: int
    body: str
    user: str
    user_type: str = "User"
    path: str | None = None
    line: int | None = None
    start_line: int | None = None
    commit_id: str | None = None


class _NoBlindPostRetry(GithubRetry):
    """GithubRetry that does not re-send a POST after a 5xx: GitHub may have acted on it (a review created
    behind a gateway timeout), so the caller looks first. Rate-limit 403s are still retried: GitHub did not
    act on those."""

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method == "POST" and status_code >= 500:
            return False
        return bool(super().is_retry(method, status_code, has_retry_after))


def default_retry(total: int = 6, backoff_factor: float = 1.0, secondary_rate_wait: float = 60.0) -> Retry:
    """5xx / secondary-rate-limit retry policy (exponential backoff; ``Retry-After`` wins when sent)."""
    return GithubRetry(total=total, backoff_factor=backoff_factor, backoff_max=120,
                       secondary_rate_wait=secondary_rate_wait, respect_retry_after_header=True)


def explain(status: int, message: str, what: str) -> str:
    hint = {
        401: "authentication failed: is GITHUB_TOKEN set and valid?",
        403: "forbidden: the token lacks the permission this needs (check the workflow's `permissions:`), "
             "or a rate limit outlasted the retries",
        404: "not found: check the repository, number or path, and that the token can see the repository",
        422: "GitHub rejected the request as invalid",
    }.get(status, "GitHub request failed")
    return f"{what}: {hint} (HTTP {status}: {message})" if status else f"{what}: {message}"


class GitHubClient:
    """One repository on one GitHub (``base_url`` for GitHub Enterprise or the test server)."""

    def __init__(self, token: str | None, repo: str, *, base_url: str = DEFAULT_API_URL,
                 retry: Retry | int | None = None, per_page: int = 100, throttle: bool | None = None,
                 timeout: int = 30) -> None:
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise GitHubError(0, f"--repo must be OWNER/NAME, got {repo!r}")
        self.repo_name = repo
        policy = default_retry() if retry is None else retry
        if throttle is None:  # a loopback server (tests, a local proxy) needs no spacing out
            throttle = urllib.parse.urlsplit(base_url).hostname not in ("127.0.0.1", "localhost", "::1")
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=base_url.rstrip("/"),
            retry=policy,
            per_page=per_page,
            timeout=timeout,
            lazy=True,
            # PyGithub spaces requests out (GitHub's advice against secondary limits); tests turn it off.
            seconds_between_requests=0.25 if throttle else None,
            seconds_between_writes=1.0 if throttle else None,
        )
        self._repo = self._gh.get_repo(repo)
        once = _NoBlindPostRetry(**_retry_params(policy)) if isinstance(policy, Retry) else policy
        self._gh_once = Github(auth=Auth.Token(token) if token else None, base_url=base_url.rstrip("/"), retry=once,
                               per_page=per_page, timeout=timeout, lazy=True,
                               seconds_between_requests=0.25 if throttle else None,
                               seconds_between_writes=1.0 if throttle else None)

    # ------------------------------------------------------------ plumbing

    @contextmanager
    def _call(self, what: str) -> Iterator[None]:
        try:
            yield
        except GithubException as exc:
            raise GitHubError(exc.status, explain(exc.status, _message(exc), what)) from exc
        except requests.exceptions.RetryError as exc:
            raise GitHubError(0, explain(0, f"gave up after retries ({_root(exc)})", what)) from exc
        except requests.exceptions.RequestException as exc:
            raise GitHubError(0, explain(0, f"network error: {_root(exc)}", what)) from exc

    def _run(self, what: str, fn: Callable[[], T]) -> T:
        with self._call(what):
            return fn()

    def _request(self, verb: str, path: str, what: str, body: Any = None, *, gh: Github | None = None) -> Any:
        url = f"{self._repo.url}{path}"
        with self._call(what):
            _, data = (gh or self._gh).requester.requestJsonAndCheck(verb, url, input=body)
        return data

    # ------------------------------------------------------------ pull requests

    def pull(self, n: int) -> PullFacts:
        def get() -> PullFacts:
            pr = self._repo.get_pull(n)
            head_repo = pr.head.repo
            return PullFacts(
                number=pr.number, head_sha=pr.head.sha, head_repo=head_repo.full_name if head_repo else None,
                base_ref=pr.base.ref, base_sha=pr.base.sha, labels=tuple(lb.name for lb in pr.labels),
                author=pr.user.login, state=pr.state, title=pr.title or "",
            )

        return self._run(f"reading pull request #{n} of {self.repo_name}", get)

    def pull_files(self, n: int) -> list[PullFile]:
        def get() -> list[PullFile]:
            return [
                PullFile(filename=f.filename, status=f.status, previous_filename=f.previous_filename,
                         patch=f.patch, sha=f.sha, additions=f.additions, deletions=f.deletions)
                for f in self._repo.get_pull(n).get_files()
            ]

        return self._run(f"listing the files of pull request #{n}", get)

    def file_bytes(self, path: str, ref: str) -> bytes:
        """A file's content at ``ref``; files over the contents API's 1 MB limit come from the git blob API."""

        def get() -> bytes:
            content = self._repo.get_contents(path, ref=ref)
            if isinstance(content, list):
                raise GitHubError(0, f"{path} at {ref} is a directory, not a file")
            if content.encoding == "base64":
                return base64.b64decode(content.content or "")
            blob = self._repo.get_git_blob(content.sha)  # encoding "none": too large to inline
            return base64.b64decode(blob.content) if blob.encoding == "base64" else blob.content.encode()

        return self._run(f"reading {path} at {ref[:12]}", get)

    def file_text(self, path: str, ref: str) -> str:
        return self.file_bytes(path, ref).decode("utf-8")

    def list_review_comments(self, n: int) -> list[Comment]:
        def get() -> list[Comment]:
            return [
                Comment(id=c.id, body=c.body or "", user=c.user.login if c.user else "",
                        user_type=c.user.type if c.user else "User", path=c.path, line=c.line,
                        start_line=c.start_line, commit_id=c.commit_id)
                for c in self._repo.get_pull(n).get_review_comments()
            ]

        return self._run(f"listing review comments of pull request #{n}", get)

    def edit_review_comment(self, comment_id: int, body: str) -> None:
        self._request("PATCH", f"/pulls/comments/{comment_id}", f"editing review comment {comment_id}",
                      {"body": body})

    def create_review(self, n: int, commit_id: str, body: str, comments: list[dict[str, Any]],
                      event: str = "COMMENT") -> int:
        """One review holding all inline comments (one request, however many comments). Returns its id.

        After a 5xx the review may exist all the same, so before sending it again the PR's reviews are searched
        for one with this exact body (make ``body`` unique to the review, as the reviewer does)."""
        payload = {"commit_id": commit_id, "body": body, "event": event, "comments": comments}

        def landed() -> int | None:
            found = self._run(f"listing reviews of pull request #{n}",
                              lambda: [r.id for r in self._repo.get_pull(n).get_reviews() if r.body == body])
            return found[-1] if found else None

        return self._create_once(f"/pulls/{n}/reviews", f"creating a review on pull request #{n}", payload, landed)

    def _create_once(self, path: str, what: str, payload: dict[str, Any], landed: Callable[[], int | None]) -> int:
        """POST that creates something, without ever creating it twice: after a 5xx, ``landed`` looks for it
        and only when it is not there is the POST sent again (with the usual retries)."""
        try:
            data = self._request("POST", path, what, payload, gh=self._gh_once)
        except GitHubError as exc:
            if exc.status < 500:
                raise
            found = landed()
            if found is not None:
                return int(found)
            data = self._request("POST", path, what, payload)
        return int(data["id"])

    # ------------------------------------------------------------ issues, comments, labels

    def list_issue_comments(self, n: int) -> list[Comment]:
        def get() -> list[Comment]:
            return [
                Comment(id=c.id, body=c.body or "", user=c.user.login if c.user else "",
                        user_type=c.user.type if c.user else "User")
                for c in self._repo.get_issue(n).get_comments()
            ]

        return self._run(f"listing comments of #{n}", get)

    def upsert_marked_comment(self, n: int, marker: str, body: str) -> int:
        """Create, or edit in place, the one comment on #n holding ``marker``; returns its id. No request is made
        for an edit that would not change the text."""
        if marker not in body:
            body = f"{marker}\n{body}"
        held = [c for c in self.list_issue_comments(n) if marker in c.body]
        # Prefer a bot's comment: a human may have quoted the marker in a reply.
        held.sort(key=lambda c: c.user_type != "Bot")
        if held:
            if held[0].body != body:
                self._request("PATCH", f"/issues/comments/{held[0].id}", f"editing comment {held[0].id} on #{n}",
                              {"body": body})
            return held[0].id
        def landed() -> int | None:
            return next((c.id for c in self.list_issue_comments(n) if c.body == body), None)

        return self._create_once(f"/issues/{n}/comments", f"commenting on #{n}", {"body": body}, landed)

    def issue_body(self, n: int) -> str:
        return self._run(f"reading issue #{n}", lambda: self._repo.get_issue(n).body or "")

    def edit_issue_body(self, n: int, body: str) -> None:
        self._request("PATCH", f"/issues/{n}", f"editing the body of issue #{n}", {"body": body})

    def label_names(self, n: int) -> list[str]:
        return self._run(f"listing labels of #{n}", lambda: [lb.name for lb in self._repo.get_issue(n).get_labels()])

    def remove_label(self, n: int, label: str) -> bool:
        """False when the label was not on #n (not an error: another run may have removed it)."""
        try:
            self._request("DELETE", f"/issues/{n}/labels/{urllib.parse.quote(label, safe='')}",
                          f"removing label {label!r} from #{n}")
        except GitHubError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def add_labels(self, n: int, labels: list[str]) -> None:
        self._request("POST", f"/issues/{n}/labels", f"adding labels to #{n}", {"labels": list(labels)})

    # ------------------------------------------------------------ permissions, dispatch, statuses

    def permission(self, user: str) -> str:
        """The user's role on the repo: admin | maintain | write | triage | read | none. A custom role reports
        the legacy permission it is based on."""
        try:
            data = self._request("GET", f"/collaborators/{urllib.parse.quote(user, safe='')}/permission",
                                 f"reading {user}'s permission")
        except GitHubError as exc:
            if exc.status == 404:  # not a collaborator (or no such user)
                return "none"
            raise
        role = data.get("role_name")
        if role in ROLES:
            return str(role)
        legacy = data.get("permission")
        return str(legacy) if legacy in ROLES else "none"

    def dispatch_workflow(self, workflow_file: str, ref: str, inputs: dict[str, Any]) -> bool:
        """Dispatch ``workflow_file`` on ``ref``; True once GitHub accepted it (failures raise GitHubError)."""

        def go() -> bool:
            return bool(self._repo.get_workflow(workflow_file).create_dispatch(ref, inputs, throw=True))

        return self._run(f"dispatching {workflow_file} on {ref}", go)

    def create_status(self, sha: str, state: str, context: str, description: str = "",
                      target_url: str | None = None) -> None:
        body: dict[str, Any] = {"state": state, "context": context, "description": description[:140]}
        if target_url:
            body["target_url"] = target_url
        self._request("POST", f"/statuses/{sha}", f"setting status {context!r} on {sha[:12]}", body)


def _retry_params(policy: Retry) -> dict[str, Any]:
    return {"total": policy.total, "backoff_factor": policy.backoff_factor, "backoff_max": policy.backoff_max,
            "secondary_rate_wait": getattr(policy, "secondary_rate_wait", 60.0),
            "respect_retry_after_header": policy.respect_retry_after_header}


def _message(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict):
        msg = str(data.get("message", ""))
        errors = data.get("errors")
        if errors:
            msg += ": " + "; ".join(e if isinstance(e, str) else str(e.get("message", e)) for e in errors)
        return msg
    return str(data)


def _root(exc: BaseException) -> str:
    while exc.__context__ is not None and exc.__cause__ is None and str(exc) == "":
        exc = exc.__context__
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return str(reason or exc)
