"""Score pg-bot against the hand labels in `labels/` (real code, read from fetched git snapshots) and the
labellers' own snippets in `snippets/`.

    python benchmarks/accuracy/score.py [--mirrors /work/.mirror] [--json out.json] [--show]

A labelled file is read with `git --git-dir MIRROR show COMMIT:PATH` (MIRROR = <mirrors>/<owner>+<name>/repo,
as `fetch` leaves it), never executed. pg-bot runs on exactly the files each label set lists. A finding matches a
positive label when it is in the same file and its first line lies in the label's [line, end_line]; its code must
be the label's code. A label naming several groups (`group: a / b`, one guard testing each) also takes one more
finding of its code per further group. Every finding that matches no positive label is a false positive (findings
on `ambiguous` sites are left out). Recall is per kind; precision over all findings.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parents[1]))

from bot.analyze import analyze_source  # noqa: E402
from bot.analyze.elsewhere import ProjectHelpers  # noqa: E402
from bot.config import load  # noqa: E402
from bot.model import Finding  # noqa: E402

KIND_CODE = {
    "full-guard": "PG101",
    "full-early-exit": "PG102",
    "none-only-guard": "PG103",
    "size-only-guard": "PG104",
    "unguarded-optional": "PG105",
    "cached-size-guard": "PG106",
    "predicate-copy": "PG107",
    "discarded-contiguous": "PG108",
}
FULL = {"full-guard", "full-early-exit"}


@dataclass(frozen=True)
class Label:
    source: str  # label set or snippet file
    path: str
    line: int
    end_line: int
    kind: str
    note: str = ""
    groups: int = 1  # a guard of several groups (`group: a / b`) stands for one finding per group

    @property
    def code(self) -> str | None:
        return KIND_CODE.get(self.kind)

    def covers(self, f: Finding) -> bool:
        return self.line <= f.span.line <= self.end_line or f.span.line <= self.line <= f.span.end_line


@dataclass
class Score:
    found: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    wrong_code: list[tuple[Label, Finding]] = field(default_factory=list)
    misses: list[Label] = field(default_factory=list)
    false_positives: list[tuple[Finding, Label | None]] = field(default_factory=list)
    true_positives: int = 0
    findings: int = 0
    sites: int = 0  # labelled sites of every kind, out-of-scope and ambiguous included

    def add(self, labels: list[Label], findings: list[Finding]) -> None:
        self.sites += len(labels)
        positives = [lab for lab in labels if lab.code is not None]
        ambiguous = [lab for lab in labels if lab.kind == "ambiguous"]
        negatives = [lab for lab in labels if lab.kind == "out-of-scope"]
        used: set[int] = set()
        for lab in positives:
            self.total[lab.kind] += 1
            match = next((f for f in findings if id(f) not in used and lab.covers(f) and f.code == lab.code), None)
            match = match or next((f for f in findings if id(f) not in used and lab.covers(f)), None)
            if match is None:
                self.misses.append(lab)
                continue
            used.add(id(match))
            self.found[lab.kind] += 1
            if match.code != lab.code:
                self.wrong_code.append((lab, match))
            # the other groups' findings of the same guard are right too (counted once as a site, never as FPs)
            others = [f for f in findings if id(f) not in used and lab.covers(f) and f.code == lab.code]
            used.update(id(f) for f in others[: lab.groups - 1])
        for f in findings:
            if id(f) in used:
                continue
            if any(lab.covers(f) for lab in ambiguous):
                continue
            self.false_positives.append((f, next((lab for lab in negatives if lab.covers(f)), None)))
        self.findings += sum(1 for f in findings if id(f) in used) + len(
            [f for f in findings if id(f) not in used and not any(lab.covers(f) for lab in ambiguous)])
        self.true_positives += len(used)

    def summary(self) -> dict[str, Any]:
        full_total = sum(self.total[k] for k in FULL)
        full_found = sum(self.found[k] for k in FULL)
        all_total = sum(self.total.values())
        correct = self.true_positives - len(self.wrong_code)
        return {
            "recall_full": _ratio(full_found, full_total),
            "recall_overall": _ratio(sum(self.found.values()), all_total),
            "precision": _ratio(self.true_positives, self.findings),
            "rule_code_right": _ratio(correct, self.true_positives),
            "per_kind": {k: f"{self.found[k]}/{self.total[k]}" for k in sorted(self.total)},
            "findings": self.findings,
            "false_positives": len(self.false_positives),
            "misses": len(self.misses),
            "wrong_code": len(self.wrong_code),
        }


def _row(s: Score) -> dict[str, Any]:
    return {"sites": s.sites, "found": f"{sum(s.found.values())}/{sum(s.total.values())}",
            "findings": s.findings, "false_positives": len(s.false_positives)}


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "n/a"


def labels_of(doc: dict[str, Any], origin: str) -> list[Label]:
    out = []
    for site in doc.get("sites") or []:
        line = int(site["line"])
        out.append(Label(origin, site["path"], line, int(site.get("end_line") or line), site["kind"],
                         str(site.get("note", "")), len(str(site.get("group", "")).split(" / "))))
    return out


def read_blob(mirrors: Path, sources: Path, repo: str, commit: str, path: str) -> str | None:
    """The labelled file's text: from the fetched snapshot, or (for repositories too large to fetch) from a
    folder of copies of the labelled files made with the file index (`<sources>/<name>/<path>`, not committed)."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if git_dir.exists():
        proc = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True)
        if proc.returncode == 0:
            return proc.stdout.decode("utf-8", "replace")
    copy = sources / repo.split("/")[1].lower() / path
    return copy.read_text(encoding="utf-8", errors="replace") if copy.is_file() else None


