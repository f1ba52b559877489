"""Load and validate the policy: rules.yaml, .pg-bot.yaml or pyproject.toml's `[tool.pg-bot]` (one schema for
all three; docs/configuration.md). Every error names the file, the offending key and its line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot import globs
from bot.files import DEFAULT_MAX_BYTES, SourceError, read_source
from bot.model import Severity

CONFIG_NAMES = ("rules.yaml", ".pg-bot.yaml")  # in one folder these come first, then PYPROJECT
PYPROJECT = "pyproject.toml"  # counts only when it has a [tool.pg-bot] table
MAX_CONFIG_BYTES = 1024 * 1024  # the packaged policy is ~8 KB; a file near this size is no policy file
MAX_DEPTH = 32  # the schema needs 4 levels of nesting; deeper only serves to exhaust the stack
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: several times faster


class ConfigError(Exception):
    """The configuration is malformed; the message names file, line and key."""


@dataclass(frozen=True)
class Exemption:
    path: str
    reason: str
    function: str | None = None
    rules: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()  # group expressions (`self.dp_process_group`) for which None means the world

    def covers(self, path: str, code: str, function: str | None, group: str | None = None) -> bool:
        if not path_matches(path, self.path):
            return False
        if self.rules and code not in self.rules:
            return False
        if self.groups and group not in self.groups:
            return False
        return self.function is None or self.function == function


@dataclass(frozen=True)
class Area:
    name: str
    title: str
    paths: tuple[str, ...]
    tests: tuple[str, ...] = ()

    def matches(self, path: str) -> bool:
        return any(path_matches(path, pattern) for pattern in self.paths)


@dataclass(frozen=True)
class RuleSetting:
    enabled: bool = True
    severity: Severity = Severity.ERROR


@dataclass(frozen=True)
class CIConfig:
    label: str = "ci/xpu-distributed"
    workflow: str = "xpu-distributed.yml"
    workflow_ref: str = "master"
    on_synchronize: str = "remove-label"
    test_root: str = "tests"
    full_suite: tuple[str, ...] = ("tests",)
    max_test_paths: int = 32
    run_all_when: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReviewConfig:
    summary: str = "when-findings"  # or "always": when `pg-bot review` posts its sticky summary comment


@dataclass(frozen=True)
class Config:
    comm_modules: tuple[str, ...]
    collectives: frozenset[str]
    inplace_collectives: frozenset[str]
    predicate_module: str
    predicate_name: str
    predicate_function: str
    rules: dict[str, RuleSetting] = field(default_factory=dict)
    exemptions: tuple[Exemption, ...] = ()
    areas: tuple[Area, ...] = ()
    ci: CIConfig = field(default_factory=CIConfig)
    review: ReviewConfig = field(default_factory=ReviewConfig)
    max_file_bytes: int = DEFAULT_MAX_BYTES  # larger source files are reported (PG000), never read
    # functions that return a group's world size (last name, in a comm module, or fully qualified elsewhere)
    size_functions: tuple[str, ...] = ("get_world_size",)
    # name globs of groups for which None means "this dimension is absent" (evidence for PG105, medium confidence)
    absent_groups: tuple[str, ...] = ()
    source: str = "<defaults>"

    @property
    def predicate_import(self) -> str:
        return f"from {self.predicate_module} import {self.predicate_name}"

    @property
    def predicate_call(self) -> str:
        return f"{self.predicate_name}.{self.predicate_function}"

    def rule(self, code: str) -> RuleSetting:
        return self.rules.get(code, RuleSetting())

    def exempt(self, path: str, code: str, function: str | None, group: str | None = None) -> Exemption | None:
        return next((e for e in self.exemptions if e.covers(path, code, function, group)), None)

    def area_of(self, path: str) -> Area | None:
        return next((a for a in self.areas if a.matches(path)), None)


def path_matches(path: str, pattern: str) -> bool:
    """Glob match on '/'-separated relative paths; ``**`` spans folders, a bare folder matches below it.
    Linear in the path whatever the pattern (see bot.globs)."""
    path = path.replace("\\", "/")
    if path.startswith("./"):
        path = path[2:]
    if pattern == "**":
        return True
    return globs.compiled(pattern).matches(path) or path.startswith(pattern.rstrip("/") + "/")


# ---------------------------------------------------------------- loading


def default_path() -> Path:
    # beside this module in the package (as `importlib.resources` would find it, without importing it: that pulls
    # in tempfile, shutil, zipfile and the compressors, about a tenth of a check's start-up)
    return Path(__file__).with_name("rules.yaml")


def find_config(start: Path) -> Path | None:
    """The configuration nearest to ``start``: in ``start`` or the closest parent holding one, rules.yaml, else
    .pg-bot.yaml, else a pyproject.toml with a `[tool.pg-bot]` table (a pyproject.toml without one is passed
    over). A `[tool.pg-bot]` table that a YAML file next to it overrides is named in a warning on stderr."""
    start = start.resolve()
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                _warn_if_shadowed(folder / PYPROJECT, candidate)
                return candidate
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_table(pyproject):
            return pyproject
    return None


def _has_table(pyproject: Path) -> bool:
    from bot import pyproject as toml_config

    data = _read(pyproject)
    return toml_config.mentions_table(data) and toml_config.table(_decode(data, pyproject), str(pyproject)) is not None


_WARNED: set[Path] = set()  # once per file and process: the flake8 plugin loads a config per folder


def _warn_if_shadowed(pyproject: Path, used: Path) -> None:
    if pyproject in _WARNED:
        return
    try:
        shadowed = pyproject.is_file() and _has_table(pyproject)
    except ConfigError:
        return  # unreadable or not TOML: it is not the configuration in use either way
    if shadowed:
        _WARNED.add(pyproject)
        print(f"pg-bot: warning: {pyproject}: [tool.pg-bot] is ignored: {used.name} in the same folder takes "
              "precedence (keep one of them)", file=sys.stderr)


def load(path: Path | None = None, *, search_from: Path | None = None) -> Config:
    """Load ``path``; else the configuration nearest to ``search_from`` (find_config); else the packaged
    defaults. A path ending in `.toml` is read as a pyproject.toml (its `[tool.pg-bot]` table)."""
    if path is None and search_from is not None:
        path = find_config(search_from)
    if path is None:
        path = default_path()
    text = _decode(_read(path), path)
    if path.suffix == ".toml":
        return parse_pyproject(text, str(path))
    # The packaged defaults are validated by the test suite; skipping jsonschema for them keeps a
    # `pg-bot check` run on defaults fast (the import alone costs ~50 ms).
    return parse(text, str(path), validate=path.resolve() != default_path().resolve())


def _read(path: Path) -> bytes:
    try:
        return read_source(path, MAX_CONFIG_BYTES)  # a regular file of sane size: no FIFO, no /dev/zero
    except SourceError as exc:
        raise ConfigError(f"{path}:1: {exc}") from exc


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save {path.name} as "
                          "UTF-8") from exc


def parse_pyproject(text: str, source: str = "<pyproject.toml>", *, validate: bool = True) -> Config:
    """The `[tool.pg-bot]` table of a pyproject.toml's text: the same keys and schema as rules.yaml."""
    from bot import pyproject as toml_config

    data = toml_config.table(text, source)
    if data is None:
        raise ConfigError(f"{source}:1: no [{toml_config.NAME}] table")
    if validate:
        _validate(data, lambda: toml_config.key_lines(text), source, prefix=toml_config.NAME)
    return _build(data, source)


