"""Analyzer behaviour on fixtures written for these tests: spellings, spans, scope, names, bad input."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from bot.analyze import analyze_paths, analyze_source
from bot.config import load, parse
from bot.model import (
    CachedSizePayload,
    CopyPayload,
    GuardPayload,
    SizeOnlyPayload,
    Span,
    SplitGuardPayload,
    UnguardedPayload,
)

CONFIG = load()


def findings(source: str, path: str = "pkg/mod.py", config=CONFIG):  # type: ignore[no-untyped-def]
    result = analyze_source(path, textwrap.dedent(source), config)
    assert result.error is None, result.error
    return result.findings


def codes(source: str, **kw) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in findings(source, **kw)]


# ---------------------------------------------------------------- full guard spellings


@pytest.mark.parametrize(
    "test",
    [
        "g is not None and dist.get_world_size(g) > 1",
        "g is not None and dist.get_world_size(group=g) > 1",
        "g is not None and dist.get_world_size(group=g) >= 2",
        "g is not None and 1 < dist.get_world_size(group=g)",
        "g != None and dist.get_world_size(group=g) > 1",
        "None is not g and dist.get_world_size(group=g) > 1",
        "g and dist.get_world_size(group=g) > 1",
    ],
)
def test_full_guard_spellings(test: str) -> None:
    src = f"""
    import deepspeed.comm as dist
    def f(t, g=None):
        if {test}:
            dist.all_reduce(t, group=g)
    """
    found = findings(src)
    assert [f.code for f in found] == ["PG101"]
    assert found[0].group == "g"
    assert found[0].span == Span(4, 7, 4, 7 + len(test))


def test_guard_inside_longer_chain_reports_only_the_guard_operands() -> None:
    src = """
    import deepspeed.comm as dist
    class A:
        def forward(self, x):
            if self.config.mlp_after_attn and self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1:
                dist.all_reduce(x, group=self.mp_group)
    """
    (f,) = findings(src)
    line = textwrap.dedent(src).splitlines()[4]
    start = line.index("self.mp_group is not None")
    assert f.code == "PG101" and f.group == "self.mp_group"
    assert f.span == Span(5, start, 5, line.index(":", start + 30))
    assert isinstance(f.payload, GuardPayload) and f.payload.adjacent is True
    assert f.payload.chain.col == line.index("self.config")


def test_multiline_guard_span() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None, enabled=True):
        if (enabled
                and g is not None
                and dist.get_world_size(group=g) > 1):
            dist.all_reduce(t, group=g)
    """
    (f,) = findings(src)
    assert f.code == "PG101"
    assert (f.span.line, f.span.end_line) == (5, 6)


@pytest.mark.parametrize("test", ["g is None or dist.get_world_size(g) == 1",
                                  "g is None or dist.get_world_size(group=g) <= 1",
                                  "g is None or dist.get_world_size(group=g) < 2",
                                  "not g or dist.get_world_size(group=g) == 1"])
def test_negated_early_exit(test: str) -> None:
    src = f"""
    import deepspeed.comm as dist
    def f(t, g=None):
        if {test}:
            return t
        dist.all_reduce(t, group=g)
        return t
    """
    found = findings(src)
    assert [f.code for f in found] == ["PG102"]
    assert isinstance(found[0].payload, GuardPayload)
    assert found[0].payload.nonmember_bug is test.endswith("== 1")


