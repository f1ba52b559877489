"""The rule registry, derived from the rule modules: every `pgNNN_*.py` here defines `RULE` and `check`."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType

from bot.analyze.rules.base import Check, Reporter
from bot.model import Rule


@dataclass(frozen=True)
class RuleModule:
    rule: Rule
    check: Check
    module: ModuleType


def _discover() -> tuple[RuleModule, ...]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("pg") and info.name[2:5].isdigit():
            module = importlib.import_module(f"{__name__}.{info.name}")
            found.append(RuleModule(module.RULE, module.check, module))
    return tuple(sorted(found, key=lambda m: m.rule.code))


MODULES = _discover()
RULES: dict[str, Rule] = {m.rule.code: m.rule for m in MODULES}

__all__ = ["MODULES", "RULES", "Reporter", "RuleModule"]
