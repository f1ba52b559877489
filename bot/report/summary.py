"""The sticky Markdown summary comment of a PR review (one per PR, found again by its hidden marker, on a comment
of pg-bot's own). Everything from the PR in it (file names, messages quoting code) is made inert by
``bot.report.markdown``.

When the PR adds findings (``ReviewPlan.has_findings``) it gives the counts by rule, the `pg-bot fix` commands that
fix the findings the PR adds (split by what the fixer does with each), what could not be commented inline, the
medium-confidence notes with their evidence, and the files that could not be analysed. When it adds none, the
text says "Nothing to report" (and how many earlier comments were resolved): what an earlier summary is edited to,
or, when this run resolved the last findings, what is posted (``ReviewPlan.summary_action``).
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Sequence

from bot import __version__
from bot.analyze import RULES
from bot.report.github_review import SUMMARY_ALWAYS, SUMMARY_MARKER, Item, Outcome, ReviewPlan, rule_link
from bot.report.markdown import code_block, code_span, prose

HEADING = "## pg-bot: process-group guards"


def _where(item: Item) -> str:
    f = item.finding
    lines = f"{f.span.line}" if f.span.end_line == f.span.line else f"{f.span.line}-{f.span.end_line}"
    return code_span(f"{f.path}:{lines}")


def fix_command(paths: list[str], *, unsafe: bool = False) -> str:
    return f"pg-bot fix --write{' --unsafe-fixes' if unsafe else ''} " + " ".join(shlex.quote(p) for p in paths)


def _counted(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _listed(items: Sequence[Item]) -> str:
    return ", ".join(f"{_where(i)} {i.finding.code}" for i in items)


def fix_section(items: Sequence[Item], pre_existing: int) -> str:
    """How to fix the findings the PR adds, by what `pg-bot fix` does with each: applies it (proven
    behaviour-preserving), applies it only with ``--unsafe-fixes`` (changes behaviour on purpose: review it),
    never applies it (a rewrite to check by hand), or has no rewrite at all."""
    safe = [i for i in items if i.suggestion is not None and i.suggestion.auto and i.suggestion.safe]
    unsafe = [i for i in items if i.suggestion is not None and i.suggestion.auto and not i.suggestion.safe]
    by_hand = [i for i in items if i.suggestion is not None and not i.suggestion.auto]
    manual = [i for i in items if i.suggestion is None]
    parts = []
    commands = []
    if safe:
        paths = sorted({i.finding.path for i in safe})
        commands.append(f"{fix_command(paths)}  # {_counted(len(safe), 'finding')}: proven behaviour-preserving")
    if unsafe:
        paths = sorted({i.finding.path for i in unsafe})
        commands.append(f"{fix_command(paths, unsafe=True)}  # {_counted(len(unsafe), 'finding')}: change "
                        "behaviour on purpose, review each")
    if commands:
        parts.append("Fix them locally (`pg-bot fix` without `--write` shows the diff first):\n\n"
                     + code_block("\n".join(commands), "bash"))
        if unsafe:
            parts.append("`--unsafe-fixes` rewrites change what an absent, single-rank or non-member group does, "
                         "which is the point of the migration; each one's comment (or its suggestion below) says "
                         f"which states change. Review them: {_listed(unsafe)}.")
        if pre_existing:
            parts.append(f"These commands rewrite every finding in the files they name, so also the "
                         f"{_counted(pre_existing, 'pre-existing finding')} there.")
    if by_hand:
        parts.append("Suggested rewrite to check and apply by hand (`pg-bot fix` never applies it, not even with "
                     f"`--unsafe-fixes`; its comment says why): {_listed(by_hand)}.")
    if manual:
        parts.append(f"No automatic rewrite (fix by hand; the rule's page shows how): {_listed(manual)}.")
    return "\n\n".join(parts)


def render(plan: ReviewPlan, outcome: Outcome | None = None) -> str:
    """The summary's text for ``plan`` (``outcome``: what the review post did; by default all went inline)."""
    outcome = outcome or Outcome(posted=list(plan.new))
    if not plan.has_findings(outcome) and (plan.summary_mode != SUMMARY_ALWAYS or not plan.analysed):
        return _nothing_to_report(plan)  # the same text whether this run resolved the last findings or a rerun
    inline_now = outcome.posted
    not_inline = [*plan.to_summary, *outcome.rejected]
    high = [*inline_now, *plan.already, *not_inline]
    new_items = [*high, *plan.notes]
    new_counts = Counter(i.finding.code for i in new_items)
    old_counts = Counter(f.code for f in plan.pre_existing)
    parts = [SUMMARY_MARKER, HEADING]
    if not new_items and not plan.pre_existing:
        if plan.errors:
            parts.append(f"No findings in the {len(plan.analysed)} Python file(s) analysed; {len(plan.errors)} "
                         "could not be analysed (listed below).")
        else:
            parts.append("No hand-written process-group guards in the Python files this pull request touches.")
    else:
        notes = f", {len(plan.notes)} medium-confidence note(s)" if plan.notes else ""
        parts.append(
            f"**{len(new_items)}** finding(s) on lines this pull request adds "
            f"({len(inline_now) + len(plan.already)} commented inline, {len(not_inline)} listed below{notes});"
            f" **{len(plan.pre_existing)}** pre-existing in the files it touches (not commented)."
        )
        rows = ["| rule | | new | pre-existing |", "|---|---|---:|---:|"]
        for code in sorted(set(new_counts) | set(old_counts)):
            name = RULES[code].name if code in RULES else ""
            rows.append(f"| [{code}]({rule_link(code)}) | {name} | {new_counts[code]} | {old_counts[code]} |")
        parts.append("\n".join(rows))
        if new_items:
            touched = {i.finding.path for i in new_items}
            parts.append(fix_section(new_items, sum(1 for f in plan.pre_existing if f.path in touched)))
    if not_inline:
        parts.append(_itemised("### Not commented inline", not_inline, lambda i: f"({i.reason})"))
    if plan.notes:
        parts.append(_itemised(
            "### Notes (medium confidence, not commented inline)", plan.notes,
            lambda i: "— evidence: " + "; ".join(prose(e) for e in i.finding.evidence) + "." if i.finding.evidence
            else "",
        ))
    resolved = plan.resolved_before + plan.count("resolved")  # a total, so a rerun leaves the text unchanged
    if resolved:
        parts.append(f"{resolved} earlier comment(s) marked resolved: later commits fixed their findings.")
    if plan.errors:
        parts.append("### Files that could not be analysed\n" +
                     "\n".join(f"- {code_span(e.path)}: {prose(e.message)}" for e in plan.errors))
    if plan.skipped:
        reasons = Counter(reason for _, reason in plan.skipped)
        parts.append("Skipped: " + ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())) + ".")
    parts.append(_footer(plan))
    return "\n\n".join(parts) + "\n"


