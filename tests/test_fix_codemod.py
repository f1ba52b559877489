"""fix_source on Findings built by hand (spans found in the test source), so the codemod is tested on its own."""

from __future__ import annotations

import ast
from dataclasses import replace

import pytest

from bot import config as config_module
from bot.fix import fix_source
from bot.model import (
    CachedSizePayload,
    ContiguousPayload,
    CopyPayload,
    Finding,
    GuardPayload,
    NoneOnlyPayload,
    Payload,
    SizeOnlyPayload,
    Span,
    SplitGuardPayload,
    UnguardedPayload,
)

CONFIG = config_module.load()
IMPORT = "from deepspeed.comm import pg_utils"
DIST = "import deepspeed.comm as dist\n"  # the fixer resolves get_world_size through the file's imports


def span_of(source: str, text: str, nth: int = 0) -> Span:
    index = -1
    for _ in range(nth + 1):
        index = source.index(text, index + 1)
    end = index + len(text)

    def position(offset: int) -> tuple[int, int]:
        return source.count("\n", 0, offset) + 1, offset - (source.rfind("\n", 0, offset) + 1)

    return Span(*position(index), *position(end))


def guard(source: str, none: str, size: str, chain: str | None = None, code: str = "PG101", group: str = "g") -> Finding:
    n, s = span_of(source, none), span_of(source, size)
    first, last = sorted((n, s))
    both = Span(first.line, first.col, last.end_line, last.end_col)
    c = span_of(source, chain) if chain else both
    kind = "or" if code == "PG102" else "and"
    return Finding(code, "guard", "m.py", both, group=group, kind=kind, payload=_guard_payload(n, s, c))


def _guard_payload(none: Span, size: Span, chain: Span) -> GuardPayload:
    # op/bound/nonmember_bug describe the comparison for the message; the fixer reads the spans only
    return GuardPayload(none_check=none, size_check=size, chain=chain, adjacent=True, op=">", bound=1,
                        nonmember_bug=False)


def finding(code: str, source: str, text: str, payload: Payload | None, group: str = "g", kind: str = "") -> Finding:
    return Finding(code, code, "m.py", span_of(source, text), group=group, kind=kind, payload=payload)


def _none_only(test: str) -> NoneOnlyPayload:
    return NoneOnlyPayload(test=test, collective="all_reduce")


def _size_only(via: str | None = None) -> SizeOnlyPayload:
    return SizeOnlyPayload(op=">", bound=1, nonmember_bug=False, collective="all_reduce", via=via)


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in old.splitlines() if line not in new.splitlines()]


# ------------------------------------------------------------------ full guards (safe, applied by default)

CHAIN = '''import deepspeed.comm as dist


def f(x, config):
    label = 'single' + "double"  # quoting stays


    if (config.enabled  # why it matters
            and self.mp_group is not None
            and dist.get_world_size(group=self.mp_group) > 1
            and config.ready):
        dist.all_reduce(x, group=self.mp_group)
    return label
'''


def test_multiline_guard_inside_longer_chain_keeps_other_operands_and_text() -> None:
    f = guard(
        CHAIN,
        "self.mp_group is not None",
        "dist.get_world_size(group=self.mp_group) > 1",
        chain=CHAIN[CHAIN.index("config.enabled") : CHAIN.index("config.ready") + len("config.ready")],
        group="self.mp_group",
    )
    result = fix_source(CHAIN, [f], CONFIG)
    assert result.applied == [f] and not result.refused
    expected = CHAIN.replace(
        "            and self.mp_group is not None\n            and dist.get_world_size(group=self.mp_group) > 1\n",
        "            and pg_utils.is_parallel(self.mp_group)\n",
    ).replace("import deepspeed.comm as dist\n", f"import deepspeed.comm as dist\n{IMPORT}\n")
    assert result.source == expected


def test_non_adjacent_operands_collapse_into_the_first_position() -> None:
    src = DIST + "def f(g, flag, ready):\n    if flag and g is not None and ready and dist.get_world_size(g) > 1:\n        pass\n"
    f = guard(src, "g is not None", "dist.get_world_size(g) > 1", chain="flag and g is not None and ready and dist.get_world_size(g) > 1")
    result = fix_source(src, [f], CONFIG)
    assert "    if flag and pg_utils.is_parallel(g) and ready:\n" in result.source


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("    if g is not None and dist.get_world_size(g) > 1:", "    if pg_utils.is_parallel(g):"),
        ("    if (g is not None and dist.get_world_size(g) > 1):", "    if pg_utils.is_parallel(g):"),
        ("    if(g is not None and dist.get_world_size(g) > 1):", "    if(pg_utils.is_parallel(g)):"),
        ("    if not(g is not None and dist.get_world_size(g) > 1):", "    if not(pg_utils.is_parallel(g)):"),
        ("    if x and (g is not None and dist.get_world_size(g) > 1):", "    if x and pg_utils.is_parallel(g):"),
        ("    if 1 < dist.get_world_size(group=g) and g is not None:", "    if pg_utils.is_parallel(g):"),
    ],
)
def test_parentheses_go_only_where_nothing_touches_them(line: str, expected: str) -> None:
    src = DIST + f"def f(g, x):\n{line}\n        pass\n"
    none = "g is not None"
    size = next(s for s in ("dist.get_world_size(g) > 1", "1 < dist.get_world_size(group=g)") if s in src)
    f = guard(src, none, size)
    result = fix_source(src, [f], CONFIG)
    assert result.refused == []
    assert expected in result.source.splitlines()
    ast.parse(result.source)


