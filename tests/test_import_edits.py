"""The predicate's import edit made on the leading statements alone equals the one made on the whole file."""

from __future__ import annotations

import pytest

from bot.fix.codemod import apply, parse
from bot.fix.suggest import _leading_import_edits, _line_edits
from bot.fix.text import split_lines

PREDICATE = ("deepspeed.comm", "pg_utils")
BODY = "\n\nclass A:\n    def f(self):\n        return 1\n\n\ndef g():\n    pass\n# trailing comment\n"
SOURCES = {
    "imports then code": "import os\nimport deepspeed.comm as dist\n" + BODY,
    "docstring first": '"""Doc."""\nimport os\n' + BODY,
    "no import at all": "x = 1\n" + BODY,
    "a from-import of the same module": "from deepspeed.comm import comm\nimport os\n" + BODY,
    "already imported": "from deepspeed.comm import pg_utils\n" + BODY,
    "an import after a class": "import os\n" + BODY + "from deepspeed.comm import comm\n",
    "only imports": "import os\nimport sys\n",
    "empty": "",
    "future import and comments": "# header\nfrom __future__ import annotations\n\n# more\nimport os\n" + BODY,
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_leading_statements_give_the_whole_files_import_edit(name: str) -> None:
    source = SOURCES[name]
    lines = split_lines(source)
    whole = _line_edits(lines, split_lines(apply(source, [], lines, PREDICATE).code))
    assert _leading_import_edits(parse(source), PREDICATE) == whole
