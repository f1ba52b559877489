"""The fake's state: repositories, trees, issues/PRs, comments, reviews, labels, permissions, a request log and
a fault queue. Plain data plus seeding helpers; the HTTP layer (server.py) reads and mutates it under ``lock``."""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _as_bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else text


def _git_lines(data: bytes | None) -> list[str]:
    """Lines as git (and so GitHub's diff) counts them: only \\n ends one (str.splitlines would also split at a
    lone \\r, a form feed, \\x85...)."""
    text = (data or b"").decode("utf-8")
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def make_patch(old: bytes | None, new: bytes | None) -> tuple[str | None, int, int]:
    """GitHub's `patch` field (hunks only, no ---/+++ header), additions, deletions. None for binary files."""
    if (old and b"\0" in old) or (new and b"\0" in new):
        return None, 0, 0
    a, b = _git_lines(old), _git_lines(new)
    lines = list(difflib.unified_diff(a, b, lineterm="", n=3))[2:]
    adds = sum(1 for ln in lines if ln.startswith("+"))
    dels = sum(1 for ln in lines if ln.startswith("-"))
    return ("\n".join(lines) if lines else None), adds, dels


def right_side_hunks(patch: str | None) -> list[dict[int, str]]:
    """Per hunk: new-file line number -> text, for lines a review comment may target (added and context)."""
    hunks: list[dict[int, str]] = []
    if not patch:
        return hunks
    line = 0
    for raw in patch.split("\n"):
        m = HUNK.match(raw)
        if m:
            hunks.append({})
            line = int(m.group(1))
            continue
        if not hunks or raw.startswith("\\"):
            continue
        if raw.startswith("-"):
            continue
        hunks[-1][line] = raw[1:]
        line += 1
    return hunks


@dataclass
class FakeFile:
    filename: str
    status: str = "modified"  # added | removed | modified | renamed
    patch: str | None = None
    previous_filename: str | None = None
    additions: int = 0
    deletions: int = 0
    sha: str = ""


@dataclass
class FakeIssue:
    """An issue; with ``is_pull`` it is also a pull request (GitHub numbers both from one sequence)."""

    number: int
    title: str
    body: str | None
    user: str
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    comments: list[dict[str, Any]] = field(default_factory=list)  # issue comments
    is_pull: bool = False
    head_sha: str = ""
    base_sha: str = ""
    head_ref: str = "feature"
    base_ref: str = "main"
    head_repo: str = ""
    files: list[FakeFile] = field(default_factory=list)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    head_history: list[str] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)  # old path -> new path


@dataclass
class FakeRepo:
    full_name: str
    id: int
    default_branch: str = "main"
    trees: dict[str, dict[str, bytes]] = field(default_factory=dict)  # ref or commit sha -> path -> bytes
    collaborators: dict[str, str] = field(default_factory=dict)  # login -> role_name
    issues: dict[int, FakeIssue] = field(default_factory=dict)
    workflows: set[str] | None = None  # None: any workflow file name is accepted for dispatch
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Fault:
    """Answer the next ``times`` requests matching ``method``/``path`` (a regex searched in the path) with
    ``status``; ``headers`` e.g. {"Retry-After": "1"}. With ``after`` the request is carried out first and the
    error comes back anyway (a gateway timing out on a request GitHub did act on). With ``hang`` no answer comes
    back at all: the connection is held ``hang`` seconds and then dropped, so a client whose timeout is shorter
    sees a read timeout (with ``after``: on a request GitHub did act on)."""

    status: int
    method: str | None = None
    path: str | None = None
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    message: str | None = None
    after: bool = False
    hang: float = 0.0  # > 0: send no answer at all; hold the connection this long, then drop it (a timeout)

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and (self.path is None or re.search(self.path, path) is not None)


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int
    authorization: str | None