def test_negated_early_exit_becomes_not_predicate() -> None:
    src = DIST + "def f(t, g=None):\n    if g is None or dist.get_world_size(group=g) <= 1:\n        return t\n    return t\n"
    f = guard(src, "g is None", "dist.get_world_size(group=g) <= 1", code="PG102")
    result = fix_source(src, [f], CONFIG)
    assert "    if not pg_utils.is_parallel(g):\n" in result.source and result.applied == [f]


def test_early_exit_with_equals_one_is_refused_and_names_the_non_member_state() -> None:
    src = DIST + "def f(t, g=None):\n    if g is None or dist.get_world_size(group=g) == 1:\n        return t\n    return t\n"
    f = guard(src, "g is None", "dist.get_world_size(group=g) == 1", code="PG102")
    result = fix_source(src, [f], CONFIG)
    assert result.source == src
    [(refused, why)] = result.refused
    assert refused is f and "non-member group (size -1): old False, new True" in why and "--unsafe-fixes" in why
    assert "not pg_utils.is_parallel(g)" in fix_source(src, [f], CONFIG, unsafe=True).source


def test_a_rewrite_that_changes_a_multi_rank_group_is_refused_even_when_unsafe() -> None:
    src = DIST + "def f(g):\n    if g is not None and dist.get_world_size(g) > 4:\n        pass\n"
    f = guard(src, "g is not None", "dist.get_world_size(g) > 4")
    result = fix_source(src, [f], CONFIG, unsafe=True)
    assert result.source == src and "multi-rank" in result.refused[0][1]


# ------------------------------------------------------------------ the import

def test_import_added_once_after_future_and_docstring_and_reused_when_present() -> None:
    src = '"""Doc."""\nfrom __future__ import annotations\n\nimport deepspeed.comm as dist\n\n\ndef f(g, h):\n    if g is not None and dist.get_world_size(g) > 1:\n        pass\n    if h is not None and dist.get_world_size(h) > 1:\n        pass\n'
    fs = [guard(src, "g is not None", "dist.get_world_size(g) > 1"), guard(src, "h is not None", "dist.get_world_size(h) > 1", group="h")]
    new = fix_source(src, fs, CONFIG).source
    assert new.count(IMPORT) == 1
    lines = new.splitlines()
    assert lines.index(IMPORT) == lines.index("import deepspeed.comm as dist") + 1
    with_import = src.replace("import deepspeed.comm as dist\n", f"import deepspeed.comm as dist\n{IMPORT}\n")
    fs2 = [guard(with_import, "g is not None", "dist.get_world_size(g) > 1")]
    assert fix_source(with_import, fs2, CONFIG).source.count(IMPORT) == 1


def test_predicate_import_comes_from_rules_yaml() -> None:
    custom = config_module.parse("version: 1\npredicate: {module: mylib.comm, name: pgu, function: active}\n")
    src = "import torch.distributed as dist\n\n\ndef f(g):\n    if g is not None and dist.get_world_size(g) > 1:\n        pass\n"
    new = fix_source(src, [guard(src, "g is not None", "dist.get_world_size(g) > 1")], custom).source
    assert "from mylib.comm import pgu\n" in new and "    if pgu.active(g):\n" in new


def test_crlf_file_stays_crlf() -> None:
    src = "import deepspeed.comm as dist\r\n\r\n\r\ndef f(t, g=None):\r\n    if g is not None and dist.get_world_size(g) > 1:\r\n        pass\r\n    dist.all_reduce(t, group=g)\r\n"
    fs = [
        guard(src, "g is not None", "dist.get_world_size(g) > 1"),
        _unguarded(src, "dist.all_reduce(t, group=g)"),
    ]
    new = fix_source(src, fs, CONFIG, unsafe=True).source
    assert "\n" not in new.replace("\r\n", "") and "\r" not in new.replace("\r\n", "")
    assert new.split("\r\n")[-4:] == ["        pass", "    if pg_utils.is_parallel(g):", "        dist.all_reduce(t, group=g)", ""]


# ------------------------------------------------------------------ partial guards (unsafe by design)

