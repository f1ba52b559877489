"""Render check results: text, json, sarif (2.1.0, as GitHub code scanning takes it), github annotations."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot import __version__
from bot.model import FileResult, Finding, Rule, Severity
from bot.report.escape import json_text, line_start, printable

if TYPE_CHECKING:
    from bot.config import Config

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


def sarif(results: Sequence[FileResult], rules: dict[str, Rule], config: Config | None = None) -> str:
    """SARIF for code scanning (bot.report.sarif). With ``config``, each file with findings is read again for
    its repository-relative URI, fingerprints and fixes; without, the results alone are rendered."""
    from bot.report import sarif as sarif_report

    return sarif_report.render(results, rules, sarif_report.gather(results, config) if config is not None else None)


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
