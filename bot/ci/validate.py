"""Validation of everything handed to the distributed-test workflow. Pure; standard library only.

The same checks run twice: in the dispatcher before ``workflow_dispatch``, and again inside the test job
(``pg-bot dispatch run-tests``), which never trusts its caller. Every value is checked against an allow-list
of characters, so nothing that reaches a shell, ``git`` or ``pytest`` can be an option or a metacharacter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SHA_RE = re.compile(r"[0-9a-f]{40}")
# GitHub: owner 1-39 chars of alphanumerics and single hyphens (not leading); repo name [A-Za-z0-9._-].
OWNER_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")
NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,100}")
# One path component of a test path: no shell metacharacters, no spaces, no leading '-'.
COMPONENT_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
MAX_PATH_LEN = 200
MAX_PR = 10**9


class ValidationError(ValueError):
    """An input the workflow must not run with; the message says which and why."""


def validate_sha(value: object) -> str:
    if not isinstance(value, str) or not SHA_RE.fullmatch(value):
        raise ValidationError(f"sha: expected 40 lowercase hex digits, got {_show(value)}")
    return value


def validate_repo(value: object) -> str:
    """``owner/name`` in GitHub's character set (the repository's visibility is checked by the caller)."""
    if not isinstance(value, str) or value.count("/") != 1:
        raise ValidationError(f"repo: expected owner/name, got {_show(value)}")
    owner, name = value.split("/")
    if not OWNER_RE.fullmatch(owner):
        raise ValidationError(f"repo: owner {_show(owner)} is not a GitHub user or organisation name")
    if not NAME_RE.fullmatch(name) or name in (".", "..") or name.endswith(".git"):
        raise ValidationError(f"repo: name {_show(name)} is not a GitHub repository name")
    return value


def validate_pr(value: object) -> int:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not text.isascii() or not text.isdigit() or not 0 < int(text) < MAX_PR:
        raise ValidationError(f"pr: expected a pull-request number, got {_show(value)}")
    return int(text)


def validate_test_path(value: object, test_root: str) -> str:
    """A relative path at or below ``test_root``: allow-listed characters, no option, no ``..``."""
    if not isinstance(value, str) or not value:
        raise ValidationError(f"test path: expected a non-empty string, got {_show(value)}")
    if len(value) > MAX_PATH_LEN:
        raise ValidationError(f"test path: longer than {MAX_PATH_LEN} characters: {_show(value)}")
    if value.startswith("-"):
        raise ValidationError(f"test path: {_show(value)} looks like an option")
    if value.startswith("/"):
        raise ValidationError(f"test path: {_show(value)} is absolute")
    parts = value.rstrip("/").split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise ValidationError(f"test path: {_show(value)} has an empty, '.' or '..' component")
        if not COMPONENT_RE.fullmatch(part):
            raise ValidationError(f"test path: {_show(value)} has a character outside [A-Za-z0-9_.-/]")
    root = test_root.strip("/").split("/")
    if parts[: len(root)] != root:
        raise ValidationError(f"test path: {_show(value)} is not inside the test tree `{test_root}`")
    return "/".join(parts)


def validate_tests(values: Iterable[object], test_root: str, max_paths: int) -> tuple[str, ...]:
    """Every path valid, duplicates dropped (order kept), at least one and at most ``max_paths``."""
    paths = tuple(dict.fromkeys(validate_test_path(v, test_root) for v in values))
    if not paths:
        raise ValidationError("tests: no test path given")
    if len(paths) > max_paths:
        raise ValidationError(f"tests: {len(paths)} paths, more than the limit of {max_paths}")
    return paths


def split_tests(value: object) -> list[str]:
    """The workflow input form: paths separated by single spaces (a workflow input is one string)."""
    if not isinstance(value, str):
        raise ValidationError(f"tests: expected a string of space-separated paths, got {_show(value)}")
    if any(c.isspace() and c != " " for c in value):
        raise ValidationError("tests: only single spaces may separate paths (found a tab or newline)")
    return value.split()


@dataclass(frozen=True)
class DispatchInputs:
    """The ``workflow_dispatch`` inputs, all validated; build with :meth:`create` or :meth:`from_inputs`."""

    repo: str
    sha: str
    pr: int
    tests: tuple[str, ...]

    @classmethod
    def create(cls, *, repo: object, sha: object, pr: object, tests: Iterable[object], test_root: str,
               max_paths: int) -> DispatchInputs:
        return cls(repo=validate_repo(repo), sha=validate_sha(sha), pr=validate_pr(pr),
                   tests=validate_tests(tests, test_root, max_paths))

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, object], test_root: str, max_paths: int) -> DispatchInputs:
        """Parse the string inputs a workflow received (the inverse of :meth:`as_inputs`)."""
        unknown = sorted(set(inputs) - {"repo", "sha", "pr", "tests"})
        if unknown:
            raise ValidationError(f"unknown inputs: {', '.join(map(_show, unknown))}")
        missing = [k for k in ("repo", "sha", "pr", "tests") if k not in inputs]
        if missing:
            raise ValidationError(f"missing inputs: {', '.join(missing)}")
        return cls.create(repo=inputs["repo"], sha=inputs["sha"], pr=inputs["pr"],
                          tests=split_tests(inputs["tests"]), test_root=test_root, max_paths=max_paths)

    def as_inputs(self) -> dict[str, str]:
        return {"repo": self.repo, "sha": self.sha, "pr": str(self.pr), "tests": " ".join(self.tests)}


def _show(value: object, limit: int = 60) -> str:
    """A bounded, printable rendering of untrusted input for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