def test_partial_guards_are_unsafe_and_say_which_states_change() -> None:
    src = DIST + "def f(t, g=None):\n    if g is not None:\n        dist.all_reduce(t, group=g)\n    if dist.get_world_size(group=g) > 1:\n        dist.all_reduce(t, group=g)\n"
    none_only = finding("PG103", src, "g is not None", _none_only("g is not None"), kind="positive")
    size_only = finding("PG104", src, "dist.get_world_size(group=g) > 1", _size_only(), kind="positive")
    safe = fix_source(src, [none_only, size_only], CONFIG)
    assert safe.source == src and not safe.applied
    why = dict((f.code, r) for f, r in safe.refused)
    assert "single-rank group (size 1): old True, new False" in why["PG103"] and "non-member" in why["PG103"]
    assert "None (dimension absent): old True, new False" in why["PG104"] and "WORLD" in why["PG104"]
    unsafe = fix_source(src, [none_only, size_only], CONFIG, unsafe=True)
    assert unsafe.source.count("    if pg_utils.is_parallel(g):\n") == 2 and len(unsafe.applied) == 2


def test_negative_partial_guard_becomes_not_predicate() -> None:
    src = DIST + "def f(t, g=None):\n    if g is None:\n        return t\n    dist.all_reduce(t, group=g)\n"
    f = finding("PG103", src, "g is None", _none_only("g is None"), kind="negative")
    assert "    if not pg_utils.is_parallel(g):\n" in fix_source(src, [f], CONFIG, unsafe=True).source


# ------------------------------------------------------------------ unguarded collectives (PG105)

def _unguarded(src: str, call: str, used: bool = False, collective: str = "all_reduce") -> Finding:
    payload = UnguardedPayload(statement=span_of(src, call), result_used=used, collective=collective)
    return finding("PG105", src, call, payload, kind="call")


def test_unguarded_in_place_collective_is_wrapped_keeping_comments() -> None:
    src = DIST + "def f(t, g=None):\n    # reduce it\n    dist.all_reduce(t,\n                    group=g)  # in place\n    return t\n"
    result = fix_source(src, [_unguarded(src, "dist.all_reduce(t,\n                    group=g)")], CONFIG, unsafe=True)
    assert result.source.endswith(
        "def f(t, g=None):\n    # reduce it\n    if pg_utils.is_parallel(g):\n        dist.all_reduce(t,\n                        group=g)  # in place\n    return t\n"
    )


@pytest.mark.parametrize(
    ("src", "call", "used", "collective", "reason"),
    [
        ("def f(t, g):\n    h = dist.all_reduce(t, group=g, async_op=True)\n", "dist.all_reduce(t, group=g, async_op=True)", True, "all_reduce", "is used"),
        ("def f(o, t, g):\n    dist.all_gather(o, t, group=g)\n", "dist.all_gather(o, t, group=g)", False, "all_gather", "output buffer"),
        ("def f(t, g):\n    x = 1; dist.all_reduce(t, group=g)\n", "dist.all_reduce(t, group=g)", False, "all_reduce", "shares its line"),
        ("def f(t, g):\n    if t: dist.all_reduce(t, group=g)\n", "dist.all_reduce(t, group=g)", False, "all_reduce", "does not match"),
    ],
)
def test_unguarded_collective_is_left_alone_where_wrapping_is_not_behaviour_preserving(
    src: str, call: str, used: bool, collective: str, reason: str
) -> None:
    result = fix_source(src, [_unguarded(src, call, used, collective)], CONFIG, unsafe=True)
    assert result.source == src and reason in result.refused[0][1]


# ------------------------------------------------------------------ cached size (PG106)

CACHED = DIST + """class Row:
    def __init__(self, group=None):
        self.group = group
        self.tp_world_size = dist.get_world_size(group=group)

    def forward(self, x):
        if self.tp_world_size > 1:
            dist.all_reduce(x, group=self.group)

    def backward(self, x):
        if self.tp_world_size == 1:
            return x
"""


def _cached(src: str, test: str, kind: str) -> Finding:
    assignment = span_of(src, "self.tp_world_size = dist.get_world_size(group=group)")
    payload = CachedSizePayload(attribute="self.tp_world_size", assignment=assignment, assigned_in="Row.__init__",
                                cache_attribute="self.is_tp_parallel", collective="all_reduce")
    return finding("PG106", src, test, payload, group="group", kind=kind)


def test_cached_size_is_replaced_by_a_flag_cached_once_at_construction() -> None:
    fs = [_cached(CACHED, "self.tp_world_size > 1", "positive"), _cached(CACHED, "self.tp_world_size == 1", "negative")]
    result = fix_source(CACHED, fs, CONFIG, unsafe=True)
    assert result.source.count("self.is_tp_parallel = pg_utils.is_parallel(group)") == 1
    assert "        self.tp_world_size = dist.get_world_size(group=group)\n        self.is_tp_parallel = pg_utils.is_parallel(group)\n" in result.source
    assert "        if self.is_tp_parallel:\n" in result.source and "        if not self.is_tp_parallel:\n" in result.source
    refused = fix_source(CACHED, fs, CONFIG).refused
    assert all("None (dimension absent)" in why for _, why in refused)


