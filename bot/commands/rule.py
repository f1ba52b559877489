"""`pg-bot rule CODE`: a rule's documentation with its valid and invalid examples."""

from __future__ import annotations

import argparse
import textwrap

from bot.analyze import RULES
from bot.commands.common import fail


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="rule code, e.g. PG101; omit to list all rules")


def run(args: argparse.Namespace) -> int:
    if not args.code:
        for code, rule in RULES.items():
            print(f"{code}  {rule.name:32}  {rule.summary}")
        return 0
    code = args.code.upper()
    if code not in RULES:
        return fail(f"unknown rule {args.code!r}; known: {', '.join(RULES)}")
    print(explain(code))
    return 0


def explain(code: str) -> str:
    rule = RULES[code]
    parts = [f"{rule.code} {rule.name}", "", rule.summary, "", *textwrap.wrap(rule.why, 100), "",
             f"Fix: {rule.fix}", ""]
    for title, examples in (("Flagged", rule.invalid), ("Not flagged", rule.valid)):
        for example in examples:
            parts += [f"{title}:", textwrap.indent(example.rstrip(), "    "), ""]
    return "\n".join(parts).rstrip() + "\n"
