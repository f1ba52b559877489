"""Python 3.12 syntax made readable by an older parser, every other character in its place.

pg-bot parses with the Python it runs on; a project may be written for a newer one. Two constructs of 3.12 keep a
whole file from parsing on 3.11 although the analysis reads nothing in them: PEP 695's type parameters and alias
statements, and PEP 701's f-strings (quotes of the f-string's own kind, backslashes or comments inside a
replacement field). Both are blanked in place, so every line and column of the rest stays where it was. Tried only
after a file fails to parse.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize


def readable_on_older_python(text: str) -> str | None:
    """``text`` with both constructs blanked (f-strings first: the type parameters are found by tokenizing, which
    an old tokenizer cannot do past a new f-string), or None when neither is there."""
    bare = without_new_f_strings(text)
    typed = without_type_parameters(bare if bare is not None else text)
    return typed if typed is not None else bare


def without_new_f_strings(text: str) -> str | None:
    """``text`` with each f-string that an older parser rejects turned into a string of blanks of the same length
    (its prefix blanked, its quotes kept; one spanning lines in a one-quote string becomes `( ... )`), or None when
    there is none, or when the text's strings do not scan (left to the parser's own error)."""
    try:
        spans = list(_f_strings(text))
    except _Unscanned:
        return None
    chars = list(text)
    changed = False
    for start, quote_at, end, quote, fields in spans:
        literal = text[start:end]
        if _parses(literal) or not all(_parses(_expression(text[a:b])) for a, b in fields):
            continue  # an older parser reads it as it is; or it is broken on every Python: its error stays
        body = range(quote_at + len(quote), end - len(quote))
        if len(quote) == 1 and "\n" in literal:  # a one-quote string cannot hold the line ends: an empty tuple can
            chars[start] = "("
            for k in range(start + 1, end - 1):
                if chars[k] not in "\r\n":
                    chars[k] = " "
            chars[end - 1] = ")"
        else:
            for k in itertools.chain(range(start, quote_at), body):
                if chars[k] not in "\r\n":
                    chars[k] = " "
        changed = True
    return "".join(chars) if changed else None


def _parses(expression: str) -> bool:
    try:
        ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _expression(field: str) -> str:
    """A replacement field's expression as an older parser reads it on its own: without the `=` that asks to show
    it, in parentheses over lines (3.12 lets it span lines), its own new f-strings blanked."""
    body = field.strip()
    if body.endswith("=") and not body.endswith(("==", "!=", "<=", ">=")):
        body = body[:-1]
    bare = without_new_f_strings(body)
    return f"(\n{bare if bare is not None else body}\n)" if body else ""


class _Unscanned(Exception):
    """The text's strings end where no string can (an unterminated literal): nothing is changed."""


_PREFIX_LETTERS = frozenset("rRbBuUfF")


def _f_strings(text: str) -> list[tuple[int, int, int, str, list[tuple[int, int]]]]:
    """Every outermost f-string: (start of its prefix, its opening quote, its end, the quote, where its fields'
    expressions are), found by scanning the text's comments and string literals (an f-string's replacement fields
    as PEP 701 reads them)."""
    out: list[tuple[int, int, int, str, list[tuple[int, int]]]] = []
    found = _OPENING.search(text)
    while found is not None:
        i = found.start()
        if text[i] == "#":
            end = _line_end(text, i)
        else:
            start, prefix = _prefix(text, i)
            quote = _quote_at(text, i)
            fields: list[tuple[int, int]] = []
            end = _string_end(text, i, quote, prefix, fields)
            if "f" in prefix.lower():
                out.append((start, i, end, quote, fields))
        found = _OPENING.search(text, end)
    return out


_OPENING = re.compile("[#'\"]")  # a comment or a string literal starts here


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _prefix(text: str, quote_at: int) -> tuple[int, str]:
    """The string's prefix letters (`rb`, `f`, `Rf`) right before its quote, when they are a prefix and not the
    end of a name (`elif"x"` does not occur, `if"x"` would be the keyword)."""
    j = quote_at
    while j > 0 and quote_at - j < 2 and text[j - 1] in _PREFIX_LETTERS:
        j -= 1
    if j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        return quote_at, ""
    return j, text[j:quote_at]


def _quote_at(text: str, i: int) -> str:
    c = text[i]
    return c * 3 if text.startswith(c * 3, i) else c