def test_cached_flag_uses_the_name_the_analyzer_suggested() -> None:
    f = _cached(CACHED, "self.tp_world_size > 1", "positive")
    assert isinstance(f.payload, CachedSizePayload)
    f = replace(f, payload=replace(f.payload, cache_attribute="self.is_row_parallel"))
    result = fix_source(CACHED, [f], CONFIG, unsafe=True)
    assert "        self.is_row_parallel = pg_utils.is_parallel(group)\n" in result.source
    assert "        if self.is_row_parallel:\n" in result.source


def test_conditionally_cached_size_is_refused() -> None:
    src = CACHED.replace(
        "        self.tp_world_size = dist.get_world_size(group=group)\n",
        "        if group is not None:\n            self.tp_world_size = dist.get_world_size(group=group)\n        else:\n            self.tp_world_size = 1\n",
    )
    result = fix_source(src, [_cached(src, "self.tp_world_size > 1", "positive")], CONFIG, unsafe=True)
    assert result.source == src and "conditionally" in result.refused[0][1]


def test_cached_flag_name_taken_is_refused() -> None:
    src = CACHED.replace("        self.group = group\n", "        self.group = group\n        self.is_tp_parallel = 'other'\n")
    result = fix_source(src, [_cached(src, "self.tp_world_size > 1", "positive")], CONFIG, unsafe=True)
    assert result.source == src and "already exists" in result.refused[0][1]


# ------------------------------------------------------------------ predicate copies (PG107)

COPIES = """import deepspeed.comm as dist


def _tp_active(group):
    '''A copy of the predicate.'''
    return group is not None and dist.get_world_size(group=group) > 1


def _tp_idle(group=None):
    return group is None or dist.get_world_size(group) <= 1


class Layer:
    def _active(self):
        return self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1

    def forward(self, other):
        return self._active(), other._active()


def f(t, g):
    return _tp_active(g), _tp_active(group=g), _tp_idle(g), _tp_idle
"""


def _copy(src: str, name: str, calls: list[Span], group: str, negated: bool = False) -> Finding:
    start = span_of(src, f"def {name}(")
    payload = CopyPayload(name=name, calls=tuple(calls), negated=negated, param=group, method=group.startswith("self."),
                          property=False)
    return Finding("PG107", "copy", "m.py", start, group=group, kind="def", payload=payload)


def test_copy_calls_become_the_predicate_and_an_unused_copy_is_removed() -> None:
    calls = [span_of(COPIES, "_tp_active(g)"), span_of(COPIES, "_tp_active(group=g)")]
    result = fix_source(COPIES, [_copy(COPIES, "_tp_active", calls, "group")], CONFIG)
    assert "def _tp_active" not in result.source
    assert "    return pg_utils.is_parallel(g), pg_utils.is_parallel(g), _tp_idle(g), _tp_idle\n" in result.source
    assert "removed" in result.note(result.applied[0])


def test_copy_still_referenced_is_kept_and_delegates() -> None:
    calls = [span_of(COPIES, "_tp_idle(g)")]
    result = fix_source(COPIES, [_copy(COPIES, "_tp_idle", calls, "group", negated=True)], CONFIG)
    assert "def _tp_idle(group=None):\n    return not pg_utils.is_parallel(group)\n" in result.source
    assert "not pg_utils.is_parallel(g), _tp_idle\n" in result.source


def test_method_copy_binds_the_receiver() -> None:
    calls = [span_of(COPIES, "self._active()"), span_of(COPIES, "other._active()")]
    result = fix_source(COPIES, [_copy(COPIES, "_active", calls, "self.mp_group")], CONFIG)
    assert "return pg_utils.is_parallel(self.mp_group), pg_utils.is_parallel(other.mp_group)\n" in result.source
    assert "def _active" not in result.source


def test_decorated_copy_is_kept() -> None:
    src = DIST + "@register\ndef _tp(g):\n    return g is not None and dist.get_world_size(g) > 1\n\n\ny = _tp(None)\n"
    result = fix_source(src, [_copy(src, "_tp", [span_of(src, "_tp(None)")], "g")], CONFIG)
    assert "def _tp(g):\n    return pg_utils.is_parallel(g)\n" in result.source
    assert "y = pg_utils.is_parallel(None)" in result.source and "decorated" in result.note(result.applied[0])


def test_copy_that_is_not_a_single_return_is_refused() -> None:
    src = DIST + "def _tp(g):\n    x = 1\n    return g is not None and dist.get_world_size(g) > 1\n\n\ny = _tp(None)\n"
    result = fix_source(src, [_copy(src, "_tp", [span_of(src, "_tp(None)")], "g")], CONFIG)
    assert result.source == src and "does more than return" in result.refused[0][1]


