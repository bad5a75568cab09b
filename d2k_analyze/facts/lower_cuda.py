"""CUDA C++ (tree-sitter) -> the IR of :mod:`.ir` and :mod:`.expr`.

Lowering keeps what code does and drops how it is spelled: comments and strings vanish, dead
byte ranges (constant branches under the launch constants, ``#if 0``) are skipped, the launch
geometry becomes atoms (``threadIdx.x`` -> ``Sym("tid.x")``), casts keep their target type,
``i++`` becomes ``i += 1``, and pragmas attach to the loop they precede. Library names stay
names, with namespace aliases (``namespace cg = cooperative_groups``) expanded and ``::``
written as ``.``; user names are resolved later by the interpreter.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..parsing.treesitter import Node, text
from .expr import Call, Cast, E, Index, Lambda, Name, Num, Op, Str, Sym, Tup, TypeRef, Attr
from .ir import Asm, Assign, Decl, ExprStmt, Func, If, Loc, Loop, Param, Pragma, Return, Stmt

GEOMETRY = {"threadIdx": "tid", "blockIdx": "bid", "blockDim": "bdim", "gridDim": "gdim", "clusterIdx": "cid", "clusterDim": "cdim"}
BINOPS = {"&&": "and", "||": "or"}
CASTS = ("reinterpret_cast", "static_cast", "const_cast", "dynamic_cast", "bit_cast", "std.bit_cast")
_NUM_SUFFIX = re.compile(r"[uUlLfFhH]+$")


class CudaLowering:
    """Lowers the functions of one CUDA source (a file or a compiled Python string).

    ``line_of`` maps a tree row to a line of the displayed file; ``dead`` holds the byte ranges
    that earn nothing; ``pragmas`` are ``(row, byte, text)`` of the pragma lines blanked before
    parsing; ``aliases`` maps namespace aliases to their targets."""

    def __init__(self, file: str, line_of, dead: list[tuple[int, int]] = (), pragmas=(), aliases: dict[str, str] | None = None):
        self.file = file
        self.line_of = line_of
        self.dead = list(dead)
        self.pragmas = sorted(pragmas)
        self.aliases = aliases or {}
        self._lambda_key = 0

    # --- locations -----------------------------------------------------------------------
    def loc(self, n: Node) -> Loc:
        return Loc(self.file, self.line_of(n.start_point[0]), self.line_of(n.end_point[0]))

    def is_dead(self, n: Node) -> bool:
        s = n.start_byte
        return any(a <= s < b for a, b in self.dead)

    # --- functions -----------------------------------------------------------------------
    def function(self, node: Node, name: str, kind: str, tparams=(), qualifiers=frozenset(), attributes=()) -> Func:
        decl = node.child_by_field_name("declarator")
        params: list[Param] = []
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        for p in plist.named_children if plist is not None else []:
            if p.type in ("parameter_declaration", "optional_parameter_declaration"):
                params.append(self.param(p))
        body = node.child_by_field_name("body")
        stmts = self.block(body) if body is not None else []
        return Func(name, params, stmts, self.loc(node), "cuda", kind, list(tparams), frozenset(qualifiers), tuple(attributes))

    def param(self, p: Node) -> Param:
        d = p.child_by_field_name("declarator")
        ptr, ref, name = 0, False, ""
        while d is not None:
            if d.type == "pointer_declarator":
                ptr += 1
            elif d.type == "reference_declarator":
                ref = True
            elif d.type in ("identifier", "field_identifier"):
                name = text(d)
                break
            elif d.type == "array_declarator":
                ptr += 1
            nxt = d.child_by_field_name("declarator")
            if nxt is None:
                nxt = next((c for c in d.named_children if c.type in ("identifier", "pointer_declarator", "reference_declarator", "array_declarator")), None)
            d = nxt
        default = p.child_by_field_name("default_value")
        return Param(name, _squash(text(p.child_by_field_name("type"))), self.expr(default) if default is not None else None, ref, ptr)

    # --- statements ----------------------------------------------------------------------
    def block(self, node: Node | None) -> list[Stmt]:
        if node is None:
            return []
        if node.type != "compound_statement":
            lowered = self.stmt(node)
            before = node.prev_sibling  # ``for (...)\n#pragma unroll\n for (...)``: a body without braces
            if lowered and isinstance(lowered[0], Loop) and before is not None:
                lowered[0].pragmas += self._pragmas_between(before.end_byte, node.start_byte)
            return lowered
        out: list[Stmt] = []
        prev_end = node.start_byte
        for c in node.named_children:
            if c.type == "comment" or self.is_dead(c):
                prev_end = c.end_byte
                continue
            lowered = self.stmt(c)
            if lowered and isinstance(lowered[0], Loop):
                lowered[0].pragmas += self._pragmas_between(prev_end, c.start_byte)
                # _Pragma("unroll") lowered as a statement right before the loop
                while out and isinstance(out[-1], Pragma):
                    lowered[0].pragmas = (out.pop().text,) + lowered[0].pragmas
            out += lowered
            prev_end = c.end_byte
        return out

    def _pragmas_between(self, start: int, end: int) -> tuple[str, ...]:
        return tuple(t for _row, b, t in self.pragmas if start <= b < end)

    def stmt(self, n: Node) -> list[Stmt]:
        t = n.type
        if t == "compound_statement":
            return self.block(n)
        if t == "expression_statement":
            if not n.named_children:
                return []
            return self.expr_stmt(n.named_children[0], n)
        if t == "declaration":
            return self.declaration(n)
        if t == "if_statement":
            cond = n.child_by_field_name("condition")
            cond_e = self.expr(cond.child_by_field_name("value") or cond) if cond is not None else Num(True)
            cons = n.child_by_field_name("consequence")
            alt = n.child_by_field_name("alternative")
            then = [] if cons is None or self.is_dead(cons) else self.stmt(cons)
            orelse: list[Stmt] = []
            if alt is not None and not self.is_dead(alt):
                inner = alt.named_children[0] if alt.type == "else_clause" and alt.named_children else alt
                orelse = self.stmt(inner)
            return [If(self.loc(n), cond_e, then, orelse)]
        if t == "for_statement":
            init = n.child_by_field_name("initializer")
            init_s = (self.declaration(init) if init.type == "declaration" else self.expr_stmt(init, init)) if init is not None else []
            cond = n.child_by_field_name("condition")
            upd = n.child_by_field_name("update")
            upd_s = self.expr_stmt(upd, upd) if upd is not None else []
            return [Loop(self.loc(n), "for", self.stmt_body(n), init_s, self.expr(cond) if cond is not None else None, upd_s)]
        if t == "for_range_loop":
            decl = n.child_by_field_name("declarator")
            name = _declared_name(decl)
            right = n.child_by_field_name("right")
            return [Loop(self.loc(n), "range", self.stmt_body(n), var=Name(name) if name else None, iterable=self.expr(right) if right is not None else None)]
        if t == "while_statement":
            cond = n.child_by_field_name("condition")
            c = cond.child_by_field_name("value") if cond is not None else None
            return [Loop(self.loc(n), "while", self.stmt_body(n), cond=self.expr(c or cond) if cond is not None else None)]
        if t == "do_statement":
            cond = n.child_by_field_name("condition")
            return [Loop(self.loc(n), "do", self.stmt_body(n), cond=self.expr(cond) if cond is not None else None)]
        if t == "return_statement":
            v = n.named_children[0] if n.named_children else None
            return [Return(self.loc(n), self.expr(v) if v is not None and v.type != "comment" else None)]
        if t == "switch_statement":
            body = n.child_by_field_name("body")
            cond = n.child_by_field_name("condition")
            ce = self.expr(cond.child_by_field_name("value") or cond) if cond is not None else Num(0)
            out: list[Stmt] = []
            for case in body.named_children if body is not None else []:
                if case.type != "case_statement" or self.is_dead(case):
                    continue
                value = case.child_by_field_name("value")
                stmts = [s for c in case.named_children if c is not value and c.type != "comment" for s in self.stmt(c)]
                test = Op("==", (ce, self.expr(value))) if value is not None else Op("default", (ce,))
                out.append(If(self.loc(case), test, stmts, []))
            return out
        if t in ("labeled_statement",):
            return [s for c in n.named_children[1:] for s in self.stmt(c)]
        if t in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
            # conditional compilation inside a body: every live alternative counts (we cannot
            # know the macros the build defines), except a branch whose condition is literally
            # false (``#if 0``): only its ``#else`` / ``#elif`` alternative is compiled
            cond = n.child_by_field_name("condition")
            alternative = n.child_by_field_name("alternative")
            if t in ("preproc_if", "preproc_elif") and cond is not None and text(cond).strip() in ("0", "false"):
                return self.stmt(alternative) if alternative is not None else []
            return [s for c in n.named_children if c.type not in ("identifier", "preproc_defined") and c is not cond for s in self.stmt(c)]
        if t == "gnu_asm_expression":
            return [self.asm(n)]
        if t == "function_definition":  # MACRO(args) { body }: a loop or scope macro the file does not define
            return self.macro_block(n)
        if t == "alias_declaration" and n.child_by_field_name("name") is not None and n.child_by_field_name("type") is not None:
            # ``using C = config<128, 64>;`` in a body: the name stands for that type from here on
            return [Decl(self.loc(n), text(n.child_by_field_name("name")), _squash(text(n.child_by_field_name("type"))), frozenset({"using"}))]
        if t == "type_definition" and n.child_by_field_name("type") is not None and n.child_by_field_name("declarator") is not None:
            # ``typedef cub::BlockReduce<float, 128> R;`` in a body: as ``using R = ...``
            return [Decl(self.loc(n), text(n.child_by_field_name("declarator")), _squash(text(n.child_by_field_name("type"))), frozenset({"using"}))]
        if t in ("break_statement", "continue_statement", "goto_statement", "comment", "type_definition",
                 "alias_declaration", "using_declaration", "static_assert_declaration", "preproc_call",
                 "preproc_def", "preproc_function_def", "namespace_alias_definition", "struct_specifier",
                 "class_specifier", "enum_specifier", "template_declaration"):
            return []
        if t == "try_statement":
            return self.block(n.child_by_field_name("body"))
        return []

    def macro_block(self, n: Node) -> list[Stmt]:
        """A statement ``NAME(args) { body }`` whose macro is defined outside the submission. The
        frameworks' element loops (``CUDA_KERNEL_LOOP(i, n)``, ``CUDA_1D_KERNEL_LOOP_T(T, i, n)``)
        are grid-stride loops over ``i`` by their (library) definition; any other is a scope."""
        decl = n.child_by_field_name("declarator")
        body = self.block(n.child_by_field_name("body"))
        name = text(decl.child_by_field_name("declarator")) if decl is not None else ""
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        args = [" ".join(text(p).split()) for p in (plist.named_children if plist is not None else [])]
        if "KERNEL_LOOP" not in name or len(args) < 2:
            return body
        var, bound = (args[1], args[2]) if len(args) >= 3 and not args[0].isidentifier() or len(args) >= 3 and args[0][0].isupper() else (args[0], args[1])
        loc = self.loc(n)
        start = Op("+", (Op("*", (Sym("bid.x"), Sym("bdim.x"))), Sym("tid.x")))
        init = [Decl(loc, var, "int64_t", init=start)]
        update = [Assign(loc, Name(var), "+=", Op("*", (Sym("bdim.x"), Sym("gdim.x"))))]
        return [Loop(loc, "for", body, init, Op("<", (Name(var), Name(bound) if bound.isidentifier() else Name(bound))), update)]

    def stmt_body(self, n: Node) -> list[Stmt]:
        body = n.child_by_field_name("body")
        if body is None or self.is_dead(body):
            return []
        return self.block(body)

    def declaration(self, n: Node) -> list[Stmt]:
        quals = frozenset(
            text(c) for c in n.children
            if c.type in ("type_qualifier", "storage_class_specifier") or c.type.startswith("__")
        )
        type_node = n.child_by_field_name("type")
        base_type = _squash(text(type_node)) if type_node is not None else ""
        out: list[Stmt] = []
        for d in n.children_by_field_name("declarator"):
            init_node = None
            if d.type == "init_declarator":
                init_node = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator") or d
            dims: list[E | None] = []
            ptr, ref = 0, False
            while d is not None and d.type in ("array_declarator", "pointer_declarator", "reference_declarator", "attributed_declarator", "parenthesized_declarator"):
                if d.type == "array_declarator":
                    size = d.child_by_field_name("size")
                    dims.insert(0, self.expr(size) if size is not None else None)
                elif d.type == "pointer_declarator":
                    ptr += 1
                elif d.type == "reference_declarator":
                    ref = True
                nxt = d.child_by_field_name("declarator")
                if nxt is None:
                    nxt = next((c for c in d.named_children if c.type in ("identifier", "array_declarator", "pointer_declarator", "reference_declarator", "parenthesized_declarator")), None)
                d = nxt
            ctor_args = _vexing_parse_args(d) if n.type == "declaration" else None
            if ctor_args is not None:  # ``Gemm<Cfg> g(c_tile);``: an object built from locals, not a function
                name = d.child_by_field_name("declarator")
                args = tuple(Name(a) if size is None else Index(Name(a), (self.expr(size),)) for a, size in ctor_args)
                out.append(Decl(self.loc(n), text(name), base_type, quals, (), Call("ctor:" + base_type, args), False, 0))
                continue
            if d is None or d.type not in ("identifier", "field_identifier"):
                continue
            init = None
            if init_node is not None:
                if init_node.type == "initializer_list" and not dims and init_node.named_child_count == 1:
                    init = self.expr(init_node.named_children[0])  # int i{0}
                elif init_node.type == "argument_list":
                    init = Call("ctor:" + base_type, tuple(self.expr(a) for a in init_node.named_children if a.type != "comment"))
                else:
                    init = self.expr(init_node)
            elif n.type == "declaration" and any(c.type == "argument_list" for c in (n.child_by_field_name("declarator"),) if c is not None):
                init = None
            out.append(Decl(self.loc(n), text(d), base_type + "*" * ptr, quals, tuple(dims), init, ref, ptr))
        return out

    def expr_stmt(self, e: Node, at: Node) -> list[Stmt]:
        t = e.type
        loc = self.loc(at)
        misread = _misparsed_template_decl(e)
        if misread is not None:  # `Tile<32> name = value;` read as `(Tile < 32) > (name = value)`
            type_text, name, value = misread
            return [Decl(loc, name, type_text, init=self.expr(value))]
        if t == "assignment_expression":
            op = text(e.child_by_field_name("operator"))
            left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
            declared = _misparsed_reference_decl(left) if op == "=" else None
            if declared:  # `Tile<64,64> (&tiles)[2] = alloc.allocate<...>()` parsed as an expression
                return [Decl(loc, declared, "auto&", init=self.expr(right), ref=True)]
            if right is not None and right.type == "assignment_expression" and _split_comparison(right) is None:  # a = b = c
                inner = self.expr_stmt(right, at)
                target = right.child_by_field_name("left")
                return inner + [Assign(loc, self.expr(left), op, self.expr(target))]
            return [Assign(loc, self.expr(left), op, self.expr(right))]
        if t == "update_expression":
            arg = e.child_by_field_name("argument")
            op = "+=" if "++" in text(e.child_by_field_name("operator")) else "-="
            return [Assign(loc, self.expr(arg), op, Num(1))]
        if t == "comma_expression":
            return [s for c in e.named_children for s in self.expr_stmt(c, at)]
        if t == "gnu_asm_expression":
            return [self.asm(e)]
        if t == "call_expression":
            fn = e.child_by_field_name("function")
            if fn is not None and text(fn) == "_Pragma":
                args = e.child_by_field_name("arguments")
                return [Pragma(loc, _unquote(text(args.named_children[0])) if args is not None and args.named_children else "")]
        return [ExprStmt(loc, self.expr(e))]

    def asm(self, n: Node) -> Asm:
        code = n.child_by_field_name("assembly_code")
        parts = [] if code is None else ([code] if code.type == "string_literal" else code.named_children)
        ptx = "".join(_unquote(text(p)) for p in parts if p.type in ("string_literal", "concatenated_string"))
        outs = tuple(self.expr(op.child_by_field_name("value")) for ol in n.children if ol.type == "gnu_asm_output_operand_list"
                     for op in ol.named_children if op.type == "gnu_asm_output_operand" and op.child_by_field_name("value") is not None)
        ins = tuple(self.expr(op.child_by_field_name("value")) for il in n.children if il.type == "gnu_asm_input_operand_list"
                    for op in il.named_children if op.type == "gnu_asm_input_operand" and op.child_by_field_name("value") is not None)
        return Asm(self.loc(n), ptx.replace("\\n", "\n").replace("\\t", " "), outs, ins)

    # --- expressions ---------------------------------------------------------------------
    def expr(self, n: Node | None) -> E:
        if n is None:
            return Num(0)
        t = n.type
        if t == "identifier":
            s = text(n)
            if s == "warpSize":
                return Num(32)
            return Name(s)
        if t == "number_literal":
            return Num(_number(text(n)))
        if t in ("true", "false"):
            return Num(t == "true")
        if t in ("null", "nullptr"):
            return Num(0)
        if t in ("string_literal", "concatenated_string", "raw_string_literal"):
            return Str(_unquote(text(n)))
        if t == "char_literal":
            s = _unquote(text(n))
            return Num(ord(s[0]) if s else 0)
        if t == "parenthesized_expression":
            inner = [c for c in n.named_children if c.type != "comment"]
            return self.expr(inner[-1]) if inner else Num(0)
        if t == "binary_expression":
            op = _token(n.child_by_field_name("operator"))
            return Op(BINOPS.get(op, op), (self.expr(n.child_by_field_name("left")), self.expr(n.child_by_field_name("right"))))
        if t == "unary_expression":
            op = _token(n.child_by_field_name("operator"))
            arg = self.expr(n.child_by_field_name("argument"))
            return {"-": Op("neg", (arg,)), "!": Op("not", (arg,)), "~": Op("~", (arg,))}.get(op, arg)
        if t == "pointer_expression":
            op = _token(n.child_by_field_name("operator"))
            arg = self.expr(n.child_by_field_name("argument"))
            return Op("deref" if op == "*" else "addr", (arg,))
        if t == "update_expression":
            return self.expr(n.child_by_field_name("argument"))
        if t == "conditional_expression":
            return Op("?:", (self.expr(n.child_by_field_name("condition")), self.expr(n.child_by_field_name("consequence")), self.expr(n.child_by_field_name("alternative"))))
        if t == "assignment_expression":
            split = _split_comparison(n)
            return self.expr(split if split is not None else n.child_by_field_name("right"))
        if t == "comma_expression":
            kids = [c for c in n.named_children if c.type != "comment"]
            return self.expr(kids[-1]) if kids else Num(0)
        if t == "field_expression":
            base = n.child_by_field_name("argument")
            fld = n.child_by_field_name("field")
            b = text(base) if base is not None else ""
            f = text(fld) if fld is not None else ""
            if b in GEOMETRY and f in ("x", "y", "z"):
                return Sym(f"{GEOMETRY[b]}.{f}")
            return Attr(self.expr(base), f)
        if t == "subscript_expression":
            idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
            items = [c for c in (idx.named_children if idx is not None and idx.type == "subscript_argument_list" else [idx]) if c is not None and c.type != "comment"]
            return Index(self.expr(n.child_by_field_name("argument")), tuple(self.expr(i) for i in items))
        if t == "call_expression":
            return self.call(n)
        if t == "cast_expression":
            return Cast(_squash(text(n.child_by_field_name("type"))), self.expr(n.child_by_field_name("value")))
        if t == "sizeof_expression":
            v = n.child_by_field_name("value") or n.child_by_field_name("type")
            return Call("sizeof", (TypeRef(_squash(text(v))) if v is not None and v.type == "type_descriptor" else self.expr(v),))
        if t == "initializer_list":
            return Tup(tuple(self.expr(c) for c in n.named_children if c.type != "comment"))
        if t in ("qualified_identifier", "scoped_identifier"):
            return Name(self.qualified(text(n)))
        if t == "template_function":
            tal = n.child_by_field_name("arguments")
            return Name(self.qualified(_strip_targs(text(n))), tuple(self.template_arg(a) for a in (tal.named_children if tal is not None else [])))
        if t == "lambda_expression":
            self._lambda_key += 1
            decl = n.child_by_field_name("declarator")
            plist = decl.child_by_field_name("parameters") if decl is not None else None
            params = tuple(self.param(p).name for p in (plist.named_children if plist is not None else []) if p.type == "parameter_declaration")
            body = self.block(n.child_by_field_name("body"))
            return Lambda(params, body, id(n) ^ self._lambda_key)
        if t in ("compound_literal_expression",):
            v = n.child_by_field_name("value")
            return Call("ctor:" + _squash(text(n.child_by_field_name("type"))), tuple(self.expr(c) for c in (v.named_children if v is not None else [])))
        if t in ("type_descriptor", "primitive_type", "type_identifier", "sized_type_specifier"):
            return TypeRef(_squash(text(n)))
        if t == "new_expression":
            return Call("new")
        if t == "gnu_asm_expression":
            return Call("asm", (Str(text(n)[:200]),))
        return Name("?" + t)

    def call(self, n: Node) -> E:
        fn = n.child_by_field_name("function")
        al = n.child_by_field_name("arguments")
        args = tuple(self.expr(a) for a in (al.named_children if al is not None else []) if a.type != "comment")
        if fn is None:
            return Call("?", args)
        kcs = next((c for c in n.children if c.type == "kernel_call_syntax"), None)
        if kcs is not None:  # kernel<<<grid, block, smem, stream>>>(args)
            config = [self.expr(c) for c in kcs.named_children if c.type != "comment"]
            name_node = fn.child_by_field_name("name") if fn.type == "template_function" else fn
            tal = fn.child_by_field_name("arguments") if fn.type == "template_function" else None
            targs = tuple(self.template_arg(a) for a in (tal.named_children if tal is not None else []))
            kw = tuple(zip(("grid", "block", "smem", "stream"), config))
            return Call("<<<>>>", args, (("kernel", self.expr(name_node)),) + kw, targs)
        targs: tuple[E, ...] = ()
        name_node = fn
        if fn.type == "template_function":
            tal = fn.child_by_field_name("arguments")
            targs = tuple(self.template_arg(a) for a in (tal.named_children if tal is not None else []))
            name_node = fn.child_by_field_name("name") or fn.children[0]
        elif fn.type == "qualified_identifier":
            tf = next((c for c in fn.named_children if c.type == "template_function"), None)
            if tf is not None:
                tal = tf.child_by_field_name("arguments")
                targs = tuple(self.template_arg(a) for a in (tal.named_children if tal is not None else []))
        if fn.type == "field_expression":
            base = fn.child_by_field_name("argument")
            fld = fn.child_by_field_name("field")
            fname = _strip_targs(text(fld)).replace("template ", "").strip() if fld is not None else "?"
            if fld is not None and fld.type == "template_method":
                tal = fld.child_by_field_name("arguments")
                targs = tuple(self.template_arg(a) for a in (tal.named_children if tal is not None else []))
            return Call("." + fname, (self.expr(base),) + args, (), targs)
        if fn.type in ("call_expression", "parenthesized_expression", "subscript_expression"):
            return Call("()", (self.expr(fn),) + args)  # functor call: Op()(a, b), ops[i](x)
        name = self.qualified(_strip_targs(text(name_node)))
        if name in CASTS or name.endswith(".bit_cast"):
            return Cast(_type_text(targs), args[0] if args else Num(0))
        return Call(name, args, (), targs)

    def template_arg(self, a: Node) -> E:
        """One template argument: a type (``float``, ``at::Half``) or a value expression."""
        if a.type == "type_descriptor":
            return TypeRef(_squash(text(a)))
        return self.expr(a)

    def qualified(self, name: str) -> str:
        """``nvcuda::wmma::mma_sync`` -> ``nvcuda.wmma.mma_sync``; namespace aliases expanded."""
        name = _squash(name).replace(" ", "").lstrip(":")
        parts = name.split("::")
        if parts[0] in self.aliases:
            parts = self.aliases[parts[0]].split("::") + parts[1:]
        return ".".join(parts)


def _misparsed_template_decl(e: Node) -> tuple[str, str, Node] | None:
    """(type, name, value) of ``Type<N> name = value;`` when the grammar, not knowing ``Type`` is a
    template (its header is not parsed), read it as ``(Type < N) > (name = value)``: a comparison
    whose result is discarded, around an assignment, is all but unheard of as a statement."""
    if e.type != "binary_expression" or text(e.child_by_field_name("operator")) != ">":
        return None
    left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
    if left is None or right is None or left.type != "binary_expression" or text(left.child_by_field_name("operator")) != "<":
        return None
    tmpl = left.child_by_field_name("left")
    if tmpl is None or tmpl.type not in ("identifier", "qualified_identifier", "type_identifier"):
        return None
    if right.type != "assignment_expression" or text(right.child_by_field_name("operator")) != "=":
        return None
    name, value = right.child_by_field_name("left"), right.child_by_field_name("right")
    if name is None or name.type != "identifier" or value is None:
        return None
    return f"{_squash(text(tmpl))}<{_squash(text(left.child_by_field_name('right')))}>", text(name), value


def _misparsed_reference_decl(left: Node | None) -> str:
    """The name in ``Type<...> (&name)[N]`` / ``Alias (&name)[N]`` when the grammar read the
    declaration as a call (``f(&x)[n] = v`` as a statement is all but unheard of)."""
    if left is None or left.type != "subscript_expression":
        return ""
    call = left.child_by_field_name("argument")
    if call is None or call.type != "call_expression":
        return ""
    fn = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if fn is None or fn.type not in ("template_function", "qualified_identifier", "identifier", "type_identifier") or args is None or args.named_child_count != 1:
        return ""
    arg = args.named_children[0]
    if arg.type == "pointer_expression" and text(arg.child_by_field_name("operator")) == "&":
        inner = arg.child_by_field_name("argument")
        if inner is not None and inner.type == "identifier":
            return text(inner)
    return ""


def _type_text(targs: tuple[E, ...]) -> str:
    if not targs:
        return ""
    t = targs[0]
    return t.name if isinstance(t, TypeRef) else (t.id if isinstance(t, Name) else "")


def _declared_name(d: Node | None) -> str:
    while d is not None and d.type not in ("identifier",):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type in ("identifier", "reference_declarator", "pointer_declarator", "structured_binding_declarator")), None)
        d = nxt
    return text(d) if d is not None else ""


def _squash(s: str) -> str:
    return " ".join(s.split())


@lru_cache(maxsize=8192)
def _strip_targs(s: str) -> str:
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"<[^<>]*>", "", s)
    return s.strip()


def _unquote(s: str) -> str:
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', s)
    if parts:
        return "".join(parts)
    return s.strip("'\"")


@lru_cache(maxsize=8192)
def _number(s: str) -> int | float:
    """The value of a C++ numeric literal (memoised: literals repeat)."""
    s = s.replace("'", "")
    body = re.sub(r"[uUlL]+$", "", s) if s.lower().startswith("0x") else _NUM_SUFFIX.sub("", s)
    try:
        if body.lower().startswith("0x"):
            return int(body[2:] or "0", 16) if not re.search(r"[pP]", body) else float.fromhex(body)
        if body.lower().startswith("0b"):
            return int(body[2:], 2)
        if re.fullmatch(r"0[0-7]+", body):
            return int(body, 8)
        if re.fullmatch(r"\d+", body):
            return int(body)
        return float(body)
    except ValueError:
        return 0


_LESS_THAN = re.compile(r"\b([A-Za-z_]\w*)(\s*)<(?![<=])")


def _split_comparison(n: Node) -> Node | None:
    """The comparison tree-sitter read as a template: ``r < M && c >= 0`` parses as the template
    ``r<M && c>`` assigned ``0`` (a ``>=`` split into the ``>`` that closes a template argument
    list and an ``=``), which would turn every bounds check written that way into an assignment
    of a constant. Recognised by position alone: an ``=`` whose left side ends in a template
    argument list whose ``>`` touches it. Returns the expression parsed again with each
    ``name <`` written ``(name) <`` (which cannot open a template argument list), on the same
    source row so that locations stay right; None when ``n`` is not such a split."""
    op, left = n.child_by_field_name("operator"), n.child_by_field_name("left")
    if op is None or left is None or _token(op) != "=":
        return None
    last = left
    while last is not None and last.type == "binary_expression":
        last = last.child_by_field_name("right")
    args = last.child_by_field_name("arguments") if last is not None and last.type == "template_function" else None
    if args is None or args.end_byte != op.start_byte:
        return None
    written = text(n)
    fixed = _LESS_THAN.sub(r"(\1)\2<", written)
    return _reparse_expression(fixed, n.start_point[0]) if fixed != written else None


@lru_cache(maxsize=256)
def _reparse_expression(source: str, row: int) -> Node | None:
    from ..parsing.treesitter import parse

    tree, _ = parse("cuda", "\n" * row + "void d2k_reparsed() { (" + source + "); }")
    body = tree.root_node.named_children[0].child_by_field_name("body") if tree.root_node.named_child_count else None
    stmt = body.named_children[0] if body is not None and body.named_child_count else None
    inner = stmt.named_children[0] if stmt is not None and stmt.type == "expression_statement" and stmt.named_child_count else None
    if inner is None or inner.type != "parenthesized_expression" or inner.has_error or not inner.named_child_count:
        return None
    out = inner.named_children[0]
    # still an assignment: a name the rewrite cannot reach (``ns::x <``) is read as a template
    # again; keep the old reading rather than parse the same text over and over
    return None if out.type == "assignment_expression" else out


def _token(n: Node | None) -> str:
    """An operator token's text: an anonymous node's type is its text (no decoding)."""
    if n is None:
        return ""
    return n.type if not n.is_named else text(n)


def _vexing_parse_args(d: Node | None) -> list[tuple[str, Node | None]] | None:
    """``Gemm<Cfg> g(c_tile);`` or ``T const w(emb[off + i]);`` inside a function body is parsed as
    a function declaration whose "parameters" are the type ``c_tile``, or the type ``emb`` with an
    array declarator of size ``off + i``. C++ reads both as a value built from its arguments when
    every parameter is a bare name, or a name with one subscript, and no declarator name (a
    function declaration would name parameter types such as ``int`` or ``const T&``): (name,
    subscript or None) per argument."""
    if d is None or d.type != "function_declarator":
        return None
    name, params = d.child_by_field_name("declarator"), d.child_by_field_name("parameters")
    if name is None or name.type != "identifier" or params is None or not params.named_children:
        return None
    out: list[tuple[str, Node | None]] = []
    for p in params.named_children:
        if p.type == "comment":
            continue
        kids = [c for c in p.named_children if c.type != "comment"]
        if p.type != "parameter_declaration" or not kids or kids[0].type != "type_identifier":
            return None
        if len(kids) == 1 and p.child_by_field_name("declarator") is None:
            out.append((text(kids[0]), None))
            continue
        sub = p.child_by_field_name("declarator")
        size = sub.child_by_field_name("size") if sub is not None and sub.type == "abstract_array_declarator" else None
        if len(kids) != 2 or size is None or sub.child_by_field_name("declarator") is not None:
            return None
        out.append((text(kids[0]), size))  # ``emb[off + i]``: an element, not an array parameter
    return out