def test_non_ascii_columns_are_characters() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        if "é" and g is not None and dist.get_world_size(g) > 1:
            dist.all_reduce(t, group=g)
    """
    (f,) = findings(src)
    line = textwrap.dedent(src).splitlines()[3]
    assert f.span.col == line.index("g is not None")


# ---------------------------------------------------------------- names resolve through imports


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import deepspeed.comm as dist", "dist.get_world_size"),
        ("from deepspeed import comm as dist", "dist.get_world_size"),
        ("from deepspeed import comm", "comm.get_world_size"),
        ("import torch.distributed as dist", "dist.get_world_size"),
        ("import torch", "torch.distributed.get_world_size"),
        ("import deepspeed", "deepspeed.comm.get_world_size"),
        ("from deepspeed.comm import get_world_size", "get_world_size"),
        ("from torch.distributed import get_world_size as ws", "ws"),
    ],
)
def test_names_resolve_through_imports(imports: str, call: str) -> None:
    src = f"""
    {imports}
    def f(g=None):
        return g is not None and {call}(g) > 1 and True
    """
    assert codes(src) == ["PG101"]


@pytest.mark.parametrize(
    "imports",
    ["import mylib as dist", "from megatron import mpu as dist", ""],
)
def test_unrelated_get_world_size_is_not_a_finding(imports: str) -> None:
    src = f"""
    {imports}
    def f(g=None):
        return g is not None and dist.get_world_size(g) > 1 and True
    """
    assert codes(src) == []


# ---------------------------------------------------------------- out of scope by design


@pytest.mark.parametrize(
    "body",
    [
        # mpu-based sizes
        "if dist.get_world_size(group=mpu.get_model_parallel_group()) > 1:\n"
        "        dist.all_reduce(t, group=mpu.get_model_parallel_group())",
        "if bwc_tensor_model_parallel_world_size(mpu) > 1:\n        dist.all_reduce(t, group=g)",
        "if groups._get_expert_parallel_world_size(name) > 1:\n        dist.all_reduce(t, group=g)",
        # a separately supplied size
        "if len(partition_sizes) > 1:\n        dist.all_reduce(t, group=g)",
        "if tp_world_size > 1:\n        dist.all_reduce(t, group=g)",
        # explicit world group, or no group at all
        "dist.all_reduce(t, group=None)",
        "dist.all_reduce(t, group=dist.group.WORLD)",
        "if dist.get_world_size() > 1:\n        dist.all_reduce(t)",
    ],
)
def test_out_of_scope_sites(body: str) -> None:
    src = (
        "import deepspeed.comm as dist\n"
        "def f(t, mpu, name, partition_sizes, tp_world_size, g=None):\n"
        f"    {body}\n"
    )
    assert codes(src) == []


def test_exemptions_in_rules_yaml_cover_the_rfc_out_of_scope_sites() -> None:
    src = """
    import deepspeed.comm as dist
    class DeepSpeedMoEInference:
        def __init__(self, ep_group=None):
            self.ep_group = ep_group
        def _alltoall(self, x):
            if dist.get_world_size(group=self.ep_group) > 1:
                dist.all_to_all_single(x, x, group=self.ep_group)
    """
    assert codes(src, path="deepspeed/ops/transformer/inference/moe_inference.py") == []
    # a copy of DeepSpeed inside another project (FlexGen vendors one): the same function, the same decision
    assert codes(src, path="benchmark/third_party/DeepSpeed/deepspeed/ops/transformer/inference/moe_inference.py") == []
    assert codes(src, path="deepspeed/elsewhere.py") == ["PG104"]


def test_exemption_requires_matching_function_and_rule() -> None:
    config = parse(
        "version: 1\nexemptions:\n  - path: pkg/**\n    function: keep\n    rules: [PG105]\n"
        "    reason: None means the world group here\n"
    )
    src = """
    import deepspeed.comm as dist
    def keep(t, g=None):
        dist.all_reduce(t, group=g)
    def other(t, g=None):
        dist.all_reduce(t, group=g)
    def guarded(t, g=None):
        if g is not None and dist.get_world_size(g) > 1:
            dist.all_reduce(t, group=g)
    """
    found = [f for f in findings(src, config=config) if f.code == "PG105"]
    assert [(f.code, f.function) for f in found] == [("PG105", "other")]


def test_ignore_comment() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        dist.all_reduce(t, group=g)  # pg-bot: ignore[PG105] None is the world group by contract
        dist.broadcast(t, 0, group=g)  # pg-bot: ignore[PG101] wrong code, still reported
    def h(t, g=None):
        if g is not None and dist.get_world_size(g) > 1:  # pg-bot: ignore full guard, kept on purpose
            dist.all_reduce(t, group=g)
    """
    assert [(f.code, f.line) for f in findings(src)] == [("PG105", 5)]


# ---------------------------------------------------------------- partial guards and optional groups


def test_size_only_guard_needs_an_optional_group() -> None:
    template = """
    import deepspeed.comm as dist
    def f(t, g{default}):
        if dist.get_world_size(group=g) > 1:
            dist.all_reduce(t, group=g)
    """
    assert codes(template.format(default="=None")) == ["PG104"]
    assert codes(template.format(default=": Optional[object]")) == ["PG104"]
    assert codes(template.format(default=": 'ProcessGroup | None'")) == ["PG104"]
    assert codes(template.format(default="")) == []