def parse(text: str, source: str = "<string>", *, validate: bool = True) -> Config:
    data, lines = _load_yaml(text, source)
    if validate:
        _validate(data, lambda: lines, source)
    return _build(data, source)


def _load_yaml(text: str, source: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """YAML -> plain data plus a map from key path to 1-based line, so errors can name both."""
    try:
        _check_events(text, source)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                lines: dict[tuple[Any, ...], int] = {}
                _index_lines(node, (), lines, source)  # before construction: it rejects duplicate keys
                data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}:{_yaml_problem(exc, text)}") from exc
    if node is None:
        raise ConfigError(f"{source}:1: empty file; expected a mapping with at least `version: 1`")
    return data, lines


def _yaml_problem(exc: yaml.YAMLError, text: str) -> str:
    """`line: not valid YAML: what`, for every kind of error PyYAML raises."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow, e.g. a control character
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return f"{text.count(chr(10), 0, exc.position) + 1}: not valid YAML: character #x{char:04x}: {exc.reason}"
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else 1
    return f"{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}"


def _check_events(text: str, source: str) -> None:
    """Refuse what a policy file never needs and an attacker would use, before anything is built from it:
    anchors and aliases (a 600-byte "billion laughs" file expands to gigabytes; a recursive alias never
    ends) and deep nesting. One pass over libyaml's events: linear in the file."""
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ConfigError(f"{source}:{line}: YAML anchors and aliases (&name, *name) are not allowed in rules.yaml; "
                              "write the values out")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"{source}:{line}: nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _index_lines(node: yaml.Node, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int], source: str) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[tuple[str, Any], int] = {}
        for key, value in node.value:
            line = key.start_mark.line + 1
            if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
                raise ConfigError(f"{source}:{line}: keys must be plain names (no `<<` merges, no lists or mappings as keys)")
            if (key.tag, key.value) in seen:  # YAML would keep the last silently; a policy must not
                first = seen[key.tag, key.value]
                raise ConfigError(f"{source}:{line}: duplicate key `{key.value}` (first given on line {first})")
            seen[key.tag, key.value] = line
            child = (*path, key.value)
            _index_lines(value, child, lines, source)
            lines[child] = line
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*path, i), lines, source)


