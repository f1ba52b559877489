"""Path globs of rules.yaml (exemptions, areas, ci.run_all_when), matched in time linear in the path.

``*`` is any text within one folder name, ``?`` one character of it, ``**`` any text at all and ``**/`` any
number of whole folders (none included). Nothing else is special. The matcher tracks the set of positions
in the pattern that the path read so far can reach (an NFA simulation), instead of a backtracking regex:
a pattern with many stars costs length(path) x length(pattern) steps at most, never exponential time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

_LITERAL, _ONE, _STAR, _ANY, _ANY_DIRS = range(5)  # c, ?, *, **, **/


@dataclass(frozen=True)
class Glob:
    tokens: tuple[tuple[int, str], ...]
    prefix: str  # the literal text before the first wildcard: a cheap first test
    suffix: str  # the literal text after the last wildcard

    @classmethod
    def compile(cls, pattern: str) -> Glob:
        tokens: list[tuple[int, str]] = []
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                tokens.append((_ANY_DIRS, ""))
                i += 3
            elif pattern.startswith("**", i):
                tokens.append((_ANY, ""))
                i += 2
            else:
                char = pattern[i]
                tokens.append((_STAR, "") if char == "*" else (_ONE, "") if char == "?" else (_LITERAL, char))
                i += 1
        literal = [kind == _LITERAL for kind, _ in tokens]
        head = literal.index(False) if False in literal else len(tokens)
        tail = literal[::-1].index(False) if False in literal else 0
        prefix = "".join(char for _, char in tokens[:head])
        suffix = "".join(char for _, char in tokens[len(tokens) - tail :])
        return cls(tuple(tokens), prefix, suffix)

    def matches(self, path: str) -> bool:
        if len(self.prefix) == len(self.tokens):  # no wildcard at all
            return path == self.prefix
        if not path.startswith(self.prefix) or not path.endswith(self.suffix):
            return False
        # A state is the index of the next token to match; ~i (negative) means "inside the `**/` at i", a
        # state that reads any character and is left only by reading a slash.
        end = len(self.tokens)
        states = self._closure({len(self.prefix)})
        for char in path[len(self.prefix) :]:
            moved: set[int] = set()
            for state in states:
                if state < 0:
                    moved.add(state)
                    if char == "/":
                        moved.add(~state + 1)
                    continue
                if state == end:
                    continue
                kind, literal = self.tokens[state]
                if (kind == _LITERAL and char == literal) or (kind == _ONE and char != "/"):
                    moved.add(state + 1)
                elif (kind == _STAR and char != "/") or kind == _ANY:
                    moved.add(state)
            if not moved:
                return False
            states = self._closure(moved)
        return end in states

    def _closure(self, states: Iterable[int]) -> set[int]:
        """Add the states reachable without reading a character: past each wildcard (all may match nothing),
        and into the inside of each `**/` passed."""
        out: set[int] = set()
        for start in states:
            state = start
            while state not in out:
                out.add(state)
                if state < 0 or state == len(self.tokens) or self.tokens[state][0] in (_LITERAL, _ONE):
                    break
                if self.tokens[state][0] == _ANY_DIRS:
                    out.add(~state)
                state += 1
        return out


_COMPILED: dict[str, Glob] = {}


def compiled(pattern: str) -> Glob:
    """The matcher for ``pattern``, built once (patterns come from rules.yaml, a bounded set)."""
    found = _COMPILED.get(pattern)
    if found is None:
        found = _COMPILED[pattern] = Glob.compile(pattern)
    return found