# ------------------------------------------------------------------ discarded contiguous (PG108)

def _contig(src: str, call: str, tensor: str = "t") -> Finding:
    payload = ContiguousPayload(tensor=tensor, statement=span_of(src, call), collective="all_reduce", result_used=False,
                                argument=span_of(src, f"{tensor}.contiguous()"), asynchronous="async_op=True" in call)
    return finding("PG108", src, call, payload, kind="call")


def test_contiguous_result_is_reduced_into_a_named_copy_and_copied_back() -> None:
    src = DIST + "def f(t, g, t_c):\n    if g:\n        dist.all_reduce(t.contiguous(), group=g)  # sum\n"
    result = fix_source(src, [_contig(src, "dist.all_reduce(t.contiguous(), group=g)")], CONFIG, unsafe=True)
    assert result.source.endswith(
        "        t_c2 = t.contiguous()\n        dist.all_reduce(t_c2, group=g)  # sum\n        t.copy_(t_c2)\n"
    )
    assert IMPORT not in result.source  # the predicate is not used by this fix
    assert "not contiguous" in fix_source(src, [_contig(src, "dist.all_reduce(t.contiguous(), group=g)")], CONFIG).refused[0][1]


@pytest.mark.parametrize(
    ("src", "call", "tensor", "reason"),
    [
        ("def f(t, g):\n    dist.all_reduce(t.contiguous(), group=g, async_op=True)\n", "dist.all_reduce(t.contiguous(), group=g, async_op=True)", "t", "async_op"),
        ("def f(t, g):\n    dist.all_reduce(t().contiguous(), group=g)\n", "dist.all_reduce(t().contiguous(), group=g)", "t()", "evaluated twice"),
    ],
)
def test_contiguous_fix_refused_where_copy_back_is_wrong(src: str, call: str, tensor: str, reason: str) -> None:
    result = fix_source(src, [_contig(src, call, tensor)], CONFIG, unsafe=True)
    assert result.source == src and reason in result.refused[0][1]


def test_wrap_and_contiguous_on_one_statement_compose() -> None:
    src = DIST + "def f(t, g=None):\n    dist.all_reduce(t.contiguous(), group=g)\n"
    call = "dist.all_reduce(t.contiguous(), group=g)"
    result = fix_source(src, [_unguarded(src, call), _contig(src, call)], CONFIG, unsafe=True)
    assert result.source.endswith(
        "    if pg_utils.is_parallel(g):\n        t_c = t.contiguous()\n        dist.all_reduce(t_c, group=g)\n        t.copy_(t_c)\n"
    )
    assert len(result.applied) == 2


# ------------------------------------------------------------------ bad input never crashes the run

def test_unparseable_source_refuses_everything_and_changes_nothing() -> None:
    src = DIST + "def f(:\n"
    f = Finding("PG101", "", "m.py", Span(1, 0, 1, 1), group="g", kind="and")
    result = fix_source(src, [f], CONFIG)
    assert result.source == src and "does not parse" in result.refused[0][1]


def test_bad_findings_are_refused_one_by_one_and_good_ones_still_apply() -> None:
    src = DIST + "def f(g):\n    if g is not None and dist.get_world_size(g) > 1:\n        pass\n"
    good = guard(src, "g is not None", "dist.get_world_size(g) > 1")
    no_payload = Finding("PG101", "", "m.py", good.span, group="g", kind="and")
    nowhere = Finding("PG103", "", "m.py", Span(3, 8, 3, 20), group="g", kind="positive", payload=_none_only("g"))  # `is not None`
    unknown = Finding("PG199", "", "m.py", good.span, group="g")
    outside = Finding("PG104", "", "m.py", Span(40, 0, 40, 3), group="g", kind="positive", payload=_size_only())
    result = fix_source(src, [no_payload, nowhere, unknown, outside, good], CONFIG, unsafe=True)
    assert result.applied == [good] and "pg_utils.is_parallel(g)" in result.source
    reasons = dict((f.code, why) for f, why in result.refused)
    assert "PG101 finding carries no payload, not a GuardPayload" in reasons["PG101"]
    assert "does not parse" in reasons["PG103"]
    assert "no automatic fix" in reasons["PG199"]
    assert "outside the file" in reasons["PG104"]


WRONG_PAYLOAD = [
    ("PG101", "and", "GuardPayload"),
    ("PG102", "or", "GuardPayload"),
    ("PG101", "split", "SplitGuardPayload"),
    ("PG103", "positive", "NoneOnlyPayload"),
    ("PG104", "positive", "SizeOnlyPayload"),
    ("PG105", "call", "UnguardedPayload"),
    ("PG106", "positive", "CachedSizePayload"),
    ("PG107", "def", "CopyPayload"),
    ("PG108", "call", "ContiguousPayload"),
]


