"""JSON bodies shaped like GitHub's REST responses (checked against githubkit's models in tests/test_github_fake.py).

Only the shape matters here; values are derived from the fake's state so a payload never contradicts it.
"""

from __future__ import annotations

import base64
from typing import Any

STAMP = "2026-01-01T00:00:00Z"

_REPO_URL_FIELDS = (
    "archive_url",
    "assignees_url",
    "blobs_url",
    "branches_url",
    "collaborators_url",
    "comments_url",
    "commits_url",
    "compare_url",
    "contents_url",
    "contributors_url",
    "deployments_url",
    "downloads_url",
    "events_url",
    "forks_url",
    "git_commits_url",
    "git_refs_url",
    "git_tags_url",
    "issue_comment_url",
    "issue_events_url",
    "issues_url",
    "keys_url",
    "labels_url",
    "languages_url",
    "merges_url",
    "milestones_url",
    "notifications_url",
    "pulls_url",
    "releases_url",
    "stargazers_url",
    "statuses_url",
    "subscribers_url",
    "subscription_url",
    "tags_url",
    "teams_url",
    "trees_url",
    "hooks_url",
    ").split(",
)


def user(base: str, login: str, uid: int) -> dict[str, Any]:
    api = f"{base}/users/{login}"
    return {
        "login": login,
        "id": uid,
        "node_id": f"U_{uid}",
        "avatar_url": f"https://avatars.example/{login}",
        "gravatar_id": "",
        "url": api,
        "html_url": f"https://github.example/{login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": "Bot" if login.endswith("[bot]") else "User",
        "site_admin": False,
    }


def repository(base: str, full_name: str, rid: int, default_branch: str) -> dict[str, Any]:
    owner, name = full_name.split("/", 1)
    api = f"{base}/repos/{full_name}"
    data: dict[str, Any] = {f: f"{api}/{f.removesuffix('_url')}" for f in _REPO_URL_FIELDS}
    data.update(
        {
            "id": rid,
            "node_id": f"R_{rid}",
            "name": name,
            "full_name": full_name,
            "owner": user(base, owner, rid + 100000),
            "private": False,
            "html_url": f"https://github.example/{full_name}",
            "description": None,
            "fork": False,
            "url": api,
            "git_url": f"git://github.example/{full_name}.git",
            "ssh_url": f"git@github.example:{full_name}.git",
            "clone_url": f"https://github.example/{full_name}.git",
            "svn_url": f"https://github.example/{full_name}",
            "mirror_url": None,
            "homepage": None,
            "language": "Python",
            "forks_count": 0,
            "forks": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "watchers": 0,
            "size": 1,
            "default_branch": default_branch,
            "open_issues_count": 0,
            "open_issues": 0,
            "has_issues": True,
            "has_projects": False,
            "has_wiki": False,
            "has_pages": False,
            "has_discussions": False,
            "archived": False,
            "disabled": False,
            "pushed_at": STAMP,
            "created_at": STAMP,
            "updated_at": STAMP,
            "subscribers_count": 0,
            "network_count": 0,
            "license": None,
        }
    )
    return data


def label(base: str, repo: str, name: str, lid: int) -> dict[str, Any]:
    return {
        "id": lid,
        "node_id": f"LA_{lid}",
        "url": f"{base}/repos/{repo}/labels/{name}",
        "name": name,
        "description": None,
        "color": "ededed",
        "default": False,
        "archived_at": None,
        "archived_by": None,
    }


