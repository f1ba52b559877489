"""Render check results: text, json, sarif (2.1.0, as GitHub code scanning takes it), github annotations."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bot import __version__
from bot.model import FileResult, Finding, Rule, Severity

FORMATS = ("text", "json", "sarif", "github")
RULE_DOCS_URL = "https://github.com/deepspeedai/pg-bot/blob/main/README.md#{anchor}"


def findings_of(results: Sequence[FileResult]) -> list[Finding]:
    return [f for r in results for f in r.findings]


def text(results: Sequence[FileResult]) -> str:
    lines = [f"{f.path}:{f.span.line}:{f.span.col + 1}: {f.code} {f.message}" for f in findings_of(results)]
    lines += [f"{r.path}:1:1: PG000 could not analyse: {r.error.message}" for r in results if r.error]
    return "\n".join(lines)


def statistics(results: Sequence[FileResult], rules: dict[str, Rule]) -> str:
    counts = Counter(f.code for f in findings_of(results))
    width = max((len(str(n)) for n in counts.values()), default=1)
    rows = [f"{n:>{width}}  {code}  {rules[code].name}" for code, n in sorted(counts.items())]
    errors = sum(1 for r in results if r.error)
    rows.append(f"{sum(counts.values())} findings in {sum(1 for r in results if r.findings)} files"
                f" ({len(results)} checked, {errors} could not be analysed)")
    return "\n".join(rows)


def as_json(results: Sequence[FileResult]) -> str:
    payload = {
        "version": __version__,
        "findings": [f.to_dict() for f in findings_of(results)],
        "errors": [{"path": r.path, "message": r.error.message} for r in results if r.error],
        "migrated": {r.path: r.migrated for r in results if r.migrated},
    }
    return json.dumps(payload, indent=2, sort_keys=True)


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def sarif(results: Sequence[FileResult], rules: dict[str, Rule]) -> str:
    used = sorted({f.code for f in findings_of(results)} | set(rules))
    index = {code: i for i, code in enumerate(used)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "pg-bot",
                "version": __version__,
                "informationUri": "https://github.com/deepspeedai/pg-bot",
                "rules": [
                    {
                        "id": code,
                        "name": rules[code].name,
                        "shortDescription": {"text": rules[code].summary},
                        "fullDescription": {"text": rules[code].why},
                        "help": {"text": f"{rules[code].why}\n\nFix: {rules[code].fix}",
                                 "markdown": f"{rules[code].why}\n\n**Fix:** {rules[code].fix}"},
                        "helpUri": RULE_DOCS_URL.format(anchor=code.lower()),
                    }
                    for code in used
                ],
            }
        },
        "results": [
            {
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                            "region": {
                                "startLine": f.span.line,
                                "startColumn": f.span.col + 1,
                                "endLine": f.span.end_line,
                                "endColumn": f.span.end_col + 1,
                            },
                        }
                    }
                ],
                "partialFingerprints": {"pgBot/v1": _fingerprint(f)},
            }
            for f in findings_of(results)
        ],
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {
                        "level": "warning",
                        "message": {"text": f"could not analyse: {r.error.message}"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": r.path}}}],
                    }
                    for r in results
                    if r.error
                ],
            }
        ],
    }
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(doc, indent=2)


def _fingerprint(f: Finding) -> str:
    """Stable across line moves: rule, file, function and the group, not the line number."""
    return f"{f.code}:{f.path}:{f.function or '<module>'}:{f.group or ''}:{f.kind}"


def github(results: Sequence[FileResult]) -> str:
    """GitHub Actions workflow commands (`::error file=...::`), escaped as the runner expects."""
    lines = []
    for f in findings_of(results):
        level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}[f.severity]
        props = (
            f"file={_prop(f.path)},line={f.span.line},col={f.span.col + 1},"
            f"endLine={f.span.end_line},endColumn={f.span.end_col + 1},title={_prop(f.code)}"
        )
        lines.append(f"::{level} {props}::{_data(f.code + ' ' + f.message)}")
    for r in results:
        if r.error:
            lines.append(f"::warning file={_prop(r.path)},title=PG000::{_data('could not analyse: ' + r.error.message)}")
    return "\n".join(lines)


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")
