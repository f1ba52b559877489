"""Tests of the benchmark harness (not timed; run with `python -m pytest -q benchmarks/`)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import bench_check as bc
import pytest

HERE = Path(__file__).resolve().parent


def _run(name: str, cpu: float, findings: int | None = 3, wall: float = 1.0) -> bc.Run:
    return bc.Run(name, wall=wall, user=cpu * 0.75, sys=cpu * 0.25, returncode=0, findings=findings)


def test_counts_semgrep_results() -> None:
    assert bc.count_semgrep(json.dumps({"results": [{}, {}], "errors": []})) == 2
    assert bc.count_semgrep("not json") is None
    assert bc.count_semgrep(json.dumps({"errors": []})) is None


@pytest.mark.parametrize(("payload", "expected"), [
    ({"findings": [{}, {}, {}], "errors": []}, 3),
    ([{}, {}], 2),
    ({"files": [{"findings": [{}]}, {"findings": [{}, {}]}]}, 3),
    ({"summary": {"findings": 7}}, 7),
    ({"something": "else"}, None),
])
def test_counts_pg_bot_findings(payload: object, expected: int | None) -> None:
    assert bc.count_pg_bot(json.dumps(payload)) == expected


def test_summary_takes_medians_and_min() -> None:
    s = bc.summarise([_run("t", 3.0, wall=5), _run("t", 1.0, wall=2), _run("t", 2.0, wall=9)])
    assert (s.tool, s.runs, s.wall_median, s.cpu_median, s.cpu_min, s.findings) == ("t", 3, 5, 2.0, 1.0, 3)


def test_summary_flags_findings_that_differ_between_runs() -> None:
    assert bc.summarise([_run("t", 1.0, findings=3), _run("t", 1.0, findings=4)]).findings is None
    with pytest.raises(ValueError):
        bc.summarise([])


def test_table_ratio_is_relative_to_the_baseline() -> None:
    rows = bc.table_rows([bc.summarise([_run("pg-bot", 2.0)]), bc.summarise([_run("semgrep", 10.0)])],
                         baseline="pg-bot")
    assert [r[0] for r in rows] == ["pg-bot", "semgrep"]
    assert [r[-1] for r in rows] == ["1.00x", "5.00x"]
    # without the baseline there is no ratio, not a crash
    assert bc.table_rows([bc.summarise([_run("semgrep", 10.0)])], baseline="pg-bot")[0][-1] == "-"


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


BURN = "import time\nend = time.process_time() + {secs}\nwhile time.process_time() < end: pass\n"


def test_measure_counts_cpu_of_children_and_orphans(tmp_path: Path) -> None:
    # The tool burns 0.3 s itself and leaves a grandchild burning 0.6 s after it has exited: all of it is
    # the tool's cost. Run in a fresh interpreter, since measure() makes its process a child subreaper.
    orphan = _script(tmp_path, "orphan", BURN.format(secs=0.6))
    tool = _script(tmp_path, "tool", f"""
        import subprocess, sys
        subprocess.Popen([{str(orphan)!r}])  # not waited for: orphaned when this process exits
        {BURN.format(secs=0.3).replace(chr(10), chr(10) + " " * 8)}
        print('{{"findings": [1, 2]}}')
        sys.exit(1)
    """)
    code = f"""
        import json, bench_check as bc
        t = bc.Tool("fake", [{str(tool)!r}], frozenset({{0, 1}}), bc.count_pg_bot)
        run, out, err = bc.measure(t, timeout=30)
        print(json.dumps({{"cpu": run.cpu, "wall": run.wall, "rc": run.returncode, "findings": run.findings}}))
    """
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=HERE, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert (got["rc"], got["findings"]) == (1, 2)
    if sys.platform.startswith("linux"):
        assert got["cpu"] >= 0.85  # 0.3 + 0.6, minus clock granularity
    else:
        assert got["cpu"] >= 0.25


def test_hung_tool_times_out(tmp_path: Path) -> None:
    tool = bc.Tool("sleepy", [str(_script(tmp_path, "sleepy", "import time\ntime.sleep(60)\n"))],
                   frozenset({0}), bc.count_pg_bot)
    with pytest.raises(bc.BenchError, match="sleepy did not finish"):
        bc.measure(tool, timeout=0.5)


def test_main_runs_a_fake_pg_bot_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = _script(tmp_path, "pg-bot", """
        import json, sys
        assert sys.argv[1] == "check" and sys.argv[3:] == ["--format", "json"], sys.argv
        print(json.dumps({"findings": [{}] * 4, "errors": []}))
        sys.exit(1)  # findings: still a completed run
    """)
    target = tmp_path / "pkg"
    target.mkdir()
    (target / "a.py").write_text("x = 1\n")
    out = tmp_path / "bench.json"
    rc = bc.main([str(target), "--tools", "pg-bot", "--pg-bot", str(fake), "--runs", "2", "--warmup", "1",
                  "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["files"] == 1
    assert [r["findings"] for r in data["runs"]["pg-bot"]] == [4, 4]
    assert data["summary"][0]["tool"] == "pg-bot"
    assert "pg-bot" in capsys.readouterr().out


def test_main_reports_a_failing_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = _script(tmp_path, "pg-bot", "import sys\nprint('config broken', file=sys.stderr)\nsys.exit(2)\n")
    rc = bc.main([str(tmp_path), "--tools", "pg-bot", "--pg-bot", str(fake), "--runs", "1"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "pg-bot exited with 2" in err and "config broken" in err


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        bc.parse_args(["--tools", "pylint"])
    assert info.value.code == 2
    assert bc.main([str(tmp_path / "missing")]) == 2
    with pytest.raises(bc.BenchError, match="no such executable"):
        bc.ensure_semgrep(str(tmp_path / "nope" / "semgrep"), tmp_path, bc.SEMGREP_VERSION)


def test_semgrep_rules_pass_their_examples() -> None:
    semgrep = bc.DEFAULT_SEMGREP_VENV / "bin" / "semgrep"
    if not semgrep.is_file():
        pytest.skip("semgrep venv not created yet (python benchmarks/bench_check.py --tools semgrep makes it)")
    res = subprocess.run([str(semgrep), "--test", "--metrics=off", "--disable-version-check", "--config",
                          str(bc.DEFAULT_RULES), str(HERE / "semgrep-rules.py")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
