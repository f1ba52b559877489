"""Render check results: text, json, sarif (2.1.0, as GitHub code scanning takes it), github annotations."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from bot import __version__, links
from bot.model import FileResult, Finding, Rule, Severity
from bot.report.escape import json_text, line_start, printable

FORMATS = ("text", "json", "sarif", "github")


def findings_of(results: Sequence[FileResult]) -> list[Finding]:
    return [f for r in results for f in r.findings]


def text(results: Sequence[FileResult]) -> str:
    """One line per finding; file names and messages escaped (bot.report.escape): one line stays one line."""
    lines = [
        f"{line_start(f.path)}:{f.span.line}:{f.span.col + 1}: {f.code} {printable(f.message)}"
        for f in findings_of(results)
    ]
    lines += [
        f"{line_start(r.path)}:1:1: PG000 could not analyse: {printable(r.error.message)}" for r in results if r.error
    ]
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
    return json_text(json.dumps(payload, indent=2, sort_keys=True))


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def sarif(results: Sequence[FileResult], rules: dict[str, Rule]) -> str:
    used = sorted({f.code for f in findings_of(results)} | set(rules))
    index = {code: i for i, code in enumerate(used)}
    page = links.rules_page()
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "pg-bot",
                "version": __version__,
                "informationUri": page,
                "rules": [
                    {
                        "id": code,
                        "name": rules[code].name,
                        "shortDescription": {"text": rules[code].summary},
                        "fullDescription": {"text": rules[code].why},
                        "help": {"text": f"{rules[code].why}\n\nFix: {rules[code].fix}",
                                 "markdown": f"{rules[code].why}\n\n**Fix:** {rules[code].fix}"},
                        "helpUri": links.rule_url(code, page),
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
                            "artifactLocation": {"uri": _uri(f.path), "uriBaseId": "%SRCROOT%"},
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
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(r.path)}}}],
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
    return json_text(json.dumps(doc, indent=2))


def _uri(path: str) -> str:
    """A relative URI reference for a path (SARIF wants URIs): `#`, `?`, `%`, spaces and control characters
    percent-encoded, so a name can neither add a fragment nor break the line it is printed on."""
    return quote(path, safe="/", errors="surrogateescape")


def _fingerprint(f: Finding) -> str:
    """Stable across line moves: rule, file, function and the group, not the line number."""
    return f"{f.code}:{f.path}:{f.function or '<module>'}:{f.group or ''}:{f.kind}"


def github(results: Sequence[FileResult]) -> str:
    """GitHub Actions workflow commands (`::error file=...::`), escaped as the runner expects."""
    lines = []
    for f in findings_of(results):
        level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}[f.severity]
        props = (
            f"file={_file(f.path)},line={f.span.line},col={f.span.col + 1},"
            f"endLine={f.span.end_line},endColumn={f.span.end_col + 1},title={_prop(f.code)}"
        )
        lines.append(f"::{level} {props}::{_data(printable(f.code + ' ' + f.message))}")
    for r in results:
        if r.error:
            message = printable("could not analyse: " + r.error.message)
            lines.append(f"::warning file={_file(r.path)},title=PG000::{_data(message)}")
    return "\n".join(lines)


def _data(value: str) -> str:
    """The escapes the runner undoes in a command's data; a CR or LF left raw would end the command."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(value: str) -> str:
    """Property values: also `:` and `,`, which would end the property (or the property list)."""
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def _file(path: str) -> str:
    # CR and LF are encoded exactly (the runner decodes them: the annotation lands on the real file); any
    # other control character is escaped like in the text format.
    return _prop(printable(path, keep="\r\n"))
