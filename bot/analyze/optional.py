"""Which group expressions can be None: parameters defaulting to None or annotated Optional, attributes
assigned None (or assigned such a parameter), module globals initialised to None."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from bot.analyze.names import dotted
from bot.analyze.source import statements

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class OptionalFacts:
    """Computed lazily: most classes and functions never hold a collective, so they are never asked about."""

    module_globals: set[str] = field(default_factory=set)
    # class node id -> attribute texts (`self.mp_group`) that may hold None
    class_attrs: dict[int, set[str]] = field(default_factory=dict)
    locals_: dict[int, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: ast.Module) -> OptionalFacts:
        facts = cls()
        for stmt in tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and _may_be_none(stmt.value, set()):
                for target in _targets(stmt):
                    if isinstance(target, ast.Name):
                        facts.module_globals.add(target.id)
        return facts

    def _class(self, klass: ast.ClassDef) -> set[str]:
        if id(klass) not in self.class_attrs:
            self.class_attrs[id(klass)] = _optional_attributes(klass)
        return self.class_attrs[id(klass)]

    def _locals(self, function: FunctionNode) -> set[str]:
        if id(function) not in self.locals_:
            self.locals_[id(function)] = _optional_locals(function)
        return self.locals_[id(function)]

    def may_be_none(self, group: str, function: FunctionNode | None, klass: ast.ClassDef | None) -> bool:
        if "." not in group:
            if function is not None and group in optional_params(function):
                return True
            if function is not None and group in self._locals(function):
                return True
            return function is not None and group in self.module_globals and group not in _param_names(function)
        if klass is not None and group.startswith("self."):
            return group in self._class(klass)
        return False


def optional_params(function: FunctionNode) -> set[str]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    names: set[str] = set()
    for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True):
        if isinstance(default, ast.Constant) and default.value is None:
            names.add(arg.arg)
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):  # None: no default
        if isinstance(kw_default, ast.Constant) and kw_default.value is None:
            names.add(arg.arg)
    for arg in [*positional, *args.kwonlyargs]:
        if arg.annotation is not None and _optional_annotation(arg.annotation):
            names.add(arg.arg)
    return names


def _param_names(function: FunctionNode) -> set[str]:
    args = function.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def _optional_locals(function: FunctionNode) -> set[str]:
    names: set[str] = set()
    for node in statements(function.body):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _may_be_none(node.value, set()):
            names.update(t.id for t in _targets(node) if isinstance(t, ast.Name))
    return names


def _optional_annotation(node: ast.expr) -> bool:
    """`Optional[X]`, `Union[X, None]`, `X | None`, `None`, or such a string annotation."""
    if isinstance(node, ast.Constant):
        if node.value is None:
            return True
        if isinstance(node.value, str):
            try:
                return _optional_annotation(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return False
        return False
    if isinstance(node, ast.Subscript):
        name = (dotted(node.value) or "").rsplit(".", 1)[-1]
        if name == "Optional":
            return True
        if name == "Union":
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return any(isinstance(e, ast.Constant) and e.value is None for e in elts)
        return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _optional_annotation(node.left) or _optional_annotation(node.right)
    return False


def _optional_attributes(klass: ast.ClassDef) -> set[str]:
    attrs: set[str] = set()
    for item in klass.body:
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = optional_params(item)
        for node in statements(item.body):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and _may_be_none(node.value, params):
                for target in _targets(node):
                    text = dotted(target)
                    if text and text.startswith("self."):
                        attrs.add(text)
    return attrs


def _may_be_none(value: ast.expr | None, optional_names: set[str]) -> bool:
    if value is None:
        return False
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.Name):
        return value.id in optional_names
    if isinstance(value, ast.IfExp):
        return _may_be_none(value.body, optional_names) or _may_be_none(value.orelse, optional_names)
    return False


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]
