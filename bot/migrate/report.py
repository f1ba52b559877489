"""`pg-bot migrate-test` output: a text report for people, JSON for tools. Pure."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bot.migrate.compare import Row
from bot.migrate.imports import ImportCheck, ImportResult
from bot.migrate.junit import Outcome
from bot.migrate.pipeline import Result

_ORDER = [o.value for o in (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED)]


def counts_text(counts: Counter[str]) -> str:
    return ", ".join(f"{counts[k]} {k}" for k in _ORDER if counts[k]) or "no tests"


def _cell(outcome: Outcome) -> str:
    return "-" if outcome is Outcome.MISSING else outcome.value


def _mark(row: Row) -> str:
    if row.regression:
        return "  REGRESSION"
    if row.new_failure:
        return "  NEW TEST FAILS"
    if row.before is Outcome.MISSING:
        return "  (new)"
    if row.fixed:
        return "  (fixed)"
    return ""


def imports_text(check: ImportCheck, broken: list[ImportResult] | None = None) -> list[str]:
    """``broken``: the failures to blame on the fix (default: all); the others already failed before it."""
    if check.error is not None:
        return [f"imports: could not check: {check.error}"]
    good = sum(1 for r in check.results if r.ok)
    blamed = check.failures if broken is None else broken
    earlier = [r for r in check.failures if r not in blamed]
    lines = [f"imports: {good} of {len(check.results)} touched module(s) import"
             + (f"; {len(earlier)} failed before the fix too (not caused by it)" if earlier else "")]
    lines += [f"  FAILED {r.module} ({r.path}): {r.detail}" for r in blamed]
    lines += [f"  failed before and after the fix: {r.module} ({r.path}): {r.detail}" for r in earlier]
    lines += [f"  not checked (not in a package): {path}" for path in check.skipped]
    return lines


def text(result: Result) -> str:
    fix = result.fix
    cmp = result.comparison
    lines = [
        f"checkout: {result.checkout} (fixed copy: {result.tree})",
        f"areas: {', '.join(result.areas) or 'none'}; tests: {' '.join(result.tests)}",
        f"fix: {sum(fix.applied.values())} finding(s) in {len(fix.files)} file(s)"
        f" ({', '.join(f'{c} {n}' for c, n in sorted(fix.applied.items())) or 'none'});"
        f" not fixed {sum(fix.refused.values())}",
    ]
    lines += [f"  fixed {path}" for path in fix.files]
    lines += [f"  created {path}" for path in fix.created]
    lines += [f"  {error}" for error in fix.errors]
    lines += imports_text(result.imports, result.import_regressions)
    lines.append(
        f"tests before: {counts_text(cmp.counts('before'))} ({result.before.seconds:.1f} s); "
        f"after: {counts_text(cmp.counts('after'))} ({result.after.seconds:.1f} s)"
    )
    lines.append("")
    width = max(len("before"), *(len(o.value) for o in Outcome))
    lines.append(f"{'before':<{width}}  {'after':<{width}}  test")
    for row in cmp.rows:
        lines.append(f"{_cell(row.before):<{width}}  {_cell(row.after):<{width}}  {row.test}{_mark(row)}")
    lines.append("")
    regressions, new_failures = cmp.regressions, cmp.new_failures
    lines.append(f"regressions: {len(regressions)}" + "".join(f"\n  {r.test}: {r.after.value}" for r in regressions))
    if new_failures:
        lines.append(f"new tests failing: {len(new_failures)}" + "".join(f"\n  {r.test}" for r in new_failures))
    lines.append(f"logs: {result.before.log} {result.after.log}")
    lines.append("result: " + ("OK" if result.ok else "FAILED"))
    return "\n".join(lines) + "\n"


def as_json(result: Result) -> dict[str, Any]:
    cmp = result.comparison
    return {
        "checkout": str(result.checkout),
        "tree": str(result.tree),
        "areas": result.areas,
        "tests": result.tests,
        "added_tests": result.added_tests,
        "fix": {
            "files": result.fix.files,
            "created": result.fix.created,
            "applied": dict(result.fix.applied),
            "refused": dict(result.fix.refused),
            "errors": result.fix.errors,
        },
        "imports": {
            "error": result.imports.error,
            "skipped": result.imports.skipped,
            "results": [vars(r) for r in result.imports.results],
            "before": [vars(r) for r in result.imports_before.results],
            "broken_by_fix": [r.module for r in result.import_regressions],
        },
        "before": {"counts": dict(cmp.counts("before")), "seconds": round(result.before.seconds, 2),
                   "returncode": result.before.returncode, "command": list(result.before.command)},
        "after": {"counts": dict(cmp.counts("after")), "seconds": round(result.after.seconds, 2),
                  "returncode": result.after.returncode, "command": list(result.after.command)},
        "tests_per_id": [
            {"test": r.test, "before": r.before.value, "after": r.after.value, "regression": r.regression,
             "new_failure": r.new_failure}
            for r in cmp.rows
        ],
        "regressions": [r.test for r in cmp.regressions],
        "seconds": {k: round(v, 2) for k, v in result.seconds.items()},
        "ok": result.ok,
    }
