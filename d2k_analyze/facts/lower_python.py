"""Python / Triton (tree-sitter) -> the IR of :mod:`.ir` and :mod:`.expr`.

Library names are canonical after lowering, whatever the module was imported as:
``import triton.language as q7; q7.dot(...)`` and ``from triton.language import dot; dot(...)``
both lower to ``Call("tl.dot")``. Docstrings, comments and strings that are not values vanish.
"""

from __future__ import annotations

from ..parsing.treesitter import Node, of_types, text, walk
from .expr import Attr, Call, E, Index, Lambda, Name, Num, Op, Str, Sym, Tup
from .ir import Assign, ExprStmt, Func, If, Loc, Loop, Param, Return, Stmt

# Full module paths -> the canonical prefixes detectors use.
CANONICAL = (
    ("triton.language.extra.cuda.libdevice", "libdevice"),
    ("triton.language.extra.libdevice", "libdevice"),
    ("triton.language.extra.cuda", "tl.extra.cuda"),
    ("triton.language.math", "tl.math"),
    ("triton.language.core", "tl"),
    ("triton.language.standard", "tl"),
    ("triton.language", "tl"),
    ("triton.tools.tensor_descriptor", "triton.tools.tensor_descriptor"),
)
DEFAULT_IMPORTS = {"tl": "triton.language", "triton": "triton", "torch": "torch", "libdevice": "triton.language.extra.libdevice", "math": "math"}
PY_BINOPS = {"/": "fdiv", "**": "pow", "@": "matmul"}


def canonical(path: str) -> str:
    for full, short in CANONICAL:
        if path == full or path.startswith(full + "."):
            return short + path[len(full):]
    return path


def imports(root: Node) -> dict[str, str]:
    """``alias -> full dotted path`` of every import in a module (module level and nested)."""
    table = dict(DEFAULT_IMPORTS)
    # one query for both loops (each a walk of the whole module in C), split by type in source order
    found = of_types(root, "python", ("import_statement", "import_from_statement", "assignment"))
    for n in found:
        if n.type == "import_statement":
            for c in n.named_children:
                if c.type == "aliased_import":
                    table[text(c.child_by_field_name("alias"))] = text(c.child_by_field_name("name"))
                elif c.type == "dotted_name":
                    first = text(c).split(".")[0]
                    table[first] = first
        elif n.type == "import_from_statement":
            mod = n.child_by_field_name("module_name")
            base = text(mod) if mod is not None else ""
            for c in n.children_by_field_name("name"):
                if c.type == "aliased_import":
                    table[text(c.child_by_field_name("alias"))] = f"{base}.{text(c.child_by_field_name('name'))}"
                elif c.type == "dotted_name":
                    table[text(c).split(".")[-1]] = f"{base}.{text(c)}"
    # module-level names bound to an imported API (``desc_fn = tl.make_tensor_descriptor``, also
    # under ``if hasattr(tl, ...):`` / ``try:``): the first binding in source order stands
    for n in found:
        if n.type != "assignment" or not _module_level(n):
            continue
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier" or right.type not in ("attribute", "identifier"):
            continue
        head, _, rest = text(right).partition(".")
        if head in table and text(left) not in table:
            table[text(left)] = table[head] + ("." + rest if rest else "")
    return table


def _module_level(n: Node) -> bool:
    p = n.parent
    while p is not None and p.type != "module":
        if p.type in ("function_definition", "class_definition", "lambda"):
            return False
        p = p.parent
    return True


