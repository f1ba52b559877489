"""One finding -> the replacement text for a GitHub ```suggestion block (whole lines, exact range)."""

from __future__ import annotations

import ast
import difflib

from bot.config import Config
from bot.fix import Suggestion
from bot.fix.codemod import apply
from bot.fix.plan import Plan, Refused, make_context, plan
from bot.fix.text import split_lines
from bot.model import Finding

MAX_MERGED_LINES = 15  # edits further apart than this are described in the note, not merged into one block


def _plan(source: str, finding: Finding, config: Config) -> Plan:
    try:
        ctx = make_context(source, split_lines(source), config)
    except SyntaxError as exc:
        raise Refused(f"file does not parse (line {exc.lineno}): {exc.msg}") from exc
    return plan(finding, ctx)


def explain(source: str, finding: Finding, config: Config) -> str:
    try:
        return _plan(source, finding, config).note
    except Refused as exc:
        return f"no automatic fix: {exc}"


def _imports_predicate(source: str, config: Config) -> bool:
    tree = ast.parse(source)
    return any(
        isinstance(n, ast.ImportFrom)
        and n.module == config.predicate_module
        and any(a.name == config.predicate_name and a.asname in (None, config.predicate_name) for a in n.names)
        for n in tree.body
    )


def _strip(line: str) -> str:
    return line.rstrip("\r\n")


def suggestion_for(source: str, finding: Finding, config: Config) -> Suggestion | None:
    try:
        p = _plan(source, finding, config)
    except Refused:
        return None
    lines = split_lines(source)
    outcome = apply(source, [(0, p)], lines, None)  # the import is outside the block; the note mentions it
    if outcome.failed:
        return None
    new_lines = split_lines(outcome.code)
    hunks = [
        op for op in difflib.SequenceMatcher(None, lines, new_lines, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if not hunks:
        return None
    first, last = finding.span.line - 1, finding.span.end_line  # 0-based half-open lines of the finding
    primary = min(hunks, key=lambda h: 0 if h[1] < last and h[2] > first else min(abs(h[1] - first), abs(h[2] - last)))
    chosen = hunks if hunks[-1][2] - hunks[0][1] <= MAX_MERGED_LINES else [primary]
    i1, i2 = chosen[0][1], chosen[-1][2]
    j1, j2 = chosen[0][3], chosen[-1][4]
    if i1 == i2:  # a pure insertion: a suggestion must replace at least one line, so take the one before
        i1, j1 = i1 - 1, j1 - 1
    note = p.note
    others = [h for h in hunks if h not in chosen]
    if others:
        extra = "; ".join(
            f"line {h[1] + 1}: {' / '.join(_strip(x).strip() for x in new_lines[h[3]:h[4]]) or 'delete'}" for h in others
        )
        note += f". Also change {extra}"
    if p.needs_import and not _imports_predicate(source, config):
        note += f". Needs `{config.predicate_import}` at the top of the file"
    text = "\n".join(_strip(x) for x in new_lines[j1:j2])
    return Suggestion(i1 + 1, i2, text, p.safe, note)
