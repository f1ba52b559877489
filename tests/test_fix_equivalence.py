"""The equivalence proof interprets the old and new guard ASTs over an allow-list under the four group states;
anything outside the allow-list is `Unprovable`, and nothing is ever evaluated."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import pg_utils.predicate as reference
from bot import config as config_module
from bot.fix import equivalence
from bot.fix.equivalence import STATES, WORLD_SIZE, Unprovable, Vocabulary, compare

CONFIG = config_module.load()
HEADER = (
    "import deepspeed.comm as dist\nimport torch.distributed\nimport torch\n"
    "from deepspeed.comm import get_world_size\nfrom deepspeed.comm import pg_utils\n"
)
VOCABULARY = Vocabulary.of(ast.parse(HEADER), CONFIG)
P = "pg_utils.is_parallel(g)"
NOT_P = "not pg_utils.is_parallel(g)"


def check(old: str, new: str = P, group: str = "g", **kwargs: object) -> equivalence.Comparison:
    return compare(old, new, group, VOCABULARY, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "old",
    [
        "g is not None and dist.get_world_size(g) > 1",
        "g is not None and dist.get_world_size(group=g) > 1",
        "g is not None and get_world_size(group=g) >= 2",
        "g is not None and 1 < torch.distributed.get_world_size(g)",
        "g != None and dist.get_world_size(g) > 1",
        "None is not g and 2 <= dist.get_world_size(g)",
        "not (g is None) and not dist.get_world_size(g) <= 1",
        "g is not None and -dist.get_world_size(g) < -1",
        "(g is not None\n  # a comment inside the guard\n  and dist.get_world_size(group=g) > 1)",
        "pg_utils.is_parallel(g)",
    ],
)
def test_full_guard_spellings_are_equivalent(old: str) -> None:
    result = check(old)
    assert result.equivalent, result.describe()


@pytest.mark.parametrize(
    "old",
    ["g is None or dist.get_world_size(g) <= 1", "g is None or dist.get_world_size(group=g) < 2", "not g or 2 > get_world_size(g)"],
)
def test_early_exit_spellings_are_equivalent_to_the_negation(old: str) -> None:
    assert check(old, NOT_P).equivalent
    assert not check(old, P).equivalent  # the check really distinguishes the two


def test_not_equal_one_differs_exactly_for_a_non_member() -> None:
    result = check("g is not None and dist.get_world_size(g) != 1")
    assert [o.state.name for o in result.differing] == ["non-member group (size -1)"]
    assert "non-member" in result.describe() and "old True, new False" in result.describe()
    assert result.preserves_parallel


def test_size_only_guard_differs_for_none_because_none_means_the_world() -> None:
    result = check("dist.get_world_size(group=g) > 1")
    assert [o.state.present for o in result.differing] == [False]
    assert result.differing[0].old is (WORLD_SIZE > 1)


def test_none_only_guard_and_truthiness_differ_for_single_rank_and_non_member() -> None:
    for old in ("g is not None", "g", "g != None", "not not g"):
        assert {o.state.size for o in check(old).differing} == {-1, 1}, old


def test_attribute_group_is_a_symbol_and_another_group_is_not_it() -> None:
    old = "self.mp_group is not None and dist.get_world_size(group=self.mp_group) > 1"
    assert check(old, "pg_utils.is_parallel(self.mp_group)", "self.mp_group").equivalent
    with pytest.raises(Unprovable, match=re.escape("called on `self.b`, not on the group `self.a`")):
        check("self.a is not None and dist.get_world_size(group=self.b) > 1", "pg_utils.is_parallel(self.a)", "self.a")


def test_substitution_stands_a_cached_size_for_its_assignment() -> None:
    result = check("self.ws > 1", substitutions={"self.ws": "dist.get_world_size(group=g)"})
    assert [o.state.present for o in result.differing] == [False]
    with pytest.raises(Unprovable, match="more than the group"):
        check("self.ws > 1", substitutions={"self.ws": "dist.get_world_size(group=g, _=f())"})


def test_a_name_known_to_hold_the_size_reads_as_the_size() -> None:
    assert [o.state.present for o in check("ws > 1", sizes=["ws"]).differing] == [False]


def test_opaque_operands_are_enumerated_and_named_where_the_rewrite_differs() -> None:
    old = ast.parse("(a and g is not None and dist.get_world_size(g) != 1)", mode="eval").body
    new = ast.parse(f"(a and {P})", mode="eval").body
    result = check(old, new, opaque={"a": "`flag`"})  # type: ignore[arg-type]
    assert len(result.outcomes) == 2 * len(STATES)  # every state x (True, False)
    [differs] = result.differing
    assert differs.state.size == -1 and differs.assumed == (("`flag`", True),)
    assert "(when `flag` is True)" in result.describe()
    assert check(ast.parse("(a or g is None or dist.get_world_size(g) <= 1)", mode="eval").body,  # type: ignore[arg-type]
                 ast.parse(f"(a or {NOT_P})", mode="eval").body, opaque={"a": "a"}).equivalent


def test_a_changed_multi_rank_outcome_is_detected() -> None:
    assert not check("g is not None and dist.get_world_size(g) > 4").preserves_parallel


@pytest.mark.parametrize(
    ("old", "message"),
    [
        ("flag and g is not None", "depends on `flag` besides the group `g`"),
        ("g is not None and len(g) > 1", "call to `len`"),
        ("g is not None and dist.get_world_size(group=g, _=open('x', 'w')) > 1", "called with more than the group"),
        ("g is not None and dist.get_world_size(g, 0) > 1", "called with more than the group"),
        ("g is not None and dist.get_world_size(*[g]) > 1", "more than the group"),
        ("g is not None and dist.get_world_size() > 1", "more than the group"),
        ("g is not None and dist.get_world_size(None) > 1", "called on `None`"),
        ("g is not None and dist.get_world_size(h) > 1", "called on `h`"),
        ("g is not None and somewhere.get_world_size(g) > 1", "call to `somewhere.get_world_size`"),
        ("g is not None and dist.get_world_size(g).bit_length() > 1", "call to"),
        ("g is not None and dist.get_world_size(g)[0] > 1", "a subscript"),
        ("g is not None and [x for x in g]", "a comprehension"),
        ("g is not None and (n := dist.get_world_size(g)) > 1", "an assignment expression"),
        ("g is not None and dist.get_world_size(g) + 0 > 1", "arithmetic"),
        ("g is not None and dist.get_world_size(g) > 1.0", "the constant `1.0`"),
        ("g is not None and dist.get_world_size(g) in (2, 4)", "only is/==/!="),
        ("g is not None and dist.get_world_size(g) > 'a'", "the constant"),
        ("().__class__.__base__.__subclasses__()", "call to"),
        ("g.size(0) > 1", "call to `g.size`"),  # one dimension of a mesh, not the group's size
        ("g is not None and (", "does not parse"),
        ("g is not None and dist.get_world_size(g) is 4", "`is` on an integer"),
        ("g is not None and dist.get_world_size(g) == True", "different kinds"),
        ("False and open('x', 'w')", "call to `open`"),  # vetted even where it would never run
    ],
)
def test_anything_outside_the_allow_list_is_unprovable_and_says_what(old: str, message: str) -> None:
    with pytest.raises(Unprovable, match=re.escape(message)):
        check(old)


def test_the_group_must_be_a_name_or_attribute_chain() -> None:
    with pytest.raises(Unprovable, match="not a name or attribute"):
        check("g() is not None", "pg_utils.is_parallel(g())", "g()")


def test_size_function_and_predicate_are_resolved_through_the_files_imports() -> None:
    other = Vocabulary.of(ast.parse("import somewhere_else as dist\nfrom mylib import get_world_size\n"), CONFIG)
    for old in ("g is not None and dist.get_world_size(g) > 1", "g is not None and get_world_size(g) > 1"):
        with pytest.raises(Unprovable, match="call to"):
            compare(old, P, "g", other)
    renamed = Vocabulary.of(ast.parse("from deepspeed.comm import get_world_size as ws\n"), CONFIG)
    assert compare("g is not None and ws(g) > 1", P, "g", renamed).equivalent
    custom = config_module.parse("version: 1\npredicate: {module: mylib.comm, name: pgu, function: active}\n")
    vocabulary = Vocabulary.of(ast.parse(HEADER), custom)
    assert compare("g is not None and get_world_size(g) > 1", "pgu.active(g)", "g", vocabulary).equivalent


def test_deep_nesting_is_unprovable_not_a_crash() -> None:
    deep = "not " * 3000 + "g"
    with pytest.raises(Unprovable, match="nested"):
        check(deep)


def test_the_interpreters_predicate_agrees_with_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """`is_parallel` as interpreted for each state equals pg_utils.is_parallel given torch's sizes."""
    for state in STATES:
        group = object() if state.present else None

        def world_size(group: object = None, _state: equivalence.State = state) -> int:
            return WORLD_SIZE if group is None else _state.size

        monkeypatch.setattr(reference, "_comm", lambda ws=world_size: SimpleNamespace(get_world_size=ws))
        interpreted = {o.new for o in check("True").outcomes if o.state is state}
        assert interpreted == {reference.is_parallel(group)}, state


