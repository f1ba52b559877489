"""A fake GitHub REST API for tests: real HTTP on 127.0.0.1, stateful, with fault injection.

Use the ``fake_github`` fixture (tests/conftest.py) or the context manager::

    from fake_github import FakeGitHub, serve

    fake = FakeGitHub()                       # token=None accepts any/no Authorization header
    fake.add_repo("org/repo", files={"a.py": "x = 1\\n"}, collaborators={"alice": "maintain"})
    pr = fake.add_pull("org/repo", base={"a.py": "x = 1\\n"}, head={"a.py": "x = 2\\n"}, labels=["ci/x"])
    fake.add_issue("org/repo", number=7, body="tracking table ...")
    fake.fail(502, path=r"/pulls/\\d+/files$", times=2)                     # next 2 matching requests fail
    fake.fail(403, method="POST", headers={"Retry-After": "1"})         # secondary rate limit
    fake.fail(502, method="POST", path=r"/reviews$", after=True)         # carried out, then a 502 anyway
    with serve(fake):
        client = GitHubClient(None, "org/repo", base_url=fake.url)    # fake.url = http://127.0.0.1:<port>
        ...
    fake.requests("POST", r"/reviews$")     # the request log (method, path, query, body, status, authorization)
    fake.pull("org/repo", 1).reviews        # state: reviews, review_comments, comments (issue comments), labels
    fake.repos["org/repo"].dispatches       # workflow dispatches {workflow, ref, inputs}; .statuses likewise

``add_pull`` derives what GitHub would show from the two trees: per-file status (added/removed/modified/
renamed via ``renames={old: new}``), ``patch`` (omitted for binary files and for patches longer than
``FakeGitHub(patch_limit=...)``), blob shas, head/base shas. ``push(repo, n, head)`` makes a new head commit and
outdates comments whose line changed. Review comments are validated like GitHub's: a ``line``/``start_line``
outside the diff's hunks is a 422. Files over ``content_limit`` come back from the contents API with
``encoding: "none"`` and must be read through the git blobs API, as on GitHub. Lists paginate with
``per_page``/``page`` and ``Link`` headers. ``/api/v3`` prefixes (GitHub Enterprise) are accepted.
"""

from .server import serve
from .state import FakeFile, FakeGitHub, FakeIssue, FakeRepo, Fault, LoggedRequest

__all__ = ["FakeFile", "FakeGitHub", "FakeIssue", "FakeRepo", "Fault", "LoggedRequest", "serve"]
