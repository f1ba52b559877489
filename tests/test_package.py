"""The package as PyPI and a packager get it.

One build (sdist, then the wheel from that sdist, as `python -m build` does; offline, without build isolation,
so the test extra's setuptools builds it) into a temporary folder, then: the wheel carries LICENSE, the
Project-URLs, the licence as an SPDX expression and the packaged policy; `twine check --strict` passes (the README
renders on PyPI); the sdist holds what its own tests need, and a part of those tests passes in the unpacked
sdist, importing pg-bot from there. The README's links are absolute, so they work on PyPI too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from fnmatch import fnmatch
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = "https://github.com/deepspeedai/pg-bot"
# Not copied into the build folder: version control, environments, caches, earlier builds, the benchmarks
# (not shipped). The rest of the tree is what a maintainer would build from.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", ".venv-*", "build", "dist", "*.egg-info", "__pycache__", "*.py[cod]", ".pg-bot-cache",
    ".pytest_cache", ".ruff_cache", ".mypy_cache", "benchmarks", "out",
)
# A part of the suite that reads what the sdist must carry: the rule modules' own examples, tests/fixtures,
# the README and .ci/run, docs/rules.md, the packaged rules.yaml. (The whole suite also passes in the sdist;
# it takes minutes, so it is not run here.)
SDIST_TESTS = ("test_analyze_rules.py", "test_fix_fixtures.py", "test_readme.py", "test_links.py",
               "test_track_status.py")


class Built:
    def __init__(self, dist: Path) -> None:
        (self.sdist,) = dist.glob("pg_bot-*.tar.gz")
        (self.wheel,) = dist.glob("pg_bot-*-py3-none-any.whl")
        with zipfile.ZipFile(self.wheel) as whl:
            self.wheel_files = {name: whl.read(name) for name in whl.namelist()}
        with tarfile.open(self.sdist) as tar:
            top = self.sdist.name.removesuffix(".tar.gz")
            self.sdist_files = sorted(m.name.removeprefix(top + "/") for m in tar.getmembers() if m.isfile())

    def dist_info(self, name: str) -> bytes:
        (path,) = [p for p in self.wheel_files if p.split("/")[0].endswith(".dist-info") and p.endswith("/" + name)]
        return self.wheel_files[path]

    def metadata(self) -> Message:
        return Parser().parsestr(self.dist_info("METADATA").decode("utf-8"))


def run(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("package")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_COPIED, symlinks=True)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)], tmp, 180)
    return Built(tmp / "dist")


def test_the_wheel_carries_the_license_and_its_spdx_expression(built: Built) -> None:
    assert built.dist_info("licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert b"Apache License" in built.dist_info("licenses/LICENSE")
    meta = built.metadata()
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["License"] is None  # the deprecated free-text field
    assert not [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]  # PEP 639: one place


def test_the_wheel_carries_project_urls_classifiers_and_keywords(built: Built) -> None:
    meta = built.metadata()
    urls = dict(tuple(part.strip() for part in entry.split(",", 1)) for entry in meta.get_all("Project-URL") or [])
    assert set(urls) >= {"Homepage", "Documentation", "Repository", "Issues"}
    assert urls["Repository"] == urls["Homepage"] == REPOSITORY
    assert urls["Documentation"].startswith(REPOSITORY + "/") and urls["Documentation"].endswith("/docs/rules.md")
    classifiers = meta.get_all("Classifier") or []
    assert "Framework :: Flake8" in classifiers and "Programming Language :: Python :: 3 :: Only" in classifiers
    trove = pytest.importorskip("trove_classifiers")
    assert [c for c in classifiers if c not in trove.classifiers] == []
    assert "deepspeed" in (meta["Keywords"] or "").split(",")


def test_the_wheel_carries_the_packaged_policy_and_nothing_else(built: Built) -> None:
    names = set(built.wheel_files)
    assert {"bot/rules.yaml", "bot/schema/rules.schema.json", "pg_utils/predicate.py"} <= names
    assert built.wheel_files["bot/rules.yaml"] == (ROOT / "bot" / "rules.yaml").read_bytes()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"bot", "pg_utils"}
    entry_points = built.dist_info("entry_points.txt").decode()
    assert "pg-bot = bot.cli:entry" in entry_points and "PG = bot.flake8_plugin:Plugin" in entry_points


def test_every_package_data_pattern_matches_a_packaged_file(built: Built) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = project["tool"]["setuptools"]["package-data"]
    for package, patterns in package_data.items():
        for pattern in patterns:
            full = f"{package.replace('.', '/')}/{pattern}"
            assert [n for n in built.wheel_files if fnmatch(n, full)], f"package-data {full!r} matches no file"


def test_the_sdist_holds_what_its_tests_need_and_no_build_debris(built: Built) -> None:
    files = set(built.sdist_files)
    for needed in ("LICENSE", "PKG-INFO", "pyproject.toml", "MANIFEST.in", "README.md", "rules.yaml", "action.yml",
                   ".ci/run", "tests/conftest.py", "tests/fake_github/server.py", "docs/rules.md",
                   "examples/pr/change.patch", *(f"tests/{name}" for name in SDIST_TESTS)):
        assert needed in files, needed
    assert [f for f in files if f.startswith("tests/fixtures/")]
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc") or f.startswith((".git/", "build/"))]


def test_twine_check_passes(built: Built) -> None:
    """PyPI's own checks of the metadata and that the README renders (readme_renderer)."""
    out = run([sys.executable, "-m", "twine", "check", "--strict", str(built.sdist), str(built.wheel)],
              built.sdist.parent, 60)
    assert out.count("PASSED") == 2


def test_the_sdist_tests_run_from_the_unpacked_sdist(built: Built, tmp_path: Path) -> None:
    with tarfile.open(built.sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (unpacked,) = tmp_path.iterdir()
    # the sdist's own code, not this checkout's or an installed copy
    env = {**os.environ, "PYTHONPATH": str(unpacked)}
    env.pop("PG_BOT_DOCS_URL", None)
    where = run([sys.executable, "-c", "import bot; print(bot.__file__)"], unpacked, 60, env)
    assert Path(where.strip()).is_relative_to(unpacked)
    out = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(f"tests/{t}" for t in SDIST_TESTS)],
              unpacked, 300, env)
    assert re.fullmatch(r"\d+ passed(, \d+ skipped)? in .+", out.strip().splitlines()[-1]), out[-2000:]


def test_readme_links_are_absolute_so_they_work_on_pypi() -> None:
    """PyPI shows the README without the repository around it: a relative link or image would be broken there."""
    tokens = MarkdownIt("commonmark").parse((ROOT / "README.md").read_text(encoding="utf-8"))
    targets = []
    for token in tokens:
        for child in token.children or []:
            if child.type == "link_open":
                targets.append(str(child.attrGet("href")))
            elif child.type == "image":
                targets.append(str(child.attrGet("src")))
    assert targets, "the README has links"
    relative = [t for t in targets if not t.startswith(("https://", "#"))]
    assert relative == []
    # links into this repository point at files that exist
    blob = f"{REPOSITORY}/blob/main/"
    raw = "https://raw.githubusercontent.com/deepspeedai/pg-bot/main/"
    local = [t.removeprefix(blob).removeprefix(raw).split("#")[0] for t in targets if t.startswith((blob, raw))]
    assert local and [p for p in local if not (ROOT / p).exists()] == []