def test_not_equal_one_is_called_out_for_non_members() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        if dist.get_world_size(group=g) != 1:
            dist.all_reduce(t, group=g)
    """
    (f,) = findings(src)
    assert f.code == "PG104" and isinstance(f.payload, SizeOnlyPayload) and f.payload.nonmember_bug is True
    assert "non-member" in f.message


def test_none_only_guard_early_exit_and_attribute_group() -> None:
    src = """
    import deepspeed.comm as dist
    class L:
        def __init__(self, mp_group=None):
            self.mp_group = mp_group
        def forward(self, x):
            if self.mp_group is None:
                return x
            dist.inference_all_reduce(x, group=self.mp_group)
            return x
    """
    (f,) = findings(src)
    assert (f.code, f.kind, f.group) == ("PG103", "negative", "self.mp_group")


def test_none_only_message_says_when_the_helper_tests_the_size_itself() -> None:
    src = """
    import deepspeed.comm as dist
    def _sum(t, pg):
        if pg.size() == 1:
            return
        dist.all_reduce(t, group=pg)
    def _bare(t, pg):
        dist.all_reduce(t, group=pg)
    def region(t, pg=None):
        if pg is None:
            return t
        _sum(t, pg)
    def bare_region(t, pg=None):
        if pg is None:
            return t
        _bare(t, pg)
    """
    sized, bare = findings(src)
    assert (sized.code, bare.code) == ("PG103", "PG103")
    assert "the size is tested only further down" in sized.message and "still runs it" not in sized.message
    assert "a single-rank or non-member group still runs it" in bare.message


def test_nested_none_then_size_is_one_split_full_guard() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        if g is not None:
            if dist.get_world_size(group=g) > 1:
                dist.all_reduce(t, group=g)
    """
    (f,) = findings(src)
    assert isinstance(f.payload, SplitGuardPayload)
    assert (f.code, f.kind, f.span.line, f.payload.size_check.line) == ("PG101", "split", 4, 5)


