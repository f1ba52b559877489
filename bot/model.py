"""Plain data shared by every stage: spans, findings, edits, rule metadata. No I/O here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, order=True)
class Span:
    """A source range. Lines are 1-based; columns are 0-based *character* offsets; the end is exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Invalid:
    """An example a rule must flag: ``flagged`` is the exact source text of the finding's span (its first
    occurrence in ``source``); ``fixed`` is the source after `pg-bot fix` (with ``--unsafe-fixes`` when
    ``unsafe``), or None when the finding has no automatic fix."""

    source: str
    flagged: str
    fixed: str | None = None
    unsafe: bool = False


@dataclass(frozen=True)
class Rule:
    """A rule documents itself under fixed headings; its ``valid``/``invalid`` examples are its tests."""

    code: str
    name: str
    summary: str  # what it finds
    why: str  # why it is a problem
    fix: str  # use instead
    valid: tuple[str, ...]
    invalid: tuple[Invalid, ...]
    fix_safety: str = ""
    fixable: bool = True


class Confidence(str, Enum):
    """How sure the analysis is; PR comments are posted only for HIGH, the rest go to the summary and SARIF."""

    HIGH = "high"
    MEDIUM = "medium"


@dataclass(frozen=True)
class Finding:
    """One place that the migration must change.

    ``group`` is the source text of the process-group expression involved (``self.mp_group``), ``kind`` a
    rule-specific sub-kind the fixer dispatches on, ``data`` extra facts (e.g. the comparison found).
    """

    code: str
    message: str
    path: str
    span: Span
    severity: Severity = Severity.ERROR
    group: str | None = None
    kind: str = ""
    function: str | None = None
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    confidence: Confidence = Confidence.HIGH
    evidence: tuple[str, ...] = field(default=(), compare=False, hash=False)

    @property
    def line(self) -> int:
        return self.span.line

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["severity"] = self.severity.value
        d["confidence"] = self.confidence.value
        d["evidence"] = list(self.evidence)
        return d


@dataclass(frozen=True)
class FileError:
    """A file that could not be analysed, and why; the run goes on without it."""

    path: str
    message: str


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    migrated: int = 0  # uses of the predicate already present (the tracker counts these)


@dataclass(frozen=True)
class Edit:
    """Replace ``span`` of the original source with ``text``."""

    span: Span
    text: str