@pytest.mark.parametrize(("code", "kind", "expected"), WRONG_PAYLOAD)
def test_a_missing_or_wrong_payload_type_is_refused_with_the_type_it_needs(code: str, kind: str, expected: str) -> None:
    src = DIST + "def f(t, g=None):\n    if g is not None and dist.get_world_size(g) > 1:\n        dist.all_reduce(t, group=g)\n"
    span = span_of(src, "g is not None and dist.get_world_size(g) > 1")
    wrong: Payload = ContiguousPayload(tensor="t", statement=span, collective="all_reduce", result_used=False,
                                       argument=span, asynchronous=False)
    if expected == "ContiguousPayload":
        wrong = _none_only("g is not None")
    for payload, got in ((None, "no payload"), (wrong, f"a {type(wrong).__name__}")):
        f = Finding(code, "", "m.py", span, group="g", kind=kind, payload=payload)
        result = fix_source(src, [f], CONFIG, unsafe=True)
        assert result.source == src and not result.applied
        assert result.refused[0][1].startswith(f"{code} finding carries {got}, not a {expected}"), result.refused


def test_a_split_guard_is_refused_naming_the_lines_to_merge() -> None:
    src = DIST + "def f(t, g=None):\n    if g is None:\n        return\n    if dist.get_world_size(g) > 1:\n        dist.all_reduce(t, group=g)\n"
    none, size = span_of(src, "g is None"), span_of(src, "dist.get_world_size(g) > 1")
    payload = SplitGuardPayload(none_check=none, size_check=size, none_test=none, size_test=size, none_negated=True,
                                size_negated=False, op=">", bound=1, nonmember_bug=False, collective="all_reduce")
    f = Finding("PG101", "", "m.py", none, group="g", kind="split", payload=payload)
    result = fix_source(src, [f], CONFIG, unsafe=True)
    assert result.source == src
    assert "split over several statements (lines 3 and 5)" in result.refused[0][1]
    assert "`pg_utils.is_parallel(g)`" in result.refused[0][1]


def test_a_single_rank_test_of_a_none_safe_size_reads_not_is_parallel_and_its_not_goes_with_the_fix() -> None:
    from bot.analyze import analyze_source

    src = DIST + ("def f(t, g=None):\n    n = dist.get_world_size(g) if g is not None else 1\n"
                  "    if not (n <= 1):\n        dist.all_reduce(t, group=g)\n")
    [finding] = analyze_source("m.py", src, CONFIG).findings
    assert finding.code == "PG101" and "use `not pg_utils.is_parallel(g)`" in finding.message
    result = fix_source(src, [finding], CONFIG)  # `<= 1` is False for a non-member too: safe
    assert "    if pg_utils.is_parallel(g):\n" in result.source and "not (" not in result.source
    assert "n = dist.get_world_size(g) if g is not None else 1" in result.source  # the size stays


def test_a_none_safe_size_of_an_attribute_is_left_to_a_person() -> None:
    from bot.analyze import analyze_source

    src = DIST + ("class C:\n    def __init__(self):\n        self.n = 1\n    def setup(self, g=None):\n"
                  "        self.g = g\n        if g is not None:\n            self.n = dist.get_world_size(g)\n"
                  "    def step(self, t):\n        if self.n > 1:\n            dist.all_reduce(t, group=self.g)\n")
    findings = analyze_source("m.py", src, CONFIG).findings
    assert [f.code for f in findings] == ["PG101"]
    result = fix_source(src, findings, CONFIG, unsafe=True)
    assert result.source == src and "check that the group is defined wherever the size is" in result.refused[0][1]


def test_span_that_is_not_a_node_is_refused() -> None:
    src = DIST + "def f(g):\n    if (g is not None and dist.get_world_size(g) > 1):\n        pass\n"
    with_parens = span_of(src, "(g is not None and dist.get_world_size(g) > 1)")  # node spans exclude parens
    f = Finding("PG104", "", "m.py", with_parens, group="g", kind="positive", payload=_size_only())
    result = fix_source(src, [f], CONFIG, unsafe=True)
    assert result.source == src and "does not match any node" in result.refused[0][1]


def test_get_world_size_import_dropped_only_when_the_rewrite_left_it_unused() -> None:
    src = "from deepspeed.comm import get_world_size, all_reduce\n\n\ndef f(t, g=None):\n    if g is not None and get_world_size(g) > 1:\n        all_reduce(t, group=g)\n"
    f = guard(src, "g is not None", "get_world_size(g) > 1")
    assert fix_source(src, [f], CONFIG).source.startswith("from deepspeed.comm import pg_utils, all_reduce\n")
    still_used = src + "\n\nWS = get_world_size()\n"
    new = fix_source(still_used, [guard(still_used, "g is not None", "get_world_size(g) > 1")], CONFIG).source
    assert "get_world_size, " in new.splitlines()[0] and "pg_utils" in new.splitlines()[0]