def pull(base: str, repo_json: dict[str, Any], head_repo_json: dict[str, Any], p: Any, labels: list[dict[str, Any]],
         author: dict[str, Any]) -> dict[str, Any]:
    full = repo_json["full_name"]
    api = f"{base}/repos/{full}/pulls/{p.number}"
    issue_api = f"{base}/repos/{full}/issues/{p.number}"
    html = f"https://github.example/{full}/pull/{p.number}"
    return {
        "url": api,
        "id": 5000 + p.number,
        "node_id": f"PR_{p.number}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": issue_api,
        "commits_url": f"{api}/commits",
        "review_comments_url": f"{api}/comments",
        "review_comment_url": f"{base}/repos/{full}/pulls/comments{{/number}}",
        "comments_url": f"{issue_api}/comments",
        "statuses_url": f"{base}/repos/{full}/statuses/{p.head_sha}",
        "number": p.number,
        "state": p.state,
        "locked": False,
        "title": p.title,
        "user": author,
        "body": p.body,
        "labels": labels,
        "milestone": None,
        "active_lock_reason": None,
        "created_at": STAMP,
        "updated_at": STAMP,
        "closed_at": None,
        "merged_at": None,
        "merge_commit_sha": None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": {
            "label": f"{head_repo_json['owner']['login']}:{p.head_ref}",
            "ref": p.head_ref,
            "sha": p.head_sha,
            "repo": head_repo_json,
            "user": head_repo_json["owner"],
        },
        "base": {
            "label": f"{repo_json['owner']['login']}:{p.base_ref}",
            "ref": p.base_ref,
            "sha": p.base_sha,
            "repo": repo_json,
            "user": repo_json["owner"],
        },
        "_links": {
            k: {"href": v}
            for k, v in {
                "self": api,
                "html": html,
                "issue": issue_api,
                "comments": f"{issue_api}/comments",
                "review_comments": f"{api}/comments",
                "review_comment": f"{base}/repos/{full}/pulls/comments{{/number}}",
                "commits": f"{api}/commits",
                "statuses": f"{base}/repos/{full}/statuses/{p.head_sha}",
            }.items()
        },
        "author_association": "CONTRIBUTOR",
        "auto_merge": None,
        "draft": False,
        "merged": False,
        "mergeable": True,
        "rebaseable": True,
        "mergeable_state": "clean",
        "merged_by": None,
        "comments": 0,
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": 1,
        "additions": sum(f.additions for f in p.files),
        "deletions": sum(f.deletions for f in p.files),
        "changed_files": len(p.files),
    }


def diff_entry(base: str, repo: str, head_sha: str, f: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "sha": f.sha,
        "filename": f.filename,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": f"https://github.example/{repo}/blob/{head_sha}/{f.filename}",
        "raw_url": f"https://github.example/{repo}/raw/{head_sha}/{f.filename}",
        "contents_url": f"{base}/repos/{repo}/contents/{f.filename}?ref={head_sha}",
    }
    if f.patch is not None:  # GitHub omits the key for binary files and diffs too large to show
        data["patch"] = f.patch
    if f.previous_filename is not None:
        data["previous_filename"] = f.previous_filename
    return data


def content_file(base: str, repo: str, path: str, ref: str, blob_sha: str, data: bytes,
                 limit: int) -> dict[str, Any]:
    api = f"{base}/repos/{repo}/contents/{path}?ref={ref}"
    too_large = len(data) > limit  # like GitHub for files over 1 MB: no inline content, encoding "none"
    return {
        "type": "file",
        "encoding": "none" if too_large else "base64",
        "size": len(data),
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "content": "" if too_large else base64.b64encode(data).decode("ascii"),
        "sha": blob_sha,
        "url": api,
        "git_url": f"{base}/repos/{repo}/git/blobs/{blob_sha}",
        "html_url": f"https://github.example/{repo}/blob/{ref}/{path}",
        "download_url": f"https://raw.github.example/{repo}/{ref}/{path}",
        "_links": {
            "self": api,
            "git": f"{base}/repos/{repo}/git/blobs/{blob_sha}",
            "html": f"https://github.example/{repo}/blob/{ref}/{path}",
        },
    }


def blob(base: str, repo: str, blob_sha: str, data: bytes) -> dict[str, Any]:
    return {
        "content": base64.b64encode(data).decode("ascii"),
        "encoding": "base64",
        "url": f"{base}/repos/{repo}/git/blobs/{blob_sha}",
        "sha": blob_sha,
        "size": len(data),
        "node_id": f"B_{blob_sha[:8]}",
    }


def review_comment(base: str, repo: str, c: dict[str, Any], author: dict[str, Any]) -> dict[str, Any]:
    api = f"{base}/repos/{repo}/pulls/comments/{c['id']}"
    pr_api = f"{base}/repos/{repo}/pulls/{c['pull']}"
    html = f"https://github.example/{repo}/pull/{c['pull']}#discussion_r{c['id']}"
    return {
        "url": api,
        "pull_request_review_id": c["review_id"],
        "id": c["id"],
        "node_id": f"PRRC_{c['id']}",
        "diff_hunk": c.get("diff_hunk", ""),
        "path": c["path"],
        "position": c.get("line"),
        "original_position": c.get("original_line"),
        "commit_id": c["commit_id"],
        "original_commit_id": c["original_commit_id"],
        "user": author,
        "body": c["body"],
        "created_at": STAMP,
        "updated_at": STAMP,
        "html_url": html,
        "pull_request_url": pr_api,
        "author_association": "NONE",
        "_links": {"self": {"href": api}, "html": {"href": html}, "pull_request": {"href": pr_api}},
        "start_line": c.get("start_line"),
        "original_start_line": c.get("original_start_line"),
        "start_side": c.get("start_side"),
        "line": c.get("line"),
        "original_line": c.get("original_line"),
        "side": c.get("side", "RIGHT"),
        "subject_type": "line",
    }


