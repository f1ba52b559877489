"""The only module that talks to GitHub (through PyGithub).

Every list is paginated (PyGithub's PaginatedList follows ``Link`` headers). Retries (``SafeRetry``, a
PyGithub ``GithubRetry``) never repeat what GitHub may already have done: idempotent requests (GET, PUT, PATCH,
DELETE) are retried on 5xx, timeouts and dropped connections, with exponential backoff honouring
``Retry-After``; a POST only when GitHub certainly did not act on it (a rate-limit answer, a connection never
made). A POST that creates something and fails otherwise is followed by a look for what it created
(``_create_once``) before it is sent again. 401/403/404 and exhausted retries become one ``GitHubError`` with a
message that says what to check. PyGithub runs lazily here, so handles such as ``repo.get_pull(n)`` cost no
request until data is read.

Markers: the reviewer and the dispatcher recognise their own comments by a hidden marker, but only on comments
authored by the identity the token belongs to (``GitHubClient.identity``) and only at the very start of the
body, so nobody else can make pg-bot adopt, edit or skip a comment by quoting a marker.
"""

from __future__ import annotations

import base64
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubRetry
from urllib3.util.retry import Retry

DEFAULT_API_URL = "https://api.github.com"
# Who an installation token (a GitHub App's, or Actions' GITHUB_TOKEN) acts as, when no login is configured:
# GET /user is not available to such tokens, so it cannot be asked.
DEFAULT_APP_LOGIN = "github-actions[bot]"
# Repeating one of these leaves GitHub as one request would (pg-bot's PATCHes set whole fields).
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
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


