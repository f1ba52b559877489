"""The README's before/after example is what `pg-bot fix` really produces."""

from __future__ import annotations

import re
from pathlib import Path

from bot import config as config_module
from bot.analyze import analyze_source
from bot.fix import fix_source

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_before_after_example_is_real() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("<!-- section:fix -->", 1)[1].split("<!-- /section:fix -->", 1)[0]
    before, after = re.findall(r"```python\n(.+?)```", section, flags=re.S)[:2]
    config = config_module.load()
    findings = analyze_source("example.py", before, config).findings
    assert findings
    assert fix_source(before, findings, config).source == after
