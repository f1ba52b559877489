"""The HTTP side of the fake: a threaded ``http.server`` on 127.0.0.1 (free port) speaking the REST endpoints
pg-bot uses, with GitHub's pagination (``per_page``/``page`` + ``Link``), errors and fault injection."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from . import payloads as P
from .state import FakeGitHub, FakeIssue, FakeRepo, LoggedRequest, git_blob_sha, right_side_hunks

REPO = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"


class _Hang(Exception):
    """Answer nothing: hold the connection ``seconds``, then drop it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


class HTTPError(Exception):
    def __init__(self, status: int, message: str, errors: list[Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.errors, self.headers = status, message, errors, headers or {}


Handler = Callable[["Api", dict[str, str], dict[str, str], Any], tuple[int, Any]]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        ROUTES.append((method, re.compile(f"^{pattern}$"), fn))
        return fn

    return deco


class Api:
    """Endpoint implementations over a FakeGitHub; each returns (status, json-able body). ``login`` is who the
    request acts as (its token's identity): the author of whatever it creates."""

    def __init__(self, fake: FakeGitHub, login: str | None = None) -> None:
        self.fake = fake
        self.login = login or fake.bot_login

    @property
    def base(self) -> str:
        return self.fake.url

    def repo(self, m: dict[str, str]) -> FakeRepo:
        repo = self.fake.repos.get(f"{m['owner']}/{m['name']}")
        if repo is None:
            raise HTTPError(404, "Not Found")
        return repo

    def issue(self, m: dict[str, str], *, pull: bool = False) -> tuple[FakeRepo, FakeIssue]:
        repo = self.repo(m)
        issue = repo.issues.get(int(m["n"]))
        if issue is None or (pull and not issue.is_pull):
            raise HTTPError(404, "Not Found")
        return repo, issue

    def user(self, login: str) -> dict[str, Any]:
        return P.user(self.base, login, self.fake.user_id(login))

    def repo_json(self, full_name: str) -> dict[str, Any]:
        repo = self.fake.repos.get(full_name)
        return P.repository(self.base, full_name, repo.id if repo else 999, repo.default_branch if repo else "main")

    def labels_json(self, repo: FakeRepo, names: list[str]) -> list[dict[str, Any]]:
        return [P.label(self.base, repo.full_name, n, 100 + i) for i, n in enumerate(names)]

    def pull_json(self, repo: FakeRepo, pr: FakeIssue) -> dict[str, Any]:
        return P.pull(self.base, self.repo_json(repo.full_name), self.repo_json(pr.head_repo), pr,
                      self.labels_json(repo, pr.labels), self.user(pr.user))


def _body_field(body: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(body, dict) or not isinstance(body.get(key), kind):
        raise HTTPError(422, "Invalid request.", [f"`{key}` is missing or of the wrong type"])
    return body[key]


# ---------------------------------------------------------------- the authenticated identity


@route("GET", r"/user")
def get_user(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    if api.login.endswith("[bot]"):  # an app installation token (Actions' GITHUB_TOKEN too) is not a user
        raise HTTPError(403, "Resource not accessible by integration")
    return 200, api.user(api.login)


# ---------------------------------------------------------------- repositories, pulls, files, contents


@route("GET", REPO)
def get_repo(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    return 200, api.repo_json(repo.full_name)


@route("GET", REPO + r"/pulls/(?P<n>\d+)")
def get_pull(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, pr = api.issue(m, pull=True)
    return 200, api.pull_json(repo, pr)


@route("GET", REPO + r"/pulls/(?P<n>\d+)/files")
def list_files(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, pr = api.issue(m, pull=True)
    return 200, [P.diff_entry(api.base, repo.full_name, pr.head_sha, f) for f in pr.files]


@route("GET", REPO + r"/contents/(?P<path>.+)")
def get_contents(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    ref = q.get("ref", repo.default_branch)
    tree = repo.trees.get(ref)
    path = unquote(m["path"])
    if tree is None or path not in tree:
        raise HTTPError(404, "Not Found")
    data = tree[path]
    return 200, P.content_file(api.base, repo.full_name, path, ref, git_blob_sha(data), data, api.fake.content_limit)


@route("GET", REPO + r"/git/blobs/(?P<sha>[0-9a-f]{40})")
def get_blob(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    for tree in repo.trees.values():
        for data in tree.values():
            if git_blob_sha(data) == m["sha"]:
                return 200, P.blob(api.base, repo.full_name, m["sha"], data)
    raise HTTPError(404, "Not Found")


# ---------------------------------------------------------------- reviews and review comments


@route("GET", REPO + r"/pulls/(?P<n>\d+)/comments")
def list_review_comments(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, pr = api.issue(m, pull=True)
    return 200, [P.review_comment(api.base, repo.full_name, c, api.user(c["user"])) for c in pr.review_comments]


@route("PATCH", REPO + r"/pulls/comments/(?P<id>\d+)")
def edit_review_comment(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    text = _body_field(body, "body", str)
    for issue in repo.issues.values():
        for c in issue.review_comments:
            if c["id"] == int(m["id"]):
                c["body"] = text
                c["edits"] = c.get("edits", 0) + 1
                return 200, P.review_comment(api.base, repo.full_name, c, api.user(c["user"]))
    raise HTTPError(404, "Not Found")


@route("GET", REPO + r"/pulls/(?P<n>\d+)/reviews")
def list_reviews(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, pr = api.issue(m, pull=True)
    return 200, [P.review(api.base, repo.full_name, r, api.user(r["user"])) for r in pr.reviews]


@route("POST", REPO + r"/pulls/(?P<n>\d+)/reviews")
def create_review(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, pr = api.issue(m, pull=True)
    if not isinstance(body, dict):
        raise HTTPError(400, "Problems parsing JSON")
    commit_id = body.get("commit_id", pr.head_sha)
    if commit_id not in pr.head_history:
        raise HTTPError(422, "Unprocessable Entity", ["commit_id is not part of the pull request"])
    event = body.get("event")
    if event not in (None, "COMMENT", "APPROVE", "REQUEST_CHANGES"):
        raise HTTPError(422, "Unprocessable Entity", [f"unknown event {event!r}"])
    if event in ("COMMENT", "REQUEST_CHANGES") and not body.get("body") and not body.get("comments"):
        raise HTTPError(422, "Unprocessable Entity", ["Review body is required for a COMMENT review"])
    new_comments = [_review_comment(api, pr, c, commit_id) for c in body.get("comments") or []]
    review = {"id": api.fake.new_id(), "pull": pr.number, "user": api.login, "body": body.get("body") or "",
              "state": {"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED",
                        None: "PENDING"}[event], "commit_id": commit_id}
    for c in new_comments:
        c["review_id"] = review["id"]
    pr.reviews.append(review)
    pr.review_comments.extend(new_comments)
    return 200, P.review(api.base, repo.full_name, review, api.user(review["user"]))


def _review_comment(api: Api, pr: FakeIssue, c: Any, commit_id: str) -> dict[str, Any]:
    """Validate one review comment like GitHub: the line (and start_line) must lie in one hunk of the diff."""
    if not isinstance(c, dict) or not isinstance(c.get("path"), str) or not isinstance(c.get("body"), str):
        raise HTTPError(422, "Unprocessable Entity", ["comment needs `path` and `body`"])
    if not isinstance(c.get("line"), int):
        raise HTTPError(422, "Unprocessable Entity", ["comment needs `line` (positions are not supported here)"])
    f = next((f for f in pr.files if f.filename == c["path"]), None)
    side = c.get("side", "RIGHT")
    start = c.get("start_line")
    if start is not None and (not isinstance(start, int) or start >= c["line"]):
        raise HTTPError(422, "Unprocessable Entity", ["start_line must precede line"])
    hunks = right_side_hunks(f.patch if f else None)
    hunk = next((h for h in hunks if c["line"] in h), None)
    if side != "RIGHT" or hunk is None or (start is not None and start not in hunk):
        raise HTTPError(422, "Unprocessable Entity",
                        ["Pull request review thread line must be part of the diff"])
    return {"id": api.fake.new_id(), "pull": pr.number, "user": api.login, "path": c["path"],
            "body": c["body"], "line": c["line"], "original_line": c["line"], "start_line": start,
            "original_start_line": start, "start_side": c.get("start_side") if start else None, "side": side,
            "commit_id": commit_id, "original_commit_id": commit_id, "line_text": hunk[c["line"]],
            "diff_hunk": "\n".join(f"+{t}" for t in hunk.values())}


# ---------------------------------------------------------------- issues, comments, labels


@route("GET", REPO + r"/issues/(?P<n>\d+)")
def get_issue(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, issue = api.issue(m)
    return 200, P.issue(api.base, repo.full_name, issue, api.labels_json(repo, issue.labels), api.user(issue.user),
                        issue.is_pull)


@route("PATCH", REPO + r"/issues/(?P<n>\d+)")
def edit_issue(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    _, issue = api.issue(m)
    if not isinstance(body, dict):
        raise HTTPError(400, "Problems parsing JSON")
    if "body" in body:
        issue.body = body["body"]
    if "title" in body:
        issue.title = _body_field(body, "title", str)
    if "labels" in body:
        issue.labels = [lb if isinstance(lb, str) else lb["name"] for lb in body["labels"]]
    if "state" in body:
        issue.state = body["state"]
    return get_issue(api, m, q, None)


@route("GET", REPO + r"/issues/(?P<n>\d+)/comments")
def list_issue_comments(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, issue = api.issue(m)
    return 200, [P.issue_comment(api.base, repo.full_name, c, api.user(c["user"])) for c in issue.comments]


@route("POST", REPO + r"/issues/(?P<n>\d+)/comments")
def create_issue_comment(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, issue = api.issue(m)
    c = {"id": api.fake.new_id(), "issue": issue.number, "user": api.login,
         "body": _body_field(body, "body", str)}
    issue.comments.append(c)
    return 201, P.issue_comment(api.base, repo.full_name, c, api.user(c["user"]))


@route("PATCH", REPO + r"/issues/comments/(?P<id>\d+)")
def edit_issue_comment(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    text = _body_field(body, "body", str)
    for issue in repo.issues.values():
        for c in issue.comments:
            if c["id"] == int(m["id"]):
                c["body"] = text
                c["edits"] = c.get("edits", 0) + 1
                return 200, P.issue_comment(api.base, repo.full_name, c, api.user(c["user"]))
    raise HTTPError(404, "Not Found")


@route("GET", REPO + r"/issues/(?P<n>\d+)/labels")
def list_labels(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, issue = api.issue(m)
    return 200, api.labels_json(repo, issue.labels)


@route("POST", REPO + r"/issues/(?P<n>\d+)/labels")
def add_labels(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, issue = api.issue(m)
    names = body.get("labels") if isinstance(body, dict) else body
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise HTTPError(422, "Invalid request.", ["`labels` must be a list of names"])
    issue.labels.extend(n for n in names if n not in issue.labels)
    return 200, api.labels_json(repo, issue.labels)


@route("DELETE", REPO + r"/issues/(?P<n>\d+)/labels/(?P<label>.+)")
def remove_label(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo, issue = api.issue(m)
    name = unquote(m["label"])
    if name not in issue.labels:
        raise HTTPError(404, "Label does not exist")
    issue.labels.remove(name)
    return 200, api.labels_json(repo, issue.labels)


# ---------------------------------------------------------------- permissions, dispatch, statuses


@route("GET", REPO + r"/collaborators/(?P<user>[^/]+)/permission")
def get_permission(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    login = unquote(m["user"])
    return 200, P.permission(repo.collaborators.get(login, "none"), api.user(login))


@route("POST", REPO + r"/actions/workflows/(?P<wf>[^/]+)/dispatches")
def dispatch(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    wf = unquote(m["wf"])
    if repo.workflows is not None and wf not in repo.workflows:
        raise HTTPError(404, "Not Found")
    ref = _body_field(body, "ref", str)
    inputs = body.get("inputs") or {}
    if not isinstance(inputs, dict) or len(inputs) > 25:  # GitHub's limit on workflow_dispatch inputs
        raise HTTPError(422, "Unprocessable Entity", ["inputs must be an object with at most 25 keys"])
    repo.dispatches.append({"workflow": wf, "ref": ref, "inputs": inputs})
    return 204, None


@route("POST", REPO + r"/statuses/(?P<sha>[0-9a-f]{40})")
def create_status(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    state = _body_field(body, "state", str)
    if state not in ("error", "failure", "pending", "success"):
        raise HTTPError(422, "Validation Failed", [f"state {state!r} is not one of error, failure, pending, success"])
    s = {"id": api.fake.new_id(), "sha": m["sha"], "state": state, "context": body.get("context", "default"),
         "description": body.get("description"), "target_url": body.get("target_url"), "user": api.login}
    repo.statuses.append(s)
    return 201, P.status(api.base, repo.full_name, s, api.user(api.login))


@route("GET", REPO + r"/commits/(?P<sha>[0-9a-f]{40})/statuses")
def list_statuses(api: Api, m: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
    repo = api.repo(m)
    return 200, [P.status(api.base, repo.full_name, s, api.user(s.get("user", api.fake.bot_login)))
                 for s in reversed(repo.statuses) if s["sha"] == m["sha"]]


# ---------------------------------------------------------------- HTTP plumbing


def _paginate(base: str, path: str, q: dict[str, str], items: list[Any]) -> tuple[list[Any], str | None]:
    try:
        per_page = max(1, min(100, int(q.get("per_page", 30))))
        page = max(1, int(q.get("page", 1)))
    except ValueError as exc:
        raise HTTPError(422, "Invalid pagination parameter") from exc
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page: page * per_page]

    def link(p: int, rel: str) -> str:
        return f'<{base}{path}?{urlencode({**q, "per_page": per_page, "page": p})}>; rel="{rel}"'

    rels = []
    if page < last:
        rels += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        rels += [link(1, "first"), link(page - 1, "prev")]
    return chunk, ", ".join(rels) or None


class _RequestHandler(BaseHTTPRequestHandler):
    fake: FakeGitHub  # set on the subclass made by serve()
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the fake keeps its own log
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        path = parts.path.removeprefix("/api/v3")  # GitHub Enterprise style base URLs work too
        query = dict(parse_qsl(parts.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        auth = self.headers.get("Authorization")
        status, data, headers = 500, None, {}
        body: Any = None
        try:
            body = json.loads(raw) if raw else None
            status, data, headers = self._dispatch(method, path, query, body, auth)
        except _Hang as hang:
            with fake.lock:
                fake.log.append(LoggedRequest(method, path, query, body, 0, auth))  # 0: no answer was sent
            time.sleep(hang.seconds)
            self.close_connection = True
            return
        except HTTPError as exc:
            status, headers = exc.status, exc.headers
            data = P.error(exc.message, exc.status, exc.errors)
        except json.JSONDecodeError:
            status, data = 400, P.error("Problems parsing JSON", 400)
        with fake.lock:
            fake.log.append(LoggedRequest(method, path, query, body, status, auth))
        out = b"" if data is None else json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(out)))
        self.send_header("X-RateLimit-Limit", "5000")
        self.send_header("X-RateLimit-Remaining", "4999")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(out)

    def _dispatch(self, method: str, path: str, query: dict[str, str], body: Any,
                  auth: str | None) -> tuple[int, Any, dict[str, str]]:
        fake = self.fake
        if not fake.authorized(auth):
            raise HTTPError(401, "Bad credentials")
        fault = fake.take_fault(method, path)
        if fault is not None:
            message = fault.message or {
                403: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                422: "Unprocessable Entity",
            }.get(fault.status, "Server Error")
            if not fault.after:
                if fault.hang:
                    raise _Hang(fault.hang)
                raise HTTPError(fault.status, message, headers=fault.headers)
        api = Api(fake, fake.login_for(auth))
        for verb, pattern, fn in ROUTES:
            m = pattern.match(path)
            if verb == method and m:
                with fake.lock:
                    status, data = fn(api, m.groupdict(), query, body)
                if fault is not None and fault.hang:  # done, but the answer never comes
                    raise _Hang(fault.hang)
                if fault is not None:  # an `after` fault: done, but answered with an error
                    raise HTTPError(fault.status, message, headers=fault.headers)
                headers: dict[str, str] = {}
                if method == "GET" and isinstance(data, list):
                    data, link = _paginate(fake.url, path if not self.path.startswith("/api/v3") else "/api/v3" + path,
                                           query, data)
                    if link:
                        headers["Link"] = link
                return status, data, headers
        raise HTTPError(404, "Not Found")


@contextlib.contextmanager
def serve(fake: FakeGitHub | None = None) -> Iterator[FakeGitHub]:
    """Run ``fake`` (a new one if None) on 127.0.0.1 at a free port; ``fake.url`` is its base URL."""
    fake = fake or FakeGitHub()
    handler = type("BoundHandler", (_RequestHandler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-github",
                              daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
