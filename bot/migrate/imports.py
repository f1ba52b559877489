"""Import every touched module of a fixed tree, in a subprocess of the target project's own Python.

`compileall` only proves the files parse; a fixed file that imports a module the tree lacks (the predicate
module, before this check existed) still compiles. Importing runs the target's module-level code: that is the
maintainer's own project, in its own environment, on their explicit command (`pg-bot import-check`,
`pg-bot migrate-test`); pg-bot never does this with pull-request code, and never in its own process.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.migrate.predicate import import_root

# Runs in the target interpreter. Our own constant code: the module names arrive as JSON on stdin and are only
# ever passed to importlib.import_module. Results go to a file because imported modules may print.
_SCRIPT = r"""
import importlib, json, sys, traceback
out, roots = sys.argv[1], sys.argv[2:]
sys.path[:0] = roots
results = []
for name in json.load(sys.stdin):
    try:
        module = importlib.import_module(name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from module code is a failed import too
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if any(f.filename.startswith(r) for r in roots)]
        where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
        results.append({"module": name, "ok": False, "detail": error + where})
        continue
    results.append({"module": name, "ok": True, "detail": getattr(module, "__file__", None) or ""})
with open(out, "w", encoding="utf-8") as f:
    json.dump(results, f)
"""


@dataclass(frozen=True)
class ImportResult:
    module: str
    path: str  # the file, as given
    ok: bool
    detail: str  # the error, or where the module was loaded from


@dataclass
class ImportCheck:
    results: list[ImportResult]
    skipped: list[str]  # files not inside a package: nothing to import (scripts are never run)
    error: str | None = None  # the interpreter itself failed

    @property
    def failures(self) -> list[ImportResult]:
        return [r for r in self.results if not r.ok]

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failures


def modules_of(files: Iterable[Path]) -> tuple[dict[str, Path], dict[Path, None], list[Path]]:
    """(module name -> file, import roots in order, files outside any package)."""
    modules: dict[str, Path] = {}
    roots: dict[Path, None] = {}
    outside: list[Path] = []
    for file in files:
        located = import_root(file)
        if located is None:
            outside.append(file)
            continue
        roots.setdefault(located[0])
        modules.setdefault(located[1], file)
    return modules, roots, outside


def check_imports(
    files: Iterable[Path],
    *,
    python: str,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 600,
    display: Mapping[Path, str] | None = None,
) -> ImportCheck:
    """Import each file's module in one subprocess of ``python``; each failure is reported, the rest go on.

    A module that imports but from elsewhere (an installed copy shadowing the tree) is a failure too: the
    tree was not what got tested."""
    shown = dict(display or {})
    modules, roots, outside = modules_of(files)
    check = ImportCheck([], [shown.get(f, str(f)) for f in outside])
    if not modules:
        return check
    with tempfile.TemporaryDirectory(prefix="pg-bot-imports-") as tmp:
        out = Path(tmp) / "result.json"
        try:
            proc = subprocess.run(
                [python, "-c", _SCRIPT, str(out), *map(str, roots)],
                input=json.dumps(list(modules)),
                capture_output=True,
                text=True,
                env=dict(env) if env is not None else None,
                cwd=next(iter(roots)),
                timeout=timeout,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            check.error = f"cannot run {python}: {exc}"
            return check
        if not out.is_file():
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
            check.error = f"{python} exited with {proc.returncode} before reporting: {tail}"
            return check
        raw = json.loads(out.read_text(encoding="utf-8"))
    for item in raw:
        file = modules[item["module"]]
        ok, detail = bool(item["ok"]), str(item["detail"])
        if ok and detail and not _same_file(detail, file):
            ok, detail = False, f"imported from {detail}, not from the tree (is another copy installed first?)"
        check.results.append(ImportResult(item["module"], shown.get(file, str(file)), ok, detail))
    return check


def _same_file(loaded: str, expected: Path) -> bool:
    try:
        return os.path.samefile(loaded, expected)
    except OSError:
        return False


def broken_imports(before: ImportCheck, after: ImportCheck) -> list[ImportResult]:
    """Failures after the fix that were not failures before it (a module new after it counts as broken)."""
    if before.error is not None:
        return after.failures
    failed_before = {r.module for r in before.failures}
    return [r for r in after.failures if r.module not in failed_before]
