"""The tracker on real git repositories built here: status at a ref, history per commit, the cache.

The repository helpers (Repo, module) are imported by the dashboard tests too.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from bot import config as config_module
from bot.cli import main
from bot.track.cache import AnalysisCache
from bot.track.history import compute_history
from bot.track.trees import TreeReader, status_at_ref, status_of_dir

HEADER = "import deepspeed.comm as dist\nfrom deepspeed.comm import pg_utils\n"


def module(guards: int, migrated: int, *, prefix: str = "f") -> str:
    """A module with ``guards`` hand-rolled full guards (PG101 each) and ``migrated`` is_parallel uses."""
    parts = [HEADER]
    for i in range(guards):
        parts.append(
            f"\n\ndef {prefix}_guarded_{i}(t, tp_group=None):\n"
            "    if tp_group is not None and dist.get_world_size(tp_group) > 1:\n"
            "        dist.all_reduce(t, group=tp_group)\n"
        )
    for i in range(migrated):
        parts.append(
            f"\n\ndef {prefix}_migrated_{i}(t, tp_group=None):\n"
            "    if pg_utils.is_parallel(tp_group):\n"
            "        dist.all_reduce(t, group=tp_group)\n"
        )
    return "".join(parts)


BROKEN = HEADER + "def f(g):\n    if g is not None and dist.get_world_size(g) > 1:\n        pass\ndef (:\n"


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = 1_700_000_000
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_AUTHOR_DATE": f"{self.clock} +0000", "GIT_COMMITTER_DATE": f"{self.clock} +0000",
            "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(self.path),
        }
        out = subprocess.run(["git", "-C", str(self.path), *args], env=env, check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        """Write (or, for None, delete) files and commit; returns the commit id."""
        for rel, text in files.items():
            target = self.path / rel
            if text is None:
                self.git("rm", "-q", rel)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            self.git("add", rel)
        self.clock += 3600
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


# ---------------------------------------------------------------- the fixture history

MOE = "deepspeed/moe/layer.py"
ZERO = "deepspeed/runtime/zero/stage3.py"
OTHER = "deepspeed/launcher/runner.py"
AUTOTP = "deepspeed/module_inject/layers.py"
BAD = "deepspeed/sequence/bad.py"

# (remaining, migrated) per area after each first-parent commit, by construction of the fixture below
EXPECTED = [
    {"moe": (3, 0), "zero": (2, 0), "autotp": (0, 0), "other": (1, 0)},  # c0 base
    {"moe": (2, 1), "zero": (2, 0), "autotp": (0, 0), "other": (1, 0)},  # c1 one moe guard migrated
    {"moe": (2, 1), "zero": (0, 2), "autotp": (0, 0), "other": (1, 0)},  # c2 merge: zero migrated on a branch
    {"moe": (0, 0), "zero": (0, 2), "autotp": (2, 1), "other": (1, 0)},  # c3 file renamed into module_inject
    {"moe": (0, 0), "zero": (0, 2), "autotp": (2, 1), "other": (0, 0)},  # c4 launcher file deleted
    {"moe": (0, 0), "zero": (0, 2), "autotp": (0, 3), "other": (0, 0)},  # c5 autotp done; a broken file added
    {"moe": (1, 0), "zero": (1, 2), "autotp": (0, 3), "other": (0, 0)},  # c6 two files: regressions
]


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, list[str], list[str]]:
    """A repo whose first-parent line is c0..c6 (see EXPECTED); also returns the side branch's commits."""
    repo = Repo(tmp_path_factory.mktemp("story") / "repo")
    line = [repo.commit("c0 base", {MOE: module(3, 0), ZERO: module(2, 0, prefix="z"),
                                    OTHER: module(1, 0, prefix="o"), "README.md": "hello\n"})]
    line.append(repo.commit("c1 migrate one moe guard", {MOE: module(2, 1)}))
    repo.git("checkout", "-q", "-b", "side")
    side = [repo.commit("side: half of zero", {ZERO: module(1, 1, prefix="z")}),
            repo.commit("side: rest of zero", {ZERO: module(0, 2, prefix="z")})]
    repo.git("checkout", "-q", "main")
    repo.clock += 3600
    repo.git("merge", "-q", "--no-ff", "-m", "c2 merge side", "side")
    line.append(repo.git("rev-parse", "HEAD"))
    (repo.path / AUTOTP).parent.mkdir(parents=True, exist_ok=True)
    repo.git("mv", MOE, AUTOTP)
    line.append(repo.commit("c3 move moe layer into module_inject", {}))
    line.append(repo.commit("c4 drop launcher", {OTHER: None, "README.md": "hello again\n"}))
    line.append(repo.commit("c5 autotp done, broken file", {AUTOTP: module(0, 3), BAD: BROKEN}))
    line.append(repo.commit("c6 regressions in two files", {ZERO: module(1, 2, prefix="z"),
                                                            "deepspeed/moe/experts.py": module(1, 0, prefix="e")}))
    return repo, line, side