def _itemised(heading: str, items: Sequence[Item], tail: Callable[[Item], str]) -> str:
    lines = [heading]
    for item in items:
        f = item.finding
        extra = tail(item)
        lines.append(f"- {_where(item)} **{f.code}** {prose(f.message)}{' ' + extra if extra else ''}")
        if item.suggestion is not None:
            s = item.suggestion
            block = _indent(code_block(s.text, "python"))
            note = f"\n\n  {'' if s.safe else '**Check before applying:** '}{prose(s.note)}" if s.note else ""
            lines.append(f"  <details><summary>suggested lines {s.start_line}-{s.end_line}</summary>\n\n"
                         f"{block}{note}\n  </details>")
    return "\n".join(lines)


def _nothing_to_report(plan: ReviewPlan) -> str:
    """What an earlier summary becomes when the PR no longer adds findings: said plainly, not left stale."""
    if plan.analysed or plan.errors:
        now = "no process-group guard findings on lines this pull request adds"
    else:
        now = "this pull request adds or modifies no Python file"
    parts = [SUMMARY_MARKER, HEADING, f"**Nothing to report** as of `{plan.head_sha[:7]}`: {now}."]
    resolved = plan.resolved_before + plan.count("resolved")
    if resolved:
        parts.append(f"{resolved} earlier comment(s) marked resolved: later commits fixed their findings.")
    parts.append(_footer(plan))
    return "\n\n".join(parts) + "\n"


def _footer(plan: ReviewPlan) -> str:
    return (f"<sub>pg-bot {__version__} · head `{plan.head_sha[:7]}` · {len(plan.analysed)} Python file(s) "
            "analysed · this comment is updated in place on every run</sub>")


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))  # (splitlines would also split at \x0c, \x85...)
