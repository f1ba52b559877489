"""One finding -> the replacement text for a GitHub ```suggestion block (whole lines, exact range)."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import MetadataWrapper

from bot.analyze.source import parse_module
from bot.config import Config
from bot.fix import Suggestion
from bot.fix.codemod import apply, parse
from bot.fix.plan import Context, Plan, Refused, make_context, plan
from bot.fix.text import error_text, split_lines
from bot.model import Finding

MAX_GAP = 2  # unchanged lines allowed between two edits that still share one suggestion block

Hunk = tuple[str, int, int, int, int]  # difflib opcode: tag, old i1..i2, new j1..j2 (0-based, half-open)
LineEdit = tuple[int, int, str]  # lines[first:last] (0-based, half-open, as split_lines gives them) become text


def _context(source: str, config: Config, path: str | None) -> Context:
    try:
        return make_context(source, split_lines(source), config, path)
    except SyntaxError as exc:
        raise Refused(f"file does not parse (line {exc.lineno}): {exc.msg}") from exc
    except (RecursionError, MemoryError, ValueError) as exc:
        raise Refused(f"file cannot be analysed for a fix: {error_text(exc)}") from exc


def _plan(source: str, finding: Finding, config: Config) -> Plan:
    return plan(finding, _context(source, config, finding.path))


@dataclass
class Prepared:
    """One file, parsed once for all of its suggestions: the planner's context and LibCST's tree (built on first
    use). A large file has several findings; parsing it per finding made one review take seconds per finding."""

    source: str
    config: Config
    path: str | None = None
    lines: list[str] = field(init=False)
    context: Context | Refused = field(init=False)
    _tree: MetadataWrapper | str | None = field(default=None, init=False, repr=False)
    _import: list[LineEdit] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.lines = split_lines(self.source)
        try:
            self.context = _context(self.source, self.config, self.path)
        except Refused as exc:
            self.context = exc

    @property
    def tree(self) -> MetadataWrapper | str:
        if self._tree is None:
            self._tree = parse(self.source)
        return self._tree

    def plan(self, finding: Finding) -> Plan:
        if isinstance(self.context, Refused):
            raise self.context
        return plan(finding, self.context)

    def import_edits(self) -> list[LineEdit]:
        """The line edits that add the predicate's import (none when the file has it), made once per file."""
        if self._import is None:
            predicate = (self.config.predicate_module, self.config.predicate_name)
            self._import = _leading_import_edits(self.tree, predicate)
            if self._import is None:
                outcome = apply(self.source, [], self.lines, predicate, parsed=self.tree)
                self._import = _line_edits(self.lines, split_lines(outcome.code))
        return self._import

    def imports_predicate(self) -> bool:
        tree = self.context.tree if isinstance(self.context, Context) else parse_module(self.source)
        return _imports_predicate(tree, self.config)


def _leading_import_edits(tree: MetadataWrapper | str, predicate: tuple[str, str]) -> list[LineEdit] | None:
    """The import edits made on the file's leading statements alone: LibCST's AddImportsVisitor reads and
    changes only the first import block (after a docstring) and the statement after it, but walks the whole
    module, seconds for a large one. None when they cannot be told apart from the rest (then the whole file)."""
    if isinstance(tree, str):
        return None
    module = tree.module
    body = list(module.body)
    end = 1 if body and not _is_import_line(body[0]) else 0  # a docstring (or anything) first stays included
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    head = module.with_changes(body=body[: end + 1], footer=())
    outcome = apply(head.code, [], split_lines(head.code), predicate)
    old, new = split_lines(head.code), split_lines(outcome.code)
    edits = _line_edits(old, new)
    if any(last > len(old) for _, last, _ in edits):
        return None
    return edits


def _is_import_line(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Import | cst.ImportFrom)


def prepare(source: str, config: Config, path: str | None = None) -> Prepared:
    """Parse ``source`` once; pass the result to ``suggestion_for`` for each of the file's findings."""
    return Prepared(source, config, path)


def explain(source: str, finding: Finding, config: Config) -> str:
    try:
        p = _plan(source, finding, config)
        failed = apply(source, [(0, p)], split_lines(source), None).failed if p.auto else {}
    except Refused as exc:
        return f"no automatic fix: {exc}"
    except Exception as exc:  # a rewrite bug (or absurd nesting) costs the explanation, not the review
        return f"no automatic fix: internal error: {error_text(exc)}"
    return f"no automatic fix: {failed[0]}" if failed else p.note


def _imports_predicate(tree: ast.Module, config: Config) -> bool:
    return any(
        isinstance(n, ast.ImportFrom)
        and n.module == config.predicate_module
        and any(a.name == config.predicate_name and a.asname in (None, config.predicate_name) for a in n.names)
        for n in tree.body
    )


