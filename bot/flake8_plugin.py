"""pg-bot as a flake8 plugin: `flake8 --select=PG` reports pg-bot's findings under flake8's own `noqa`,
`per-file-ignores` and output options (registered as the `flake8.extension` entry point `PG`).

flake8 hands over the file's lines; the analyzer runs on their text exactly as `pg-bot check` does (same
config, found from the file's folder upwards; same project-relative path for exemptions). Nothing is imported
from or executed in the checked file.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot import __version__


class Plugin:
    name = "pg-bot"
    version = __version__

    def __init__(self, tree: Any, filename: str, lines: list[str]) -> None:  # flake8 passes these by name
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type[Plugin]]]:
        from bot.analyze import analyze_source, project_relative  # imported on use: flake8 loads every plugin

        source = "".join(self.lines)
        path = Path(self.filename)
        config = _config_for(path.resolve().parent if path.name not in ("stdin", "-") else Path.cwd())
        project_path = project_relative(path) if path.exists() else self.filename
        result = analyze_source(self.filename, source, config, project_path=project_path)
        if result.error is not None:
            yield 1, 0, f"PG000 could not analyse: {result.error.message}", type(self)
            return
        for finding in result.findings:
            yield finding.span.line, finding.span.col, f"{finding.code} {_plain(finding.message)}", type(self)


@lru_cache(maxsize=64)
def _config_for(folder: Path) -> Any:
    from bot.config import load

    return load(search_from=folder)


def _plain(message: str) -> str:
    """flake8 prints one line per finding."""
    return " ".join(message.split())