@pytest.fixture(scope="module")
def config() -> config_module.Config:
    return config_module.load()


def counts(areas: dict[str, dict[str, object]]) -> dict[str, tuple[object, object]]:
    return {name: (areas[name]["remaining"], areas[name]["migrated"]) for name in EXPECTED[0]}


def test_history_counts_per_first_parent_commit(story, config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, line, side = story
    reader = TreeReader(config, AnalysisCache(tmp_path / "cache", config))
    points, status = compute_history(repo.path, line[0], line[-1], reader)
    assert [p.sha for p in points] == line  # side-branch commits are not points
    assert not set(side) & {p.sha for p in points}
    assert [counts(p.areas) for p in points] == EXPECTED
    assert all(p.areas["sequence"]["remaining"] == 0 for p in points)
    assert points[-1].areas["zero"]["by_rule"] == {"PG101": 1}
    # the status at the tip carries each remaining site, for the dashboard's links
    assert sorted(status.sites) == ["deepspeed/moe/experts.py", ZERO, BAD]
    assert status.errors == [BAD]
    assert [s.line for s in status.sites[ZERO].sites] == [6]


def test_incremental_history_equals_a_full_analysis_of_each_commit(story, config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    points, _ = compute_history(repo.path, line[0], line[-1], TreeReader(config, AnalysisCache(None, config)))
    for point in points:
        full = status_at_ref(repo.path, point.sha, TreeReader(config, AnalysisCache(None, config)))
        assert full.counts() == point.areas, point.subject


def test_cache_costs_one_analysis_per_new_blob(story, config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    cache_dir = tmp_path / "cache"
    first = TreeReader(config, AnalysisCache(cache_dir, config))
    compute_history(repo.path, line[0], line[-2], first)
    first.cache.save()
    # 3 files in c0, 1 in c1, 1 from the merge, 1 for the rename (same blob, new path: exemptions are
    # per path), 2 in c5; the side branch's intermediate blob is never analysed
    assert first.analyzed == 3 + 1 + 1 + 1 + 2

    # the next run reads the cache from disk; c6 touches two .py files and costs exactly two analyses
    second = TreeReader(config, AnalysisCache(cache_dir, config))
    points, _ = compute_history(repo.path, line[0], line[-1], second)
    second.cache.save()
    assert second.analyzed == 2
    assert counts(points[-1].areas) == EXPECTED[-1]

    third = TreeReader(config, AnalysisCache(cache_dir, config))
    compute_history(repo.path, line[0], line[-1], third)
    assert third.analyzed == 0 and third.cache.misses == 0


def test_a_damaged_cache_file_is_only_a_slower_run(story, config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    cache = AnalysisCache(tmp_path / "cache", config)
    assert cache.path is not None
    cache.path.parent.mkdir(parents=True)
    cache.path.write_text("{not json", encoding="utf-8")
    reader = TreeReader(config, AnalysisCache(tmp_path / "cache", config))
    points, _ = compute_history(repo.path, line[0], line[-1], reader)
    assert [counts(p.areas) for p in points] == EXPECTED
    reader.cache.save()
    assert json.loads(cache.path.read_text(encoding="utf-8"))["fingerprint"] == cache.fingerprint


def test_status_of_a_ref_and_of_its_checkout_agree(story, config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", line[3]], check=True, capture_output=True)
    by_ref = status_at_ref(repo.path, line[3], TreeReader(config, AnalysisCache(None, config)))
    by_dir = status_of_dir(work, TreeReader(config, AnalysisCache(None, config)))
    assert by_ref.counts() == by_dir.counts()
    assert counts(by_ref.counts()) == EXPECTED[3]


def test_status_cli_at_a_ref(story, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    rc = main(["status", "--ref", line[1], "--repo-dir", str(repo.path), "--cache-dir", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert rc == 0
    moe = next(row for row in out.splitlines() if row.startswith("| MoE |"))
    assert moe == f"| MoE | 2 (PG101 2) | 1 | 33% | in progress | `{MOE}` (2) |"
    rc = main(["status", "--ref", line[1], "--repo-dir", str(repo.path), "--no-cache", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and counts(data["areas"]) == EXPECTED[1]


def test_status_cli_under_a_folder(story, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    rc = main(["status", "--ref", line[0], "--repo-dir", str(repo.path), "--no-cache", "--format", "json",
               "--under", "deepspeed/runtime"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert counts(data["areas"]) == {"moe": (0, 0), "zero": (2, 0), "autotp": (0, 0), "other": (0, 0)}


def test_history_cli_writes_csv_json_and_charts(story, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    out = tmp_path / "out"
    rc = main(["history", "--since", line[0], "--repo-dir", str(repo.path), "--out", str(out),
               "--cache-dir", str(tmp_path / "c")])
    assert rc == 0, capsys.readouterr().err
    data = json.loads((out / "history.json").read_text(encoding="utf-8"))
    assert [c["sha"] for c in data["commits"]] == line
    assert [counts(c["areas"]) for c in data["commits"]] == EXPECTED
    with (out / "history.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(line) * len(data["commits"][0]["areas"])
    autotp = [(int(r["remaining"]), int(r["migrated"])) for r in rows if r["area"] == "autotp"]
    assert autotp == [e["autotp"] for e in EXPECTED]
    assert [int(r["PG101"]) for r in rows if r["area"] == "moe"] == [e["moe"][0] for e in EXPECTED]
    with Image.open(out / "burndown.png") as img:
        assert img.format == "PNG" and img.size == (1100, 500)
    assert ET.parse(out / "burndown.svg").getroot().tag.endswith("svg")
    # --last N counts back along the first-parent line; without --until the tip is the default branch
    rc = main(["history", "--last", "2", "--repo-dir", str(repo.path), "--out", str(tmp_path / "o2"), "--no-cache"])
    assert rc == 0
    data = json.loads((tmp_path / "o2" / "history.json").read_text(encoding="utf-8"))
    assert [c["sha"] for c in data["commits"]] == line[-3:]


def test_history_cli_rejects_a_base_off_the_first_parent_line(story, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    repo, _, side = story
    rc = main(["history", "--since", side[0], "--repo-dir", str(repo.path), "--out", str(tmp_path), "--no-cache"])
    assert rc == 2
    assert "not on the first-parent line" in capsys.readouterr().err
    rc = main(["history", "--since", "no-such-rev", "--repo-dir", str(repo.path), "--out", str(tmp_path)])
    assert rc == 2
    assert "no-such-rev" in capsys.readouterr().err
    rc = main(["history", "--last", "0", "--repo-dir", str(repo.path), "--out", str(tmp_path), "--no-cache"])
    assert rc == 2
    assert "positive" in capsys.readouterr().err


def test_last_n_longer_than_the_line_starts_at_the_root(story, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, line, _ = story
    rc = main(["history", "--last", "99", "--repo-dir", str(repo.path), "--out", str(tmp_path), "--no-cache"])
    assert rc == 0
    data = json.loads((tmp_path / "history.json").read_text(encoding="utf-8"))
    assert [c["sha"] for c in data["commits"]] == line


def test_parallel_analysis_gives_the_same_summaries(config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = Repo(tmp_path / "wide")
    files = {f"deepspeed/moe/m{i:02d}.py": module(i % 3, i % 2, prefix=f"m{i}") for i in range(60)}
    sha = repo.commit("sixty files", files)
    serial = TreeReader(config, AnalysisCache(None, config), workers=1)
    parallel = TreeReader(config, AnalysisCache(None, config), workers=2)
    a, b = status_at_ref(repo.path, sha, serial), status_at_ref(repo.path, sha, parallel)
    assert serial.analyzed == parallel.analyzed == 60
    assert a.counts() == b.counts() and a.sites == b.sites
    assert a.areas["moe"].remaining == sum(i % 3 for i in range(60))
    assert a.areas["moe"].migrated == sum(i % 2 for i in range(60))


def test_an_analyzer_failure_on_one_file_is_reported_not_fatal(config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from bot.analyze import analyze_source

    def fragile(path: str, source: bytes, cfg: config_module.Config):  # type: ignore[no-untyped-def]
        if path.endswith("boom.py"):
            raise RecursionError("maximum recursion depth exceeded")  # as a pathological file could cause
        return analyze_source(path, source, cfg)

    repo = Repo(tmp_path / "boom")
    sha = repo.commit("two files", {"deepspeed/moe/boom.py": module(1, 0), "deepspeed/moe/ok.py": module(2, 1)})
    status = status_at_ref(repo.path, sha, TreeReader(config, AnalysisCache(None, config), analyzer=fragile))
    assert status.errors == ["deepspeed/moe/boom.py"]
    assert status.sites["deepspeed/moe/boom.py"].error == "analyzer failed: RecursionError: maximum recursion depth exceeded"
    assert (status.areas["moe"].remaining, status.areas["moe"].migrated) == (2, 1)
