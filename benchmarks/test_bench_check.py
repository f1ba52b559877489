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


def test_counts_ast_grep_matches() -> None:
    assert bc.count_ast_grep(json.dumps([{"ruleId": "a"}, {"ruleId": "b"}, {"ruleId": "a"}])) == 3
    assert bc.count_ast_grep("[]") == 0
    assert bc.count_ast_grep("not json") is None
    assert bc.count_ast_grep(json.dumps({"ruleId": "a"})) is None  # one object is not the report


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


def test_ratios_and_verdicts_follow_the_issue_targets() -> None:
    summaries = [bc.summarise([_run("pg-bot", 1.0, wall=0.5)]), bc.summarise([_run("semgrep", 9.0, wall=4.0)]),
                 bc.summarise([_run("ast-grep", 0.5, wall=0.4)]),
                 bc.summarise([_run(bc.ONE_FILE_TOOL, 0.25, wall=0.3)])]
    ratios = bc.target_ratios(summaries)
    assert ratios == pytest.approx({
        "semgrep_cpu_over_pg_bot": 9.0, "semgrep_wall_over_pg_bot": 8.0,
        "pg_bot_wall_over_ast_grep": 1.25, "pg_bot_cpu_over_ast_grep": 2.0,
        "one_file_wall": 0.3, "one_file_cpu": 0.25,
    })
    lines = bc.verdict_lines(ratios)
    assert lines[0].startswith("semgrep / pg-bot: CPU 9.00x") and "target >= 8x: met" in lines[0]
    assert lines[1].startswith("pg-bot / ast-grep: wall 1.25x") and "NOT met" in lines[1]
    assert "wall 0.30s" in lines[2] and lines[2].endswith("met)") and "NOT" not in lines[2]
    # a tool left out: no ratio for it, the others still reported
    only = bc.target_ratios([s for s in summaries if s.tool != "semgrep"])
    assert "semgrep_cpu_over_pg_bot" not in only and "pg_bot_wall_over_ast_grep" in only
    assert bc.verdict_lines(bc.target_ratios(summaries[1:3])) == []  # no pg-bot: nothing to compare


def _fake_tools(tmp_path: Path, log: Path, ast_grep_out: str = "[{}, {}]") -> dict[str, Path]:
    """pg-bot, semgrep and ast-grep stand-ins that log their name and the path they check, in call order."""
    checked = "next(a for a in sys.argv[1:] if '/pkg' in a)"  # the target made by _target()
    record = f"open({str(log)!r}, 'a').write(sys.argv[0].rsplit('/', 1)[-1] + ' ' + {checked} + chr(10))\n"

    def fake(name: str, body: str) -> Path:
        return _script(tmp_path, name, "import json, sys\n" + record + textwrap.dedent(body))

    return {
        "pg-bot": fake("pg-bot", """
            assert not sys.flags.dont_write_bytecode  # measured as installed, with its bytecode cached
            path = sys.argv[2]
            print(json.dumps({"findings": [{}] * (1 if path.endswith(".py") else 4), "errors": []}))
            sys.exit(1)
        """),
        "semgrep": fake("semgrep", """
            assert sys.argv[1] == "scan" and "--json" in sys.argv, sys.argv
            print(json.dumps({"results": [{}] * 5, "errors": []}))
        """),
        "ast-grep": fake("ast-grep", f"""
            assert sys.argv[1:3] == ["scan", "--config"] and "--json=compact" in sys.argv, sys.argv
            print({ast_grep_out!r})
            sys.exit(1)  # error-severity matches: still a completed run
        """),
    }


def _target(tmp_path: Path) -> Path:
    target = tmp_path / "pkg"
    (target / "moe").mkdir(parents=True)
    (target / "a.py").write_text("x = 1\n")
    (target / "moe" / "b.py").write_text("y = 2\n")
    return target