def _string_end(text: str, i: int, quote: str, prefix: str, fields: list[tuple[int, int]] | None = None) -> int:
    """The offset right after the string literal whose quote opens at ``i``; where its replacement fields'
    expressions are go to ``fields``."""
    fstring = "f" in prefix.lower()
    raw = "r" in prefix.lower()
    j, size = i + len(quote), len(text)
    while j < size:
        c = text[j]
        if c == "\\":
            j += 2 if not (raw and fstring and text.startswith("{", j + 1)) else 1
            continue
        if text.startswith(quote, j):
            return j + len(quote)
        if c == "\n" and len(quote) == 1:
            raise _Unscanned
        if fstring and c == "{":
            if text.startswith("{{", j):
                j += 2
                continue
            j = _field_end(text, j + 1, fields)
            continue
        j += 1
    raise _Unscanned


def _field_end(text: str, j: int, fields: list[tuple[int, int]] | None) -> int:
    """The offset right after the `}` that closes the replacement field whose expression starts at ``j``; its
    format spec (after `:` at the field's own depth) may hold fields of its own. A conversion other than `!r`,
    `!s` or `!a` leaves the text unscanned."""
    start, depth, size = j, 0, len(text)
    while j < size:
        c = text[j]
        if c in "'\"":
            _, prefix = _prefix(text, j)
            j = _string_end(text, j, _quote_at(text, j), prefix)
            continue
        if c == "#":
            j = _line_end(text, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]" or (c == "}" and depth > 0):
            depth -= 1
        elif c == "}" or (c == ":" and depth == 0):
            if fields is not None:
                fields.append((start, j))
            return j + 1 if c == "}" else _spec_end(text, j + 1, fields)
        elif c == "!" and depth == 0 and not text.startswith("=", j + 1):
            if text[j + 1 : j + 2] not in ("r", "s", "a") or text[j + 2 : j + 3] not in (":", "}"):
                raise _Unscanned
            if fields is not None:
                fields.append((start, j))
            return j + 3 if text[j + 2] == "}" else _spec_end(text, j + 3, fields)
        j += 1
    raise _Unscanned


def _spec_end(text: str, j: int, fields: list[tuple[int, int]] | None) -> int:
    size = len(text)
    while j < size:
        c = text[j]
        if c == "{":
            j = _field_end(text, j + 1, fields)
            continue
        if c == "}":
            return j + 1
        if c == "\n":
            raise _Unscanned
        j += 1
    raise _Unscanned


def without_type_parameters(text: str) -> str | None:
    """``text`` with PEP 695's syntax (Python 3.12) made readable by an older parser, every other character in its
    place: the type parameters of a class or function (`class Block[C: Config](Base[C]):`) become blanks, and a
    type alias statement (`type Pair[T] = tuple[T, T]`) an annotated assignment to `_` (`_:  Pair    = ...`).
    None when there is none (or the text does not tokenize). The analysis reads none of them."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    starts = [0, *itertools.accumulate(len(line) for line in io.StringIO(text).readlines())]

    def at(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    chars = list(text)
    changed = False

    def blank_brackets(i: int) -> None:  # tokens[i] is the `[`: blank through its matching `]`
        nonlocal changed
        depth = 0
        for j in range(i, len(tokens)):
            if tokens[j].type == tokenize.OP and tokens[j].string in "[]":
                depth += 1 if tokens[j].string == "[" else -1
                if depth == 0:
                    for k in range(at(tokens[i].start), at(tokens[j].end)):
                        if chars[k] not in "\r\n":
                            chars[k] = " "
                    changed = True
                    return

    line_start = True  # the token opens a logical line
    for i, tok in enumerate(tokens[:-2]):
        following, after = tokens[i + 1], tokens[i + 2]
        if tok.type == tokenize.NAME and tok.string in ("class", "def") and following.type == tokenize.NAME \
                and after.type == tokenize.OP and after.string == "[":
            blank_brackets(i + 2)
        elif line_start and tok.type == tokenize.NAME and tok.string == "type" and following.type == tokenize.NAME \
                and after.type == tokenize.OP and after.string in ("=", "["):
            chars[at(tok.start) : at(tok.end)] = "_:  "
            changed = True
            if after.string == "[":
                blank_brackets(i + 2)
        line_start = tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT) \
            or (tok.type == tokenize.OP and tok.string == ";")
    return "".join(chars) if changed else None


