"""bot.analyze.returns: what a function returns, as one test."""

from __future__ import annotations

import ast

import pytest

from bot.analyze.returns import negation, returned_test


def folded(source: str) -> str | None:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    test = returned_test(function)
    return ast.unparse(test) if test is not None else None


@pytest.mark.parametrize(("source", "expected"), [
    ("def p(g):\n    return g is not None and ws(g) > 1", "g is not None and ws(g) > 1"),
    ("def p(g):\n    '''doc'''\n    if g is None:\n        return False\n    return ws(g) > 1",
     "g is not None and ws(g) > 1"),
    ("def p(g):\n    if g is None:\n        return False\n    if ws(g) == 1:\n        return False\n    return True",
     "g is not None and ws(g) != 1"),
    ("def p(g):\n    if g is None or ws(g) <= 1:\n        return False\n    return True", "g is not None and ws(g) > 1"),
    ("def p(g):\n    if g is not None and ws(g) > 1:\n        return True\n    else:\n        return False",
     "g is not None and ws(g) > 1"),
    ("def p(g):\n    if g is None:\n        return False\n    elif ws(g) < 2:\n        return False\n    else:\n"
     "        return True", "g is not None and ws(g) >= 2"),
    ("def p(g):\n    if g is None:\n        return True\n    return ws(g) == 1", "g is None or ws(g) == 1"),
    ("def p(self):\n    if self.g is None:\n        return 1\n    return ws(self.g)", "1 if self.g is None else ws(self.g)"),
    # a query held in a local, read once: read where it is read
    ("def p(g):\n    if g is None:\n        return False\n    n = dist.get_world_size(g)\n    return n > 1",
     "g is not None and dist.get_world_size(g) > 1"),
    ("def p(g):\n    n: int = get_world_size(group=g)\n    if g is None:\n        return False\n    return n > 1",
     "g is not None and get_world_size(group=g) > 1"),
    ("def p(g):\n    n = g.size() if g is not None else 1\n    if n <= 1:\n        return False\n    return True",
     "(g.size() if g is not None else 1) > 1"),
    ("def p(self):\n    g = self.tp_group\n    n = dist.get_world_size(g)\n    return g is not None and n > 1",
     "self.tp_group is not None and dist.get_world_size(self.tp_group) > 1"),
])
def test_bodies_fold_into_one_test(source: str, expected: str) -> None:
    assert folded(source) == expected


@pytest.mark.parametrize("source", [
    "def p(g):\n    if g is None:\n        return False\n    log(g)\n    return ws(g) > 1",  # does something else
    "def p(g):\n    if g is None:\n        x = 1\n    return ws(g) > 1",  # an if that does not return
    "def p(g):\n    pass",
    "def p(g):\n    '''only a docstring'''",
    "def p(g):\n    if g is None:\n        return\n    return ws(g) > 1",  # a bare return is None, not a truth
    # locals that are not one query read once
    "def p(g):\n    n = g.size()\n    return n > 1 and n < 8",  # read twice
    "def p(g):\n    n = g.size()\n    n = n - 1\n    return n > 0",  # bound twice
    "def p(g):\n    n = sync(g)\n    return n > 1",  # a call that may act
    "def p(g):\n    g = g.size()\n    return g > 1",  # a parameter rebound
    "def p(g):\n    if g is None:\n        return n > 1\n    n = g.size()\n    return False",  # read before bound
])
def test_other_bodies_are_no_test(source: str) -> None:
    assert folded(source) is None


def test_an_inlined_local_leaves_the_function_as_it_was() -> None:
    function = ast.parse("def p(g):\n    if g is None:\n        return False\n    n = g.size()\n    return n > 1").body[0]
    assert isinstance(function, ast.FunctionDef)
    before = ast.dump(function, include_attributes=True)
    test = returned_test(function)
    assert test is not None
    assert ast.dump(function, include_attributes=True) == before
    # the query read in place is the body's own node (its span is where it is written)
    assigned = function.body[1]
    assert isinstance(assigned, ast.Assign)
    assert any(n is assigned.value for n in ast.walk(test))


def test_negation_is_pushed_into_comparisons_and_through_and_or() -> None:
    expr = ast.parse("g is None or ws(g) == 1 or not flag", mode="eval").body
    assert ast.unparse(negation(expr)) == "g is not None and ws(g) != 1 and flag"
    assert ast.unparse(negation(ast.parse("a < b < c", mode="eval").body)) == "not a < b < c"
