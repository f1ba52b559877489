"""Where rule links point: the review's comments and summary, SARIF's helpUri, the dashboard.

One page with an anchor per rule (``#pg101``), as docs/rules.md (`pg-bot rule --markdown`) has. The page is
``$PG_BOT_DOCS_URL`` when set (the composite action's ``docs-url`` input), else the installed package's
Project-URL "Documentation" (pyproject ``[project.urls]``): whoever publishes pg-bot decides where its links
go, and a consumer can point them at a copy it hosts, so no link names a repository by accident.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import metadata

ENV_VAR = "PG_BOT_DOCS_URL"
DISTRIBUTION = "pg-bot"
LABEL = "documentation"
# Only for a source tree that was never installed (no package metadata); tests/test_links.py keeps it equal to
# pyproject's [project.urls] Documentation.
FALLBACK = "https://github.com/deepspeedai/pg-bot/blob/main/docs/rules.md"

# A URL that cannot break out of a Markdown link target or an HTML attribute.
_WEB_URL = re.compile(r"https?://[^\s()<>\"'`\\]+")


def choose_page(environ: Mapping[str, str], project_urls: Sequence[str]) -> tuple[str, str | None]:
    """The rule page, and a warning when ``$PG_BOT_DOCS_URL`` is set but unusable. Pure."""
    warning = None
    value = environ.get(ENV_VAR, "").strip()
    if value:
        if _WEB_URL.fullmatch(value):
            return value, None
        warning = f"pg-bot: ignoring ${ENV_VAR}: {value[:80]!r} is not an http(s) URL"
    for entry in project_urls:  # "Label, URL" (core metadata Project-URL)
        label, _, url = entry.partition(",")
        if _normalised(label) == LABEL and _WEB_URL.fullmatch(url.strip()):
            return url.strip(), warning
    return FALLBACK, warning


def rule_url(code: str, page: str | None = None) -> str:
    """The link to one rule's documentation: ``page`` (default: :func:`rules_page`) at the rule's anchor."""
    base = (rules_page() if page is None else page).split("#", 1)[0]
    return f"{base}#{code.lower()}"


def rules_page() -> str:
    """The page for this run: the environment, then the package metadata (read once)."""
    page, warning = choose_page(os.environ, _project_urls())
    if warning:
        _warn_once(warning)
    return page


@cache
def _project_urls() -> tuple[str, ...]:
    try:
        return tuple(metadata.metadata(DISTRIBUTION).get_all("Project-URL") or ())
    except metadata.PackageNotFoundError:
        return ()


@cache
def _warn_once(message: str) -> None:
    print(message, file=sys.stderr)


def _normalised(label: str) -> str:
    # Project-URL labels compare case- and punctuation-insensitively (PEP 753).
    return re.sub(r"[\s\W_]+", "", label).lower()
