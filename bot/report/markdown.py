"""Untrusted text into GitHub Markdown, inert: the one place that quotes code, file names and PR-derived prose.

Everything pg-bot posts under its name that echoes the pull request (file names, group expressions, finding
messages quoting code, suggestions) goes through here, so that PR content can never render as markup (bold,
links, images, HTML), mention or reference anyone, or form a hidden ``<!--`` comment or pg-bot marker:

- ``code_span``: inline code whose fence is longer than any backtick run inside (padded with a space when the
  text starts or ends with a backtick), with line breaks and other control characters shown as escapes (a blank
  line would end the span) and a zero-width space after ``@`` (no mention, whatever the renderer).
- ``code_block``: a fenced block whose fence is longer than any backtick run inside (``suggestion`` blocks too).
- ``prose``: a message that quotes code in backticks, as a finding's: each code span (as CommonMark pairs
  backtick runs) is re-quoted with ``code_span``; the text between them is escaped so that nothing in it is
  markup, even when backticks in the quoted code shifted where the spans start and end.

``<!--`` never appears in the output: a zero-width space is put after ``<!`` (in a code block it would be
harmless Markdown, but a marker must never be something PR content can write).
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
_BACKTICKS = re.compile(r"`+")
# What could start markup or an HTML entity in running text (``![`` needs its ``[``). Backslash escapes are
# CommonMark's for any ASCII punctuation, so the text renders as it reads.
_MARKUP = re.compile(r"[\\`*_\[\]<>&~|#]")
# What GitHub turns into a link by itself (``scheme://...``, ``www.``): broken by a zero-width space, which holds
# whichever stage of the renderer does the linking.
# What opens a block at the start of a line once the characters above are escaped: a list item, a setext
# underline, a thematic break (``+``, ``-``, ``=``, ``1.`` / ``1)``).
_LINE_START = re.compile(r"^( *(?:\d{1,9})?)([-+=.)])")
_AUTOLINK = re.compile(r"(?<=:/)(?=/)|(?<=\b[Ww]{3})(?=\.)")


def defuse_comments(text: str) -> str:
    """No ``<!--`` (the start of an HTML comment, and of every pg-bot marker) survives."""
    return text.replace("<!--", f"<!{ZWSP}--")


def no_mentions(text: str) -> str:
    """``@name`` and ``#123`` from PR text neither notify anyone nor cross-reference an issue (a zero-width space
    after each ``@`` and ``#``)."""
    return text.replace("@", f"@{ZWSP}").replace("#", f"#{ZWSP}")


def visible(text: str) -> str:
    """Control characters (a newline in a file name, a lone CR) as escapes, so one line stays one line."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code < 0xA0 or ch in "\u2028\u2029":
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _fence_for(text: str, minimum: int) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    return "`" * max(minimum, longest + 1)


def code_span(text: str, limit: int | None = None) -> str:
    """``text`` as one inline code span that nothing inside it can close; cut to ``limit`` characters."""
    clean = defuse_comments(visible(text)).replace("@", f"@{ZWSP}")  # mention-proof even if code were linked
    if limit is not None and len(clean) > limit:
        clean = clean[: max(limit - 3, 0)] + "..."
    if not clean:
        return "` `"
    fence = _fence_for(clean, 1)
    # CommonMark strips one space off each end of a span that has both (and is not all spaces): pad to keep them,
    # and to keep a backtick at either end from joining the fence
    keep = clean[0] == clean[-1] == " " and clean.strip(" ")
    pad = " " if clean[0] == "`" or clean[-1] == "`" or keep else ""
    return f"{fence}{pad}{clean}{pad}{fence}"


def code_block(text: str, info: str = "", *, verbatim: bool = False) -> str:
    """A fenced block that no line of ``text`` can end early. ``verbatim`` (a ```suggestion, whose text GitHub
    applies as is) leaves ``<!--`` alone: the caller must not offer such a text as a one-click suggestion."""
    body = text if verbatim else defuse_comments(text.replace("\r\n", "\n").replace("\r", "\n"))
    fence = _fence_for(body, 3)
    return f"{fence}{info}\n{body}\n{fence}"


def escape(text: str) -> str:
    """Plain text that renders as itself: no markup, mention, reference, HTML comment or line break, and no
    block (a list item, a heading, a rule) even at the start of a line (where ``prose`` also drops leading
    spaces: four would start a code block)."""
    one_line = visible(defuse_comments(" ".join(text.splitlines())))
    inline = no_mentions(_AUTOLINK.sub(ZWSP, _MARKUP.sub(lambda m: "\\" + m.group(), one_line)))
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), inline, count=1)


def _segments(text: str) -> list[tuple[bool, str]]:
    """(is_code, content) pieces as CommonMark reads inline code: a run of n backticks opens a span that the next
    run of exactly n backticks closes; a run with no closer is literal text."""
    runs = list(_BACKTICKS.finditer(text))
    out: list[tuple[bool, str]] = []
    pos = 0  # start of the text not yet emitted
    i = 0
    while i < len(runs):
        opener = runs[i]
        closer = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opener.group())), None)
        if closer is None:
            i += 1
            continue
        if opener.start() > pos:
            out.append((False, text[pos:opener.start()]))
        content = text[opener.end():runs[closer].start()]
        if len(content) > 2 and content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]  # CommonMark strips one space each side
        out.append((True, content))
        pos = runs[closer].end()
        i = closer + 1
    if pos < len(text):
        out.append((False, text[pos:]))
    return out


def prose(text: str) -> str:
    """A message that quotes code in backticks: code spans kept (re-quoted safely), the rest ``escape``d."""
    # leading spaces mean nothing inline, and four of them at the start of a line make a code block
    return "".join(code_span(part) if is_code else escape(part) for is_code, part in _segments(text)).lstrip(" ")