def _strip(line: str) -> str:
    return line.rstrip("\r\n")


def _clusters(hunks: list[Hunk]) -> list[list[Hunk]]:
    clusters: list[list[Hunk]] = []
    for hunk in hunks:
        if clusters and hunk[1] - clusters[-1][-1][2] <= MAX_GAP:
            clusters[-1].append(hunk)
        else:
            clusters.append([hunk])
    return clusters


def _describe(hunk: Hunk, new_lines: list[str]) -> str:
    tag, i1, i2, j1, j2 = hunk
    text = " / ".join(_strip(x).strip() for x in new_lines[j1:j2])
    if tag == "insert":
        return f"add after line {i1}: `{text}`"
    if tag == "delete":
        return f"delete lines {i1 + 1}-{i2}"
    return f"lines {i1 + 1}-{i2} become `{text}`"


def suggestion_for(source: str, finding: Finding, config: Config, prepared: Prepared | None = None) -> Suggestion | None:
    """The block for ``finding``, or None when no automatic fix exists (``explain`` says why). ``prepared``: the
    file's ``prepare(source, config)``, reused across its findings (it must be of this ``source``)."""
    if prepared is None:
        prepared = prepare(source, config, finding.path)
    try:
        p = prepared.plan(finding)
    except (Refused, RecursionError):
        return None
    lines = prepared.lines
    auto = p.auto
    if p.suggest_ops is not None:  # e.g. a predicate copy: delegate in place rather than edit every call site
        p = replace(p, ops=p.suggest_ops, note=p.suggest_note or p.note)
    try:  # the import is outside the block; the note mentions it
        outcome = apply(source, [(0, p)], lines, None, parsed=prepared.tree)
    except Exception:  # a rewrite bug costs this suggestion, not the review
        return None
    if outcome.failed:
        return None
    new_lines = split_lines(outcome.code)
    matcher = difflib.SequenceMatcher(None, lines, new_lines, autojunk=False)
    hunks: list[Hunk] = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not hunks:
        return None
    first, last = finding.span.line - 1, finding.span.end_line  # the finding's lines, 0-based half-open

    def distance(cluster: list[Hunk]) -> int:
        lo, hi = cluster[0][1], cluster[-1][2]
        return 0 if lo < last and hi > first else min(abs(lo - first), abs(hi - last))

    clusters = _clusters(hunks)
    chosen = min(clusters, key=distance)
    _, i1, _, j1, _ = chosen[0]
    _, _, i2, _, j2 = chosen[-1]
    if i1 == i2:  # a pure insertion: a suggestion must replace at least one line, so take the one before
        i1, j1 = i1 - 1, j1 - 1
    note = p.note
    others = [h for c in clusters if c is not chosen for h in c]
    if others:
        note += ". Also " + "; ".join(_describe(h, new_lines) for h in others)
    if p.needs_import and not prepared.imports_predicate():
        note += f". Needs `{config.predicate_import}` at the top of the file"
    text = "\n".join(_strip(x) for x in new_lines[j1:j2])
    return Suggestion(i1 + 1, i2, text, p.safe, note, auto)


def fix_edits(finding: Finding, prepared: Prepared) -> tuple[list[LineEdit], Plan] | None:
    """``finding``'s whole rewrite as `pg-bot fix` applies it on its own (with ``--unsafe-fixes`` unless
    ``plan.safe``), the predicate's import included, as line edits of the source; None when `pg-bot fix` has
    none to apply. For SARIF's ``fixes``, whose consumers apply them without reading any note."""
    try:
        p = prepared.plan(finding)
    except (Refused, RecursionError):
        return None
    if not p.auto:
        return None
    try:
        outcome = apply(prepared.source, [(0, p)], prepared.lines, None, parsed=prepared.tree)
        if outcome.failed:
            return None
        edits = _line_edits(prepared.lines, split_lines(outcome.code))
        if p.needs_import:  # the same import for every finding of the file: made once (a whole-tree pass)
            edits = sorted([*prepared.import_edits(), *edits])
        parse_module(_edited(prepared.lines, edits))  # never hand out a rewrite that does not parse
    except Exception:  # a rewrite bug costs this fix, not the report
        return None
    return edits, p


def _line_edits(old: list[str], new: list[str]) -> list[LineEdit]:
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(i1, i2, "".join(new[j1:j2])) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def _edited(lines: list[str], edits: list[LineEdit]) -> str:
    out, pos = [], 0
    for first, last, text in edits:
        out += [*lines[pos:first], text]
        pos = last
    return "".join([*out, *lines[pos:]])
