"""SARIF 2.1.0 as GitHub code scanning takes it: ``render`` is pure; ``gather`` is the I/O at its edge.

- URIs are relative to the repository root (the folder holding ``.git``; else the project root of
  ``bot.files``), whatever folder `pg-bot check` ran in, with ``uriBaseId`` ``%SRCROOT%`` and that root in
  ``originalUriBaseIds`` (a second root, when files from two repositories are checked, gets ``%SRCROOT2%``).
- Columns count Unicode code points (``columnKind``), as pg-bot's spans do.
- ``partialFingerprints["pgBot/v2"]`` is ``bot.fingerprint``: the value the PR reviewer puts in its comment
  markers, so code scanning and the review recognise one finding as the same one.
- Rules carry ``defaultConfiguration.level`` (rules.yaml's severity), ``properties.tags`` and
  ``properties.precision``, and ``helpUri`` to the rule's section of the rules page (``bot.links``).
- Results carry ``properties.confidence`` (and ``evidence`` when the analysis gives some); a medium-confidence
  result is level ``note``, whatever the rule's severity, as the reviewer makes it a note instead of a comment.
- ``fixes``: where `pg-bot fix` applies a rewrite (on its own, with ``--unsafe-fixes`` unless it is proven
  behaviour-preserving, which the description says), its replacements, the predicate's import included.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from bot import __version__, links
from bot.fingerprint import fingerprints
from bot.model import Confidence, FileResult, Finding, Rule, Severity
from bot.report.escape import json_text

if TYPE_CHECKING:
    from bot.config import Config

SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "pgBot/v2"  # v1 was rule:path:function:group:kind, which two guards in one function shared
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}

# What each rule is about, for code scanning's filters: a hand-rolled full guard (or a copy of the predicate) is
# right today and only asks for the shared predicate (maintainability); the others are behaviour bugs for an
# absent, single-rank or non-member group (correctness). Precision as measured (docs/accuracy.md), lower where
# a finding rests on inference: PG105 needs evidence that None means "dimension absent" and can be medium.
_KIND = {"PG101": "maintainability", "PG102": "maintainability", "PG107": "maintainability"}
_PRECISION = {"PG101": "very-high", "PG102": "very-high", "PG107": "very-high", "PG108": "very-high",
              "PG105": "medium"}


@dataclass(frozen=True)
class Replacement:
    """Characters (line, column, 1-based, column counted in code points; end exclusive) and what goes there."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True)
class Fix:
    description: str
    replacements: tuple[Replacement, ...]


@dataclass(frozen=True)
class FileFacts:
    """What SARIF says of one checked file beyond its FileResult."""

    uri: str  # its path from its root, '/'-separated (percent-encoded when written)
    base_id: str = SRCROOT  # the uriBaseId of that root
    fingerprints: tuple[str, ...] = ()  # one per finding, in order (empty: from the findings alone)
    fixes: tuple[Fix | None, ...] = ()  # one per finding, in order (empty: none known)


@dataclass(frozen=True)
class Context:
    """``files`` by FileResult.path; ``roots``: base id -> the root's absolute ``file:`` URI (ending in ``/``);
    ``levels`` / ``enabled``: rule code -> its configured default."""

    files: Mapping[str, FileFacts] = field(default_factory=dict)
    roots: Mapping[str, str] = field(default_factory=dict)
    levels: Mapping[str, str] = field(default_factory=dict)
    enabled: Mapping[str, bool] = field(default_factory=dict)


# ---------------------------------------------------------------- rendering (pure)


def render(results: Sequence[FileResult], rules: Mapping[str, Rule], context: Context | None = None) -> str:
    context = context or Context()
    findings = [f for r in results for f in r.findings]
    used = sorted({f.code for f in findings} | set(rules))
    index = {code: i for i, code in enumerate(used)}
    page = links.rules_page()
    out: list[dict[str, Any]] = []
    for r in results:
        facts = context.files.get(r.path) or FileFacts(r.path)
        prints = facts.fingerprints or tuple(fingerprints(r.findings, None))
        fixes = facts.fixes or (None,) * len(r.findings)
        for f, fp, fix in zip(r.findings, prints, fixes, strict=True):
            out.append(_result(f, index[f.code], facts, fp, fix))
    roots = dict(context.roots) or {SRCROOT: ""}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "pg-bot",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": page,
                "rules": [_rule(code, rules.get(code), page, context) for code in used],
            }
        },
        "originalUriBaseIds": {
            base: ({"uri": uri} if uri else {}) | {"description": {"text": "The repository root"}}
            for base, uri in roots.items()
        },
        "columnKind": "unicodeCodePoints",
        "results": out,
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {
                        "level": "warning",
                        "message": {"text": f"could not analyse: {r.error.message}"},
                        "locations": [{"physicalLocation": {"artifactLocation": _artifact(
                            context.files.get(r.path) or FileFacts(r.path))}}],
                    }
                    for r in results
                    if r.error
                ],
            }
        ],
    }
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json_text(json.dumps(doc, indent=2))


def _rule(code: str, rule: Rule | None, page: str, context: Context) -> dict[str, Any]:
    name = rule.name if rule else code
    out: dict[str, Any] = {
        "id": code,
        "name": name,
        "helpUri": links.rule_url(code, page),
        "defaultConfiguration": {"level": context.levels.get(code, "error"),
                                 "enabled": context.enabled.get(code, True)},
        "properties": {"tags": [_KIND.get(code, "correctness"), "distributed", "process-group"],
                       "precision": _PRECISION.get(code, "high")},
    }
    if rule is not None:
        out |= {
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.why},
            "help": {"text": f"{rule.why}\n\nFix: {rule.fix}", "markdown": f"{rule.why}\n\n**Fix:** {rule.fix}"},
        }
    return out


