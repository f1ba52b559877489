"""Colour for people, plain text for everything else: on a terminal unless NO_COLOR is set; FORCE_COLOR forces it
(for CI logs that render ANSI). Files (--output-file) are never coloured. rich is imported only to colour."""

from __future__ import annotations

import os
import re
from typing import IO, Any

_FINDING = re.compile(r"(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>PG\d{3}) ")
_DIFF = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def wanted(stream: IO[str]) -> bool:
    """NO_COLOR (any non-empty value, no-color.org) wins; then FORCE_COLOR (non-empty, not 0); then a TTY."""
    if os.environ.get("NO_COLOR", ""):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _console(stream: IO[str]) -> Any:
    from rich.console import Console

    # Every line exactly as it is, with styles added: no wrapping, no markup, no highlighting of its own.
    return Console(file=stream, force_terminal=True, no_color=False, color_system="standard", highlight=False,
                   markup=False, emoji=False, soft_wrap=True)


def print_report(text: str, stream: IO[str]) -> None:
    """check's text report: path bold, rule code red, the closing line bold."""
    from rich.text import Text

    console = _console(stream)
    for line in text.split("\n"):
        styled = Text(line)
        m = _FINDING.match(line)
        if m:
            styled.stylize("bold", m.start("path"), m.end("path"))
            styled.stylize("bold red", m.start("code"), m.end("code"))
        elif line.startswith("Found "):
            styled.stylize("bold")
        console.print(styled)


def print_diff(text: str, stream: IO[str]) -> None:
    """fix's unified diff: file headers bold, hunks cyan, added lines green, removed red."""
    from rich.text import Text

    console = _console(stream)
    for line in text.splitlines():
        style = next((s for prefix, s in _DIFF if line.startswith(prefix)), "")
        console.print(Text(line, style=style))
