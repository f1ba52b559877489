"""Slicing leaves out functions the analysis does not need; it must never change a result. Each program here is
analysed with and without slicing; the awkward ones (text at the margin inside strings and brackets, tabs,
decorators over several lines, headers over several lines) must give the same findings either way."""

from __future__ import annotations

import textwrap

import pytest

import bot.analyze.source as source
from bot.analyze import analyze_source
from bot.analyze.slicing import sliced
from bot.analyze.source import ParsedSource, parse
from bot.config import load

CONFIG = load()

HEAD = "import torch.distributed as dist\nfrom typing import Optional\n"
COLD = "\n".join(f"        x{i} = helper({i})" for i in range(12))  # a method body worth cutting
LONG = "\n".join(f"        self.log({i}, 1, 2, 3, 4, 5, 6)" for i in range(6))  # no longer a short function

PROGRAMS = {
    "plain": f"""
class Layer:
    def __init__(self, group=None):
        self.group = group
    def unrelated(self):
{COLD}
    def forward(self, t):
        if self.group is not None:
            dist.all_reduce(t, group=self.group)
""",
    "string at the margin in a cold method": f'''
class Layer:
    def unrelated(self):
        doc = """
def forward(self, t):
    dist.all_reduce(t, group=None)
"""
{COLD}
    def forward(self, t, group=None):
        if group is not None:
            dist.all_reduce(t, group=group)
''',
    "bracket continued at the margin": f"""
class Layer:
    def unrelated(self):
        value = compute(1,
2, 3)
{COLD}
    def forward(self, t, group=None):
        if group is not None:
            dist.all_reduce(t, group=group)
""",
    "decorators over several lines and a header over several lines": f"""
class Layer(
    Base,
):
    @some.decorator(
        1,
    )
    def unrelated(self):
{COLD}
    @property
    def active(self):
        return self.group is not None
    def forward(self, t):
        if self.active:
            dist.all_reduce(t, group=self.group)
""",
    "a caller two levels up": f"""
def reduce(t, group):
    dist.all_reduce(t, group=group)
def middle(t, group):
    reduce(t, group)
def top(t, group=None):
    if group is not None:
        middle(t, group)
def unrelated():
{COLD}
""",
    "attribute set to None in a cold method": f"""
class Layer:
    def reset(self):
        self.tp_group = None
{LONG}
    def unrelated(self):
{COLD}
    def forward(self, t):
        dist.all_reduce(t, group=self.tp_group)
    def other(self, t):
        if self.tp_group is not None:
            dist.all_reduce(t, group=self.tp_group)
""",
    "size attribute assigned in a cold method": f"""
class Opt:
    def __init__(self):
        self.tp_size = 1
    def setup(self, tp_group=None):
        self.tp_group = tp_group
        if tp_group is not None:
            self.tp_size = dist.get_world_size(tp_group)
    def reconfigure(self):
        self.tp_size = 1
{LONG}
    def unrelated(self):
{COLD}
    def step(self, t):
        if self.tp_size > 1:
            dist.all_reduce(t, group=self.tp_group)
""",
    "a helper called through a local that names it": f"""
def _reduce(t, group):
    dist.all_reduce(t, group=group)
def _scatter(t, group):
    dist.reduce_scatter_tensor(t, t, group=group)
def unrelated():
{COLD}
def finish(t, group=None, seq=False):
    if group is not None:
        fn = _scatter if seq else _reduce
        fn(t, group)
""",
    "an autograd Function's apply under a module-level name": f"""
import torch
class _Sum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, group):
        dist.all_reduce(t, group=group)
        return t
sum_over = _Sum.apply
def unrelated():
{COLD}
def out(t, group=None):
    if group is not None:
        t = sum_over(t, group)
    return t
""",
    "tabs": "class Layer:\n\tdef unrelated(self):\n" + COLD.replace("        ", "\t\t") +
            "\n\tdef forward(self, t, group=None):\n\t\tif group is not None:\n\t\t\tdist.all_reduce(t, group=group)\n",
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_slicing_never_changes_a_result(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEAD + textwrap.dedent(PROGRAMS[name])
    monkeypatch.setattr(source, "_SLICE_MIN_CHARS", 0)  # these programs are small: slice them anyway
    with_slicing = analyze_source("m.py", text, CONFIG)
    monkeypatch.setattr(source, "sliced", lambda *args: None)
    without = analyze_source("m.py", text, CONFIG)
    assert with_slicing.error is None and without.error is None
    assert [(f.code, f.span, f.message) for f in with_slicing.findings] == \
        [(f.code, f.span, f.message) for f in without.findings]
    assert without.findings, "each program has something to find"


def _cut(text: str) -> str | None:
    from bot.analyze import _prefilter_for

    parsed = parse(text, None)
    hot = ParsedSource(text=text, tree=parsed.tree, lines=parsed.lines)
    offsets, _, _ = _prefilter_for(CONFIG).words.uses_and_aliases(text)
    hot.hot_lines = hot.lines_at(offsets)
    return sliced(text, parsed.lines, hot.hot_lines, hot.call_lines)


def test_cold_methods_are_cut_and_every_kept_line_stays_where_it_was() -> None:
    text = HEAD + textwrap.dedent(PROGRAMS["plain"])
    cut = _cut(text)
    assert cut is not None
    assert "helper(" not in cut and cut.count("\n") == text.count("\n")
    kept = [(a, b) for a, b in zip(text.split("\n"), cut.split("\n"), strict=True) if b]
    assert all(a == b for a, b in kept if b.strip() != "pass")
    assert "dist.all_reduce(t, group=self.group)" in cut and "self.group = group" in cut


def test_what_the_analysis_reads_elsewhere_is_kept() -> None:
    for name in ("attribute set to None in a cold method", "size attribute assigned in a cold method",
                 "a caller two levels up", "a helper called through a local that names it",
                 "an autograd Function's apply under a module-level name"):
        text = HEAD + textwrap.dedent(PROGRAMS[name])
        cut = _cut(text) or text
        for needed in ("self.tp_group = None", "def reconfigure", "middle(t, group)", "fn(t, group)",
                       "sum_over(t, group)"):
            if needed in text:
                assert needed in cut, (name, needed)
        assert "helper(" not in cut, name


def test_a_method_called_through_another_object_does_not_keep_its_caller() -> None:
    """Only calls the analysis can resolve to this file's functions (`f(...)`, `self.f(...)`, `cls.f(...)`)
    make a caller matter; `self.module.forward(x)` runs some other object's method."""
    text = HEAD + textwrap.dedent(f"""
    class Layer:
        def forward(self, t, group=None):
            if group is not None:
                dist.all_reduce(t, group=group)
        def through_another(self, t):
            self.module.forward(t)
    {COLD}
        def through_self(self, t):
            self.forward(t)
    {COLD}
    """)
    cut = _cut(text)
    assert cut is not None
    assert "def through_self" in cut and "self.forward(t)" in cut
    assert "def through_another" not in cut and "self.module.forward(t)" not in cut


def test_small_files_are_parsed_whole() -> None:
    from bot.analyze import _prefilter_for

    words = _prefilter_for(CONFIG).words
    small = HEAD + textwrap.dedent(PROGRAMS["plain"])
    large = small + "\n" * 2 + "\n".join(f"def cold_{i}(x):\n" + COLD.replace("        ", "    ") for i in range(40))
    assert len(small) < source._SLICE_MIN_CHARS <= len(large)
    assert not parse(small, words).trimmed
    assert parse(large, words).trimmed
