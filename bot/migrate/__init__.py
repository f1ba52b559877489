"""Proving a migration on the target project itself.

`predicate` (pure) plans the predicate module and its unit test that `pg-bot fix` creates when the fixed tree
imports it but lacks it; `scaffold` writes them or prints their creation diff. `imports`: import every touched
module in the target's own Python. `pytest_run` + `junit` + `compare`: per-test outcomes from pytest's JUnit XML,
before vs after. `pipeline`: copy, test, fix, check imports, test again. `report`: text and JSON. Nothing here
imports the code under test into pg-bot's own process: it runs in subprocesses of the interpreter the
maintainer names (`--python`).
"""
