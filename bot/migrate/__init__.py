"""Proving a migration on the target project itself.

`predicate`: the predicate module (and its unit test) that `pg-bot fix` creates when the fixed tree imports it
but lacks it. `imports`: import every touched module in the target's own Python. `junit` / `compare`: per-test
outcomes from pytest's JUnit XML, before vs after. `pipeline`: copy, test, fix, check imports, test again.
`report`: text and JSON. Nothing here imports the code under test into pg-bot's own process: it runs in a
subprocess of the interpreter the maintainer names (`--python`).
"""