class FakeGitHub:
    """State of a fake GitHub. Seed with add_repo/add_pull/add_issue, inject faults with fail(), serve with
    ``fake_github.serve(fake)``; inspect ``log`` and the repos' objects afterwards."""

    def __init__(self, *, token: str | None = None, bot_login: str = "github-actions[bot]",
                 content_limit: int = 1_000_000, patch_limit: int = 20_000) -> None:
        self.token = token  # when set, requests must send `Authorization: token <token>` (else 401)
        # Who a request acts as: the login of its token (add_token), else ``bot_login``. Everything a request
        # creates is authored by that login. A login ending in "[bot]" is a GitHub App installation (the Actions
        # GITHUB_TOKEN is github-actions[bot]): GET /user answers it 403, as GitHub does.
        self.bot_login = bot_login
        self.identities: dict[str, str] = {}  # token -> login
        self.content_limit = content_limit  # contents API inlines files up to this size (GitHub: 1 MB)
        self.patch_limit = patch_limit  # patches longer than this are omitted from PR files (as on GitHub)
        self.repos: dict[str, FakeRepo] = {}
        self.log: list[LoggedRequest] = []
        self.faults: list[Fault] = []
        self.users: dict[str, int] = {}
        self.url = ""  # set by serve()
        self.lock = threading.RLock()
        self._next_id = 1000

    # ------------------------------------------------------------ seeding

    def new_id(self) -> int:
        with self.lock:
            self._next_id += 1
            return self._next_id

    def user_id(self, login: str) -> int:
        return self.users.setdefault(login, len(self.users) + 1)

    def add_repo(self, full_name: str, *, default_branch: str = "main", files: dict[str, str | bytes] | None = None,
                 collaborators: dict[str, str] | None = None) -> FakeRepo:
        repo = FakeRepo(full_name=full_name, id=len(self.repos) + 1, default_branch=default_branch)
        repo.trees[default_branch] = {p: _as_bytes(t) for p, t in (files or {}).items()}
        repo.collaborators.update(collaborators or {})
        self.repos[full_name] = repo
        return repo

    def add_token(self, token: str, login: str) -> None:
        """A token acting as ``login`` (a user, or an app installation when it ends in "[bot]"); it is accepted
        even when ``token`` (the default one) is set."""
        self.identities[token] = login

    def login_for(self, authorization: str | None) -> str:
        """The login a request's ``Authorization`` header acts as."""
        for prefix in ("token ", "Bearer "):
            if authorization and authorization.startswith(prefix):
                return self.identities.get(authorization[len(prefix):], self.bot_login)
        return self.bot_login

    def authorized(self, authorization: str | None) -> bool:
        if self.token is None:
            return True
        return authorization in {f"{kind} {t}" for t in (self.token, *self.identities) for kind in ("token", "Bearer")}

    def repo(self, full_name: str) -> FakeRepo:
        return self.repos[full_name] if full_name in self.repos else self.add_repo(full_name)

    def _next_number(self, repo: FakeRepo) -> int:
        return max(repo.issues, default=0) + 1

    def add_issue(self, full_name: str, *, number: int | None = None, title: str = "Tracking issue",
                  body: str | None = "", author: str = "maintainer", labels: list[str] | None = None) -> FakeIssue:
        repo = self.repo(full_name)
        n = number or self._next_number(repo)
        issue = FakeIssue(number=n, title=title, body=body, user=author, labels=list(labels or []))
        repo.issues[n] = issue
        return issue

    def add_pull(self, full_name: str, *, base: dict[str, str | bytes], head: dict[str, str | bytes],
                 number: int | None = None, renames: dict[str, str] | None = None, title: str = "A change",
                 body: str | None = "", author: str = "contributor", labels: list[str] | None = None,
                 head_repo: str | None = None, base_ref: str = "main", head_ref: str = "feature") -> FakeIssue:
        """A PR from tree ``base`` to tree ``head`` (path -> text). Files absent from ``head`` are removed;
        ``renames`` maps old path -> new path. Patches, shas and statuses are derived as GitHub would."""
        repo = self.repo(full_name)
        n = number or self._next_number(repo)
        pr = FakeIssue(number=n, title=title, body=body, user=author, labels=list(labels or []), is_pull=True,
                       base_ref=base_ref, head_ref=head_ref, head_repo=head_repo or full_name)
        base_b = {p: _as_bytes(t) for p, t in base.items()}
        pr.base_sha = self._store_tree(repo, base_b)
        repo.trees.setdefault(base_ref, base_b)
        pr.renames = dict(renames or {})
        repo.issues[n] = pr
        self.push(full_name, n, head)
        return pr

    def push(self, full_name: str, number: int, head: dict[str, str | bytes]) -> str:
        """A new head commit for PR ``number``: files and patches recomputed; comments whose line no longer
        exists with the same text become outdated (``line`` None), as on GitHub. Returns the new head sha."""
        with self.lock:
            repo = self.repos[full_name]
            pr = repo.issues[number]
            head_b = {p: _as_bytes(t) for p, t in head.items()}
            base_b = repo.trees[pr.base_sha]
            pr.head_sha = self._store_tree(repo, head_b)
            pr.head_history.append(pr.head_sha)
            repo.trees[pr.head_ref] = head_b
            pr.files = self._files(base_b, head_b, pr.renames)
            self._outdate(pr)
            return pr.head_sha

    def _store_tree(self, repo: FakeRepo, tree: dict[str, bytes]) -> str:
        digest = hashlib.sha1(repr(sorted(tree.items())).encode() + repo.full_name.encode()).hexdigest()
        repo.trees[digest] = tree
        return digest

    def _files(self, base: dict[str, bytes], head: dict[str, bytes], renames: dict[str, str]) -> list[FakeFile]:
        files: list[FakeFile] = []
        renamed_from = {new: old for old, new in renames.items()}
        for path in sorted(set(base) | set(head)):
            if path in renames and path not in head:
                continue  # reported under its new name
            old_path = renamed_from.get(path)
            old = base.get(old_path) if old_path else base.get(path)
            new = head.get(path)
            if old is not None and new is not None and old == new and not old_path:
                continue
            status = "renamed" if old_path else "added" if old is None else "removed" if new is None else "modified"
            patch, adds, dels = make_patch(old, new)
            if patch is not None and len(patch) > self.patch_limit:
                patch = None
            files.append(FakeFile(filename=path, status=status, patch=patch, previous_filename=old_path,
                                  additions=adds, deletions=dels, sha=git_blob_sha(new if new is not None else b"")))
        return files

    def _outdate(self, pr: FakeIssue) -> None:
        """Like GitHub: a comment follows its line when code above it moves (same text, still in the diff);
        otherwise it becomes outdated (``line`` None)."""
        for c in pr.review_comments:
            if c.get("line") is None:
                continue
            f = next((f for f in pr.files if f.filename == c["path"]), None)
            hunks = right_side_hunks(f.patch if f else None)
            span = c["line"] - (c.get("start_line") or c["line"])
            candidates = sorted((abs(ln - c["line"]), ln) for h in hunks for ln, text in h.items()
                                if text == c.get("line_text") and (span == 0 or ln - span in h))
            if candidates:
                moved = candidates[0][1]
                if c.get("start_line") is not None:
                    c["start_line"] = moved - span
                c["line"] = moved
            else:
                c["line"] = None
                c["start_line"] = None
            c["commit_id"] = pr.head_sha

    # ------------------------------------------------------------ faults and inspection

    def fail(self, status: int, *, method: str | None = None, path: str | None = None, times: int = 1,
             headers: dict[str, str] | None = None, message: str | None = None, after: bool = False,
             hang: float = 0.0) -> Fault:
        fault = Fault(status=status, method=method, path=path, times=times, headers=dict(headers or {}),
                      message=message, after=after, hang=hang)
        with self.lock:
            self.faults.append(fault)
        return fault

    def time_out(self, *, method: str | None = None, path: str | None = None, after: bool = True,
                 hang: float = 1.0, times: int = 1) -> Fault:
        """The next ``times`` matching requests get no answer: carried out first (``after``, the default: GitHub
        acted, then the response was lost) or not, then the connection hangs ``hang`` seconds and is dropped.
        Give the client a shorter timeout than ``hang``."""
        return self.fail(0, method=method, path=path, times=times, after=after, hang=hang)

    def take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.matches(method, path):
                    fault.times -= 1
                    return fault
        return None

    def requests(self, method: str | None = None, path: str | None = None) -> list[LoggedRequest]:
        """Logged requests, filtered by method and a regex searched in the path."""
        with self.lock:
            return [r for r in self.log
                    if (method is None or r.method == method) and (path is None or re.search(path, r.path))]

    def pull(self, full_name: str, number: int) -> FakeIssue:
        return self.repos[full_name].issues[number]
