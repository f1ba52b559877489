"""The burndown figure: which areas get a band, the stacked heights, degenerate histories, byte-stable files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bot.track.chart import area_colors, burndown_figure, write_chart
from bot.track.history import Point

TITLES = {"moe": "MoE", "zero": "ZeRO", "autotp": "AutoTP", "other": "Other"}


def point(i: int, **remaining: int) -> Point:
    areas = {n: {"remaining": remaining.get(n, 0), "migrated": 0, "by_rule": {}} for n in TITLES}
    return Point(sha=f"{i:040x}", time=1_700_000_000 + 3600 * i, subject=f"c{i}", areas=areas)


def test_bands_only_for_areas_with_sites_and_total_on_top() -> None:
    points = [point(0, moe=3, zero=2), point(1, moe=1, zero=2), point(2, moe=0, zero=1)]
    fig = burndown_figure(points, TITLES)
    (ax,) = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["Total", "ZeRO", "MoE"]  # top band first; AutoTP and Other never had a site
    total = next(line for line in ax.get_lines() if line.get_label() == "Total")
    assert list(total.get_ydata()) == [5, 3, 1]


def test_png_shows_each_band_colour(tmp_path: Path) -> None:
    points = [point(0, moe=4, other=4), point(1, moe=2, other=4)]
    (png,) = write_chart(points, TITLES, tmp_path / "c.png")
    arr = np.asarray(Image.open(png).convert("RGB")).astype(int)
    colours = area_colors(list(TITLES))
    for name, expect in (("moe", True), ("other", True), ("zero", False), ("autotp", False)):
        rgb = np.array([int(colours[name][i : i + 2], 16) for i in (1, 3, 5)])
        hits = int((np.abs(arr - rgb) <= 3).all(axis=2).sum())
        assert (hits > 2000) is expect, (name, hits)


def test_one_point_draws_and_no_point_is_an_error(tmp_path: Path) -> None:
    assert write_chart([point(0, moe=1)], TITLES, tmp_path / "one.svg")[0].read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="no commits"):
        burndown_figure([], TITLES)


def test_the_same_points_write_the_same_bytes(tmp_path: Path) -> None:
    """No date and no random ids: an unchanged history rewrites unchanged chart files."""
    points = [point(0, moe=3, zero=2), point(1, moe=1, zero=2)]
    first = write_chart(points, TITLES, tmp_path / "a.svg", tmp_path / "a.png")
    second = write_chart(points, TITLES, tmp_path / "b.svg", tmp_path / "b.png")
    for one, two in zip(first, second, strict=True):
        assert one.read_bytes() == two.read_bytes(), one.suffix
    assert b"<dc:date>" not in first[0].read_bytes()
    # and the files do follow the data
    (changed,) = write_chart([point(0, moe=3, zero=2), point(1, moe=0, zero=2)], TITLES, tmp_path / "c.svg")
    assert changed.read_bytes() != first[0].read_bytes()
