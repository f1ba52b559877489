"""Before vs after, per test. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from bot.migrate.junit import Outcome


@dataclass(frozen=True)
class Row:
    test: str
    before: Outcome
    after: Outcome

    @property
    def regression(self) -> bool:
        """Passed before the fix, and failed, errored or vanished after it."""
        return self.before is Outcome.PASSED and self.after.bad

    @property
    def new_failure(self) -> bool:
        """A test only the after-run has (the created predicate test) that does not pass."""
        return self.before is Outcome.MISSING and self.after.bad

    @property
    def fixed(self) -> bool:
        return self.before.bad and self.before is not Outcome.MISSING and self.after is Outcome.PASSED


@dataclass(frozen=True)
class Comparison:
    rows: tuple[Row, ...]

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.regression]

    @property
    def new_failures(self) -> list[Row]:
        return [r for r in self.rows if r.new_failure]

    def counts(self, side: str) -> Counter[str]:
        """Outcome counts of the ``before`` or ``after`` run (tests it did not have are not counted)."""
        outcomes = (getattr(r, side) for r in self.rows)
        return Counter(o.value for o in outcomes if o is not Outcome.MISSING)


def compare(before: Mapping[str, Outcome], after: Mapping[str, Outcome]) -> Comparison:
    tests = sorted(set(before) | set(after))
    return Comparison(tuple(Row(t, before.get(t, Outcome.MISSING), after.get(t, Outcome.MISSING)) for t in tests))
