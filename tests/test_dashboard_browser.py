"""The dashboard in a real headless browser (Debian's chromium): DOM dump and screenshot.

What this proves: chromium parses the page into the status table we expect (the DOM it dumps after loading
has the rows and the links to each site), and the screenshot shows the table (its dark header band and the
state cells' fills, with dark text inside the table) above a decoded chart image (the chart's own line
colours spread across most of the image width; colours of areas with nothing to draw are absent). It does
not OCR the text: "readable" is checked as dark glyph pixels on the table's light cells.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from test_dashboard import Page
from test_track_history import Repo, module

from bot.cli import main
from bot.track.chart import area_colors
from bot.track.dashboard import HEADER_BG, STATE_BG

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install -y chromium)")

WIDTH, HEIGHT = 1280, 1600


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp / 'profile'}", "--hide-scrollbars",
        "--force-device-scale-factor=1", f"--window-size={WIDTH},{HEIGHT}", *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def pixels_of(img: Image.Image, colour: tuple[int, int, int], tol: int = 0) -> list[tuple[int, int]]:
    """(x, y) of every pixel within ``tol`` of ``colour`` in each channel."""
    arr = np.asarray(img.convert("RGB"), dtype=np.int16)
    ys, xs = np.nonzero((np.abs(arr - np.array(colour, dtype=np.int16)) <= tol).all(axis=2))
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tmp = tmp_path_factory.mktemp("dash")
    repo = Repo(tmp / "repo")
    shas = [
        repo.commit("base", {"deepspeed/moe/layer.py": module(3, 0), "deepspeed/runtime/zero/stage3.py": module(2, 0),
                             "deepspeed/launcher/runner.py": module(1, 0)}),
        repo.commit("zero done", {"deepspeed/runtime/zero/stage3.py": module(0, 2)}),
        repo.commit("moe half", {"deepspeed/moe/layer.py": module(1, 2)}),
    ]
    out = tmp / "site"
    rc = main(["dashboard", "--out", str(out), "--repo", "org/ds", "--since", shas[0], "--repo-dir", str(repo.path),
               "--no-cache"])
    assert rc == 0
    return out, shas


def test_browser_dom_has_the_table_and_the_site_links(dashboard: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, shas = dashboard
    dom = chromium(tmp_path, "--dump-dom", (out / "index.html").as_uri()).stdout
    page = Page(dom)
    rows = {r[0]: r[1:] for r in page.rows[1:]}
    assert rows["MoE"][:4] == ["1 (PG101 1)", "2", "67%", "in progress"]
    assert rows["ZeRO model-parallel reductions"][:4] == ["0", "2", "100%", "done"]
    assert rows["Other"][:4] == ["1 (PG101 1)", "0", "0%", "not started"]
    assert rows["AutoTP layers"][:4] == ["0", "0", "–", "no sites"]
    sites = sorted(h for h, _ in page.links if h.startswith("https://github.com/org/ds/blob/"))
    assert sites == [
        f"https://github.com/org/ds/blob/{shas[-1]}/deepspeed/launcher/runner.py#L6",
        f"https://github.com/org/ds/blob/{shas[-1]}/deepspeed/moe/layer.py#L6",
    ]
    assert [i["src"] for i in page.images] == ["burndown.png"]


def test_browser_screenshot_shows_table_above_chart(dashboard: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, _ = dashboard
    shot = tmp_path / "shot.png"
    chromium(tmp_path, f"--screenshot={shot}", (out / "index.html").as_uri())
    img = Image.open(shot).convert("RGB")
    assert img.size == (WIDTH, HEIGHT)

    # the table: its header band is a wide run of the header fill
    header = pixels_of(img, rgb(HEADER_BG))
    assert len(header) > 5000
    header_rows = sorted({y for _, y in header})
    header_bottom = header_rows[-1]
    assert max(x for x, _ in header) - min(x for x, _ in header) > 600

    # one filled state cell per state present in the data, below the header
    cells = {state: pixels_of(img, rgb(colour)) for state, colour in STATE_BG.items()}
    for state in ("done", "in progress", "not started"):
        assert len(cells[state]) > 800, state
        assert min(y for _, y in cells[state]) > header_bottom, state
    table_bottom = max(y for pts in cells.values() for _, y in pts)

    # text in the table: dark glyph pixels between the header and the last state cell, left of the states
    state_left = min(x for pts in cells.values() for x, _ in pts)
    crop = np.asarray(img.crop((0, header_bottom + 1, state_left, table_bottom)).convert("L"))
    assert int((crop < 90).sum()) > 500

    # the chart: the colours of the areas that have lines, across most of the image width, below the table
    colours = area_colors(["sequence", "moe", "inference", "zero", "autotp", "runtime-norms", "other"])
    for name in ("moe", "zero", "other"):
        line = pixels_of(img, rgb(colours[name]), tol=8)
        assert len(line) > 300, name
        xs = [x for x, _ in line]
        assert min(y for _, y in line) > table_bottom, name
        assert max(xs) - min(xs) > 500, name
    # AutoTP never has a remaining site here: its colour (only ever in the chart) must not appear in the plot
    plot = img.crop((0, table_bottom + 1, WIDTH, HEIGHT))
    assert len(pixels_of(plot, rgb(colours["autotp"]), tol=8)) < 50  # legend swatches are not drawn for it either
