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
])
def test_bodies_fold_into_one_test(source: str, expected: str) -> None:
    assert folded(source) == expected


@pytest.mark.parametrize("source", [
    "def p(g):\n    if g is None:\n        return False\n    log(g)\n    return ws(g) > 1",  # does something else
    "def p(g):\n    if g is None:\n        x = 1\n    return ws(g) > 1",  # an if that does not return
    "def p(g):\n    pass",
    "def p(g):\n    '''only a docstring'''",
    "def p(g):\n    if g is None:\n        return\n    return ws(g) > 1",  # a bare return is None, not a truth
])
def test_other_bodies_are_no_test(source: str) -> None:
    assert folded(source) is None


def test_negation_is_pushed_into_comparisons_and_through_and_or() -> None:
    expr = ast.parse("g is None or ws(g) == 1 or not flag", mode="eval").body
    assert ast.unparse(negation(expr)) == "g is not None and ws(g) != 1 and flag"
    assert ast.unparse(negation(ast.parse("a < b < c", mode="eval").body)) == "not a < b < c"
