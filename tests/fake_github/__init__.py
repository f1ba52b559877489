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
    fake.time_out(method="POST", path=r"/reviews$", hang=0.05)          # carried out, then no answer at all
    fake.add_token("mallory-token", "mallory")                          # a second identity (see below)
    with serve(fake):
        client = GitHubClient(None, "org/repo", base_url=fake.url)    # fake.url = http://127.0.0.1:<port>
        ...
    fake.requests("POST", r"/reviews$")     # the request log (method, path, query, body, status, authorization)
    fake.pull("org/repo", 1).reviews        # state: reviews, review_comments, comments (issue comments), labels
    fake.repos["org/repo"].dispatches       # workflow dispatches {workflow, ref, inputs}; .statuses likewise

Identities: a request acts as its token's login (``add_token(token, login)``), else as ``bot_login``
(``github-actions[bot]``, like Actions' GITHUB_TOKEN); whatever it creates (reviews, comments, statuses) is
authored by that login, so tests can post as another participant. ``GET /user`` answers a user's login and 403
for an app installation (a login ending in ``[bot]``), as GitHub does. ``time_out(..., hang=s)`` sends no answer:
the connection is held ``s`` seconds and dropped (a read timeout when the client's timeout is shorter).

``add_pull`` derives what GitHub would show from the two trees: per-file status (added/removed/modified/
renamed via ``renames={old: new}``), ``patch`` (omitted for binary files and for patches longer than
``FakeGitHub(patch_limit=...)``), blob shas, head/base shas. ``push(repo, n, head)`` makes a new head commit and
outdates comments whose line changed. Lines are counted as git counts them (only ``\n`` ends one). Review comments are validated like GitHub's: a ``line``/``start_line``
outside the diff's hunks is a 422. Files over ``content_limit`` come back from the contents API with
``encoding: "none"`` and must be read through the git blobs API, as on GitHub. Lists paginate with
``per_page``/``page`` and ``Link`` headers. ``/api/v3`` prefixes (GitHub Enterprise) are accepted.
"""

from .server import serve
from .state import FakeFile, FakeGitHub, FakeIssue, FakeRepo, Fault, LoggedRequest

__all__ = ["FakeFile", "FakeGitHub", "FakeIssue", "FakeRepo", "Fault", "LoggedRequest", "serve"]
