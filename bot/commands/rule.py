"""`pg-bot rule CODE`: a rule's documentation with its examples; `--markdown`: all of docs/rules.md."""

from __future__ import annotations

import argparse

from bot.analyze import RULES
from bot.analyze.rules import docs
from bot.commands.common import fail


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="rule code, e.g. PG101; omit to list all rules")
    parser.add_argument("--markdown", action="store_true", help="print the rule reference (docs/rules.md)")


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(docs.markdown(list(RULES.values())), end="")
        return 0
    if not args.code:
        for code, rule in RULES.items():
            print(f"{code}  {rule.name:32}  {rule.summary.split('. ')[0]}")
        return 0
    code = args.code.upper()
    if code not in RULES:
        return fail(f"unknown rule {args.code!r}; known: {', '.join(RULES)}")
    print(explain(code), end="")
    return 0


def explain(code: str) -> str:
    return docs.text(RULES[code])