def test_main_measures_all_tools_interleaved(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    log = tmp_path / "calls.log"
    fakes = _fake_tools(tmp_path, log)
    target = _target(tmp_path)
    out = tmp_path / "bench.json"
    rc = bc.main([str(target), "--pg-bot", str(fakes["pg-bot"]), "--semgrep", str(fakes["semgrep"]),
                  "--ast-grep", str(fakes["ast-grep"]), "--one-file", "moe/b.py", "--runs", "2",
                  "--warmup", "1", "--json", str(out)])
    assert rc == 0, capsys.readouterr().err
    one_round = ["pg-bot " + str(target), "pg-bot " + str(target / "moe" / "b.py"), "semgrep " + str(target),
                 "ast-grep " + str(target)]
    assert log.read_text().splitlines() == one_round * 3  # warm-up + 2 runs, the tools alternating
    data = json.loads(out.read_text())
    assert {name: [r["findings"] for r in runs] for name, runs in data["runs"].items()} == {
        "pg-bot": [4, 4], bc.ONE_FILE_TOOL: [1, 1], "semgrep": [5, 5], "ast-grep": [2, 2]}
    assert data["argv"]["ast-grep"][-2:] == ["--json=compact", str(target)]
    assert str(bc.DEFAULT_AST_GREP_CONFIG) in data["argv"]["ast-grep"]
    assert {"semgrep_cpu_over_pg_bot", "pg_bot_wall_over_ast_grep", "one_file_wall"} <= data["ratios"].keys()
    assert len(data["load_average"]) == 2
    assert all(r["load"] >= 0 for runs in data["runs"].values() for r in runs)
    printed = capsys.readouterr().out
    assert "semgrep / pg-bot: CPU" in printed and "pg-bot / ast-grep: wall" in printed
    assert "pg-bot on one file" in printed


def test_tools_selects_ast_grep_alone_with_its_options(tmp_path: Path) -> None:
    fakes = _fake_tools(tmp_path, tmp_path / "calls.log")
    config = tmp_path / "sgconfig.yml"
    args = bc.parse_args([str(tmp_path), "--tools", "ast-grep", "--ast-grep", str(fakes["ast-grep"]),
                          "--ast-grep-config", str(config), "--ast-grep-threads", "2"])
    (tool,) = bc.build_tools(args, tmp_path)
    assert tool.name == "ast-grep" and tool.ok_codes == frozenset({0, 1})
    assert tool.argv == [str(fakes["ast-grep"]), "scan", "--threads", "2", "--config", str(config),
                         "--json=compact", str(tmp_path)]


def test_ast_grep_problems_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _target(tmp_path)
    assert bc.main([str(target), "--tools", "ast-grep", "--ast-grep", str(tmp_path / "nope" / "ast-grep")]) == 2
    assert "ast-grep not found" in capsys.readouterr().err
    fakes = _fake_tools(tmp_path, tmp_path / "calls.log")
    assert bc.main([str(target), "--tools", "ast-grep", "--ast-grep", str(fakes["ast-grep"]),
                    "--ast-grep-config", str(tmp_path / "missing.yml")]) == 2
    assert "ast-grep config" in capsys.readouterr().err
    # exit code 1 is fine, but only with a report: a run that printed none measured nothing
    broken = _fake_tools(tmp_path, tmp_path / "calls.log", ast_grep_out="Error: Cannot parse rule")
    assert bc.main([str(target), "--tools", "ast-grep", "--ast-grep", str(broken["ast-grep"]), "--runs", "1",
                    "--warmup", "0"]) == 2
    err = capsys.readouterr().err
    assert "ast-grep printed no readable JSON report" in err and "Cannot parse rule" in err


def test_one_file_is_chosen_under_the_target(tmp_path: Path) -> None:
    target = _target(tmp_path)
    assert bc.one_file(target, "moe/b.py") == target / "moe" / "b.py"
    assert bc.one_file(target, "") is None  # turned off
    assert bc.one_file(target, None) is None  # the default file is not in this target: no timing, no error
    (target / bc.DEFAULT_ONE_FILE).write_text("z = 3\n")
    assert bc.one_file(target, None) == target / bc.DEFAULT_ONE_FILE
    with pytest.raises(bc.BenchError, match=r"--one-file moe/c\.py: no such file"):
        bc.one_file(target, "moe/c.py")
    args = bc.parse_args([str(target), "--tools", "semgrep", "--semgrep", str(tmp_path / "x")])
    assert args.one_file is None
    with pytest.raises(SystemExit):
        bc.parse_args(["--tools", "pg-bot,astgrep"])


def _ast_grep_or_skip() -> str:
    try:
        return bc.find_ast_grep(None)
    except bc.BenchError:
        pytest.skip("ast-grep not installed (pip install ast-grep-cli)")


def test_ast_grep_rules_pass_their_examples() -> None:
    res = subprocess.run([_ast_grep_or_skip(), "test", "--config", str(bc.DEFAULT_AST_GREP_CONFIG)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_ast_grep_rules_find_what_the_semgrep_examples_annotate() -> None:
    # The two peers do the same work: on the semgrep examples, ast-grep reports exactly the annotated lines
    # (`# ruleid: X` marks the next line), whatever semgrep is installed or not.
    examples = HERE / "semgrep-rules.py"
    lines = examples.read_text().splitlines()
    expected = {(line.split("ruleid:")[1].strip(), n + 1) for n, line in enumerate(lines, start=1)
                if line.strip().startswith("# ruleid:")}
    res = subprocess.run([_ast_grep_or_skip(), "scan", "--config", str(bc.DEFAULT_AST_GREP_CONFIG),
                          "--json=compact", str(examples)], capture_output=True, text=True, timeout=120)
    assert res.returncode in (0, 1), res.stderr
    found = {(m["ruleId"], m["range"]["start"]["line"] + 1) for m in json.loads(res.stdout)}
    assert len(expected) == 13
    assert found == expected