class PythonLowering:
    def __init__(self, file: str, table: dict[str, str], dead: list[tuple[int, int]] = ()):
        self.file = file
        self.table = table
        self.dead = list(dead)
        self.locals: set[str] = set()

    def loc(self, n: Node) -> Loc:
        return Loc(self.file, n.start_point[0] + 1, n.end_point[0] + 1)

    def is_dead(self, n: Node) -> bool:
        s = n.start_byte
        return any(a <= s < b for a, b in self.dead)

    # --- functions -----------------------------------------------------------------------
    def function(self, node: Node, name: str, kind: str = "jit") -> Func:
        params: list[Param] = []
        plist = node.child_by_field_name("parameters")
        for p in plist.named_children if plist is not None else []:
            if p.type == "identifier":
                params.append(Param(text(p)))
            elif p.type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
                ident = p.child_by_field_name("name") or next((c for c in p.children if c.type == "identifier"), None)
                ann = p.child_by_field_name("type")
                default = p.child_by_field_name("value")
                inner = ann.named_children[0] if ann is not None and ann.type == "type" and ann.named_children else ann
                ann_text = (self.dotted(inner) or text(inner)) if inner is not None else ""
                params.append(Param(text(ident), ann_text, self.expr(default) if default is not None else None,
                                    constexpr=ann_text.endswith("constexpr")))
        self.locals = {p.name for p in params} | self._assigned_names(node)
        body = node.child_by_field_name("body")
        return Func(name, params, self.block(body), self.loc(node), "triton", kind)

    def _assigned_names(self, node: Node) -> set[str]:
        out: set[str] = set()
        for n in of_types(node, "python", ("assignment", "augmented_assignment", "for_statement")):
            left = n.child_by_field_name("left")
            for m in walk(left) if left is not None else []:
                if m.type == "identifier":
                    out.add(text(m))
        return out

    # --- statements ----------------------------------------------------------------------
    def block(self, node: Node | None) -> list[Stmt]:
        if node is None:
            return []
        out: list[Stmt] = []
        for c in node.named_children:
            if c.type == "comment" or self.is_dead(c):
                continue
            out += self.stmt(c)
        return out

    def stmt(self, n: Node) -> list[Stmt]:
        t = n.type
        loc = self.loc(n)
        if t == "expression_statement":
            out: list[Stmt] = []
            for c in n.named_children:
                if c.type == "assignment":
                    out += self.assignment(c, loc)
                elif c.type == "augmented_assignment":
                    op = text(c.child_by_field_name("operator"))
                    out.append(Assign(loc, self.target(c.child_by_field_name("left")), op.replace("/=", "fdiv=") if op == "/=" else op, self.expr(c.child_by_field_name("right"))))
                elif c.type == "string":
                    continue  # docstrings and bare strings are not code
                else:
                    out.append(ExprStmt(loc, self.expr(c)))
            return out
        if t == "if_statement":
            return [self.if_stmt(n, [c for c in n.children if c.type in ("elif_clause", "else_clause")])]
        if t == "for_statement":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            return [Loop(loc, "range", self.block(n.child_by_field_name("body")), var=self.target(left), iterable=self.expr(right))]
        if t == "while_statement":
            return [Loop(loc, "while", self.block(n.child_by_field_name("body")), cond=self.expr(n.child_by_field_name("condition")))]
        if t == "return_statement":
            v = n.named_children[0] if n.named_children else None
            return [Return(loc, self.expr(v) if v is not None else None)]
        if t == "with_statement":
            return self.block(n.child_by_field_name("body"))
        if t in ("function_definition", "decorated_definition"):
            fn = n.child_by_field_name("definition") if t == "decorated_definition" else n
            if fn is None or fn.type != "function_definition":
                return []
            params = fn.child_by_field_name("parameters")
            names = tuple(text(c if c.type == "identifier" else (c.child_by_field_name("name") or c)) for c in (params.named_children if params is not None else []))
            saved = set(self.locals)
            self.locals |= set(names) | self._assigned_names(fn)
            body = self.block(fn.child_by_field_name("body"))
            self.locals = saved
            return [Assign(loc, Name(text(fn.child_by_field_name("name"))), "=", Lambda(names, body, id(fn)))]  # a closure
        if t == "try_statement":
            return self.block(n.child_by_field_name("body"))
        return []

    def if_stmt(self, n: Node, clauses: list[Node]) -> If:
        cond = self.expr(n.child_by_field_name("condition"))
        cons = n.child_by_field_name("consequence")
        then = [] if cons is None or self.is_dead(cons) else self.block(cons)
        orelse: list[Stmt] = []
        if clauses:
            first, rest = clauses[0], clauses[1:]
            if first.type == "elif_clause":
                orelse = [self.if_stmt(first, rest)]
            else:
                body = first.child_by_field_name("body")
                orelse = [] if body is None or self.is_dead(body) else self.block(body)
        return If(self.loc(n), cond, then, orelse)

    def assignment(self, a: Node, loc: Loc) -> list[Stmt]:
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        if right is None:
            return []  # annotation only: x: int
        if right.type == "assignment":  # a = b = c
            inner = self.assignment(right, loc)
            return inner + [Assign(loc, self.target(left), "=", self.target(right.child_by_field_name("left")))]
        return [Assign(loc, self.target(left), "=", self.expr(right))]

    def target(self, n: Node | None) -> E:
        if n is None:
            return Name("_")
        if n.type in ("pattern_list", "tuple_pattern", "list_pattern", "expression_list", "tuple"):
            return Tup(tuple(self.target(c) for c in n.named_children))
        if n.type == "identifier":
            return Name(text(n))
        return self.expr(n)

    # --- expressions ---------------------------------------------------------------------
    def dotted(self, n: Node) -> str:
        """The canonical library path of an attribute chain rooted at an import (else "")."""
        parts: list[str] = []
        cur = n
        while cur is not None and cur.type == "attribute":
            parts.insert(0, text(cur.child_by_field_name("attribute")))
            cur = cur.child_by_field_name("object")
        if cur is None or cur.type != "identifier":
            return ""
        root = text(cur)
        if root in self.locals or root not in self.table:
            return ""
        return canonical(".".join([self.table[root]] + parts))

    def expr(self, n: Node | None) -> E:
        if n is None:
            return Num(0)
        t = n.type
        if t == "identifier":
            s = text(n)
            if s not in self.locals and s in self.table and self.table[s] != s:
                return Name(canonical(self.table[s]))
            return Name(s)
        if t == "integer":
            try:
                return Num(int(text(n).replace("_", ""), 0))
            except ValueError:
                return Num(0)
        if t == "float":
            try:
                return Num(float(text(n).replace("_", "")))
            except ValueError:
                return Num(0.0)
        if t in ("true", "false"):
            return Num(t == "true")
        if t == "none":
            return Sym("none")
        if t in ("string", "concatenated_string"):
            return Str("".join(text(c) for c in walk(n) if c.type == "string_content"))
        if t == "parenthesized_expression":
            kids = [c for c in n.named_children if c.type != "comment"]
            return self.expr(kids[0]) if kids else Num(0)
        if t == "attribute":
            path = self.dotted(n)
            if path:
                return Name(path)
            return Attr(self.expr(n.child_by_field_name("object")), text(n.child_by_field_name("attribute")))
        if t == "binary_operator":
            op = _token(n.child_by_field_name("operator"))
            return Op(PY_BINOPS.get(op, op), (self.expr(n.child_by_field_name("left")), self.expr(n.child_by_field_name("right"))))
        if t == "boolean_operator":
            op = _token(n.child_by_field_name("operator"))
            return Op(op, (self.expr(n.child_by_field_name("left")), self.expr(n.child_by_field_name("right"))))
        if t == "not_operator":
            return Op("not", (self.expr(n.child_by_field_name("argument")),))
        if t == "unary_operator":
            op = _token(n.child_by_field_name("operator"))
            arg = self.expr(n.child_by_field_name("argument"))
            return {"-": Op("neg", (arg,)), "~": Op("~", (arg,))}.get(op, arg)
        if t == "comparison_operator":
            kids = [c for c in n.named_children if c.type != "comment"]
            ops = [text(c) for c in n.children if not c.is_named]
            parts = [Op(ops[i] if i < len(ops) else "<", (self.expr(kids[i]), self.expr(kids[i + 1]))) for i in range(len(kids) - 1)]
            return parts[0] if len(parts) == 1 else Op("and", tuple(parts))
        if t == "conditional_expression":
            kids = [c for c in n.named_children if c.type != "comment"]
            if len(kids) == 3:
                return Op("?:", (self.expr(kids[1]), self.expr(kids[0]), self.expr(kids[2])))
            return Num(0)
        if t == "call":
            return self.call(n)
        if t == "subscript":
            value = n.child_by_field_name("value")
            idx = [self.expr(c) if c.type != "slice" else Sym("slice") for c in n.children_by_field_name("subscript")]
            return Index(self.expr(value), tuple(idx))
        if t in ("tuple", "list", "expression_list", "pattern_list"):
            return Tup(tuple(self.expr(c) for c in n.named_children if c.type != "comment"))
        if t == "lambda":
            params = n.child_by_field_name("parameters")
            names = tuple(text(c) for c in (params.named_children if params is not None else []) if c.type == "identifier")
            saved = set(self.locals)
            self.locals |= set(names)
            body = self.expr(n.child_by_field_name("body"))
            self.locals = saved
            return Lambda(names, body, id(n))
        if t == "keyword_argument":
            return self.expr(n.child_by_field_name("value"))
        if t == "slice":
            return Sym("slice")
        return Name("?" + t)

    def call(self, n: Node) -> E:
        fn = n.child_by_field_name("function")
        al = n.child_by_field_name("arguments")
        args: list[E] = []
        kw: list[tuple[str, E]] = []
        for a in al.named_children if al is not None else []:
            if a.type == "keyword_argument":
                kw.append((text(a.child_by_field_name("name")), self.expr(a.child_by_field_name("value"))))
            elif a.type not in ("comment", "list_splat", "dictionary_splat"):
                args.append(self.expr(a))
        if fn is None:
            return Call("?", tuple(args), tuple(kw))
        if fn.type == "identifier":
            name = text(fn)
            if name not in self.locals and name in self.table and self.table[name] != name:
                name = canonical(self.table[name])
            return Call(name, tuple(args), tuple(kw))
        if fn.type == "attribute":
            path = self.dotted(fn)
            if path:
                return Call(path, tuple(args), tuple(kw))
            obj = fn.child_by_field_name("object")
            return Call("." + text(fn.child_by_field_name("attribute")), (self.expr(obj),) + tuple(args), tuple(kw))
        if fn.type == "subscript":  # kernel[grid](args): a Triton launch
            value = fn.child_by_field_name("value")
            grid = fn.child_by_field_name("subscript")
            return Call("launch[]", tuple(args), (("kernel", self.expr(value)), ("grid", self.expr(grid))) + tuple(kw))
        return Call("()", (self.expr(fn),) + tuple(args), tuple(kw))


def _token(n: Node | None) -> str:
    """An operator token's text: an anonymous node's type is its text (no decoding)."""
    if n is None:
        return ""
    return n.type if not n.is_named else text(n)
