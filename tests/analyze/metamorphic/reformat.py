"""(b) Reformatting: comments and docstrings removed, every line break and indent redone.

Why: evidence is reported by line, and line-based patterns ("the line after ``#pragma unroll``",
"one declaration per line", a comment that names the technique) are easy to write by accident.
The code is the same token sequence afterwards; only the whitespace between tokens differs.

C++ (files and strings embedded in Python) is re-emitted token by token from the tree-sitter
leaves, in a deliberately different style: Allman braces, 3-space indents, one function parameter
per line, consecutive declarations joined on one line; preprocessor directives keep a line each.
Python is re-emitted by libcst with 2-space indents, no blank lines, and every bracketed
argument/parameter list either joined onto one line (when it was split) or split one item per
line (when it was on one line with three or more items).
"""

from __future__ import annotations

import libcst as cst

from . import cpp, lexer, pysrc
from .workspace import Submission

INDENT = "   "
_BLOCK_PARENTS = {"compound_statement", "declaration_list", "field_declaration_list", "enumerator_list"}
_DIRECTIVES = {"preproc_include", "preproc_def", "preproc_function_def", "preproc_call"}
_TEMPLATE_LISTS = {"template_argument_list", "template_parameter_list"}
_NO_SPACE_AFTER = {"(", "[", ".", "->", "::", "~", "!"}
_NO_SPACE_BEFORE = {")", "]", ",", ";", ".", "->", "::"}


def _directive_of(leaf: cpp.Node) -> cpp.Node | None:
    """The one-line preprocessor directive a token belongs to, if any."""
    n = leaf
    while n is not None:
        if n.type in _DIRECTIVES:
            return n
        n = n.parent
    return None


def _directive_text(node: cpp.Node) -> str:
    """One directive on one line, its tokens single-spaced; the macro body as written (line
    continuations joined), and a function-like macro's name glued to its ``(``."""
    parts: list[str] = []
    for child in node.children:
        if child.type == "comment" or child.end_byte == child.start_byte:
            continue
        text = cpp.node_text(child).strip()
        if child.type == "preproc_arg":  # tokens single-spaced, comments dropped, literals intact
            text = " ".join(t.text for t in lexer.tokens(text.replace("\\\n", " ")) if t.kind != "comment")
        if child.type == "preproc_params" and parts:
            parts[-1] += text
            continue
        if text:
            parts.append(text)
    return " ".join(parts)


