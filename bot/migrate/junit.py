"""Per-test outcomes from the JUnit XML that ``pytest --junitxml`` writes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from enum import Enum
from pathlib import Path


class Outcome(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # setup/teardown or collection error
    SKIPPED = "skipped"  # also xfail (pytest writes both as <skipped>)
    MISSING = "missing"  # not in this run (e.g. its module no longer collects)

    @property
    def bad(self) -> bool:
        return self in (Outcome.FAILED, Outcome.ERROR, Outcome.MISSING)


class JUnitError(Exception):
    """The file is missing or is not pytest's JUnit XML."""


def outcome_of(case: ET.Element) -> Outcome:
    # A test can carry a <failure> from its call and an <error> from teardown: the worst one counts.
    tags = {child.tag for child in case}
    if "failure" in tags:
        return Outcome.FAILED
    if "error" in tags:
        return Outcome.ERROR
    if "skipped" in tags:
        return Outcome.SKIPPED
    return Outcome.PASSED


def case_id(case: ET.Element) -> str:
    """``tests.unit.x.test_y.TestZ::test[param]`` (a collection error has an empty classname: just its name)."""
    classname, name = case.get("classname", ""), case.get("name", "")
    return f"{classname}::{name}" if classname else name


def parse(text: str) -> dict[str, Outcome]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise JUnitError(f"not valid XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"not JUnit XML: the root element is <{root.tag}>")
    outcomes: dict[str, Outcome] = {}
    for case in root.iter("testcase"):
        key = case_id(case)
        seen = outcomes.get(key)
        found = outcome_of(case)
        # The same id twice (pytest-rerunfailures, duplicate parametrize ids): keep the worst.
        outcomes[key] = found if seen is None or _rank(found) > _rank(seen) else seen
    return outcomes


def read(path: Path) -> dict[str, Outcome]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JUnitError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return parse(text)
    except JUnitError as exc:
        raise JUnitError(f"{path}: {exc}") from exc


def _rank(outcome: Outcome) -> int:
    return [Outcome.PASSED, Outcome.SKIPPED, Outcome.MISSING, Outcome.ERROR, Outcome.FAILED].index(outcome)
