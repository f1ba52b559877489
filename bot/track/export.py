"""History as files: JSON (everything, readable back) and CSV (one row per commit and area)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.track.history import Point


class HistoryFileError(ValueError):
    """A history JSON file that cannot be read back."""


def history_json(points: Sequence[Point], meta: dict[str, Any]) -> dict[str, Any]:
    return {"format": 1, **meta, "commits": [p.to_json() for p in points]}


def write_json(points: Sequence[Point], path: Path, meta: dict[str, Any]) -> None:
    path.write_text(json.dumps(history_json(points, meta), indent=1) + "\n", encoding="utf-8")


def read_json(path: Path) -> tuple[list[Point], dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        points = [Point.from_json(c) for c in data["commits"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HistoryFileError(f"{path}: not a pg-bot history file: {exc}") from exc
    meta = {k: v for k, v in data.items() if k != "commits"}
    return points, meta


def rule_codes(points: Sequence[Point]) -> list[str]:
    return sorted({code for p in points for a in p.areas.values() for code in a.get("by_rule", {})})


def write_csv(points: Sequence[Point], path: Path) -> None:
    codes = rule_codes(points)
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["sha", "date", "area", "remaining", "migrated", *codes])
        for p in points:
            for name, counts in p.areas.items():
                by_rule = counts.get("by_rule", {})
                out.writerow(
                    [p.sha, p.date, name, counts["remaining"], counts["migrated"], *(by_rule.get(c, 0) for c in codes)]
                )
