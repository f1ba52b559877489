"""The predicate module a fixed tree imports: create it (and its unit test) when the tree lacks it.

This is the RFC's PR-1. `pg-bot fix` rewrites guards to ``from deepspeed.comm import pg_utils``; a tree without
``deepspeed/comm/pg_utils.py`` would then fail on import. The module and its test come from the templates in
``bot/templates/`` (package data), rendered for the configured ``predicate`` and written only when missing.
Pure: the caller decides whether to write the files or show them as a diff.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from bot.config import Config
from bot.files import package_base

MODULE_TEMPLATE = "pg_utils.py.tmpl"
TEST_TEMPLATE = "test_pg_utils.py.tmpl"
# The DistributedTest base the test template imports (`from unit.common import DistributedTest`).
TEST_BASE = Path("tests", "unit", "common.py")


@dataclass(frozen=True)
class NewFile:
    path: Path
    text: str
    why: str


@dataclass
class Plan:
    files: list[NewFile]
    notes: list[str]  # why something was not created, for the user


def template(name: str) -> str:
    return (resources.files("bot") / "templates" / name).read_text(encoding="utf-8")


def render(name: str, config: Config) -> str:
    return Template(template(name)).substitute(
        comm=config.predicate_module, name=config.predicate_name, function=config.predicate_function
    )


def import_root(file: Path) -> tuple[Path, str] | None:
    """(folder on sys.path, dotted module name) for a file inside a package; None outside one.

    The root is the parent of the outermost folder with an ``__init__.py`` (`bot.files.package_base`): where the
    file's own absolute imports (``from deepspeed.comm import pg_utils``) resolve from.
    """
    root = package_base(file)
    if root is None:
        return None
    parts = list((file.parent.resolve() / file.name).relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return root, ".".join(parts)


def imports_predicate(source: str, config: Config) -> bool:
    """Does ``source`` import the predicate module (``from deepspeed.comm import pg_utils`` and spellings)?"""
    module, name = config.predicate_module, config.predicate_name
    full = f"{module}.{name}"
    if re.search(rf"\b{re.escape(name)}\b", source) is None:  # cheap: most files never mention it
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module == full or (node.module == module and any(a.name == name for a in node.names)):
                return True
        elif isinstance(node, ast.Import) and any(a.name == full or a.name.startswith(full + ".") for a in node.names):
            return True
    return False


def missing_predicate_files(files: Iterable[tuple[Path, str]], config: Config) -> Plan:
    """The predicate module and its test for every import root whose files (path, text) import the predicate
    while the root's package lacks it. Nothing is planned when the predicate's package is not in the tree
    (then it comes from an installed DeepSpeed) or when the module already exists."""
    plan = Plan([], [])
    roots: dict[Path, None] = {}
    for path, text in files:
        located = import_root(path)
        if located is not None and imports_predicate(text, config):
            roots.setdefault(located[0])
    package = config.predicate_module.split(".")
    for root in roots:
        folder = root.joinpath(*package)
        target = folder / f"{config.predicate_name}.py"
        if not (folder / "__init__.py").is_file():
            continue
        if target.exists() or (folder / config.predicate_name / "__init__.py").exists():
            continue
        if config.predicate_module not in config.comm_modules:
            plan.notes.append(
                f"{target}: missing, and not created: the template needs predicate.module "
                f"({config.predicate_module}) to be one of comm_modules (it calls its get_world_size)"
            )
            continue
        full = f"{config.predicate_module}.{config.predicate_name}"
        plan.files.append(NewFile(target, render(MODULE_TEMPLATE, config), f"the fixed code imports {full}"))
        test = root.joinpath("tests", "unit", *package[1:], f"test_{config.predicate_name}.py")
        if test.exists():
            continue
        if (root / TEST_BASE).is_file():
            plan.files.append(NewFile(test, render(TEST_TEMPLATE, config), f"unit test of {full}"))
        else:
            plan.notes.append(f"{test}: not created: the tree has no {TEST_BASE.as_posix()} (DistributedTest)")
    return plan