def test_importing_the_fixer_does_not_import_libcst() -> None:
    import subprocess
    import sys

    code = "import sys, bot.fix, bot.commands.check; assert 'libcst' not in sys.modules, 'libcst imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_comments_inside_parentheses_and_on_the_kept_operand_line_survive() -> None:
    src = DIST + (
        "def f(t, g=None, flag=True):\n"
        "    if (\n        # why\n        g is not None\n        and dist.get_world_size(g) > 1  # tail\n    ):\n        pass\n"
        "    if (flag  # the flag\n            and g is not None  # present\n"
        "            and dist.get_world_size(g) > 1  # parallel\n            and t):\n        pass\n"
    )
    whole = guard(src, "g is not None", "dist.get_world_size(g) > 1")
    chain_text = src[src.index("flag  # the flag") : src.index("and t)") + 5]
    none, size = span_of(src, "g is not None", 1), span_of(src, "dist.get_world_size(g) > 1", 1)
    payload = _guard_payload(none, size, span_of(src, chain_text))
    chain = Finding("PG101", "", "m.py", Span(none.line, none.col, size.end_line, size.end_col), group="g", kind="and", payload=payload)
    result = fix_source(src, [whole, chain], CONFIG)
    assert len(result.applied) == 2, result.refused
    assert "    if (\n        # why\n        pg_utils.is_parallel(g)  # tail\n    ):\n" in result.source
    assert "    if (flag  # the flag\n            and pg_utils.is_parallel(g)  # present\n            and t):\n" in result.source


def test_two_guards_in_one_chain_are_both_rewritten_in_one_run() -> None:
    src = DIST + "def f(g, h):\n    if g is not None and dist.get_world_size(g) > 1 and h is not None and dist.get_world_size(h) > 1:\n        pass\n"
    chain = "g is not None and dist.get_world_size(g) > 1 and h is not None and dist.get_world_size(h) > 1"
    fs = [
        guard(src, "g is not None", "dist.get_world_size(g) > 1", chain=chain),
        guard(src, "h is not None", "dist.get_world_size(h) > 1", chain=chain, group="h"),
    ]
    result = fix_source(src, fs, CONFIG)
    assert len(result.applied) == 2
    assert "    if pg_utils.is_parallel(g) and pg_utils.is_parallel(h):\n" in result.source


def test_or_chain_early_exit_keeps_the_other_operand() -> None:
    src = DIST + "def f(t, g, x):\n    if x or g is None or dist.get_world_size(g) <= 1:\n        return t\n"
    f = guard(src, "g is None", "dist.get_world_size(g) <= 1", chain="x or g is None or dist.get_world_size(g) <= 1", code="PG102")
    assert "    if x or not pg_utils.is_parallel(g):\n" in fix_source(src, [f], CONFIG).source


def test_keyword_touching_an_operand_keeps_its_parentheses() -> None:
    src = DIST + "def f(g, x):\n    if x and(g is not None) and dist.get_world_size(g) > 1:\n        pass\n"
    f = guard(src, "g is not None", "dist.get_world_size(g) > 1", chain="x and(g is not None) and dist.get_world_size(g) > 1")
    result = fix_source(src, [f], CONFIG)
    assert "    if x and(pg_utils.is_parallel(g)):\n" in result.source


def test_size_read_through_a_local_name_is_evaluated_as_that_size() -> None:
    src = DIST + "def f(t, g=None):\n    ws = dist.get_world_size(group=g)\n    if ws > 1:\n        dist.all_reduce(t, group=g)\n"
    f = finding("PG104", src, "ws > 1", _size_only(via="ws"), kind="positive")
    result = fix_source(src, [f], CONFIG, unsafe=True)
    assert "    if pg_utils.is_parallel(g):\n" in result.source
    assert "None (dimension absent): old True, new False" in result.note(f)
    no_via = finding("PG104", src, "ws > 1", _size_only(), kind="positive")
    assert "depends on `ws`" in fix_source(src, [no_via], CONFIG, unsafe=True).refused[0][1]


def test_copy_never_called_in_its_file_is_kept_delegating() -> None:
    result = fix_source(COPIES, [_copy(COPIES, "_tp_active", [], "group")], CONFIG)
    assert "def _tp_active(group):\n    '''A copy of the predicate.'''\n    return pg_utils.is_parallel(group)\n" in result.source
    assert "maybe imported elsewhere" in result.note(result.applied[0])


# ------------------------------------------------------------------ split guards made one test


def _fix_found(src: str, unsafe: bool = False) -> tuple[str, list[tuple[str, str]]]:
    """What `pg-bot fix` does to the analyzer's own findings in ``src``: (new source, refusals as (code, why))."""
    from bot.analyze import analyze_source

    findings = analyze_source("m.py", src, CONFIG).findings
    result = fix_source(src, list(findings), CONFIG, unsafe=unsafe)
    return result.source, [(f.code, why) for f, why in result.refused]