def score_real(mirrors: Path, sources: Path, score: Score, skipped: list[str],
               per_set: dict[str, Score] | None = None) -> None:
    config = load()
    for file in sorted((ROOT / "labels").glob("*.yaml")):
        doc = yaml.safe_load(file.read_text())
        labels = labels_of(doc, file.name)
        mine = Score()
        if per_set is not None:
            per_set[file.stem] = mine
        # the project's other files, at the labelled commit, for the size helpers a file imports
        helpers = ProjectHelpers(functools.partial(read_blob, mirrors, sources, doc["repo"], doc["commit"]))
        for path in doc.get("files") or []:
            commit = (doc.get("file_commits") or {}).get(path, doc["commit"])
            text = read_blob(mirrors, sources, doc["repo"], commit, path)
            if text is None:
                skipped.append(f"{doc['repo']}:{path}")
                continue
            result = analyze_source(path, text, config, project_path=path, helpers=helpers)
            here = [lab for lab in labels if lab.path == path]
            score.add(here, result.findings)
            mine.add(here, result.findings)


def score_snippets(score: Score) -> None:
    config = load()
    for file in sorted((ROOT / "snippets").glob("*.yaml")):
        for i, snip in enumerate(yaml.safe_load(file.read_text()) or []):
            path = f"{file.stem}#{i}"
            labels = [Label(file.name, path, int(e["line"]), int(e.get("end_line") or e["line"]), e["kind"],
                            snip.get("name", "")) for e in snip.get("expect") or []]
            result = analyze_source(path, snip["source"], config)
            findings = [f for f in result.findings]
            score.add(labels, findings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--sources", type=Path, default=Path("/work/label-src"),
                        help="copies of labelled files of repositories too large to fetch: <sources>/<name>/<path>")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--show", action="store_true", help="list every miss and false positive")
    args = parser.parse_args(argv)
    real, snippets, skipped = Score(), Score(), []  # type: ignore[var-annotated]
    per_set: dict[str, Score] = {}
    score_real(args.mirrors, args.sources, real, skipped, per_set)
    score_snippets(snippets)
    report = {"real": real.summary(), "snippets": snippets.summary(), "skipped_files": skipped,
              "per_repository": {name: _row(s) for name, s in per_set.items()}}
    print(json.dumps({k: v for k, v in report.items() if k not in ("skipped_files", "per_repository")}, indent=2))
    print("| label set | sites | positives found | findings | false positives |")
    print("|---|---|---|---|---|")
    for name, row in report["per_repository"].items():
        print(f"| {name} | {row['sites']} | {row['found']} | {row['findings']} | {row['false_positives']} |")
    if skipped:
        print(f"skipped {len(skipped)} files (no mirror): {skipped[:5]}...")
    if args.show:
        for name, s in (("real", real), ("snippets", snippets)):
            for lab in s.misses:
                print(f"MISS {name} {lab.source} {lab.path}:{lab.line} {lab.kind} -- {lab.note[:90]}")
            for f, neg in s.false_positives:
                why = f" (labelled out-of-scope: {neg.note[:60]})" if neg else ""
                print(f"FP   {name} {f.path}:{f.span.line} {f.code} {f.message[:90]}{why}")
            for lab, f in s.wrong_code:
                print(f"CODE {name} {lab.path}:{lab.line} expected {lab.code} got {f.code}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