def test_unguarded_message_says_world_and_records_result_use() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        handle = dist.all_reduce(t, group=g, async_op=True)
        dist.all_reduce(t, group=g)
        return handle
    def guarded(t, g=None):
        if g is None:
            return
        dist.all_reduce(t, group=g)
    """
    found = [f for f in findings(src) if f.code == "PG105"]
    assert [f.code for f in found] == ["PG105", "PG105"]
    assert all("WORLD" in f.message for f in found)
    assert all(isinstance(f.payload, UnguardedPayload) for f in found)
    assert [f.payload.result_used for f in found] == [True, False]


def test_cached_size_and_predicate_copy() -> None:
    src = """
    import deepspeed.comm as dist
    def _tp_active(group):
        return group is not None and dist.get_world_size(group=group) > 1
    class Row:
        def __init__(self, mp_group=None):
            self.mp_group = mp_group
            self.tp_world_size = dist.get_world_size(group=mp_group)
        def forward(self, x):
            if self.tp_world_size > 1:
                dist.all_reduce(x, group=self.mp_group)
            if _tp_active(self.mp_group):
                dist.all_reduce(x, group=self.mp_group)
    """
    found = findings(src)
    assert [f.code for f in found] == ["PG107", "PG106"]
    copy, cached = found
    assert isinstance(copy.payload, CopyPayload) and isinstance(cached.payload, CachedSizePayload)
    assert copy.payload.name == "_tp_active" and len(copy.payload.calls) == 1
    assert cached.payload.attribute == "self.tp_world_size"
    assert cached.payload.assignment is not None and cached.payload.assignment.line == 8


def test_migrated_sites_are_counted() -> None:
    src = """
    from deepspeed.comm import pg_utils
    import deepspeed.comm as dist
    def f(t, g=None):
        if pg_utils.is_parallel(g):
            dist.all_reduce(t, group=g)
        return pg_utils.is_parallel(g)
    """
    result = analyze_source("m.py", textwrap.dedent(src), CONFIG)
    assert result.findings == [] and result.migrated == 2


# ---------------------------------------------------------------- bad input never stops a run


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"import deepspeed.comm as dist\ndef f(:\n    dist.all_reduce(t, group=g)\n", "syntax error at line 2"),
        (b"import deepspeed.comm as dist\nprint 'x', dist.get_world_size(g)\n", "Python 2"),
        (b"# -*- coding: utf-8 -*-\nimport deepspeed.comm as dist\nx = '\xff\xfe'\ndist.barrier(group=g)\n", "bad encoding"),
        (b"import deepspeed.comm as dist\x00\n", "NUL"),
        (b"# -*- coding: nope -*-\nimport deepspeed.comm as dist\ndist.barrier(group=g)\n", "encoding"),
    ],
)
def test_unreadable_files_are_reported(data: bytes, reason: str) -> None:
    result = analyze_source("bad.py", data, CONFIG)
    assert result.error is not None and reason in result.error.message
    assert result.findings == []


@pytest.mark.parametrize("line", [b'x = f"{"a"}"', b'x = f"{"\\n".join(y)}"', b'x = f"{\n  y  # a comment\n}"'])
def test_a_newer_f_string_is_read_on_an_older_python(line: bytes) -> None:
    # PEP 701 (Python 3.12): on 3.11 the f-string is blanked in place (bot.analyze.newer_syntax), the rest analysed
    source = b"import deepspeed.comm as dist\n" + line + b"\ndef f(t, g=None):\n    if g is not None:\n" \
        b"        dist.all_reduce(t, group=g)\n"
    result = analyze_source("new.py", source, CONFIG)
    assert result.error is None
    lines = source.decode().splitlines()
    at = next(i for i, text in enumerate(lines, 1) if "if g is not None" in text)
    assert [(f.code, f.span.line) for f in result.findings] == [("PG103", at)]
    # and the fixer rewrites it (LibCST reads PEP 701 itself), the f-string kept
    from bot.fix import fix_source

    fixed = fix_source(source.decode(), result.findings, CONFIG, unsafe=True)
    assert [f.code for f in fixed.applied] == ["PG103"]
    assert line.decode() in fixed.source and "if pg_utils.is_parallel(g):" in fixed.source


def test_f_strings_are_blanked_in_place_only_where_an_older_parser_fails() -> None:
    from bot.analyze.newer_syntax import readable_on_older_python, without_new_f_strings

    source = 'x = f"{d["k"]}" + f"ok {a!r:>{w}}"  # f"{"\ny = rf"\\{a["b"]}" + f"{f"{a["b"]}"}"\n'
    bare = without_new_f_strings(source)
    assert bare == 'x =  "        " + f"ok {a!r:>{w}}"  # f"{"\ny =   "         " +  "             "\n'
    # one spanning lines inside a one-quote string becomes an empty tuple, its line ends kept
    assert without_new_f_strings('x = f"{\n  a  # c\n}"\n') == 'x = (  \n        \n )\n'
    assert without_new_f_strings('x = f"{a}" + "b"\n') is None  # nothing an older parser rejects
    assert without_new_f_strings('x = "unterminated\n') is None  # left to the parser's own error
    assert readable_on_older_python('class A[T]:\n    s = f"{d["k"]}"\n') == 'class A   :\n    s =  "        "\n'


def test_a_file_broken_on_every_python_still_says_so() -> None:
    result = analyze_source("bad.py", b"import deepspeed.comm as dist\nx = f\"{a!}\"\ndist.barrier(group=g)\n", CONFIG)
    assert result.error is not None and "syntax error at line 2" in result.error.message


def test_files_that_cannot_matter_are_not_parsed() -> None:
    # The prefilter: a file that cannot hold a finding costs (and reports) nothing, even when broken.
    for data in (b"def (:\n", b"import deepspeed.comm as dist\ndist.barrier()\ndef (:\n"):
        result = analyze_source("notes.py", data, CONFIG)
        assert result.error is None and result.findings == []


def test_a_bad_file_does_not_stop_the_others(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a_bad.py").write_bytes(b"import deepspeed.comm as dist\ndef (:\n    dist.barrier(group=g)\n")
    (tmp_path / "b_good.py").write_text(
        "import deepspeed.comm as dist\ndef f(t, g=None):\n    if g is not None:\n        dist.all_reduce(t, group=g)\n"
    )
    results = list(analyze_paths([tmp_path], CONFIG, relative_to=tmp_path, jobs=1))
    assert [r.path for r in results] == ["a_bad.py", "b_good.py"]
    assert results[0].error is not None and [f.code for f in results[1].findings] == ["PG103"]


def test_parallel_run_matches_serial(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for i in range(30):
        (tmp_path / f"m{i:02}.py").write_text(
            f"import deepspeed.comm as dist\ndef f{i}(t, g=None):\n"
            + "    if g is not None and dist.get_world_size(g) > 1:\n        dist.all_reduce(t, group=g)\n" * (i % 3)
        )
    serial = list(analyze_paths([tmp_path], CONFIG, jobs=1))
    parallel = list(analyze_paths([tmp_path], CONFIG, jobs=2))
    assert [(r.path, r.findings) for r in serial] == [(r.path, r.findings) for r in parallel]
    assert sum(len(r.findings) for r in serial) == 30


def test_every_guard_in_one_chain_is_reported() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None, h=None):
        if g is not None and dist.get_world_size(g) > 1 and h is not None and dist.get_world_size(h) > 1:
            dist.all_reduce(t, group=g)
    """
    found = findings(src)
    assert [(f.code, f.group) for f in found] == [("PG101", "g"), ("PG101", "h")]