def _result(f: Finding, rule_index: int, facts: FileFacts, fingerprint: str, fix: Fix | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": LEVEL[f.severity] if f.confidence is Confidence.HIGH else "note",
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": _artifact(facts),
            "region": {"startLine": f.span.line, "startColumn": f.span.col + 1,
                       "endLine": f.span.end_line, "endColumn": f.span.end_col + 1},
        }}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "properties": {"confidence": f.confidence.value} | ({"evidence": list(f.evidence)} if f.evidence else {}),
    }
    if fix is not None:
        out["fixes"] = [{
            "description": {"text": fix.description},
            "artifactChanges": [{
                "artifactLocation": _artifact(facts),
                "replacements": [
                    {"deletedRegion": {"startLine": r.start[0], "startColumn": r.start[1],
                                       "endLine": r.end[0], "endColumn": r.end[1]},
                     "insertedContent": {"text": r.text}}
                    for r in fix.replacements
                ],
            }],
        }]
    return out


def _artifact(facts: FileFacts) -> dict[str, str]:
    return {"uri": uri(facts.uri), "uriBaseId": facts.base_id}


def uri(path: str) -> str:
    """A relative URI reference for a path (SARIF wants URIs): `#`, `?`, `%`, spaces and control characters
    percent-encoded, so a name can neither add a fragment nor break the line it is printed on."""
    return quote(path, safe="/", errors="surrogateescape")


def replacements(lines: Sequence[str], edits: Iterable[tuple[int, int, str]]) -> tuple[Replacement, ...]:
    """Line edits (``lines[first:last]`` become ``text``; ``lines`` keep their endings) as SARIF regions. A
    region ends at the start of the line after the last one replaced, so whole lines go, endings included."""
    def at(index: int) -> tuple[int, int]:  # where 0-based line ``index`` starts; past the end: the file's end
        if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
            return index + 1, 1
        return len(lines), len(lines[-1]) + 1

    return tuple(Replacement(at(first), at(last), text) for first, last, text in edits)


# ---------------------------------------------------------------- gathering (reads the checked files again)


def repository_root(file: Path) -> Path:
    """The folder holding ``.git`` above ``file`` (code scanning resolves URIs against the checkout); else its
    project root or the folder above its outermost package (``bot.files``); else its own folder."""
    from bot.files import package_base, project_root

    folder = file.parent.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return project_root(file) or package_base(file) or folder


def gather(results: Sequence[FileResult], config: Config) -> Context:
    """Root, root-relative path, fingerprints and fixes of each result's file. Each file with findings is read
    again (with `check`'s safe read) and re-analysed: its text is used only if it still gives the same
    findings (so stdin, or a file edited since, never gets another text's fingerprints or fixes)."""
    roots: dict[Path, str] = {}
    files: dict[str, FileFacts] = {}
    for r in results:
        path = Path(r.path)
        root = repository_root(path)
        if root not in roots:
            roots[root] = SRCROOT if not roots else f"%SRCROOT{len(roots) + 1}%"
        relative = (path.parent.resolve() / path.name).relative_to(root).as_posix()
        facts = FileFacts(relative, roots[root])
        source = _same_source(path, r, config) if r.findings else None
        if source is not None:
            facts = FileFacts(relative, roots[root], tuple(fingerprints(r.findings, source, relative)),
                              _fixes(source, r.findings, config))
        elif r.findings:
            facts = FileFacts(relative, roots[root], tuple(fingerprints(r.findings, None, relative)))
        files[r.path] = facts
    levels = {code: LEVEL[setting.severity] for code, setting in config.rules.items()}
    enabled = {code: setting.enabled for code, setting in config.rules.items()}
    return Context(files, {base: root.as_uri() + "/" for root, base in roots.items()}, levels, enabled)


def _same_source(path: Path, result: FileResult, config: Config) -> str | None:
    from bot.analyze import analyze_source
    from bot.files import SourceError, project_relative, read_source

    try:
        text = read_source(path, config.max_file_bytes).decode("utf-8")
    except (SourceError, OSError, UnicodeDecodeError):
        return None
    again = analyze_source(result.path, text, config, project_path=project_relative(path))  # as `check` did
    return text if set(result.findings) <= set(again.findings) else None


def _fixes(source: str, findings: Sequence[Finding], config: Config) -> tuple[Fix | None, ...]:
    from bot.fix.suggest import fix_edits, prepare

    prepared = prepare(source, config, findings[0].path)
    out: list[Fix | None] = []
    for f in findings:
        try:
            found = fix_edits(f, prepared)
        except Exception:  # a fixer bug costs this fix, not the report
            found = None
        if found is None:
            out.append(None)
            continue
        edits, plan = found
        how = ("Use `pg_utils.is_parallel`: what `pg-bot fix` applies (" + plan.note + ")" if plan.safe else
               "Use `pg_utils.is_parallel`: what `pg-bot fix --unsafe-fixes` applies; review it (" + plan.note + ")")
        out.append(Fix(how, replacements(prepared.lines, edits)))
    return tuple(out)
