"""Write (or show as a diff) the files `predicate.missing_predicate_files` planned. The I/O edge of `fix`."""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Config
from bot.migrate.predicate import missing_predicate_files


@dataclass
class Created:
    files: list[tuple[str, str]] = field(default_factory=list)  # (path as displayed, why it was created)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def new_file_diff(shown: str, text: str) -> str:
    """A unified diff that creates ``shown`` (``--- /dev/null``), as `git apply` and `patch` take it."""
    return "".join(difflib.unified_diff([], text.splitlines(keepends=True), "/dev/null", f"b/{shown}"))


def create_missing(
    texts: Iterable[tuple[Path, str]],
    config: Config,
    *,
    write: bool,
    show_diff: bool,
    display: Callable[[Path], str] = str,
) -> Created:
    """Plan from the fixed files' (path, final text); write each new file (never over an existing one) or
    print its creation diff on stdout."""
    plan = missing_predicate_files(texts, config)
    done = Created(notes=list(plan.notes))
    for new in plan.files:
        shown = display(new.path)
        if write:
            try:
                new.path.parent.mkdir(parents=True, exist_ok=True)
                with new.path.open("x", encoding="utf-8", newline="\n") as out:  # "x": never overwrite
                    out.write(new.text)
            except OSError as exc:
                done.errors.append(f"{shown}: cannot create: {exc.strerror or exc}")
                continue
        elif show_diff:
            sys.stdout.write(new_file_diff(shown, new.text))
        done.files.append((shown, new.why))
    return done
