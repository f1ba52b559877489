"""Resolve names through imports, so `dist.get_world_size`, `comm.get_world_size` and a bare
`get_world_size` imported from deepspeed.comm are recognised, and an unrelated `get_world_size` is not."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from bot.analyze.source import COMPOUND
from bot.analyze.terms import is_none

_UNSEEN = object()


@dataclass
class Names:
    """Local name -> fully qualified dotted name, collected from every import in the file."""

    aliases: dict[str, str] = field(default_factory=dict)
    # node -> its qualified name: the flow and the call classifiers ask about the same call several times (about
    # six times per node). Keyed by the node itself, so a node is never confused with a later one at its address.
    _qualified: dict[ast.expr, str | None] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, tree: ast.Module, package: str | None = None) -> Names:
        aliases: dict[str, str] = {}
        fallbacks: dict[str, str] = {}  # bound in an `except` handler: used only where the `try` bound nothing

        for handler_body, node in _imports(tree.body):
            into = fallbacks if handler_body else aliases
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        into[a.asname] = a.name
                    else:
                        head = a.name.split(".")[0]
                        into[head] = head
            else:
                base = absolute_module(node.module, node.level, package)
                if base is None:
                    continue
                for a in node.names:
                    if a.name != "*":
                        into[a.asname or a.name] = f"{base}{a.name}" if base.endswith(".") else f"{base}.{a.name}"
        for name, target in fallbacks.items():
            aliases.setdefault(name, target)  # `try: from x import new as f` / `except ImportError: ... old as f`
        return cls(aliases)

    def qualify(self, node: ast.expr) -> str | None:
        """Dotted, import-resolved name of a Name/Attribute chain; None if it is not one or not imported."""
        if type(node) is ast.Name:
            return self.aliases.get(node.id)
        found = self._qualified.get(node, _UNSEEN)
        if found is _UNSEEN:
            found = self._qualified[node] = self._qualify(node)
        return found  # type: ignore[return-value]

    def _qualify(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id)
        if head is None:
            return None
        parts.append(head)
        return ".".join(reversed(parts))


def _imports(body: list[ast.stmt], in_handler: bool = False) -> list[tuple[bool, ast.Import | ast.ImportFrom]]:
    """Every import below ``body`` in order, with whether it sits in an `except` handler."""
    out: list[tuple[bool, ast.Import | ast.ImportFrom]] = []
    stack: list[tuple[bool, ast.stmt]] = [(in_handler, s) for s in reversed(body)]
    while stack:
        handler, stmt = stack.pop()
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            out.append((handler, stmt))
            continue
        if not isinstance(stmt, COMPOUND):
            continue  # a simple statement holds no import
        children: list[tuple[bool, ast.stmt]] = []
        for name in ("body", "orelse", "finalbody"):
            children += [(handler, c) for c in getattr(stmt, name, None) or [] if isinstance(c, ast.stmt)]
        for h in getattr(stmt, "handlers", None) or []:
            children += [(True, c) for c in h.body]
        for case in getattr(stmt, "cases", None) or []:
            children += [(handler, c) for c in case.body]
        stack.extend(reversed(children))
    return out


def absolute_module(module: str | None, level: int, package: str | None) -> str | None:
    """`from ..mod import x` in ``package``: the module it names, absolute (None above the top package)."""
    if level == 0:
        return module
    if package is None:  # where the file sits is unknown: keep the name, marked relative (never a comm module)
        return "." * level + (module or "")
    parts = package.split(".")
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


def package_of(path: str) -> str | None:
    """The dotted package a file lives in, from its path below the project root (for relative imports):
    deepspeed/moe/x.py -> deepspeed.moe, pkg/sub/x.py -> pkg.sub (a DeepSpeed tree from its `deepspeed` folder
    wherever it sits)."""
    parts = path.replace("\\", "/").split("/")[:-1]
    if "deepspeed" in parts:
        parts = parts[parts.index("deepspeed") :]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def dotted(node: ast.AST) -> str | None:
    """Source-like text of a Name/Attribute chain (`self.mp_group`), else None."""
    if type(node) is ast.Name:  # (most calls: the flow asks this of every name it reads)
        return node.id
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def dict_entry(node: ast.AST) -> tuple[ast.expr, str] | None:
    """`d["k"]` or `d.get("k")` (`d.get("k", None)`) on a name or attribute, or on one entry of a table of them
    (`tracker[name]["k"]`): (d, "k"); else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        base, key = node.value, node.slice.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and not node.keywords and len(node.args) in (1, 2) and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and (len(node.args) == 1 or is_none(node.args[1])):
        base, key = node.func.value, node.args[0].value
    else:
        return None
    return (base, key) if isinstance(base, (ast.Name, ast.Attribute)) or indexed(base) is not None else None


def indexed(node: ast.AST) -> tuple[ast.expr, str] | None:
    """`tracker[name]` / `tables[0]` on a name or attribute: (tracker, "name"); else None."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, (ast.Name, ast.Attribute)):
        return None
    index = node.slice
    if isinstance(index, ast.Name):
        return node.value, index.id
    if isinstance(index, ast.Constant) and isinstance(index.value, (int, str)):
        return node.value, repr(index.value)
    return None


def leaf_name(key: str) -> str:
    """The last name in a key: `self.tp_group` -> `tp_group`, `stats.get('sum_grp')` -> `sum_grp`."""
    if key.endswith("')") and ".get('" in key:
        return key[key.rindex(".get('") + 6 : -2]
    return key.rpartition(".")[2]