ADDED = "from deepspeed.comm import pg_utils\n\n"

MERGED = [
    ("nested ifs, the outer test truthy, the body moved up a level with its comment",
     "def f(t, g=None):\n    if g:\n        # sum it\n        if dist.get_world_size(g) > 1:\n"
     "            dist.all_reduce(t, group=g)\n            t = t / 2\n    return t\n",
     "def f(t, g=None):\n    if pg_utils.is_parallel(g):\n        # sum it\n        dist.all_reduce(t, group=g)\n"
     "        t = t / 2\n    return t\n", False),
    ("nested ifs under an elif",
     "def f(t, g=None, on=False):\n    if on:\n        pass\n    elif g is not None:\n"
     "        if dist.get_world_size(group=g) >= 2:\n            dist.all_reduce(t, group=g)\n",
     "def f(t, g=None, on=False):\n    if on:\n        pass\n    elif pg_utils.is_parallel(g):\n"
     "        dist.all_reduce(t, group=g)\n", False),
    ("consecutive early exits in a loop (`< 2` is exact for a non-member)",
     "def f(ts, gs):\n    for t, g in zip(ts, gs):\n        if g is None:\n            continue\n"
     "        if dist.get_world_size(g) < 2:\n            continue\n        dist.all_reduce(t, group=g)\n",
     "def f(ts, gs):\n    for t, g in zip(ts, gs):\n        if not pg_utils.is_parallel(g):\n            continue\n"
     "        dist.all_reduce(t, group=g)\n", False),
    ("consecutive early exits, `== 1`: a non-member now returns (unsafe)",
     "def f(t, g=None):\n    if not g:\n        return t\n    if dist.get_world_size(g) == 1:\n        return t\n"
     "    dist.all_reduce(t, group=g)\n    return t\n",
     "def f(t, g=None):\n    if not pg_utils.is_parallel(g):\n        return t\n    dist.all_reduce(t, group=g)\n"
     "    return t\n", True),
]


@pytest.mark.parametrize(("name", "body", "expected", "unsafe"), MERGED, ids=[m[0] for m in MERGED])
def test_a_plain_split_guard_becomes_one_test(name: str, body: str, expected: str, unsafe: bool) -> None:
    src = DIST + body
    fixed, refused = _fix_found(src, unsafe=unsafe)
    assert fixed == DIST + ADDED + expected, fixed
    assert not refused
    if unsafe:  # not applied by default
        assert _fix_found(src)[0] == src


KEPT = [
    ("a comment on the inner `if` line would be lost",
     "def f(t, g=None):\n    if g is not None:\n        if dist.get_world_size(g) > 1:  # tp only\n"
     "            dist.all_reduce(t, group=g)\n"),
    ("the outer `if` holds more than the inner one",
     "def f(t, g=None):\n    if g is not None:\n        t = t * 2\n        if dist.get_world_size(g) > 1:\n"
     "            dist.all_reduce(t, group=g)\n"),
    ("the inner `if` has an else",
     "def f(t, g=None):\n    if g is not None:\n        if dist.get_world_size(g) > 1:\n"
     "            dist.all_reduce(t, group=g)\n        else:\n            t = t * 1\n"),
    ("the None test shares its condition with another operand",
     "def f(t, g=None, on=True):\n    if g is not None and on:\n        if dist.get_world_size(g) > 1:\n"
     "            dist.all_reduce(t, group=g)\n"),
    ("the two exits return different things",
     "def f(t, g=None):\n    if g is None:\n        return None\n    if dist.get_world_size(g) == 1:\n        return t\n"
     "    dist.all_reduce(t, group=g)\n    return t\n"),
    ("a statement between the two exits",
     "def f(t, g=None):\n    if g is None:\n        return t\n    t = t * 2\n    if dist.get_world_size(g) == 1:\n"
     "        return t\n    dist.all_reduce(t, group=g)\n    return t\n"),
    ("a comment above the second exit would be lost",
     "def f(t, g=None):\n    if g is None:\n        return t\n    # one rank: nothing to do\n"
     "    if dist.get_world_size(g) <= 1:\n        return t\n    dist.all_reduce(t, group=g)\n    return t\n"),
    ("the inner body on the `if` line",
     "def f(t, g=None):\n    if g is not None:\n        if dist.get_world_size(g) > 1: dist.all_reduce(t, group=g)\n"),
]


@pytest.mark.parametrize(("name", "body"), KEPT, ids=[k[0] for k in KEPT])
def test_other_split_guards_are_left_to_merge_by_hand(name: str, body: str) -> None:
    src = DIST + body
    fixed, refused = _fix_found(src, unsafe=True)
    assert fixed == src
    assert [code for code, _ in refused] in (["PG101"], ["PG102"]), refused
    assert any(why in refused[0][1] for why in ("merge them by hand", "its body on the `if` line")), refused
