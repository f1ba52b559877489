"""How many findings `pg-bot fix` would rewrite, for check's closing line: the fixer's own plans, no rewriting.

Only the planner runs (the standard library's `ast` and the equivalence proof), never LibCST, and only for files
with findings, so a clean run pays nothing and a run with findings little.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass

from bot.config import Config
from bot.fix import FIXABLE
from bot.fix.text import split_lines
from bot.model import Finding


@dataclass(frozen=True)
class Fixable:
    safe: int = 0  # applied by `pg-bot fix`
    unsafe: int = 0  # applied only with `--unsafe-fixes`

    def __add__(self, other: Fixable) -> Fixable:
        return Fixable(self.safe + other.safe, self.unsafe + other.unsafe)


def decode(data: bytes) -> str:
    """Source bytes as the fixer reads them (PEP 263 encoding cookie, else UTF-8)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def count(source: str, findings: Iterable[Finding], config: Config) -> Fixable:
    """Findings whose plan `pg-bot fix` applies (safe) or applies with --unsafe-fixes (unsafe). A finding the
    planner refuses, or offers as a suggestion only, counts in neither."""
    from bot.fix.plan import Refused, make_context, plan

    wanted = [f for f in findings if f.code in FIXABLE]
    if not wanted:
        return Fixable()
    try:
        ctx = make_context(source, split_lines(source), config, wanted[0].path)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return Fixable()  # the fixer refuses every finding of such a file too
    safe = unsafe = 0
    for finding in wanted:
        try:
            p = plan(finding, ctx)
        except Refused:
            continue
        except Exception:  # a planner bug costs this count, never the check (fix reports it in full)
            continue
        if p.auto:
            safe, unsafe = (safe + 1, unsafe) if p.safe else (safe, unsafe + 1)
    return Fixable(safe, unsafe)


def closing_line(findings: int, fixable: Fixable, unanalysed: int) -> str:
    """`Found N findings (M fixable with `pg-bot fix`, K more with `--unsafe-fixes`).`, and the files that could
    not be analysed (PG000), which make the run fail too."""
    text = f"Found {findings} finding{'' if findings == 1 else 's'}"
    if findings:
        text += f" ({fixable.safe} fixable with `pg-bot fix`, {fixable.unsafe} more with `--unsafe-fixes`)"
    if unanalysed:
        text += f"; {unanalysed} file{' that' if unanalysed == 1 else 's that'} could not be analysed (PG000)"
    return text + "."