def review(base: str, repo: str, r: dict[str, Any], author: dict[str, Any]) -> dict[str, Any]:
    pr_api = f"{base}/repos/{repo}/pulls/{r['pull']}"
    html = f"https://github.example/{repo}/pull/{r['pull']}#pullrequestreview-{r['id']}"
    return {
        "id": r["id"],
        "node_id": f"PRR_{r['id']}",
        "user": author,
        "body": r["body"],
        "state": r["state"],
        "html_url": html,
        "pull_request_url": pr_api,
        "_links": {"html": {"href": html}, "pull_request": {"href": pr_api}},
        "submitted_at": STAMP,
        "commit_id": r["commit_id"],
        "author_association": "NONE",
    }


def issue_comment(base: str, repo: str, c: dict[str, Any], author: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": c["id"],
        "node_id": f"IC_{c['id']}",
        "url": f"{base}/repos/{repo}/issues/comments/{c['id']}",
        "body": c["body"],
        "html_url": f"https://github.example/{repo}/issues/{c['issue']}#issuecomment-{c['id']}",
        "user": author,
        "created_at": STAMP,
        "updated_at": STAMP,
        "issue_url": f"{base}/repos/{repo}/issues/{c['issue']}",
        "author_association": "NONE",
    }


def issue(base: str, repo: str, i: Any, labels: list[dict[str, Any]], author: dict[str, Any],
          is_pull: bool) -> dict[str, Any]:
    api = f"{base}/repos/{repo}/issues/{i.number}"
    data: dict[str, Any] = {
        "id": 9000 + i.number,
        "node_id": f"I_{i.number}",
        "url": api,
        "repository_url": f"{base}/repos/{repo}",
        "labels_url": f"{api}/labels{{/name}}",
        "comments_url": f"{api}/comments",
        "events_url": f"{api}/events",
        "html_url": f"https://github.example/{repo}/issues/{i.number}",
        "number": i.number,
        "state": i.state,
        "title": i.title,
        "body": i.body,
        "user": author,
        "labels": labels,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "comments": len(i.comments),
        "closed_at": None,
        "created_at": STAMP,
        "updated_at": STAMP,
        "author_association": "MEMBER",
    }
    if is_pull:
        data["pull_request"] = {
            "url": f"{base}/repos/{repo}/pulls/{i.number}",
            "html_url": f"https://github.example/{repo}/pull/{i.number}",
            "diff_url": f"https://github.example/{repo}/pull/{i.number}.diff",
            "patch_url": f"https://github.example/{repo}/pull/{i.number}.patch",
        }
    return data


def permission(role: str, who: dict[str, Any]) -> dict[str, Any]:
    # `permission` is the legacy coarse value: maintain -> write, triage -> read (as GitHub reports it)
    legacy = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
    flags = {"admin": role == "admin", "maintain": role in ("admin", "maintain"),
             "push": role in ("admin", "maintain", "write"), "triage": role in ("admin", "maintain", "write", "triage"),
             "pull": role != "none"}
    collaborator = {**who, "role_name": role, "permissions": flags}
    return {"permission": legacy.get(role, "none"), "role_name": role, "user": collaborator}


def status(base: str, repo: str, s: dict[str, Any], creator: dict[str, Any]) -> dict[str, Any]:
    return {
        "url": f"{base}/repos/{repo}/statuses/{s['sha']}",
        "avatar_url": creator["avatar_url"],
        "id": s["id"],
        "node_id": f"SC_{s['id']}",
        "state": s["state"],
        "description": s.get("description"),
        "target_url": s.get("target_url"),
        "context": s.get("context", "default"),
        "created_at": STAMP,
        "updated_at": STAMP,
        "creator": creator,
    }


def error(message: str, status_code: int, errors: list[Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": str(status_code),
    }
    if errors:
        data["errors"] = errors
    return data