def test_cached_size_names_the_dimension_after_the_group() -> None:
    src = """
    import deepspeed.comm as dist
    class Row:
        def __init__(self, mp_group=None):
            self.mp_group = mp_group
            self.world_size = dist.get_world_size(group=mp_group)
        def forward(self, x):
            if self.world_size > 1:
                dist.all_reduce(x, group=self.mp_group)
    """
    (f,) = findings(src)
    assert f.code == "PG106" and isinstance(f.payload, CachedSizePayload)
    assert f.payload.cache_attribute == "self.is_mp_parallel"


def test_a_reassigned_size_local_is_not_the_groups_size() -> None:
    # `ws // 2` is arithmetic on the size: a separately derived size, out of scope (no PG104 on it).
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        ws = dist.get_world_size(group=g)
        ws = ws // 2
        if ws > 1:
            dist.all_reduce(t, group=g)
    """
    assert codes(src) == []


def test_exemptions_match_from_the_project_root_wherever_pg_bot_runs(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    src = (
        "import deepspeed.comm as dist\n"
        "class DeepSpeedMoEInference:\n"
        "    def __init__(self, ep_group=None):\n"
        "        self.ep_group = ep_group\n"
        "    def _alltoall(self, x):\n"
        "        if dist.get_world_size(group=self.ep_group) > 1:\n"
        "            dist.all_to_all_single(x, x, group=self.ep_group)\n"
    )
    repo = tmp_path / "DeepSpeed"
    target = repo / "deepspeed" / "ops" / "transformer" / "inference"
    target.mkdir(parents=True)
    (repo / "setup.py").write_text("")
    (target / "moe_inference.py").write_text(src)
    (target / "other.py").write_text(src)
    for cwd in (tmp_path, repo / "deepspeed", target):
        monkeypatch.chdir(cwd)
        results = list(analyze_paths([repo], CONFIG, relative_to=cwd, jobs=1))
        assert {r.path.rsplit("/", 1)[-1]: [f.code for f in r.findings] for r in results} == {
            "setup.py": [],
            "moe_inference.py": [],
            "other.py": ["PG104"],
        }


@pytest.mark.parametrize("handler", [
    "except ValueError",
    pytest.param("except* ValueError", marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11 syntax")),
    "finally",
])
def test_collectives_inside_try_blocks_are_seen(handler: str) -> None:
    src = f"""
    import deepspeed.comm as dist
    def f(t, g=None):
        if g is None:
            return
        try:
            dist.all_reduce(t, group=g)
        {handler}:
            dist.barrier(group=g)
    """
    (f,) = findings(src)  # one None-only guard, protecting both collectives
    assert (f.code, f.span.line) == ("PG103", 4)


def test_the_prefilter_follows_the_config() -> None:
    src = "import deepspeed.comm as dist\ndef f(t, g=None):\n    if g is not None:\n        dist.my_collective(t, group=g)\n"
    for _ in range(3):  # fresh config objects each time: no cached prefilter of another policy may apply
        assert codes(src, config=parse("version: 1\ncollectives: [all_reduce]\n")) == []
        assert codes(src, config=parse("version: 1\ncollectives: [my_collective]\n")) == ["PG103"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("return dist.all_reduce(t, group=g) if g is not None else None", ["PG103"]),
        ("return None if g is None else dist.all_reduce(t, group=g)", ["PG103"]),
        ("return g is not None and dist.all_reduce(t, group=g)", ["PG103"]),
        ("return g is None or dist.all_reduce(t, group=g)", ["PG103"]),
        ("return dist.all_reduce(t, group=g) if pg_utils.is_parallel(g) else None", []),
        ("return dist.all_reduce(t, group=g) if flag else None", []),  # no evidence None means absent
    ],
)
def test_conditional_expressions_and_short_circuits_guard_too(line: str, expected: list[str]) -> None:
    src = f"""
    import deepspeed.comm as dist
    from deepspeed.comm import pg_utils
    def f(t, flag, g=None):
        {line}
    """
    assert codes(src) == expected


def test_flake8_noqa_is_honoured() -> None:
    src = """
    import deepspeed.comm as dist
    def f(t, g=None):
        if g is not None:  # noqa: PG103
            dist.all_reduce(t, group=g)
        if g is not None:  # noqa
            dist.barrier(group=g)
        if g is not None:  # noqa: E501 (another tool's code: PG103 still reported)
            dist.broadcast(t, 0, group=g)
    """
    assert [(f.code, f.line) for f in findings(src)] == [("PG103", 8)]


def test_a_long_and_chain_is_linear_not_quadratic() -> None:
    # 5,000 operands took 31 s when pairing was quadratic; a generous bound still catches that.
    import time

    from bot.fix import fix_source

    ops = " and ".join(f"x{i} > 0" for i in range(5000))
    src = (f"import deepspeed.comm as dist\ndef f(t, g=None, **x):\n"
           f"    if g is not None and {ops} and dist.get_world_size(group=g) > 1:\n        dist.all_reduce(t, group=g)\n")
    start = time.perf_counter()
    result = analyze_source("m.py", src, CONFIG)
    fixed = fix_source(src, result.findings, CONFIG)
    assert time.perf_counter() - start < 5
    assert [f.code for f in result.findings] == ["PG101"]
    # LibCST nests a 5,000-operand chain 5,000 deep: the fixer refuses it with its reason, it never raises
    assert fixed.source == src and [why for _, why in fixed.refused] and not fixed.applied


def test_size_functions_and_absent_groups_come_from_the_config() -> None:
    src = """
    import deepspeed.comm as dist
    from mypkg.groups import tp_size
    def f(t, g=None):
        if g is not None and tp_size(g) > 1:
            dist.all_reduce(t, group=g)
    def h(t, tp_group=None):
        dist.all_reduce(t, group=tp_group)
    """
    # by default tp_size(g) is a separately supplied size (out of scope) and tp_group=None has no evidence
    assert codes(src) == []
    config = parse("version: 1\nsize_functions: [get_world_size, mypkg.groups.tp_size]\nabsent_groups: ['tp_*']\n")
    found = findings(src, config=config)
    assert [(f.code, f.confidence.value) for f in found] == [("PG101", "high"), ("PG105", "medium")]
    assert "absent_groups" in found[1].evidence[0]


def test_a_collective_imported_under_another_name_with_an_except_fallback_is_still_that_collective() -> None:
    source = (
        "try:\n"
        "    from torch.distributed.distributed_c10d import all_gather_into_tensor as gather_flat\n"
        "except ImportError:\n"
        "    from torch.distributed.distributed_c10d import _all_gather_base as gather_flat\n"
        "def collect(out, shard, grp=None):\n"
        "    if grp is None:\n"
        "        return shard\n"
        "    gather_flat(out, shard, group=grp)\n"
    )
    result = analyze_source("m.py", source, CONFIG)
    assert [(f.code, f.span.line) for f in result.findings] == [("PG103", 6)]


def test_relative_imports_outside_a_known_package_keep_their_names() -> None:
    from bot.analyze.names import Names

    tree = ast.parse("from ..distributed import _fsdp_gather_tensors as gather\nfrom . import utils\n")
    aliases = Names.of(tree, None).aliases
    assert aliases == {"gather": "..distributed._fsdp_gather_tensors", "utils": ".utils"}
    assert Names.of(tree, "pkg.sub.mod").aliases == {"gather": "pkg.sub.distributed._fsdp_gather_tensors",
                                                      "utils": "pkg.sub.mod.utils"}


def test_the_prefilter_keeps_a_file_whose_only_signs_are_a_groups_size_or_a_wrapper_call() -> None:
    from bot.analyze import _prefilter_for

    prefilter = _prefilter_for(CONFIG)
    kept = "import torch.distributed as dist\nfrom .comm import gather_seq\ndef f(x, sp_group=None):\n" \
           "    if sp_group is None or sp_group.size() == 1:\n        return x\n    return gather_seq(x, sp_group)\n"
    assert prefilter.wanted(kept)
    assert [f.code for f in analyze_source("pkg/seq.py", kept, CONFIG).findings] == ["PG102"]
    wrapper_only = kept.replace("sp_group is None or sp_group.size() == 1", "sp_group is None")
    assert prefilter.wanted(wrapper_only)  # a wrapper named for a collective, called with a group
    assert [f.code for f in analyze_source("pkg/seq.py", wrapper_only, CONFIG).findings] == ["PG103"]
    # a None test of the group before an imported function handed it: read (the function may communicate on it)
    shifted = wrapper_only.replace("gather_seq", "shift_seq")
    assert prefilter.wanted(shifted)
    assert not prefilter.wanted(shifted.replace("    if sp_group is None:\n        return x\n", ""))  # no sign left
    # no comm module named: a layer that communicates only through its project's helpers is still read ...
    assert prefilter.wanted(kept.replace("import torch.distributed as dist\n", ""))
    assert prefilter.wanted("from pkg.dist import utils as du\ndef f(t, group=None):\n    du.broadcast(t, 0, group)\n")
    # ... but not one that neither sizes a group, None-tests one, nor calls a collective-named function with one
    assert not prefilter.wanted(shifted.replace("import torch.distributed as dist\n", "")
                                .replace("    if sp_group is None:\n        return x\n", ""))
    assert not prefilter.wanted("import numpy as np\ndef f(t, idx):\n    return t.size(), np.take(t, idx)\n")


def test_a_method_is_walked_again_only_when_the_summary_can_tell_it_something(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import bot.analyze.flow as flow

    walked: list[str] = []
    run = flow.Walker.run

    def counting(self):  # type: ignore[no-untyped-def]
        walked.append(self.function.node.name if self.function is not None else "<module>")
        return run(self)

    monkeypatch.setattr(flow.Walker, "run", counting)
    own = (
        "import torch.distributed as dist\n"
        "class A:\n"
        "    def __init__(self, t, g=None):\n"
        "        self.g = g\n"
        "        self.n = dist.get_world_size(g) if g is not None else 1\n"
        "        if self.n > 1:\n"
        "            dist.all_reduce(t, group=self.g)\n"
    )
    assert [f.code for f in analyze_source("m.py", own, CONFIG).findings] == ["PG101"]
    assert walked.count("__init__") == 1  # its own entry, set before it is read: nothing new
    walked.clear()
    other = own + "    def setup(self, g):\n        self.g = g\n        self.k = dist.get_world_size(g) if g is not None else 1\n" \
        "    def go(self, t):\n        self.m = 1\n        if self.k > 1:\n            dist.all_reduce(t, group=self.g)\n"
    analyze_source("m.py", other, CONFIG)
    assert walked.count("go") == 2  # reads `self.k`, which another method leaves: walked again with the summary


def test_the_prefilter_follows_the_configured_comm_modules() -> None:
    """The module test is a search for each module's last name first, then the patterns; a project's own comm
    module (and a submodule of one, whose parent's patterns find it) works the same as deepspeed.comm."""
    from dataclasses import replace

    from bot.analyze import _Prefilter

    mine = replace(CONFIG, comm_modules=("mypkg.fabric", "mypkg.fabric.ops"))
    prefilter = _Prefilter(mine)
    body = "def f(t, tp_group=None):\n    if tp_group is not None:\n        fabric.all_reduce(t, group=tp_group)\n"
    assert prefilter.wanted("from mypkg import fabric\n" + body)
    assert prefilter.wanted("import mypkg.fabric.ops as fabric\n" + body)
    assert not prefilter.wanted("import mypkg.other as fabric\n" + body.replace("fabric.all_reduce", "fabric.send"))
    found = analyze_source("pkg/m.py", "from mypkg import fabric\n" + body, mine).findings
    assert [f.code for f in found] == ["PG103"]


@pytest.mark.parametrize(("test", "is_group"), [
    ("isinstance(pg, dist.ProcessGroup)", True),
    ("isinstance(pg, ProcessGroup)", True),
    ("isinstance(pg, c10d.ProcessGroupNCCL)", True),
    ("isinstance(pgs, ProcessGroupCollection)", False),  # holds groups, is none
    ("isinstance(pgs, MultiModuleProcessGroupCollection)", False),
    ("isinstance(pg, DeviceMesh)", False),
    ("isinstance(pg, (ProcessGroup, DeviceMesh))", False),  # a tuple: either may hold
])
def test_a_type_test_of_a_process_group_is_told_from_other_classes(test: str, is_group: bool) -> None:
    from bot.analyze.terms import is_group_type_test

    call = ast.parse(test, mode="eval").body
    assert isinstance(call, ast.Call)
    assert is_group_type_test(call) is is_group


def test_a_walrus_binding_a_group_attribute_is_one_check_of_that_group() -> None:
    source = ("import torch.distributed as dist\n\nclass Attn:\n    def finish(self, grad):\n"
              "        if self.single and (group := self.dim.group):\n"
              "            dist.all_reduce(grad, group=group)\n")
    found = analyze_source("attn.py", source, CONFIG).findings
    assert [(f.code, f.span.line, f.span.col) for f in found] == [("PG103", 5, 28)]


@pytest.mark.parametrize("receiver", ["group", "self.tp_group"])
def test_c10d_spellings_of_a_groups_own_collectives_are_collectives(receiver: str) -> None:
    # `group.broadcast([t], opts)` (a list of tensors: c10d's signature, not a coordinator's) and the private
    # `_allgather_base` / `_reduce_scatter_base` that projects call to skip torch's wrappers
    source = (f"def sync(self, t, out, group=None):\n    if {receiver} is not None:\n"
              f"        {receiver}.broadcast([t], None)\n    if {receiver} is not None:\n"
              f"        {receiver}._allgather_base(out, t, None)\n    if {receiver} is not None:\n"
              f"        {receiver}._reduce_scatter_base(out, t, None)\n")
    found = analyze_source("sync.py", "import torch.distributed\n" + source, CONFIG).findings
    assert [(f.code, f.span.line) for f in found] == [("PG103", 3), ("PG103", 5), ("PG103", 7)]
    # a coordinator's broadcast takes the tensor itself: not a process group's collective
    coordinator = source.replace("broadcast([t], None)", "broadcast(t, 0)")
    found = analyze_source("sync.py", "import torch.distributed\n" + coordinator, CONFIG).findings
    assert [f.span.line for f in found] == [5, 7]


def test_pep_695_syntax_is_read_on_an_older_python() -> None:
    source = ("import torch.distributed as dist\n\ntype Pair[T] = tuple[T, T]\n\n"
              "class Block[C: dict[str, int]](Base[C]):\n    def reduce[T](self, t: T, group=None) -> T:\n"
              "        if group is not None:\n            dist.all_reduce(t, group=group)\n        return t\n")
    result = analyze_source("block.py", source, CONFIG)
    assert result.error is None
    assert [(f.code, f.span.line, f.span.col) for f in result.findings] == [("PG103", 7, 11)]
    # and the fixer (LibCST reads PEP 695 itself) rewrites it, the generics kept
    from bot.fix import fix_source

    fixed = fix_source(source, result.findings, CONFIG, unsafe=True)
    assert [f.code for f in fixed.applied] == ["PG103"]
    assert "class Block[C: dict[str, int]](Base[C]):" in fixed.source
    assert "if pg_utils.is_parallel(group):" in fixed.source


def test_without_type_parameters_keeps_every_other_character_in_place() -> None:
    from bot.analyze.newer_syntax import without_type_parameters

    source = "class A[T](B[T]):\n    x: type = type(3)\ntype X = int\ntype = 5\nif x:\n    type Y[K] = list[K]\n"
    bare = without_type_parameters(source)
    assert bare == "class A   (B[T]):\n    x: type = type(3)\n_:   X = int\ntype = 5\nif x:\n    _:   Y    = list[K]\n"
    assert without_type_parameters("x = 1\ntype(x)\n") is None  # nothing to change
    assert without_type_parameters("x = (\n") is None  # does not tokenize


@pytest.mark.parametrize(("test", "bound"), [
    ("num_peers > 0", 1),  # the ranks other than this one: one fewer than a size
    ("len(self.peers) >= 1", 1),
    ("self.peer_count > 0", 1),
    ("len(peer_ranks) > 1", 1),  # the members of a peer group, this rank among them: a size
    ("world_size > 1", 1),
])
def test_a_count_of_peers_is_one_fewer_than_a_size(test: str, bound: int) -> None:
    from bot.analyze.terms import size_compare

    found = size_compare(ast.parse(test, mode="eval").body)
    assert found is not None and found.positive
    assert (found.op, found.bound) in ((">", bound), (">=", bound + 1))
    assert size_compare(ast.parse("n_items > 0", mode="eval").body) is None  # counts no ranks