class SafeRetry(GithubRetry):
    """GithubRetry that re-sends only what is safe to repeat.

    Methods in ``allowed_methods`` (by default the idempotent ones) are retried on 5xx, read timeouts and dropped
    connections. Any other method (POST) is retried only when GitHub certainly did not act on it: a rate-limit
    answer (403 with ``Retry-After`` or a rate-limit message, 429) or a connection that was never made. A POST
    that timed out or got a 5xx may have been carried out, so it is never re-sent blindly."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allowed_methods", IDEMPOTENT_METHODS)
        super().__init__(**kwargs)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if not self._is_method_retryable(method):
            return status_code in (403, 429)  # GithubRetry.increment retries a 403 only if it is a rate limit
        return bool(super().is_retry(method, status_code, has_retry_after))

    def increment(self, method: str | None = None, url: str | None = None, response: Any = None,
                  error: Exception | None = None, _pool: Any = None, _stacktrace: TracebackType | None = None
                  ) -> SafeRetry:
        # urllib3 refuses a read retry for a method not allowed, but would retry other mid-request errors
        if (error is not None and method is not None and not self._is_method_retryable(method)
                and not self._is_connection_error(error)):
            raise error.with_traceback(_stacktrace)
        return super().increment(method, url, response, error, _pool, _stacktrace)  # type: ignore[return-value]


def default_retry(total: int = 6, backoff_factor: float = 1.0, secondary_rate_wait: float = 60.0) -> Retry:
    """The retry policy (exponential backoff; ``Retry-After`` wins when sent); see ``SafeRetry``."""
    return SafeRetry(total=total, backoff_factor=backoff_factor, backoff_max=120,
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
                 timeout: int = 30, login: str | None = None) -> None:
        """``login``: who the token acts as, when known (an app's ``<slug>[bot]``); otherwise asked once
        (``identity``). ``timeout``: seconds to wait for GitHub's answer to one request."""
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise GitHubError(0, f"--repo must be OWNER/NAME, got {repo!r}")
        self.repo_name = repo
        self._login = login or None
        policy = default_retry() if retry is None else retry
        if isinstance(policy, Retry) and not isinstance(policy, SafeRetry):
            policy = SafeRetry(**_retry_params(policy))
        self._backoff = policy.backoff_factor if isinstance(policy, Retry) else 0.0
        self._attempts = 1 + (policy if isinstance(policy, int) else _total(policy))
        if throttle is None:  # a loopback server (tests, a local proxy) needs no spacing out
            throttle = urllib.parse.urlsplit(base_url).hostname not in ("127.0.0.1", "localhost", "::1")

        def github(retry_policy: Retry | int | None) -> Github:
            return Github(
                auth=Auth.Token(token) if token else None,
                base_url=base_url.rstrip("/"),
                retry=retry_policy,
                per_page=per_page,
                timeout=timeout,
                lazy=True,
                # PyGithub spaces requests out (GitHub's advice against secondary limits); tests turn it off.
                seconds_between_requests=0.25 if throttle else None,
                seconds_between_writes=1.0 if throttle else None,
            )

        self._gh = github(policy)
        self._repo = self._gh.get_repo(repo)
        # For the POSTs that are idempotent all the same (adding labels, setting a commit status).
        self._gh_idempotent_post = github(
            policy.new(allowed_methods=IDEMPOTENT_METHODS | {"POST"}) if isinstance(policy, Retry) else policy)

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

    def _request(self, verb: str, path: str, what: str, body: Any = None, *, gh: Github | None = None,
                 repo: bool = True) -> Any:
        url = f"{self._repo.url}{path}" if repo else path  # not under the repository: relative to the API root
        with self._call(what):
            _, data = (gh or self._gh).requester.requestJsonAndCheck(verb, url, input=body)
        return data

    # ------------------------------------------------------------ who we are

    def identity(self) -> str:
        """The login the token acts as, asked once per client: ``GET /user`` for a user token; an installation
        token (a GitHub App's, Actions' GITHUB_TOKEN) cannot read /user, and is then taken to be
        ``DEFAULT_APP_LOGIN`` unless ``login`` was given (an app's ``<slug>[bot]``)."""
        if self._login is None:
            try:
                data = self._request("GET", "/user", "asking GitHub who the token belongs to", repo=False)
                self._login = str(data["login"])
            except GitHubError as exc:
                if exc.status not in (403, 404):  # 403 "Resource not accessible by integration"
                    raise
                self._login = DEFAULT_APP_LOGIN
        return self._login

    def is_own(self, comment: Comment) -> bool:
        """Whether ``comment`` was written by this client's identity (logins are case-insensitive)."""
        return comment.user.casefold() == self.identity().casefold()

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

        After a timeout or a 5xx the review may exist all the same, so before sending it again the PR's reviews
        are searched for one of ours with this exact body (make ``body`` unique to the review, as the reviewer
        does)."""
        payload = {"commit_id": commit_id, "body": body, "event": event, "comments": comments}
        me = self.identity().casefold()

        def landed() -> int | None:
            found = self._run(f"listing reviews of pull request #{n}",
                              lambda: [r.id for r in self._repo.get_pull(n).get_reviews()
                                       if r.body == body and r.user is not None and r.user.login.casefold() == me])
            return found[-1] if found else None

        return self._create_once(f"/pulls/{n}/reviews", f"creating a review on pull request #{n}", payload, landed)

    def _create_once(self, path: str, what: str, payload: dict[str, Any], landed: Callable[[], int | None]) -> int:
        """POST that creates something, without ever creating it twice. The POST itself is not retried after a
        timeout or a 5xx (``SafeRetry``): GitHub may have acted on it. ``landed`` then looks for it, and only when
        it is not there is the POST sent again, up to the policy's number of attempts."""
        for attempt in range(self._attempts):
            try:
                data = self._request("POST", path, what, payload)
                self._check_author(data)
                return int(data["id"])
            except GitHubError as exc:
                if not _may_have_acted(exc) or attempt + 1 == self._attempts:
                    raise
            found = landed()
            if found is not None:
                return int(found)
            time.sleep(min(self._backoff * 2 ** attempt, 120))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _check_author(self, created: Any) -> None:
        """Warn when what we just created is authored by someone other than ``identity()``: our comments would
        then never be recognised on the next run (a new summary each time), e.g. an app token without
        ``login``. Trust is unaffected: other people's comments are still never taken for ours."""
        user = created.get("user") if isinstance(created, dict) else None
        author = user.get("login") if isinstance(user, dict) else None
        if isinstance(author, str) and author.casefold() != self.identity().casefold():
            print(f"pg-bot: warning: GitHub posts this token's comments as {author!r}, but pg-bot takes itself for "
                  f"{self.identity()!r}; pass --bot-login {author!r} (or set PG_BOT_LOGIN) so that reruns update "
                  "its comments instead of adding new ones", file=sys.stderr)

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
        """Create, or edit in place, the one comment on #n that is ours and starts with ``marker``; returns its
        id. Comments by anyone else are never adopted or edited, whatever they quote. No request is made for an
        edit that would not change the text."""
        if not body.startswith(marker):
            body = f"{marker}\n{body}"
        held = [c for c in self.list_issue_comments(n) if c.body.startswith(marker) and self.is_own(c)]
        if held:
            if held[0].body != body:
                self._request("PATCH", f"/issues/comments/{held[0].id}", f"editing comment {held[0].id} on #{n}",
                              {"body": body})
            return held[0].id

        def landed() -> int | None:
            return next((c.id for c in self.list_issue_comments(n) if c.body == body and self.is_own(c)), None)

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
        self._request("POST", f"/issues/{n}/labels", f"adding labels to #{n}", {"labels": list(labels)},
                      gh=self._gh_idempotent_post)  # a label already there stays there: safe to repeat

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
        # safe to repeat: a commit's status for a context is its latest one
        self._request("POST", f"/statuses/{sha}", f"setting status {context!r} on {sha[:12]}", body,
                      gh=self._gh_idempotent_post)


def _retry_params(policy: Retry) -> dict[str, Any]:
    return {"total": policy.total, "backoff_factor": policy.backoff_factor, "backoff_max": policy.backoff_max,
            "secondary_rate_wait": getattr(policy, "secondary_rate_wait", 60.0),
            "respect_retry_after_header": policy.respect_retry_after_header}


def _total(policy: Retry) -> int:
    return policy.total if isinstance(policy.total, int) and policy.total > 0 else 0


def _may_have_acted(exc: GitHubError) -> bool:
    """A failed POST that GitHub may have carried out all the same: no answer (timeout, dropped connection,
    retries given up) or a server error."""
    return exc.status == 0 or exc.status >= 500


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
