"""`pg-bot status --update-issue` end to end: real git repo, bot.github, the fake GitHub server over HTTP."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_github import FakeGitHub, FakeIssue, serve
from test_track_history import Repo, module

from bot.cli import main
from bot.github import GitHubClient
from bot.track.issue_body import END, START
from bot.track.issue_update import update_issue

REPO = "org/ds"
ISSUE = 7
HEAD = "# RFC: one predicate for process-group guards\r\n\r\nSee the plan below.\r\n\r\n## Status\r\n"
TAIL = "\r\n## Notes\r\n- human notes stay here\r\n"
BODY = f"{HEAD}{START}\r\nstale table\r\n{END}{TAIL}"


class HookedGitHub(FakeGitHub):
    """The fake, plus hooks that change the issue just before the n-th GET of it is answered.

    The fake checks its fault queue first thing for every request, so that is where the hook runs.
    """

    def __init__(self) -> None:
        super().__init__()
        self.issue_gets = 0
        self.before_get: dict[int, Callable[[FakeIssue], None]] = {}

    def take_fault(self, method: str, path: str):  # type: ignore[no-untyped-def]
        if method == "GET" and path.endswith(f"/repos/{REPO}/issues/{ISSUE}"):
            with self.lock:
                self.issue_gets += 1
                hook = self.before_get.pop(self.issue_gets, None)
            if hook is not None:
                # not under the lock: a hook may itself make requests (another bot run), served by other threads
                hook(self.repos[REPO].issues[ISSUE])
        return super().take_fault(method, path)


@pytest.fixture
def fake() -> Iterator[HookedGitHub]:
    hooked = HookedGitHub()
    hooked.add_repo(REPO)
    hooked.add_issue(REPO, number=ISSUE, body=BODY)
    with serve(hooked) as running:
        yield running  # type: ignore[misc]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, list[str]]:
    r = Repo(tmp_path_factory.mktemp("gh") / "repo")
    shas = [
        r.commit("base", {"deepspeed/moe/layer.py": module(3, 0), "deepspeed/runtime/zero/stage3.py": module(1, 0)}),
        r.commit("migrate moe", {"deepspeed/moe/layer.py": module(1, 2)}),
    ]
    return r, shas


def status(fake: FakeGitHub, repo: Path, ref: str, *extra: str) -> int:
    return main(["status", "--ref", ref, "--repo-dir", str(repo), "--no-cache", "--update-issue",
                 f"{REPO}#{ISSUE}", "--api-url", fake.url, *extra])


def body(fake: FakeGitHub) -> str:
    return fake.repos[REPO].issues[ISSUE].body or ""


def patches(fake: FakeGitHub) -> int:
    return len(fake.requests("PATCH", rf"/issues/{ISSUE}$"))


def test_update_rewrites_only_between_the_markers(fake: HookedGitHub, repo, capsys) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo
    assert status(fake, r.path, shas[0]) == 0
    after = body(fake)
    assert after.startswith(HEAD + START) and after.endswith(END + TAIL)  # every outside byte as it was
    section = after[len(HEAD + START) : -len(END + TAIL)]
    assert "stale table" not in section
    assert "\r\n| MoE | 3 (PG101 3) | 0 | 0% | not started |" in section
    assert "\n" not in section.replace("\r\n", "")  # the CRLF body stays CRLF
    assert f"(https://github.com/{REPO}/blob/HEAD/deepspeed/moe/layer.py)" in section
    assert patches(fake) == 1
    assert "updated" in capsys.readouterr().err


def test_links_point_at_the_tracked_repository_when_given(fake: HookedGitHub, repo) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo
    assert status(fake, r.path, shas[0], "--repo", "other/code") == 0
    assert "(https://github.com/other/code/blob/HEAD/deepspeed/moe/layer.py)" in body(fake)
    assert f"github.com/{REPO}/blob" not in body(fake)


def test_unchanged_status_is_not_written(fake: HookedGitHub, repo, capsys) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo
    assert status(fake, r.path, shas[0]) == 0
    first = body(fake)
    capsys.readouterr()
    assert status(fake, r.path, shas[0]) == 0
    assert patches(fake) == 1 and body(fake) == first
    assert "unchanged, not written" in capsys.readouterr().err
    assert status(fake, r.path, shas[1]) == 0  # the counts changed: written again
    assert patches(fake) == 2
    assert "| MoE | 1 (PG101 1) | 2 | 67% | in progress |" in body(fake)


def test_human_edit_between_read_and_write_is_preserved(fake: HookedGitHub, repo) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo

    def human(issue: FakeIssue) -> None:
        issue.body = (issue.body or "").replace("- human notes stay here", "- edited by a human mid-run")

    fake.before_get[2] = human  # lands after the bot's first read, before its re-read check
    assert status(fake, r.path, shas[0]) == 0
    after = body(fake)
    assert after.endswith(f"{END}\r\n## Notes\r\n- edited by a human mid-run\r\n")
    assert "| MoE | 3 (PG101 3) |" in after
    assert patches(fake) == 1  # the body computed from the stale read was never sent
    assert fake.issue_gets == 2 + 3  # read, re-read (changed: start over); read, re-read, read-back


def test_markers_inserted_under_the_heading(fake: HookedGitHub, repo) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo
    fake.repos[REPO].issues[ISSUE].body = HEAD + "| hand-kept | table |\r\n" + TAIL
    assert status(fake, r.path, shas[0], "--heading", "## Status") == 0
    after = body(fake)
    assert after.startswith(HEAD + "\r\n" + START + "\r\n| Area |")
    assert after.endswith(END + "\r\n| hand-kept | table |\r\n" + TAIL)


def test_broken_markers_fail_without_writing(fake: HookedGitHub, repo, capsys) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo
    fake.repos[REPO].issues[ISSUE].body = f"{START}\r\nno end marker\r\n"
    assert status(fake, r.path, shas[0]) == 2
    assert "marker" in capsys.readouterr().err
    assert patches(fake) == 0


def test_unknown_issue_is_a_clear_error(fake: HookedGitHub, repo, capsys) -> None:  # type: ignore[no-untyped-def]
    r, shas = repo
    rc = main(["status", "--ref", shas[0], "--repo-dir", str(r.path), "--no-cache", "--update-issue",
               f"{REPO}#99", "--api-url", fake.url])
    assert rc == 3  # GitHub answered 404: an API failure, not a usage error
    assert "#99" in capsys.readouterr().err


TABLES = ["| Area | Remaining |\n|---|---:|\n| MoE | 3 |\n", "| Area | Remaining |\n|---|---:|\n| MoE | 1 |\n"]


def client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(None, REPO, base_url=fake.url, throttle=False)


def test_second_run_and_a_human_edit_inside_the_first_runs_window(fake: HookedGitHub) -> None:
    """Run B does its whole update, and a human edits, between run A's first read and its re-read."""
    outcome: dict[str, object] = {}

    def run_b_then_human(issue: FakeIssue) -> None:
        outcome["b"] = update_issue(client(fake), ISSUE, TABLES[1], pause=0)
        with fake.lock:
            issue.body = (issue.body or "").replace("See the plan below.", "See the (revised) plan below.")

    fake.before_get[2] = run_b_then_human  # A's re-read
    result = update_issue(client(fake), ISSUE, TABLES[0], pause=0)
    after = body(fake)
    assert result.written and result.attempts == 2
    assert getattr(outcome["b"], "written", False)
    assert "See the (revised) plan below." in after  # the human's edit survived both runs
    assert after.endswith(END + TAIL)
    assert after[after.index(START) + len(START) : after.index(END)] == "\r\n" + TABLES[0].replace("\n", "\r\n")
    assert patches(fake) == 2  # B's write and A's write from the fresh text; A's stale body was never sent


def test_racing_runs_leave_one_whole_table_and_the_rest_intact(fake: HookedGitHub) -> None:
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(table: str) -> None:
        c = client(fake)
        barrier.wait()
        try:
            update_issue(c, ISSUE, table, attempts=8, pause=0.05)
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in TABLES]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    after = body(fake)
    assert after.startswith(HEAD + START) and after.endswith(END + TAIL)
    section = after[after.index(START) + len(START) : after.index(END)]
    assert section in ("\r\n" + t.replace("\n", "\r\n") for t in TABLES)
