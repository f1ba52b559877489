"""``pull_request_target`` event -> permission check -> test selection -> validated ``workflow_dispatch``.

The handler reads the PR as data through the API; it never checks out or runs PR code. A ``labeled`` event
dispatches only when the label is the configured one and its sender has write, maintain or admin permission
(asked of the API, never taken from the event); anyone else's label is removed with a comment. A
``synchronize`` event on a labelled PR removes the label (default) or dispatches again (``ci.on_synchronize:
redispatch``). Every outcome is reported in one PR comment starting with ``MARKER``, updated on reruns: the client
(bot.github.GitHubClient.upsert_marked_comment) adopts only a comment of its own identity that starts with it.
Text from the PR (file names, the sender's login) is quoted through bot.report.markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.ci.select import ChangedFile, Selection, code, full_suite, select_tests
from bot.ci.validate import DispatchInputs, ValidationError, validate_pr, validate_repo, validate_sha
from bot.config import Config
from bot.diff import ApiFile
from bot.report.markdown import code_span

MARKER = "<!-- pg-bot:dispatch -->"
WRITE_ROLES = frozenset({"admin", "maintain", "write"})
EVENTS = frozenset({"pull_request_target", "pull_request"})
API_FILES_CAP = 3000  # GitHub's limit on the files listed for one PR
MAX_REASONS = 20  # lines of "why" in the comment; the rest are counted


class EventError(ValueError):
    """The event JSON is not a pull-request event pg-bot can act on; the message says what is missing."""


# Read-only members: bot.github.PullFacts and PullFile are frozen dataclasses.
class _Pull(Protocol):
    @property
    def head_sha(self) -> str: ...
    @property
    def labels(self) -> tuple[str, ...]: ...
    @property
    def state(self) -> str: ...


class DispatchClient(Protocol):
    """The part of bot.github.GitHubClient the handler uses (tests may pass the real client or a fake)."""

    def pull(self, n: int) -> _Pull: ...
    def pull_files(self, n: int) -> Sequence[ApiFile]: ...
    def permission(self, user: str) -> str: ...
    def remove_label(self, n: int, label: str) -> bool: ...
    def upsert_marked_comment(self, n: int, marker: str, body: str) -> int: ...
    def dispatch_workflow(self, workflow_file: str, ref: str, inputs: dict[str, Any]) -> bool: ...


@dataclass(frozen=True)
class PullEvent:
    action: str
    repo: str  # the base repository (where the workflow runs)
    number: int
    head_sha: str
    head_repo: str | None  # None when the fork was deleted
    head_private: bool
    labels: tuple[str, ...]
    label: str | None  # the label just added (``labeled`` only)
    sender: str


@dataclass(frozen=True)
class Outcome:
    action: str  # dispatched | rejected | label-removed | ignored | refused
    message: str
    inputs: dict[str, str] | None = None
    selection: Selection | None = None

    @property
    def dispatched(self) -> bool:
        return self.action == "dispatched"


def parse_event(data: object, event_name: str | None = None) -> PullEvent:
    """The fields pg-bot needs from a ``pull_request_target`` payload, checked for type and shape."""
    if event_name is not None and event_name not in EVENTS:
        raise EventError(f"event `{event_name}` is not a pull-request event (expected pull_request_target)")
    if not isinstance(data, Mapping):
        raise EventError("the event is not a JSON object")
    pr = _get(data, "pull_request", Mapping)
    head = _get(pr, "head", Mapping, "pull_request.")
    head_repo = head.get("repo")
    if head_repo is not None and not isinstance(head_repo, Mapping):
        raise EventError("`pull_request.head.repo` is not an object")
    label = data.get("label")
    try:
        return PullEvent(
            action=_get(data, "action", str),
            repo=validate_repo(_get(_get(data, "repository", Mapping), "full_name", str, "repository.")),
            number=validate_pr(_get(pr, "number", int, "pull_request.")),
            head_sha=validate_sha(_get(head, "sha", str, "pull_request.head.")),
            head_repo=None if head_repo is None else _get(head_repo, "full_name", str, "pull_request.head.repo."),
            head_private=bool(head_repo.get("private", False)) if head_repo is not None else False,
            labels=tuple(_label_name(x) for x in (pr.get("labels") or [])),
            label=_label_name(label) if label is not None else None,
            sender=_get(_get(data, "sender", Mapping), "login", str, "sender."),
        )
    except ValidationError as exc:
        raise EventError(f"event: {exc}") from exc


def _get(obj: Mapping[str, Any], key: str, kind: type, prefix: str = "") -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise EventError(f"event: `{prefix}{key}` is missing or not a {kind.__name__.lower()}")
    return value


def _label_name(label: object) -> str:
    if not isinstance(label, Mapping) or not isinstance(label.get("name"), str):
        raise EventError("event: a label has no `name`")
    return str(label["name"])


def handle(event: PullEvent, client: DispatchClient, config: Config) -> Outcome:
    """Act on one event; every path that changes the PR says so in the marked comment."""
    ci = config.ci
    if event.action == "labeled":
        if event.label != ci.label:
            return Outcome("ignored", f"label {event.label!r} is not the CI label {ci.label!r}")
        role = client.permission(event.sender)
        if role not in WRITE_ROLES:
            _remove_label(client, event.number, ci.label)
            client.upsert_marked_comment(event.number, MARKER, _rejected_comment(event, role, ci.label))
            return Outcome("rejected", f"{event.sender} has {role} permission; label removed")
        return _dispatch(event, client, config, f"label added by {code(event.sender)}, who has {role} permission")
    if event.action == "synchronize":
        if ci.label not in event.labels:
            return Outcome("ignored", f"the PR does not carry {ci.label!r}")
        if ci.on_synchronize == "redispatch":
            return _dispatch(event, client, config, "new commits pushed to a labelled PR (`ci.on_synchronize: "
                             "redispatch`)")
        _remove_label(client, event.number, ci.label)
        client.upsert_marked_comment(event.number, MARKER, _sync_removed_comment(event, ci.label))
        return Outcome("label-removed", f"new head {event.head_sha}; label removed for re-approval")
    return Outcome("ignored", f"action {event.action!r} is not handled (labeled, synchronize)")


def _dispatch(event: PullEvent, client: DispatchClient, config: Config, why: str) -> Outcome:
    ci = config.ci
    # Run only the code that was approved: if the PR moved on since the event, its own event decides.
    pull = client.pull(event.number)
    if pull.state != "open":
        return Outcome("ignored", f"the PR is {pull.state}; not dispatching")
    if pull.head_sha != event.head_sha:
        return Outcome("ignored", f"the PR head moved from {event.head_sha} to {pull.head_sha}; not dispatching")
    if ci.label not in pull.labels:
        return Outcome("ignored", f"{ci.label!r} is no longer on the PR; not dispatching")
    if event.head_repo is None or event.head_private:
        problem = "its head repository was deleted" if event.head_repo is None else "its head repository is private"
        client.upsert_marked_comment(event.number, MARKER, _refused_comment(event, problem))
        return Outcome("refused", problem)
    listed = client.pull_files(event.number)
    files = [ChangedFile(path=f.filename, status=f.status, previous_path=f.previous_filename, patch=f.patch)
             for f in listed]
    # GitHub lists at most API_FILES_CAP files of a PR: a list that long may be cut short.
    selection = select_tests(files, config, truncated=len(files) >= API_FILES_CAP)
    try:
        inputs = _inputs(event, selection, config)
    except ValidationError as exc:
        if selection.full:
            client.upsert_marked_comment(event.number, MARKER, _refused_comment(event, str(exc)))
            return Outcome("refused", str(exc), selection=selection)
        # a configured test path that does not validate: fail safe to the full suite
        selection = full_suite(config, f"a selected test path is not valid ({exc}): running the full suite",
                               selection.changed)
        try:
            inputs = _inputs(event, selection, config)
        except ValidationError as exc2:
            client.upsert_marked_comment(event.number, MARKER, _refused_comment(event, str(exc2)))
            return Outcome("refused", str(exc2), selection=selection)
    as_inputs = inputs.as_inputs()
    client.dispatch_workflow(ci.workflow, ci.workflow_ref, as_inputs)
    client.upsert_marked_comment(event.number, MARKER, _dispatched_comment(event, config, inputs, selection, why))
    return Outcome("dispatched", f"dispatched {ci.workflow} for {inputs.sha}", as_inputs, selection)


def _inputs(event: PullEvent, selection: Selection, config: Config) -> DispatchInputs:
    return DispatchInputs.create(repo=event.head_repo, sha=event.head_sha, pr=event.number,
                                 tests=selection.tests, test_root=config.ci.test_root,
                                 max_paths=config.ci.max_test_paths)


def _remove_label(client: DispatchClient, number: int, name: str) -> None:
    client.remove_label(number, name)  # False when already gone (another run raced us): nothing to undo


# ---------------------------------------------------------------- comments (untrusted text only in code spans)


def _dispatched_comment(event: PullEvent, config: Config, inputs: DispatchInputs, selection: Selection,
                        why: str) -> str:
    ci = config.ci
    scope = "the full suite" if selection.full else f"{len(inputs.tests)} selected test path(s)"
    lines = [
        MARKER,
        f"**pg-bot dispatched {code_span(ci.workflow)}** on {code_span(ci.workflow_ref)} for {code(inputs.repo)} "
        f"at {code_span(inputs.sha)} ({why}), running {scope}:",
        "",
        *[f"- {code_span(t)}" for t in inputs.tests],
        "",
        "<details><summary>Why these tests</summary>",
        "",
        *_reasons(selection.reasons),
        "",
        f"{selection.changed} changed file(s) considered.",
        "</details>",
        "",
        _policy_line(config),
    ]
    return "\n".join(lines)


def _rejected_comment(event: PullEvent, role: str, label: str) -> str:
    return "\n".join([
        MARKER,
        f"**pg-bot removed the label {code(label)}**: it was added by {code(event.sender)}, whose permission "
        f"on this repository is {code(role)}. Only users with write, maintain or admin permission can start "
        "the distributed XPU tests, because they run this PR's code on a self-hosted runner. Nothing was "
        "dispatched; a maintainer can add the label after reviewing the code.",
    ])


def _sync_removed_comment(event: PullEvent, label: str) -> str:
    return "\n".join([
        MARKER,
        f"**pg-bot removed the label {code(label)}**: new commits were pushed (head is now "
        f"{code_span(event.head_sha)}). "
        "The label approved the code as it was; a maintainer re-adds it to run the distributed XPU tests on "
        "the new code (`ci.on_synchronize: remove-label`). Nothing was dispatched.",
    ])


def _refused_comment(event: PullEvent, problem: str) -> str:
    return "\n".join([
        MARKER,
        f"**pg-bot did not dispatch** the distributed tests for {code_span(event.head_sha)}: {code(problem, 300)}.",
    ])


def _reasons(reasons: Sequence[str]) -> list[str]:
    shown = [f"- {r}" for r in reasons[:MAX_REASONS]]
    if len(reasons) > MAX_REASONS:
        shown.append(f"- ... and {len(reasons) - MAX_REASONS} more")
    return shown


def _policy_line(config: Config) -> str:
    if config.ci.on_synchronize == "redispatch":
        return "_A new push dispatches again while the label stays on._"
    return f"_A new push removes {code(config.ci.label)}; a maintainer re-adds it to test the new code._"