def test_nothing_in_the_fixer_compiles_or_evaluates_text() -> None:
    """The house rule, checked on the source of bot/fix: no compile/eval/exec and no namespace tricks."""
    names = {"compile", "eval", "exec", "SimpleNamespace", "__import__", "__builtins__"}
    attributes = {"eval", "exec", "SimpleNamespace", "__import__", "__builtins__"}  # re.compile is fine
    for path in sorted((Path(equivalence.__file__).parent).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & names
        used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} & attributes
        assert not used, (path.name, used)


def test_an_upper_bound_on_the_size_is_not_the_predicate() -> None:
    """`1 < ws(g) < 100` agrees with the predicate up to 99 ranks; a large group is where it differs."""
    result = check("g is not None and 1 < dist.get_world_size(g) < 100")
    assert not result.equivalent
    assert [o.state.name for o in result.differing] == ["large group (size 1024)"]


@pytest.mark.parametrize(("old", "new"), [("g is not None and g.size() > 1", P), ("g is None or g.size() <= 1", NOT_P)])
def test_the_groups_own_size_differs_only_where_it_raises(old: str, new: str) -> None:
    """`g.size()` is g's world size where g is a group of this rank; it raises for torch's non-member placeholder
    (an int), which the predicate answers instead: the rewrite changes that case alone, by design."""
    result = check(old, new)
    assert result.preserves_parallel and not result.equivalent
    [differs] = result.differing
    assert differs.state is STATES[1] and differs.old_raises is not None and "not in" in differs.old_raises
    assert "old raises" in result.describe()


@pytest.mark.parametrize("old", ["g is not None and g.size(0) > 1", "g is not None and h.size() > 1",
                                 "g is not None and g.size(dim=1) > 1"])
def test_a_size_with_arguments_or_of_another_object_is_unprovable(old: str) -> None:
    with pytest.raises(Unprovable):
        check(old)


def test_a_bare_size_on_a_possibly_none_group_raises_for_none_too() -> None:
    result = check("g.size() > 1")
    raised = {o.state.name for o in result.outcomes if o.old_raises is not None}
    assert raised == {STATES[0].name, STATES[1].name}
