"""Check rules.yaml against a real tree: every area glob, test path, exemption path and function, CI path.

Pure at the core (`check` takes the tree as a file list and a function lookup); `check_tree` reads the tree.
Source is parsed with `ast` to list function names, never run.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.config import Config, path_matches

_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", "node_modules"}

Functions = Callable[[str], "set[str] | None"]  # relative .py path -> qualified names (None: unreadable)


@dataclass(frozen=True)
class Problem:
    key: tuple[Any, ...]  # path into rules.yaml, e.g. ("areas", 1, "tests", 0)
    message: str

    @property
    def where(self) -> str:
        out = ""
        for part in self.key:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out


def tree_files(tree: Path) -> tuple[list[str], dict[str, str]]:
    """Every file below ``tree`` as a '/'-separated relative path (VCS and cache folders skipped), and the
    symlinked folders (path -> target), which are not followed: git and a PR's file list do not either."""
    files: list[str] = []
    links: dict[str, str] = {}
    for root, dirs, names in os.walk(tree):
        rel = Path(root).relative_to(tree)
        for d in dirs:
            if (Path(root) / d).is_symlink():
                links[(rel / d).as_posix()] = os.readlink(Path(root) / d)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        files.extend((rel / name).as_posix() for name in sorted(names))
    return files, links


def qualified_functions(source: str) -> set[str]:
    """`Class.method`, `outer.inner`, `function`: the names rules.yaml's `function` keys are written in."""
    names: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{stmt.name}"
                names.add(qual)  # classes too: a test node id may name one
                visit(stmt.body, f"{qual}.")
            else:  # functions defined under if/try/with keep their enclosing prefix
                for field in ("body", "orelse", "finalbody", "handlers"):
                    for child in getattr(stmt, field, None) or []:
                        visit(getattr(child, "body", [child]) if isinstance(child, ast.excepthandler) else [child],
                              prefix)

    visit(ast.parse(source).body, "")
    return names


def _exists(path: str, files: Sequence[str]) -> bool:
    path = path.strip("/")
    return path in files or any(f.startswith(path + "/") for f in files)


def _matching(pattern: str, files: Sequence[str]) -> list[str]:
    return [f for f in files if path_matches(f, pattern)]


def _node_problem(test: str, functions: Functions) -> str | None:
    """For a node id `path.py::Class::test[param]`: does the file define it?"""
    path, _, node = test.partition("::")
    if not node or not path.endswith(".py"):
        return None
    names = functions(path)
    if names is None:
        return f"{path} cannot be parsed"
    wanted = ".".join(part.split("[", 1)[0] for part in node.split("::"))
    return None if wanted in names else f"{path} has no {wanted}"


def _no_match(pattern: str, links: Mapping[str, str]) -> str:
    through = next((link for link in links if pattern.startswith(link + "/")), None)
    if through is None:
        return f"`{pattern}` matches no file"
    return (f"`{pattern}` matches no file: `{through}` is a symlink to `{links[through]}`, and changed files are "
            "listed under the target")


def check(config: Config, files: Sequence[str], functions: Functions, links: Mapping[str, str] | None = None
          ) -> list[Problem]:
    links = links or {}
    problems: list[Problem] = []
    claimed: set[str] = set()
    for i, area in enumerate(config.areas):
        mine: set[str] = set()
        for j, pattern in enumerate(area.paths):
            if pattern == "**":
                continue
            matched = _matching(pattern, files)
            if not matched:
                problems.append(Problem(("areas", i, "paths", j), f"area {area.name}: {_no_match(pattern, links)}"))
            elif all(f in claimed for f in matched):
                problems.append(Problem(("areas", i, "paths", j), f"area {area.name}: every file `{pattern}` "
                                        "matches belongs to an earlier area (the first matching area wins)"))
            mine.update(matched)
        claimed |= mine
        for j, test in enumerate(area.tests):
            path = test.partition("::")[0]
            if not _exists(path, files):
                problems.append(Problem(("areas", i, "tests", j), f"area {area.name}: test path `{path}` does not exist"))
            elif (why := _node_problem(test, functions)) is not None:
                problems.append(Problem(("areas", i, "tests", j), f"area {area.name}: {why}"))
    for i, exemption in enumerate(config.exemptions):
        matched = _matching(exemption.path, files)
        if not matched:
            problems.append(Problem(("exemptions", i, "path"), _no_match(exemption.path, links)))
            continue
        if exemption.function is not None:
            sources = [f for f in matched if f.endswith(".py")]
            if not any(exemption.function in (functions(f) or set()) for f in sources):
                problems.append(Problem(("exemptions", i, "function"), f"`{exemption.function}` is not defined in "
                                        f"{_files_text(sources)} matched by `{exemption.path}`"))
    ci = config.ci
    if not _exists(ci.test_root, files):
        problems.append(Problem(("ci", "test_root"), f"`{ci.test_root}` does not exist"))
    for i, path in enumerate(ci.full_suite):
        if not _exists(path, files):
            problems.append(Problem(("ci", "full_suite", i), f"`{path}` does not exist"))
    for i, pattern in enumerate(ci.run_all_when):
        if not _matching(pattern, files):
            problems.append(Problem(("ci", "run_all_when", i), _no_match(pattern, links)))
    return problems


def _files_text(files: list[str]) -> str:
    if len(files) == 1:
        return files[0]
    return f"any of the {len(files)} Python file(s)"


def check_tree(config: Config, tree: Path) -> list[Problem]:
    files, links = tree_files(tree)
    cache: dict[str, set[str] | None] = {}

    def functions(rel: str) -> set[str] | None:
        if rel not in cache:
            try:
                cache[rel] = qualified_functions((tree / rel).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError):  # ValueError: NUL bytes, bad encoding
                cache[rel] = None
        return cache[rel]

    return check(config, files, functions, links)


def key_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Key path -> 1-based line in rules.yaml, so a problem can point at its line."""
    lines: dict[tuple[Any, ...], int] = {}

    def index(node: yaml.Node, path: tuple[Any, ...]) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = (*path, key.value)
                index(value, child)
                lines[child] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                index(item, (*path, i))

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        index(root, ())
    return lines
