"""Exit codes shared by every verb (the table in docs/configuration.md). No imports: `pg-bot --version` uses it."""

from __future__ import annotations

OK = 0  # clean: nothing found, nothing to change, done
FINDINGS = 1  # findings (or a file that could not be analysed), changes needed, a refused dispatch, failed tests
USAGE = 2  # usage or configuration error: bad option, bad rules.yaml / [tool.pg-bot], no token, missing path
GITHUB = 3  # the GitHub API failed (refused, not found, network, retries exhausted)
CRASH = 4  # internal error: an exception pg-bot did not expect (a bug; the traceback goes to stderr)
INTERRUPTED = 130  # Ctrl-C, as a shell reports it


class UsageError(Exception):
    """Bad command-line input or environment (e.g. no token); `bot.cli` prints it and exits USAGE."""
