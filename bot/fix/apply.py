"""fix_source: plan every finding, apply the ones allowed, verify the result, report the rest.

Whatever goes wrong with one file (a rewrite bug, a RecursionError on absurdly nested code, LibCST failing)
costs that file's fixes, reported per finding, and never the run: ``fix_source`` does not raise for bad input.
"""

from __future__ import annotations

import ast

from bot.analyze.source import parse_module
from bot.config import Config
from bot.fix import FixResult
from bot.fix.codemod import apply
from bot.fix.plan import Plan, Refused, make_context, plan
from bot.fix.text import error_text, split_lines
from bot.model import Finding


def plan_all(source: str, findings: list[Finding], config: Config) -> tuple[list[Plan], list[tuple[Finding, str]]]:
    try:
        ctx = make_context(source, split_lines(source), config, findings[0].path if findings else None)
    except SyntaxError as exc:
        return [], [(f, f"file does not parse (line {exc.lineno}): {exc.msg}") for f in findings]
    except (RecursionError, MemoryError, ValueError) as exc:
        return [], [(f, f"file cannot be analysed for a fix: {error_text(exc)}") for f in findings]
    plans: list[Plan] = []
    refused: list[tuple[Finding, str]] = []
    for finding in findings:
        try:
            plans.append(plan(finding, ctx))
        except Refused as exc:
            refused.append((finding, str(exc)))
    return plans, refused


def _size_imports(source: str, config: Config) -> list[tuple[str, str]]:
    """`from <comm module> import get_world_size` at top level: dropped if the rewrites leave it unused."""
    return [
        (node.module, alias.name)
        for node in parse_module(source).body
        if isinstance(node, ast.ImportFrom) and node.module in config.comm_modules
        for alias in node.names
        if alias.name == "get_world_size" and alias.asname is None
    ]


def fix_source(source: str, findings: list[Finding], config: Config, *, unsafe: bool = False) -> FixResult:
    if isinstance(source, bytes):
        source = source.decode("utf-8")
    try:
        return _fix_source(source, findings, config, unsafe)
    except Exception as exc:  # e.g. RecursionError deep inside LibCST or ast: this file's fixes, not the run
        reason = f"internal error while fixing this file: {error_text(exc)}; nothing applied"
        return FixResult(source, [], [(f, reason) for f in findings])


def _fix_source(source: str, findings: list[Finding], config: Config, unsafe: bool) -> FixResult:
    plans, refused = plan_all(source, findings, config)
    chosen: list[Plan] = []
    for p in plans:
        if not p.auto:
            refused.append((p.finding, p.note))
        elif p.safe or unsafe:
            chosen.append(p)
        else:
            refused.append((p.finding, f"{p.note}; applied only with --unsafe-fixes"))
    lines = split_lines(source)
    predicate = (config.predicate_module, config.predicate_name)
    unused = _size_imports(source, config) if chosen else []
    while chosen:
        needs = predicate if any(p.needs_import for p in chosen) else None
        try:
            outcome = apply(source, list(enumerate(chosen)), lines, needs, unused)
        except Exception as exc:  # a bug in a rewrite must cost this file's fixes, not the whole run
            reason = f"internal error while rewriting: {error_text(exc)}; nothing applied"
            return FixResult(source, [], refused + [(p.finding, reason) for p in chosen])
        if not outcome.failed:
            break
        # Drop the plans that could not be carried out and redo the rest from the original source.
        refused.extend((chosen[i].finding, reason) for i, reason in sorted(outcome.failed.items()))
        chosen = [p for i, p in enumerate(chosen) if i not in outcome.failed]
    if not chosen:
        return FixResult(source, [], refused)
    try:
        parse_module(outcome.code)
    except SyntaxError as exc:  # a bug in a rewrite: never hand back code that does not parse
        reason = f"internal error: the rewritten file does not parse (line {exc.lineno}: {exc.msg}); nothing applied"
        return FixResult(source, [], refused + [(p.finding, reason) for p in chosen])
    return FixResult(outcome.code, [p.finding for p in chosen], refused, {id(p.finding): p.note for p in chosen})