def _schema() -> dict[str, Any]:
    return json.loads(Path(__file__).with_name("schema").joinpath("rules.schema.json").read_text(encoding="utf-8"))


def _validate(data: Any, lines_of: Callable[[], dict[tuple[Any, ...], int]], source: str, prefix: str = "") -> None:
    """Schema errors as `source:line: message` lines. ``lines_of`` maps key paths to lines; it is only asked
    when there are errors (for a pyproject.toml it scans the text). ``prefix`` names the table the data
    came from (`tool.pg-bot`), so keys are named as written."""
    import jsonschema  # imported here: only needed when a file is validated

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path))))
    if not errors:
        return
    lines = lines_of()

    def name(path: tuple[Any, ...]) -> str:
        return ".".join(str(p) for p in (*([prefix] if prefix else []), *path))

    messages = []
    for err in errors:
        path = tuple(err.absolute_path)
        key = name(path) or "<top level>"
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = set(err.schema.get("properties", {}))
            for extra in sorted(k for k in err.instance if k not in allowed):
                child = (*path, extra)
                known = ", ".join(sorted(allowed))
                messages.append(f"{source}:{_line_of(lines, child)}: unknown key `{name(child)}` (known: {known})")
            continue
        messages.append(f"{source}:{_line_of(lines, path)}: `{key}`: {err.message}")
    raise ConfigError("\n".join(messages))


def _line_of(lines: dict[tuple[Any, ...], int], path: tuple[Any, ...]) -> int | str:
    """The line of ``path``, else of its nearest ancestor that has one (a key inside a TOML inline table)."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path, "?")


def _build(data: dict[str, Any], source: str) -> Config:
    defaults = yaml.safe_load(default_path().read_text(encoding="utf-8")) if source != str(default_path()) else {}

    def get(key: str) -> Any:
        return data[key] if key in data else defaults.get(key)

    predicate = get("predicate") or {"module": "deepspeed.comm", "name": "pg_utils", "function": "is_parallel"}
    rules = {
        code: RuleSetting(enabled=v.get("enabled", True), severity=Severity(v.get("severity", "error")))
        for code, v in (get("rules") or {}).items()
    }
    exemptions = tuple(
        Exemption(
            path=e["path"],
            reason=e["reason"],
            function=e.get("function"),
            rules=tuple(e.get("rules", ())),
            groups=tuple(e.get("groups", ())),
        )
        for e in (get("exemptions") or [])
    )
    areas = tuple(
        Area(name=a["name"], title=a.get("title", a["name"]), paths=tuple(a["paths"]), tests=tuple(a.get("tests", ())))
        for a in (get("areas") or [])
    )
    ci_raw = get("ci") or {}
    ci_fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in ci_raw.items()}
    ci = CIConfig(**ci_fields)  # lists became tuples: the config is frozen
    return Config(
        comm_modules=tuple(get("comm_modules") or ()),
        collectives=frozenset(get("collectives") or ()),
        inplace_collectives=frozenset(get("inplace_collectives") or ()),
        predicate_module=predicate["module"],
        predicate_name=predicate["name"],
        predicate_function=predicate["function"],
        rules=rules,
        exemptions=exemptions,
        areas=areas,
        ci=ci,
        review=ReviewConfig(**(get("review") or {})),
        max_file_bytes=get("max_file_bytes") or DEFAULT_MAX_BYTES,
        size_functions=tuple(get("size_functions") or ("get_world_size",)),
        absent_groups=tuple(get("absent_groups") or ()),
        source=source,
    )
