"""A rule's documentation under fixed headings, as text (`pg-bot rule CODE`) and as Markdown (docs/rules.md,
which reviews and SARIF link to). Both are rendered from the rule modules; nothing is written by hand."""

from __future__ import annotations

import textwrap

from bot.model import Rule

HEADINGS = ("What it finds", "Why it is a problem", "Example", "Use instead", "Fix safety")


def _sections(rule: Rule) -> list[tuple[str, str]]:
    return [
        ("What it finds", rule.summary),
        ("Why it is a problem", rule.why),
        ("Use instead", rule.fix),
        ("Fix safety", rule.fix_safety),
    ]


def text(rule: Rule) -> str:
    parts = [f"{rule.code} {rule.name}", ""]
    for heading, body in _sections(rule)[:2]:
        parts += [f"{heading}:", *textwrap.wrap(body, 100, initial_indent="  ", subsequent_indent="  "), ""]
    for bad in rule.invalid:
        parts += ["Example (flagged):", textwrap.indent(bad.source.rstrip(), "    "),
                  f"  flagged: {bad.flagged}", ""]
        if bad.fixed is not None:
            note = " (with --unsafe-fixes)" if bad.unsafe else ""
            parts += [f"  fixed{note}:", textwrap.indent(bad.fixed.rstrip(), "    "), ""]
    for example in rule.valid:
        parts += ["Not flagged:", textwrap.indent(example.rstrip(), "    "), ""]
    for heading, body in _sections(rule)[2:]:
        parts += [f"{heading}:", *textwrap.wrap(body, 100, initial_indent="  ", subsequent_indent="  "), ""]
    return "\n".join(parts).rstrip() + "\n"


def anchor(rule: Rule) -> str:
    return rule.code.lower()


def markdown(rules: list[Rule]) -> str:
    out = [
        "# pg-bot rules",
        "",
        "<!-- Generated from bot/analyze/rules/pg*.py by `pg-bot rule --markdown`; do not edit by hand. -->",
        "",
        "| code | name | what it finds |",
        "|---|---|---|",
    ]
    out += [f"| [{r.code}](#{anchor(r)}) | {r.name} | {r.summary.split('. ')[0].rstrip('.')} |" for r in rules]
    for rule in rules:
        out += ["", f'<a id="{anchor(rule)}"></a>', f"## {rule.code} {rule.name}", ""]
        for heading, body in _sections(rule)[:2]:
            out += [f"### {heading}", "", body, ""]
        out += ["### Example", ""]
        for bad in rule.invalid:
            out += ["Flagged (the finding's span: " + _code(bad.flagged.splitlines()[0]) + "):", "",
                    "```python", bad.source.rstrip(), "```", ""]
            if bad.fixed is not None:
                how = "`pg-bot fix --unsafe-fixes`" if bad.unsafe else "`pg-bot fix`"
                out += [f"After {how}:", "", "```python", bad.fixed.rstrip(), "```", ""]
            else:
                out += ["No automatic fix.", ""]
        for example in rule.valid:
            out += ["Not flagged:", "", "```python", example.rstrip(), "```", ""]
        for heading, body in _sections(rule)[2:]:
            out += [f"### {heading}", "", body, ""]
    return "\n".join(out).rstrip() + "\n"


def _code(text: str) -> str:
    from bot.analyze.rules.base import code_span

    return code_span(text)
