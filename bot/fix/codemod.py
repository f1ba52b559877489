"""Apply rewrite plans to a LibCST tree in one pass, located by span; add the predicate's import.

Every plan's spans refer to the original source, so all edits happen in a single transformer pass over the
original positions. Untouched nodes keep their exact text (LibCST round-trips byte for byte).
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider

from bot.fix.plan import (
    InsertAfter,
    MergeIf,
    NameContiguous,
    Op,
    Plan,
    RemoveDef,
    ReplaceCall,
    ReplaceExpr,
    ReplaceReturn,
    RewriteChain,
    WrapStatement,
)
from bot.model import Span

_T = TypeVar("_T")

# A whole statement line, which (unlike cst.BaseStatement in general) carries its own leading_lines.
_Statement: TypeAlias = cst.SimpleStatementLine | cst.BaseCompoundStatement


class OpFailed(Exception):
    """One plan's operation cannot be carried out on the tree; that plan is dropped, the others go on."""


@dataclass
class Outcome:
    code: str
    failed: dict[int, str] = field(default_factory=dict)  # plan index -> reason


def _span_of(pos: cst.metadata.CodeRange) -> Span:
    return Span(pos.start.line, pos.start.column, pos.end.line, pos.end.column)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _has_comment(node: cst.CSTNode) -> bool:
    return "#" in _code(node)  # whitespace nodes hold no strings, so any `#` is a comment


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class _Apply(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, plans: list[tuple[int, Plan]], lines: list[str]) -> None:
        super().__init__()
        self.lines = lines
        self.exprs: dict[Span, tuple[int, ReplaceExpr | ReplaceCall]] = {}
        self.chains: dict[Span, list[tuple[int, RewriteChain]]] = defaultdict(list)
        self.stmts: dict[Span, list[tuple[int, WrapStatement | NameContiguous | InsertAfter]]] = defaultdict(list)
        self.defs: dict[tuple[int, str], list[tuple[int, RemoveDef | ReplaceReturn]]] = defaultdict(list)
        self.merges: dict[tuple[int, int], tuple[int, MergeIf]] = {}  # (line, column) of the `if` -> its plan
        self.pending: dict[int, int] = defaultdict(int)  # plan index -> operations not yet applied
        self.removed: list[cst.FunctionDef] = []  # copies to drop; their block does it, keeping comments above
        self.failed: dict[int, str] = {}
        self.targets: list[tuple[int, int]] = []  # line ranges the plans touch: nothing else is descended into
        self.orphans: list[list[str]] = []  # per open statement: comments its rewritten expressions dropped
        for index, plan in plans:
            for op in plan.ops:
                self.pending[index] += 1
                self.targets.append(_lines_of(op))
                if isinstance(op, ReplaceExpr | ReplaceCall):
                    if op.span in self.exprs and self.exprs[op.span][0] != index:
                        self.failed[index] = "another fix already rewrites this expression"
                    else:
                        self.exprs[op.span] = (index, op)
                elif isinstance(op, RewriteChain):
                    self.chains[op.chain].append((index, op))  # several guards may share one chain
                elif isinstance(op, RemoveDef | ReplaceReturn):
                    self.defs[(op.line, op.name)].append((index, op))
                elif isinstance(op, MergeIf):
                    self.merges[(op.span.line, op.span.col)] = (index, op)
                elif isinstance(op, InsertAfter) and any(
                    isinstance(o, InsertAfter) and o.code == op.code for _, o in self.stmts[op.span]
                ):
                    self.pending[index] -= 1  # the same cached flag is already being added
                else:
                    self.stmts[op.span].append((index, op))

    def on_visit(self, node: cst.CSTNode) -> bool:
        # A large file has thousands of statements and a plan touches one or two: skipping the subtrees that
        # hold no target keeps a rewrite's cost that of the code it changes (their nodes stay as they are).
        if isinstance(node, _Statement):
            self.orphans.append([])  # popped in on_leave, which runs whether or not the children are visited
        if not super().on_visit(node):
            return False
        span = self._pos(node)
        return span is None or any(span.line <= last and first <= span.end_line for first, last in self.targets)

    # -------------------------------------------------------------- helpers

    def _pos(self, node: cst.CSTNode) -> Span | None:
        try:
            return _span_of(self.get_metadata(PositionProvider, node))
        except KeyError:
            return None

    def _done(self, index: int) -> None:
        self.pending[index] -= 1

    def _parens_droppable(self, original: cst.BaseExpression) -> bool:
        """Outer parentheses can go unless a keyword or name touches them (`if(`, `not(`, `)and`)."""
        lpar, rpar = self._pos(original.lpar[0]), self._pos(original.rpar[-1])
        if lpar is None or rpar is None:
            return False
        before = self.lines[lpar.line - 1][: lpar.col]
        after = self.lines[rpar.end_line - 1][rpar.end_col :]
        return not (before and _ident_char(before[-1])) and not (after and _ident_char(after[0]))

    def _place(self, original: cst.BaseExpression, updated: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
        if not original.lpar:
            return new
        atomic = isinstance(new, cst.Call | cst.Name | cst.Attribute)
        commented = any(_has_comment(p) for p in (*updated.lpar, *updated.rpar))  # parentheses keep comments
        if atomic and not commented and self._parens_droppable(original):
            return new
        return new.with_changes(lpar=updated.lpar, rpar=updated.rpar)

    # -------------------------------------------------------------- expressions

    # libcst types on_leave as returning the node's own type; an expression legitimately becomes another kind of
    # expression here (a chain -> a call), which libcst accepts at run time.
    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        if isinstance(original_node, cst.BaseExpression) and (self.exprs or self.chains):
            span = self._pos(original_node)
            new: cst.BaseExpression | None = None
            if (span in self.chains and isinstance(original_node, cst.BooleanOperation)
                    and isinstance(updated_node, cst.BooleanOperation)):
                new = self._rewrite_chain(original_node, updated_node, self.chains[span])
            elif span in self.exprs and isinstance(updated_node, cst.BaseExpression):
                index, op = self.exprs[span]
                new = self._guarded(index, lambda: self._replace(original_node, updated_node, op), updated_node)
            if new is not None:
                if self.orphans and isinstance(updated_node, cst.BaseExpression):
                    self.orphans[-1].extend(_lost_comments(updated_node, new))
                return new
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, _Statement):
            result = self._adopt(self.orphans.pop(), result)
        return result

    def _adopt(self, comments: list[str], result: _T) -> _T:
        """A multi-line guard collapsed into one call keeps its comments: on their own lines above the statement
        (``# why`` in ``if (g is not None  # why`` is about the test, and would otherwise be lost)."""
        first = result.nodes[0] if isinstance(result, cst.FlattenSentinel) and result.nodes else result
        if not comments or not isinstance(first, _Statement) or any(first is r for r in self.removed):
            return result
        lines = [cst.EmptyLine(comment=cst.Comment(text)) for text in comments]
        adopted = first.with_changes(leading_lines=[*first.leading_lines, *lines])
        if isinstance(result, cst.FlattenSentinel):
            return cst.FlattenSentinel([adopted, *result.nodes[1:]])  # type: ignore[return-value]
        return adopted  # type: ignore[return-value]

    def _guarded(self, index: int, action: Callable[[], _T], fallback: _T) -> _T:
        if index in self.failed:
            return fallback
        try:
            result = action()
        except OpFailed as exc:
            self.failed[index] = str(exc)
            return fallback
        except cst.CSTValidationError as exc:
            self.failed[index] = f"rewrite would not be valid Python here: {exc}"
            return fallback
        self._done(index)
        return result

    def _replace(self, original: cst.BaseExpression, updated: cst.BaseExpression, op: ReplaceExpr | ReplaceCall) -> cst.BaseExpression:
        if isinstance(op, ReplaceCall):
            new = cst.parse_expression(op.template.format(group=self._bind(updated, op)))
        else:
            new = cst.parse_expression(op.text)
        return self._place(original, updated, new)

    def _bind(self, call: cst.BaseExpression, op: ReplaceCall) -> str:
        """The group expression of a call to a predicate copy, in terms of the call's own arguments."""
        if not isinstance(call, cst.Call):
            raise OpFailed("the located expression is not a call")
        bound: dict[str, str] = {}
        params = list(op.params)
        if op.method:
            if not isinstance(call.func, cst.Attribute) or not params:
                raise OpFailed("a method copy called without a receiver")
            bound[params.pop(0)] = _code(call.func.value)
        for i, arg in enumerate(call.args):
            if arg.star:
                raise OpFailed("call passes *args/**kwargs")
            name = arg.keyword.value if arg.keyword is not None else (params[i] if i < len(params) else None)
            if name is None or name not in params:
                raise OpFailed("call arguments do not match the copy's parameters")
            bound[name] = _code(arg.value)
        for name in params:
            bound.setdefault(name, op.defaults.get(name, ""))
            if not bound[name]:
                raise OpFailed(f"call does not pass `{name}`")
        group = ast.parse(op.group, mode="eval").body

        class Sub(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.AST:
                return ast.parse(f"({bound[node.id]})", mode="eval").body if node.id in bound else node

        return ast.unparse(Sub().visit(group))

    def _rewrite_chain(
        self, original: cst.BooleanOperation, updated: cst.BooleanOperation, entries: list[tuple[int, RewriteChain]]
    ) -> cst.BaseExpression:
        kind = type(original.operator)
        upd_ops, operators = _flatten(updated, kind), _operators(updated, kind)
        originals = _flatten(original, kind)
        spans = [self._pos(o) for o in originals]
        replace: dict[int, cst.BaseExpression] = {}
        drops: set[int] = set()
        applied: list[int] = []
        for index, op in entries:
            if index in self.failed:
                continue
            if op.keep not in spans or op.drop not in spans:
                self.failed[index] = "guard operands not found in the boolean chain"
                continue
            keep, drop = spans.index(op.keep), spans.index(op.drop)
            replace[keep] = self._place(originals[keep], upd_ops[keep], cst.parse_expression(op.text))
            drops.add(drop)
            applied.append(index)
        items: list[tuple[cst.BaseBooleanOp | None, cst.BaseExpression]] = [(None, upd_ops[0]), *zip(operators, upd_ops[1:], strict=True)]
        out: list[tuple[cst.BaseBooleanOp | None, cst.BaseExpression]] = []
        carry = None
        for i, (operator, operand) in enumerate(items):
            if i in drops:
                if operator is not None and _has_comment(operator.whitespace_before):
                    carry = operator.whitespace_before  # the comment ending the previous operand's line
                continue
            if carry is not None and operator is not None:
                operator, carry = operator.with_changes(whitespace_before=carry), None
            out.append((operator, replace.get(i, operand)))
        result: cst.BaseExpression = out[0][1]
        try:
            for operator, right in out[1:]:
                assert operator is not None
                result = cst.BooleanOperation(left=result, operator=operator, right=right)
        except cst.CSTValidationError as exc:  # e.g. `x and(...)`: the keyword would touch the new call
            for index in applied:
                self.failed[index] = f"rewrite would not be valid Python here: {exc}"
            return updated
        if isinstance(result, cst.BooleanOperation):
            result = result.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        else:
            result = self._place(original, updated, result)
        for index in applied:
            self._done(index)
        return result

    # -------------------------------------------------------------- statements

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        if not self.stmts:
            return updated_node
        ops = next((self.stmts[s] for s in map(self._pos, original_node.body) if s in self.stmts), None)
        if not ops:
            return updated_node
        if len(updated_node.body) != 1:
            for index, _ in ops:
                self.failed[index] = "the statement shares its line with another (`;`)"
            return updated_node
        stmts: list[_Statement] = [updated_node]
        for kind in (NameContiguous, WrapStatement, InsertAfter):  # expand, then guard, then append
            for index, op in ops:
                if isinstance(op, kind) and index not in self.failed:
                    try:
                        stmts = self._statement_op(op, stmts)
                    except OpFailed as exc:
                        self.failed[index] = str(exc)
                        continue
                    self._done(index)
        return stmts[0] if len(stmts) == 1 else cst.FlattenSentinel(stmts)

    def _statement_op(self, op: WrapStatement | NameContiguous | InsertAfter, stmts: list[_Statement]) -> list[_Statement]:
        if isinstance(op, InsertAfter):
            return [*stmts, cst.parse_statement(op.code + "\n")]
        if isinstance(op, WrapStatement):
            first = stmts[0]
            # Continuation lines inside brackets are stored relative to the block, so they move with it.
            inner = [first.with_changes(leading_lines=()), *stmts[1:]]
            return [
                cst.If(
                    test=cst.parse_expression(op.test),
                    body=cst.IndentedBlock(body=inner),
                    leading_lines=first.leading_lines,
                )
            ]
        return self._name_contiguous(op, stmts)

    def _name_contiguous(self, op: NameContiguous, stmts: list[_Statement]) -> list[_Statement]:
        # (the argument itself is the plan's ReplaceExpr, already applied inside this statement)
        first = stmts[0]
        name = cst.parse_statement(f"{op.temp} = {op.tensor}.contiguous()\n").with_changes(leading_lines=first.leading_lines)
        back = cst.parse_statement(f"{op.tensor}.copy_({op.temp})\n")
        return [name, first.with_changes(leading_lines=()), *stmts[1:], back]

    # -------------------------------------------------------------- a split guard made one test

    def leave_If(
        self, original_node: cst.If, updated_node: cst.If
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        span = self._pos(original_node) if self.merges else None
        entry = self.merges.get((span.line, span.col)) if span is not None else None
        if entry is None or entry[0] in self.failed:
            return updated_node
        index, op = entry
        if updated_node.orelse is not None or not isinstance(updated_node.body, cst.IndentedBlock):
            self.failed[index] = "the `if` to merge has an `else`, or its body on the `if` line"
            return updated_node
        self._done(index)
        if not op.nested:
            return cst.RemovalSentinel.REMOVE  # the same early exit, already taken by the merged test
        # Block indentation is relative in LibCST: the body moves up one level as it is.
        first, *rest = updated_node.body.body
        if isinstance(first, _Statement):  # (always: a block holds statement lines)
            first = first.with_changes(leading_lines=[*updated_node.leading_lines, *first.leading_lines])
        return cst.FlattenSentinel([first, *rest])

    # -------------------------------------------------------------- predicate copies

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        if not self.defs:
            return updated_node
        span = self._pos(original_node)
        ops = self.defs.get((span.line, original_node.name.value)) if span else None
        if not ops:
            return updated_node
        index, op = ops[0]
        if index in self.failed:
            return updated_node
        self._done(index)
        if isinstance(op, RemoveDef):
            self.removed.append(updated_node)
            return updated_node
        body = updated_node.body
        if not isinstance(body, cst.IndentedBlock):
            return updated_node.with_changes(body=body.with_changes(body=[cst.Return(value=cst.parse_expression(op.text))]))
        # Keep the docstring; the last `return` carries the predicate; the early returns before it (a folded
        # test, bot.analyze.returns) go.
        stmts = list(body.body)
        docstring = stmts[:1] if stmts and _is_docstring(stmts[0]) else []
        last = stmts[-1]
        if isinstance(last, cst.If):  # `if test: return A` / `else: return B` as the final outcome
            last = cst.SimpleStatementLine([cst.Return()], leading_lines=last.leading_lines)
        elif not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)):
            return updated_node
        new = last.with_changes(body=[cst.Return(value=cst.parse_expression(op.text))])
        first = stmts[len(docstring)]
        if len(stmts) > len(docstring) + 1 and isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            new = new.with_changes(leading_lines=first.leading_lines)
        return updated_node.with_changes(body=body.with_changes(body=[*docstring, new]))


    # -------------------------------------------------------------- removing a copy, not the comments above it

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body, footer = self._drop_removed(updated_node.body, updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer) if body is not None else updated_node

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        body, footer = self._drop_removed(updated_node.body, updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer) if body is not None else updated_node

    def _drop_removed(
        self, body: Sequence[cst.BaseStatement], footer: Sequence[cst.EmptyLine]
    ) -> tuple[list[cst.BaseStatement] | None, Sequence[cst.EmptyLine]]:
        """Drop the removed copies of this block; a comment above one (a licence, a TODO) moves to the next
        statement, or to the block's footer when it was the last. None when nothing here is removed."""
        if not any(any(stmt is r for r in self.removed) for stmt in body):
            return None, footer
        out: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []
        for stmt in body:
            if any(stmt is r for r in self.removed):
                carry.extend(_up_to_last_comment(getattr(stmt, "leading_lines", ())))
                continue
            if carry and isinstance(stmt, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                stmt = stmt.with_changes(leading_lines=[*carry, *stmt.leading_lines])
                carry = []
            out.append(stmt)
        return out, [*carry, *footer]


def _comments(node: cst.CSTNode) -> list[str]:
    found: list[str] = []

    class Collect(cst.CSTVisitor):
        def visit_Comment(self, comment: cst.Comment) -> None:
            found.append(comment.value)

    node.visit(Collect())
    return found


def _lost_comments(before: cst.CSTNode, after: cst.CSTNode) -> list[str]:
    """The comments of ``before`` that ``after`` no longer holds, in order."""
    if "#" not in _code(before):
        return []
    kept = Counter(_comments(after))
    lost = []
    for text in _comments(before):
        if kept[text]:
            kept[text] -= 1
        else:
            lost.append(text)
    return lost


def _lines_of(op: Op) -> tuple[int, int]:
    if isinstance(op, RemoveDef | ReplaceReturn):
        return op.line, op.line
    if isinstance(op, MergeIf):
        return op.span.line, op.span.end_line
    span = op.chain if isinstance(op, RewriteChain) else op.span
    return span.line, span.end_line


def _up_to_last_comment(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """The leading lines through the last comment: the blank lines between it and the removed def go with it."""
    last = max((i for i, line in enumerate(lines) if line.comment is not None), default=-1)
    return list(lines[: last + 1])


def _flatten(node: cst.BooleanOperation, kind: type) -> list[cst.BaseExpression]:
    """`a and b and c` is ((a and b) and c) in the CST: the operands in source order. The outer chain's own
    parentheses stay on the rebuilt chain; a parenthesised inner chain is one operand."""
    return [*_flatten_inner(node.left, kind), node.right]


def _flatten_inner(node: cst.BaseExpression, kind: type) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, kind) and not node.lpar:
        return [*_flatten_inner(node.left, kind), node.right]
    return [node]


def _operators(node: cst.BooleanOperation, kind: type) -> list[cst.BaseBooleanOp]:
    ops: list[cst.BaseBooleanOp] = []
    current: cst.BaseExpression = node
    first = True
    while isinstance(current, cst.BooleanOperation) and isinstance(current.operator, kind) and (first or not current.lpar):
        ops.append(current.operator)
        current = current.left
        first = False
    return ops[::-1]


def parse(source: str) -> MetadataWrapper | str:
    """LibCST's tree of ``source`` with positions, reusable by several ``apply`` calls (the review suggests one
    rewrite per finding: parsing a large file once instead of per finding), or why it cannot be rewritten."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:  # ast accepted it, LibCST did not: report, do not crash the run
        return f"LibCST cannot parse this file: {exc.message}"
    if module.code != source:  # e.g. a byte-order mark or a final lone CR: every untouched byte must survive
        where = next((i for i, (a, b) in enumerate(zip(module.code, source, strict=False)) if a != b), min(len(module.code), len(source)))
        line = source.count("\n", 0, where) + 1
        return f"LibCST does not reproduce this file byte for byte (first difference on line {line}); not rewritten"
    return MetadataWrapper(module, unsafe_skip_copy=True)  # transforms never mutate it: safe to reuse


def apply(
    source: str,
    plans: Iterable[tuple[int, Plan]],
    lines: list[str],
    predicate: tuple[str, str] | None,
    unused: Iterable[tuple[str, str]] = (),
    parsed: MetadataWrapper | str | None = None,
) -> Outcome:
    """Run the plans over ``source`` (``parsed``: its ``parse``, when the caller keeps one); import ``predicate``
    (module, name) when not None; drop the ``unused`` (module, name) from-imports if the rewrite left them unused."""
    plans = list(plans)
    wrapper = parse(source) if parsed is None else parsed
    if isinstance(wrapper, str):
        return Outcome(source, {i: wrapper for i, _ in plans})
    applier = _Apply(plans, lines)
    new = wrapper.visit(applier)
    failed = dict(applier.failed)
    for index, _ in plans:
        if index not in failed and applier.pending[index] > 0:
            failed[index] = "the finding's span does not match any node in the file"
    if failed:
        return Outcome(source, failed)
    context = CodemodContext()
    if predicate is not None:
        AddImportsVisitor.add_needed_import(context, predicate[0], predicate[1])
        new = AddImportsVisitor(context).transform_module(new)
    unused = list(unused)
    for module_name, name in unused:
        RemoveImportsVisitor.remove_unused_import(context, module_name, name)
    if unused:
        new = RemoveImportsVisitor(context).transform_module(new)
    return Outcome(new.code, {})


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
