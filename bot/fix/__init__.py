"""The fixer: findings -> LibCST rewrites to ``pg_utils.is_parallel``, each checked for equivalence.

Public API (docs/contracts.md): ``fix_source`` and ``suggestion_for``. LibCST is imported only when a fix is
computed, so importing this package (or running ``pg-bot check``) does not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.config import Config
from bot.model import Finding

if TYPE_CHECKING:  # the real import would load LibCST
    from bot.fix.suggest import Prepared

FIXABLE = ("PG101", "PG102", "PG103", "PG104", "PG105", "PG106", "PG107", "PG108")


@dataclass
class FixResult:
    source: str
    applied: list[Finding] = field(default_factory=list)
    refused: list[tuple[Finding, str]] = field(default_factory=list)
    notes: dict[int, str] = field(default_factory=dict)  # id(finding) of an applied finding -> what changed

    def note(self, finding: Finding) -> str:
        return self.notes.get(id(finding), "")


@dataclass(frozen=True)
class Suggestion:
    """``text`` replaces whole lines ``start_line..end_line`` (1-based, inclusive): a GitHub suggestion body.

    Lines are joined with ``\\n`` and carry no final newline; an empty ``text`` deletes the lines. ``auto``: whether
    `pg-bot fix` applies it (by default when ``safe``, else with ``--unsafe-fixes``); False for a rewrite offered
    for review only (``note`` says why).
    """

    start_line: int
    end_line: int
    text: str
    safe: bool
    note: str
    auto: bool = True


def fix_source(source: str, findings: list[Finding], config: Config, *, unsafe: bool = False) -> FixResult:
    from bot.fix.apply import fix_source as _fix

    return _fix(source, findings, config, unsafe=unsafe)


def suggestion_for(source: str, finding: Finding, config: Config, prepared: Prepared | None = None) -> Suggestion | None:
    """``prepared``: ``bot.fix.suggest.prepare(source, config)``, to parse a file once for all its findings."""
    from bot.fix.suggest import suggestion_for as _suggest

    return _suggest(source, finding, config, prepared)


def explain(source: str, finding: Finding, config: Config) -> str:
    """Why a finding's fix is safe, unsafe (which states change) or refused: for review comments."""
    from bot.fix.suggest import explain as _explain

    return _explain(source, finding, config)


__all__ = ["FIXABLE", "FixResult", "Suggestion", "explain", "fix_source", "suggestion_for"]