class _Emitter:
    """Accumulates tokens into indented lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.cur: list[str] = []
        self.depth = 0
        self.prev: cpp.Node | None = None
        self.prev_text = ""

    def newline(self) -> None:
        if self.cur:
            self.lines.append(INDENT * self.depth + "".join(self.cur).strip())
            self.cur = []
        self.prev, self.prev_text = None, ""

    def raw_line(self, text: str) -> None:
        self.newline()
        self.lines.append(text)

    def token(self, leaf: cpp.Node) -> None:
        text = cpp.node_text(leaf)
        if self.cur and not self._glued(leaf, text):
            self.cur.append(" ")
        self.cur.append(text)
        self.prev, self.prev_text = leaf, text

    def _glued(self, leaf: cpp.Node, text: str) -> bool:
        prev = self.prev_text
        if prev in _NO_SPACE_AFTER or text in _NO_SPACE_BEFORE:
            return True
        if prev == ":" and text == ":" and self.prev is not None and self.prev.end_byte == leaf.start_byte:
            return True  # asm operand separators written "::" stay one token for the eye
        if text in ("(", "[") and (prev[-1:].isalnum() or prev[-1:] in ("_", ">", "]", ")")):
            return True
        in_template = (leaf.parent is not None and leaf.parent.type in _TEMPLATE_LISTS) or (
            self.prev is not None and self.prev.parent is not None and self.prev.parent.type in _TEMPLATE_LISTS)
        if in_template and (text in ("<", ">") or prev == "<"):
            return True
        return False


def _ends_statement(leaf: cpp.Node) -> bool:
    """A ``;`` that ends a statement or declaration (not one of a for header)."""
    p = leaf.parent
    return p is not None and p.type not in ("for_statement", "ERROR")


def _declaration_in_block(node: cpp.Node | None) -> bool:
    return node is not None and node.type in ("declaration", "alias_declaration") and \
        node.parent is not None and node.parent.type == "compound_statement"


def reformat_cpp(text: str) -> str:
    """Re-emit C++ without comments, in the layout described in the module docstring."""
    tree = cpp.parse(text)
    tokens = [t for t in cpp.leaves(tree.root_node) if t.type != "comment"]
    out = _Emitter()
    parens = 0
    done_directives: set[int] = set()
    skip_row = -1
    for i, leaf in enumerate(tokens):
        value = cpp.node_text(leaf)
        nxt = cpp.node_text(tokens[i + 1]) if i + 1 < len(tokens) else ""
        directive = _directive_of(leaf)
        if directive is not None:
            if directive.start_byte not in done_directives:
                done_directives.add(directive.start_byte)
                out.raw_line(_directive_text(directive))
            continue
        if value.startswith("#"):  # #if / #ifdef / #else / #endif: the source line as it is
            row = leaf.start_point[0]
            line = text.encode("utf-8").split(b"\n")[row].decode("utf-8")
            out.raw_line(line.split("//")[0].strip())
            skip_row = row
            continue
        if leaf.start_point[0] == skip_row:
            continue
        parent = leaf.parent
        block = parent is not None and parent.type in _BLOCK_PARENTS
        if value == "{" and block:
            out.newline()
            out.token(leaf)
            out.newline()
            out.depth += 1
            continue
        if value == "}" and block:
            out.newline()
            out.depth = max(0, out.depth - 1)
            out.token(leaf)
            if nxt not in (";", ",", ")"):
                out.newline()
            continue
        parens += value == "("
        parens -= value == ")" and parens > 0
        out.token(leaf)
        if value == "," and parent is not None and parent.type == "parameter_list" and \
                parent.parent is not None and parent.parent.type == "function_declarator":
            out.newline()  # one parameter per line
            out.cur = [INDENT]
        elif value == ";" and parens == 0 and _ends_statement(leaf):
            if not (_declaration_in_block(parent) and _declaration_in_block(parent.next_named_sibling)):
                out.newline()  # consecutive declarations share a line; anything else ends it
        elif value == ":" and parent is not None and parent.type in ("case_statement", "access_specifier"):
            out.newline()
        elif value == ">" and parent is not None and parent.type == "template_parameter_list" \
                and parent.parent is not None and parent.parent.type == "template_declaration":
            out.newline()
    out.newline()
    return "\n".join(out.lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Python


class _PyLayout(cst.CSTTransformer):
    """Comments and docstrings out; no blank lines; bracketed lists joined or split (module doc)."""

    def __init__(self, embedded: set[int]) -> None:
        self.embedded = embedded
        self.in_fstring = 0

    # comments and blank lines ------------------------------------------------------------------
    def leave_TrailingWhitespace(self, original, updated):
        return updated.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))

    def leave_EmptyLine(self, original, updated):
        return cst.RemoveFromParent()

    def leave_Module(self, original, updated):
        return updated.with_changes(body=_drop_docstring(updated.body), header=[], footer=[], default_indent="  ")

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(indent=None, footer=[])

    # docstrings and signatures -----------------------------------------------------------------
    def leave_FunctionDef(self, original, updated):
        body = updated.body.with_changes(body=_drop_docstring(updated.body.body))
        params = _split_params(updated.params) if not _spans_lines(original.params) else updated.params
        return updated.with_changes(body=body, params=params, leading_lines=[], lines_after_decorators=[])

    def leave_ClassDef(self, original, updated):
        body = updated.body.with_changes(body=_drop_docstring(updated.body.body))
        return updated.with_changes(body=body, leading_lines=[], lines_after_decorators=[])

    def leave_Decorator(self, original, updated):
        return updated.with_changes(leading_lines=[])

    # line breaks inside brackets -------------------------------------------------------------
    def leave_ParenthesizedWhitespace(self, original, updated):
        return cst.SimpleWhitespace(" ")

    def visit_FormattedStringExpression(self, node) -> None:
        self.in_fstring += 1

    def leave_FormattedStringExpression(self, original, updated):
        self.in_fstring -= 1
        return updated

    def leave_Call(self, original, updated):
        split = len(original.args) >= 3 and not _spans_lines(original) and not self.in_fstring
        return _respace_args(updated, split)

    def leave_SimpleString(self, original, updated):
        if id(original) in self.embedded:  # C++ source in a Python string: reformat it as C++
            return pysrc.with_value(updated, reformat_cpp(pysrc.string_value(original)))
        return updated


def _drop_docstring(body) -> list:
    body = list(body)
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        expr = body[0].body[0]
        if isinstance(expr, cst.Expr) and isinstance(expr.value, (cst.SimpleString, cst.ConcatenatedString)):
            body = body[1:] or [cst.SimpleStatementLine([cst.Pass()])]
    return body


def _spans_lines(node: cst.CSTNode) -> bool:
    return "\n" in cst.Module([]).code_for_node(node).strip()


def _newline_ws() -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
                                       last_line=cst.SimpleWhitespace("    "))


def _respace_args(call: cst.Call, split: bool) -> cst.Call:
    """One argument per line when ``split``; otherwise one space after each comma. No trailing comma."""
    args = list(call.args)
    new = []
    for i, arg in enumerate(args):
        if i < len(args) - 1:
            ws = _newline_ws() if split else cst.SimpleWhitespace(" ")
            arg = arg.with_changes(comma=cst.Comma(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=ws))
        else:
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new.append(arg)
    return call.with_changes(args=new, whitespace_before_args=cst.SimpleWhitespace(""))


def _split_params(params: cst.Parameters) -> cst.Parameters:
    """One positional parameter per line when there are three or more."""
    items = list(params.params)
    if len(items) < 3:
        return params
    more_after = params.star_arg is not cst.MaybeSentinel.DEFAULT or bool(params.kwonly_params) \
        or params.star_kwarg is not None
    new = []
    for i, p in enumerate(items):
        if i < len(items) - 1 or more_after:
            p = p.with_changes(comma=cst.Comma(whitespace_after=_newline_ws()))
        else:
            p = p.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new.append(p)
    return params.with_changes(params=new)


def reformat_python(text: str) -> str:
    module = cst.parse_module(text)
    embedded = {id(s) for s in pysrc.embedded_cpp_strings(module)}
    return module.visit(_PyLayout(embedded)).code


def reformat(sub: Submission) -> Submission:
    files = dict(sub.files)
    for path in sub.cpp_files():
        files[path] = reformat_cpp(sub.files[path])
    for path in sub.python_files():
        files[path] = reformat_python(sub.files[path])
    return sub.with_files(files, "comments removed, re-laid out")
