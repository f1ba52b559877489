"""The literal-led word scans find exactly what the `\\b(?:a|b)\\b` alternations they replace find."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from bot.analyze.scan import Words, first_word_hit, led

WORDS = ["reduce", "all_reduce", "reduce_scatter", "get_world_size", "barrier", "é"]
ALTERNATION = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(WORDS, key=len, reverse=True))) + r")\b")
# short pieces that make boundaries interesting: parts of words, word characters, separators, non-ASCII
PIECES = st.sampled_from(["reduce", "all_", "_scatter", "get_world_size", "barrier", "x", "_", "1", ".", "(",
                          " ", "\n", "é", "ß", "dist.", "é"])


@given(st.lists(PIECES, max_size=12).map("".join))
def test_offsets_are_the_alternations_matches(text: str) -> None:
    assert Words(WORDS).offsets(text) == [m.start() for m in ALTERNATION.finditer(text)]


@given(st.lists(PIECES, max_size=12).map("".join))
def test_search_on_text_and_bytes_agrees_with_the_alternation(text: str) -> None:
    ascii_words = Words([w for w in WORDS if w.isascii()])
    expected = re.search(r"\b(?:" + "|".join(ascii_words.words) + r")\b", text, re.ASCII) is not None
    assert ascii_words.search(text.encode()) == expected


def test_union_adds_words() -> None:
    assert (Words(["a"]) | ["b"]).offsets("a b ab") == [0, 2]


def test_first_word_hit_needs_a_boundary_in_front() -> None:
    group = led(r"group\s*=")
    assert not first_word_hit(group, "f(process_group=g)")
    assert first_word_hit(group, "f(process_group=g, group = h)")
    assert first_word_hit(group, b"f(group=g)")


def test_group_sizes_finds_group_size_calls_and_size_helpers_only() -> None:
    from bot.analyze.scan import group_sizes

    text = "a = self.tp_group.size()\nb = x.size()\nc = get_pg_size(g)\nd = get_size(g)\ne = tensor.size(0)\n"
    assert [text[o : o + 8] for o in group_sizes(text)] == ["tp_group", "get_pg_s"]


def test_imported_wrappers_are_read_off_import_statements() -> None:
    from bot.analyze.scan import imported_wrappers

    text = (
        "from .utils import all_gather_raw, helper\n"
        "from pkg.comm import (\n    reduce_scatter_coalesced as rsc,\n    GATHER_TIMER,\n)\n"
        "import pkg.gather_utils\n"
        "x = reimport(broadcast_thing)\n"
    )
    assert imported_wrappers(text) == ["all_gather_raw", "rsc"]


def test_calls_with_group_need_a_group_among_the_arguments() -> None:
    from bot.analyze.scan import Words, calls_with_group

    text = "a = all_gather_raw(t, self.process_group)\nb = all_gather_raw(t, n)\nc = all_gather_raw(\n    t,\n    pg=g)\n"
    found = calls_with_group(text, Words(["all_gather_raw"]))
    assert [text.count("\n", 0, o) + 1 for o in found] == [1, 3]


def test_names_bound_to_a_word_as_a_value() -> None:
    """`fn = dist.all_reduce` and `fn = a if flag else b` bind `fn`; a call, a keyword or a flag does not."""
    words = Words({"all_reduce", "reduce_scatter_raw", "all_reduce_raw"})
    text = (
        "op = dist.all_reduce\n"
        "    reduce_fn = reduce_scatter_raw if sp else all_reduce_raw\n"
        "out = all_reduce(t)\n"
        "f(all_reduce=True)\n"
        "self.all_reduce = flag\n"
    )
    uses, aliased, bound = words.uses_and_aliases(text)
    assert bound == {"op", "reduce_fn"} and not aliased
    assert [text.count("\n", 0, u) + 1 for u in uses] == [1, 3]


def test_wrapper_names_are_named_for_collectives_not_for_tensor_ops() -> None:
    from bot.analyze.scan import WRAPPER_NAME

    for name in ("all_gather_raw", "_fsdp_gather_tensors", "reduce_scatter_coalesced", "scatter_to_sp", "reduce_from_tp",
                 "gather", "broadcast_params"):
        assert WRAPPER_NAME.search(name), name
    for name in ("deterministic_scatter_add", "scatter_add", "my_scatter_reduce", "scatter_reduce_inplace", "gatherer"):
        assert not WRAPPER_NAME.search(name), name


def test_a_point_to_point_call_counts_only_when_it_names_a_group() -> None:
    from bot.analyze.scan import p2p_without_group

    text = "dist.send(t, dst)\ndist.send(t, dst, group=pp_group)\ndist.P2POp(dist.isend, t, peer, pg)\ndist.all_reduce(t)\n"
    starts = [text.index("send("), text.index("send(", 10), text.index("P2POp"), text.index("all_reduce")]
    assert [p2p_without_group(text, s) for s in starts] == [True, False, False, False]


def test_global_statements_start_a_line() -> None:
    from bot.analyze.scan import global_statements

    text = "def f():\n    global LAYOUT, other\n    x = 'a global value'\n    # global tp\n"
    assert [(text[o:o + 6], names) for o, names in global_statements(text)] == [("global", ["LAYOUT", "other"])]


def test_call_sites_find_calls_with_a_group_by_name_and_owner() -> None:
    from bot.analyze.scan import CallSites

    text = (
        "sync_params(model, tp_group)\n"
        "other.sync_params(x, pg)\n"          # a call through another object counts as `sync_params(` does
        "resync_params(model, tp_group)\n"    # a longer name is another name
        "utils.gather_all (t, group=g)\n"     # blanks before `(`: a call on `utils`, but not spelled `fn(`
        "utils.reduce_all(t, group=g)\n"
        "Fn.apply(x, self.ep_group)\n"
        "xutils.scatter_all(t, g)\n"          # owner `xutils`, not `utils`
        "plain(t, 1)\n"
    )
    calls = CallSites(text)
    assert calls.with_group("sync_params")
    assert not CallSites("resync_params(model, tp_group)\n").with_group("sync_params")  # a longer name
    assert calls.with_group("reduce_all", "utils")
    assert not calls.with_group("gather_all", "utils")  # spelled with a blank
    assert calls.with_group("apply", "Fn")
    assert not calls.with_group("plain")  # called, but with no group
    assert calls.called_on("utils") == {"gather_all", "reduce_all"}
    assert calls.called_on("Fn") == set()  # `apply` runs the Function, it names no function of a module
    assert calls.called_on("xutils") == {"scatter_all"}
