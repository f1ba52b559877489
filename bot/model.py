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


# ------------------------------------------------------------------ payloads: what the analyzer knows, per kind
# Spans locate nodes in the analysed source (the fixer finds them by span, never by line); strings are source
# text or names. The fixer reads these attributes and never re-derives them.


@dataclass(frozen=True)
class GuardPayload:
    """PG101/PG102 kinds `and`/`or`: a full guard whose two checks are operands of one boolean chain."""

    none_check: Span  # the None test operand (`g is not None`)
    size_check: Span  # the size comparison operand (`get_world_size(g) > 1`)
    chain: Span  # the whole `and`/`or` chain the two checks sit in
    adjacent: bool  # the two checks are neighbouring operands of the chain
    op: str  # the size comparison's operator, as written (`>`, `>=`, `==`, `!=`, ...)
    bound: int  # the constant the size is compared with
    nonmember_bug: bool  # `!= 1` / `== 1`: judges a non-member group (size -1) differently from the predicate
    size_via: str | None = None  # the local/attribute the size was cached in (`ws`, `self.tp_world_size`)
    size_when_none: int | None = None  # that cache's value when the group is None (`... else 1`); None: the world
    inverted: Span | None = None  # the `not (...)` whose operand the whole chain is


@dataclass(frozen=True)
class SplitGuardPayload:
    """PG101/PG102 kind `split`: the None check and the size check are separate statements or tests."""

    none_check: Span  # the None test
    size_check: Span  # the size comparison
    none_test: Span  # the whole condition the None test sits in
    size_test: Span  # the whole condition the size comparison sits in
    none_negated: bool  # the None fact comes from its condition being False (an early exit, an else branch)
    size_negated: bool  # likewise for the size fact
    op: str
    bound: int
    nonmember_bug: bool
    collective: str | None  # the collective the split guard protects; None for a flag set from it
    # one test of a size that is 1 when the group is None (none_check == size_check): the local/attribute it is
    # read through (`n`) and its value for a None group (`ws(g) if g is not None else 1` -> 1)
    size_via: str | None = None
    size_when_none: int | None = None


@dataclass(frozen=True)
class NoneOnlyPayload:
    """PG103: a None-only test guards a collective."""

    test: str  # the test's source on one line (`g is not None`)
    collective: str


@dataclass(frozen=True)
class SizeOnlyPayload:
    """PG104: a size-only test guards a collective on a group that may be None."""

    op: str
    bound: int
    nonmember_bug: bool
    collective: str
    via: str | None = None  # the local/attribute the size was read through, if cached


@dataclass(frozen=True)
class UnguardedPayload:
    """PG105: a collective on a group that may be None, with no guard; reported at the collective, or (with
    ``helper``) at the in-file call that passes the optional group to a helper that runs it."""

    statement: Span  # the whole statement to wrap (the collective's, or the helper call's)
    result_used: bool  # the statement uses the call's result (assigned, returned, ...)
    collective: str
    helper: str | None = None  # qualified name of the helper called, for the at-call variant
    deferred: bool = False  # the call runs later, in a lambda or a functools.partial (a hook, a callback)


@dataclass(frozen=True)
class CachedSizePayload:
    """PG106: a cached world size (`self.ws = get_world_size(group=g)`) tested later (`self.ws > 1`)."""

    attribute: str  # the cache (`self.ws`)
    assignment: Span | None  # the assignment statement, when found in the class
    assigned_in: str | None  # the function that assigns it (`Class.__init__`)
    cache_attribute: str  # the flag to cache instead (`self.is_mp_parallel`), as the message names it
    collective: str


@dataclass(frozen=True)
class CopyPayload:
    """PG107: a local copy of the predicate (a function/method/property whose body is the guard)."""

    name: str  # the copy's name
    calls: tuple[Span, ...]  # its calls in this file
    negated: bool  # it returns `not` the guard
    param: str  # the group it tests (a parameter or `self.<attr>`)
    method: bool  # defined in a class with `self`/`cls` first
    property: bool  # decorated as a property


@dataclass(frozen=True)
class ContiguousPayload:
    """PG108: an in-place collective on `x.contiguous()` whose result is discarded."""

    tensor: str  # the tensor's source (`x`)
    statement: Span
    collective: str
    result_used: bool
    argument: Span  # the `x.contiguous()` the collective writes into
    asynchronous: bool  # `async_op=` is passed, and not as a literal False: the copy-back would run too early
    deferred: bool = False  # the call runs later, in a lambda or a functools.partial (a hook, a callback)


Payload = (
    GuardPayload | SplitGuardPayload | NoneOnlyPayload | SizeOnlyPayload | UnguardedPayload | CachedSizePayload
    | CopyPayload | ContiguousPayload
)


def payload_dict(payload: Payload) -> dict[str, Any]:
    """``payload`` for JSON: its fields (spans as dicts, tuples as lists) plus ``type``, its class name."""
    return {"type": type(payload).__name__, **_plain(asdict(payload))}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Finding:
    """One place that the migration must change.

    ``group`` is the source text of the process-group expression involved (``self.mp_group``), ``kind`` a
    rule-specific sub-kind, ``payload`` the typed facts of that kind the fixer works from (docs/contracts.md).
    """

    code: str
    message: str
    path: str
    span: Span
    severity: Severity = Severity.ERROR
    group: str | None = None
    kind: str = ""
    function: str | None = None
    payload: Payload | None = field(default=None, compare=False, hash=False)
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
        d["payload"] = payload_dict(self.payload) if self.payload is not None else None
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
