"""The sticky Markdown summary comment of a PR review (one per PR, found again by its hidden marker, on a comment
of pg-bot's own). Everything from the PR in it (file names, messages quoting code) is made inert by
``bot.report.markdown``."""

from __future__ import annotations

import shlex
from collections import Counter

from bot import __version__
from bot.analyze import RULES
from bot.report.github_review import SUMMARY_MARKER, Item, Outcome, ReviewPlan, rule_link
from bot.report.markdown import code_block, code_span, prose


def _where(item: Item) -> str:
    f = item.finding
    lines = f"{f.span.line}" if f.span.end_line == f.span.line else f"{f.span.line}-{f.span.end_line}"
    return code_span(f"{f.path}:{lines}")


def fix_command(paths: list[str], *, unsafe: bool = False) -> str:
    return f"pg-bot fix --write{' --unsafe-fixes' if unsafe else ''} " + " ".join(shlex.quote(p) for p in paths)


def render(plan: ReviewPlan, outcome: Outcome | None = None) -> str:
    """Counts by rule, the fix command, what could not be commented inline, files that could not be analysed."""
    outcome = outcome or Outcome(posted=list(plan.new))
    inline_now = outcome.posted
    not_inline = [*plan.to_summary, *outcome.rejected]
    new_items = [*inline_now, *plan.already, *not_inline]
    new_counts = Counter(i.finding.code for i in new_items)
    old_counts = Counter(f.code for f in plan.pre_existing)
    parts = [SUMMARY_MARKER, "## pg-bot: process-group guards"]
    if not new_items and not plan.pre_existing:
        if plan.errors:
            parts.append(f"No findings in the {len(plan.analysed)} Python file(s) analysed; {len(plan.errors)} "
                         "could not be analysed (listed below).")
        else:
            parts.append("No hand-written process-group guards in the Python files this pull request touches.")
    else:
        parts.append(
            f"**{len(new_items)}** finding(s) on lines this pull request adds "
            f"({len(inline_now) + len(plan.already)} commented inline, {len(not_inline)} listed below);"
            f" **{len(plan.pre_existing)}** pre-existing in the files it touches (not commented)."
        )
        rows = ["| rule | | new | pre-existing |", "|---|---|---:|---:|"]
        for code in sorted(set(new_counts) | set(old_counts)):
            name = RULES[code].name if code in RULES else ""
            rows.append(f"| [{code}]({rule_link(code)}) | {name} | {new_counts[code]} | {old_counts[code]} |")
        parts.append("\n".join(rows))
        paths = sorted({i.finding.path for i in new_items} | {f.path for f in plan.pre_existing})
        commands = [f"{fix_command(paths)}  # the rewrites proven behaviour-preserving"]
        if any(i.suggestion is not None and not i.suggestion.safe for i in new_items):
            commands.append(f"{fix_command(paths, unsafe=True)}  # also those that change behaviour by design")
        parts.append("Rewrite them to `pg_utils.is_parallel` locally (`pg-bot fix` without `--write` shows the "
                     "diff first):\n\n" + code_block("\n".join(commands), "bash"))
    if not_inline:
        lines = ["### Not commented inline"]
        for item in not_inline:
            f = item.finding
            lines.append(f"- {_where(item)} **{f.code}** {prose(f.message)} ({item.reason})")
            if item.suggestion is not None:
                s = item.suggestion
                block = _indent(code_block(s.text, "python"))
                lines.append(f"  <details><summary>suggested lines {s.start_line}-{s.end_line}</summary>\n\n"
                             f"{block}\n  </details>")
        parts.append("\n".join(lines))
    resolved = plan.resolved_before + plan.count("resolved")  # a total, so a rerun leaves the text unchanged
    if resolved:
        parts.append(f"{resolved} earlier comment(s) marked resolved: later commits fixed their findings.")
    if plan.errors:
        parts.append("### Files that could not be analysed\n" +
                     "\n".join(f"- {code_span(e.path)}: {prose(e.message)}" for e in plan.errors))
    if plan.skipped:
        reasons = Counter(reason for _, reason in plan.skipped)
        parts.append("Skipped: " + ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())) + ".")
    parts.append(f"<sub>pg-bot {__version__} · head `{plan.head_sha[:7]}` · {len(plan.analysed)} Python file(s) "
                 "analysed · this comment is updated in place on every run</sub>")
    return "\n\n".join(parts) + "\n"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))  # (splitlines would also split at \x0c, \x85...)
