"""`pg-bot dashboard --out DIR`: a static page (status table, burndown, a link to each remaining site).

The repository the page links to: --repo, else $GITHUB_REPOSITORY, else the `origin` remote of --repo-dir
(https, ssh or scp-like URL); the server stays --server-url / $GITHUB_SERVER_URL / github.com, since an ssh
host name may be an alias.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from bot.commands.history import add_range, write_outputs
from bot.commands.history import history as compute_points
from bot.config import ConfigError
from bot.track import options
from bot.track.dashboard import render_html
from bot.track.export import HistoryFileError, read_json
from bot.track.gitread import GitError, git, rev_parse
from bot.track.table import render_markdown
from bot.track.trees import status_at_ref


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="folder to write index.html and its files into")
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY") or None,
                        help="OWNER/NAME for links to each site (default: $GITHUB_REPOSITORY, else the origin "
                             "remote of --repo-dir)")
    parser.add_argument("--server-url", default=os.environ.get("GITHUB_SERVER_URL", "https://github.com"))
    parser.add_argument("--history", type=Path, metavar="JSON",
                        help="draw the chart from this `pg-bot history` output instead of computing it")
    add_range(parser, required=False)
    options.add_common(parser)


def run(args: argparse.Namespace) -> int:
    try:
        repo = options.parse_repo(args.repo or _origin_repo(args.repo_dir))
        if args.history is not None:
            points, _ = read_json(args.history)
            if not points:
                raise options.UsageError(f"{args.history}: the history has no commits")
            # the table shows the same commit the chart ends at, unless --until says otherwise
            tip = rev_parse(args.repo_dir, args.until) if args.until else points[-1].sha
            config = options.load_config(args, Path.cwd())
            reader = options.make_reader(args, config)
            status = status_at_ref(args.repo_dir, tip, reader, args.under)
            reader.cache.save()
            args.out.mkdir(parents=True, exist_ok=True)
            write_outputs(points, reader, args.out, {"base": points[0].sha, "tip": points[-1].sha})
        else:
            if args.since is None and args.last is None:
                args.last = 300
            points, status, reader, _ = compute_points(args)
            tip = points[-1].sha
            write_outputs(points, reader, args.out, {"base": points[0].sha, "tip": tip, "under": args.under})
        page = render_html(
            status, repo=repo, sha=tip, server_url=args.server_url,
            history_note=f"{len(points)} first-parent commits, {points[0].sha[:9]}..{points[-1].sha[:9]}.",
        )
        (args.out / "index.html").write_text(page, encoding="utf-8")
        (args.out / "status.md").write_text(render_markdown(status), encoding="utf-8")
    except (options.UsageError, ConfigError, GitError, HistoryFileError, OSError, ValueError) as exc:
        print(f"pg-bot: {exc}", file=sys.stderr)
        return 2
    print(args.out / "index.html")
    return 0


_SCHEMES = frozenset({"https", "http", "ssh", "git", "git+ssh", "ssh+git"})
_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?[^/:]+:(?P<path>[^/].*)$")  # git@github.com:OWNER/NAME.git


def repo_from_remote(url: str) -> str | None:
    """OWNER/NAME from a remote URL (`https://github.com/o/n.git`, `ssh://git@host/o/n`, `git@host:o/n.git`),
    or None when it names no such path (a local path, a deeper URL)."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme.lower() not in _SCHEMES:  # file:// and the like name a folder, not a repository
            return None
        path = parts.path
    else:
        m = _SCP_LIKE.match(url)
        if m is None:
            return None
        path = m["path"]
    path = path.strip("/").removesuffix(".git")
    return path if options.REPO_RE.match(path) else None


def _origin_repo(repo_dir: Path) -> str:
    try:
        url = git(repo_dir, "remote", "get-url", "origin").decode("utf-8", "replace")
    except GitError as exc:
        raise options.UsageError("no --repo given, GITHUB_REPOSITORY is not set and the git remote `origin` "
                                 f"cannot be read ({exc}); pass --repo OWNER/NAME") from exc
    repo = repo_from_remote(url)
    if repo is None:  # the URL itself is not shown: it may carry a token (https://x-access-token:...@host/...)
        raise options.UsageError("no --repo given, GITHUB_REPOSITORY is not set and the origin remote's URL "
                                 "names no OWNER/NAME; pass --repo OWNER/NAME")
    return repo
