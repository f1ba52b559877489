"""Score pg-bot against the hand labels in `labels/` (real code, read from fetched git snapshots) and the
labellers' own snippets in `snippets/`.

    python benchmarks/accuracy/score.py [--mirrors /work/.mirror] [--json out.json] [--show]

A labelled file is read with `git --git-dir MIRROR show COMMIT:PATH` (MIRROR = <mirrors>/<owner>+<name>/repo,
as `fetch` leaves it), never executed. pg-bot runs on exactly the files each label set lists. A finding matches a
positive label when it is in the same file and its first line lies in the label's [line, end_line]; its code must
be the label's code. A label naming several groups (`group: a / b`, one guard testing each) also takes one more
finding of its code per further group. Every finding that matches no positive label is a false positive (findings
on `ambiguous` sites are left out). Recall is per kind; precision over all findings.

Disputed sites: where two labels sit on the same statement of the same function, word for word (the same code
copied between projects, or repeated in one), but expect different findings (one kind against another, or a kind
against out-of-scope), the readers disagree about identical code and no analyzer can satisfy both. Such sites are
scored as `ambiguous` in the headline figures; the figures as labelled, disputes included, are reported beside them
(`real_as_labelled`), and `--show` lists every dispute.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
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
    disputed: bool = False  # identical code labelled otherwise elsewhere: scored as ambiguous

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
        positives = [lab for lab in labels if lab.code is not None and not lab.disputed]
        ambiguous = [lab for lab in labels if lab.kind == "ambiguous" or lab.disputed]
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


def statement_key(text: str, line: int) -> str | None:
    """Where a labelled line sits, as a key equal for word-for-word copies of its function: a digest of the
    innermost enclosing function's syntax tree (positions, comments and layout left out) and the index of the
    innermost statement holding the line among that function's statements. None outside any function or for a
    file that does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not funcs:
        return None
    func = max(funcs, key=lambda n: n.lineno)  # the innermost: nested functions start later
    stmts = [n for n in ast.walk(func) if isinstance(n, ast.stmt) and n is not func]
    holding = [i for i, n in enumerate(stmts) if n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not holding:
        return None
    index = min(holding, key=lambda i: (stmts[i].end_lineno or stmts[i].lineno) - stmts[i].lineno)
    digest = hashlib.sha1(ast.dump(func, include_attributes=False).encode()).hexdigest()
    return f"{digest}:{index}"


def disputes(keyed: list[tuple[str, Label]]) -> list[list[Label]]:
    """Groups of labels on the same statement of word-for-word copies that expect different findings (a kind's
    code, or none for out-of-scope); ambiguous labels take no side."""
    by_key: dict[str, list[Label]] = {}
    for key, lab in keyed:
        if lab.kind != "ambiguous":
            by_key.setdefault(key, []).append(lab)
    return [labs for labs in by_key.values() if len({lab.code for lab in labs}) > 1]


@dataclass
class LabelledFile:
    source: str
    path: str
    text: str
    labels: list[Label]
    findings: list[Finding]


def read_real(mirrors: Path, sources: Path, skipped: list[str]) -> list[LabelledFile]:
    """Every labelled file with its labels and pg-bot's findings on it."""
    config = load()
    out = []
    for file in sorted((ROOT / "labels").glob("*.yaml")):
        doc = yaml.safe_load(file.read_text())
        labels = labels_of(doc, file.name)
        # the project's other files, at the labelled commit, for the size helpers a file imports
        helpers = ProjectHelpers(functools.partial(read_blob, mirrors, sources, doc["repo"], doc["commit"]))
        for path in doc.get("files") or []:
            commit = (doc.get("file_commits") or {}).get(path, doc["commit"])
            text = read_blob(mirrors, sources, doc["repo"], commit, path)
            if text is None:
                skipped.append(f"{doc['repo']}:{path}")
                continue
            result = analyze_source(path, text, config, project_path=path, helpers=helpers)
            out.append(LabelledFile(file.stem, path, text, [lab for lab in labels if lab.path == path],
                                    result.findings))
    return out


def mark_disputes(files: list[LabelledFile]) -> list[list[Label]]:
    """Find the disputes among every labelled file's labels and mark their labels `disputed` in place."""
    keyed = []
    for lf in files:
        for lab in lf.labels:
            key = statement_key(lf.text, lab.line)
            if key is not None:
                keyed.append((key, lab))
    found = disputes(keyed)
    marked = {id(lab) for labs in found for lab in labs}
    for lf in files:
        lf.labels = [replace(lab, disputed=True) if id(lab) in marked else lab for lab in lf.labels]
    return found


def score_real(files: list[LabelledFile], score: Score, per_set: dict[str, Score] | None = None) -> None:
    for lf in files:
        score.add(lf.labels, lf.findings)
        if per_set is not None:
            per_set.setdefault(lf.source, Score()).add(lf.labels, lf.findings)


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
    real, as_labelled, snippets, skipped = Score(), Score(), Score(), []  # type: ignore[var-annotated]
    per_set: dict[str, Score] = {}
    files = read_real(args.mirrors, args.sources, skipped)
    score_real(files, as_labelled)
    found = mark_disputes(files)
    score_real(files, real, per_set)
    score_snippets(snippets)
    rows = {name: _row(s) for name, s in per_set.items()}
    report: dict[str, Any] = {"real": real.summary(), "real_as_labelled": as_labelled.summary(), "snippets": snippets.summary(),
              "disputed_sites": sum(len(labs) for labs in found), "skipped_files": skipped,
              "per_repository": rows}
    print(json.dumps({k: v for k, v in report.items() if k not in ("skipped_files", "per_repository")}, indent=2))
    print("| label set | sites | positives found | findings | false positives |")
    print("|---|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['sites']} | {row['found']} | {row['findings']} | {row['false_positives']} |")
    if skipped:
        print(f"skipped {len(skipped)} files (no mirror): {skipped[:5]}...")
    if args.show:
        for labs in found:
            print("DISPUTE " + "; ".join(f"{lab.source} {lab.path}:{lab.line} {lab.kind}" for lab in labs))
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
