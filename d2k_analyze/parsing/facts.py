"""What detectors see of a kernel unit: its live code as small records, extracted in one walk.

A unit is made of *pieces* (the kernel, the helpers it calls, the macros it uses), each a syntax
subtree with the byte ranges that liveness found dead. One walk over each piece produces calls,
loops, declarations, assignments, inline PTX, pragmas and the comment-free text of every live line.
Detectors then query these records instead of re-walking trees, which keeps 36 detectors cheap
and makes "only live code earns credit" hold for all of them at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Iterator

from . import rx
from .treesitter import Node, text, walk, walk_pruned


def keyword(kwargs: tuple[tuple[str, str], ...], key: str, default: str | None = None) -> str | None:
    """The source text of keyword argument ``key`` in a call's or loop's ``(name, text)`` pairs."""
    return next((v for k, v in kwargs if k == key), default)


@dataclass(frozen=True)
class Call:
    name: str  # as written, normalised: "tl.dot", "wmma::mma_sync", "__shfl_xor_sync"
    file: str
    line: int
    end_line: int
    args: tuple[str, ...] = ()
    kwargs: tuple[tuple[str, str], ...] = ()
    template_args: tuple[str, ...] = ()
    text: str = ""

    @cached_property
    def short(self) -> str:
        """Last segment of the name: ``tl.math.exp2`` -> ``exp2``, ``wmma::mma_sync`` -> ``mma_sync``."""
        return self.name.replace("::", ".").rsplit(".", 1)[-1]

    def kw(self, key: str, default: str | None = None) -> str | None:
        return keyword(self.kwargs, key, default)


@dataclass(frozen=True)
class Loop:
    file: str
    line: int
    end_line: int
    var: str = ""
    init: str = ""  # CUDA initializer / Python range start
    cond: str = ""  # CUDA condition / Python range stop
    step: str = ""  # CUDA update / Python range step
    iterator: str = ""  # Python: the iterable's callee ("range", "tl.range", "tl.static_range")
    kwargs: tuple[tuple[str, str], ...] = ()
    header: str = ""
    kind: str = "for"  # for | while | do

    def kw(self, key: str, default: str | None = None) -> str | None:
        return keyword(self.kwargs, key, default)


@dataclass(frozen=True)
class Decl:
    """A CUDA variable declaration (one declarator)."""

    file: str
    line: int
    name: str
    type: str
    qualifiers: frozenset[str]  # __shared__, extern, const, static, register, constexpr, __constant__
    dims: tuple[str, ...]  # array dimensions as written ("" for [])
    init: str = ""
    text: str = ""


@dataclass(frozen=True)
class Assign:
    file: str
    line: int
    target: str
    op: str  # "=", "+=", "*=", ...
    value: str


@dataclass(frozen=True)
class Line:
    file: str
    line: int
    text: str


@dataclass
class HostContext:
    """Host code around the unit's launches: grid sizing, launch attributes, autotuning loops."""

    lines: list[Line] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


@dataclass
class LaunchInfo:
    file: str
    line: int
    grid: str  # Triton grid expression / CUDA <<<grid, block, smem, stream>>>
    kwargs: dict[str, str] = field(default_factory=dict)  # Triton keyword arguments as written
    template_args: tuple[str, ...] = ()


@dataclass
class UnitFacts:
    name: str
    language: str
    file: str
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, type / annotation)
    lines: list[Line] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    decls: list[Decl] = field(default_factory=list)
    assigns: list[Assign] = field(default_factory=list)
    asm: list[Line] = field(default_factory=list)  # inline PTX strings (and macro bodies using asm)
    pragmas: list[Line] = field(default_factory=list)
    attributes: list[Line] = field(default_factory=list)  # __launch_bounds__, __cluster_dims__, ...
    idents: set[str] = field(default_factory=set)
    # Triton
    decorators: list[Call] = field(default_factory=list)
    configs: list[dict[str, list[object]]] = field(default_factory=list)  # autotune configs
    n_configs: int = 0
    heuristics: set[str] = field(default_factory=set)
    constexprs: set[str] = field(default_factory=set)
    envs: list[dict[str, object]] = field(default_factory=list)  # constants per launch x config
    launches: list[LaunchInfo] = field(default_factory=list)
    host: HostContext = field(default_factory=HostContext)
    launched: bool = False
    constants: dict[str, str] = field(default_factory=dict)  # CUDA file constants: name -> expression
    low_precision: bool = False  # the unit's CUDA source mentions half/bf16/fp8 types (outside comments)
    cache: dict = field(default_factory=dict, repr=False)  # detector helpers memoise here
    file_lines: dict[str, list[str]] = field(default_factory=dict)  # raw text, for snippets

    # -- queries shared by detectors ---------------------------------------------------------
    def calls_named(self, *names: str) -> list[Call]:
        """Calls whose full or last-segment name is one of ``names``."""
        wanted = set(names)
        return [c for c in self.calls if c.name in wanted or c.short in wanted]

    def calls_matching(self, pattern: str) -> list[Call]:
        pat = rx.compile(pattern)
        return [c for c in self.calls if pat.search(c.name)]

    def grep(self, pattern: str, flags: int = 0) -> list[Line]:
        """Live lines whose comment-free text matches ``pattern``."""
        return self._grep("lines", self.lines, pattern, flags)

    def grep_asm(self, pattern: str) -> list[Line]:
        if not self.asm:
            return []
        return self._grep("asm", self.asm, pattern, 0)

    def grep_host(self, pattern: str) -> list[Line]:
        return self._grep("host", self.host.lines, pattern, 0)

    def _grep(self, which: str, lines: list[Line], pattern: str, flags: int) -> list[Line]:
        # One scan of the whole text answers most greps (and rx.search skips the regex when the
        # words every match needs are absent); only then are lines tested one by one.
        if not rx.search(pattern, self._joined(which), flags):
            return []
        pat = rx.compile(pattern, flags)
        return [ln for ln in lines if rx.may_match(pattern, ln.text, flags) and pat.search(ln.text)]

    def _joined(self, which: str) -> str:
        """All texts of lines / asm / host lines joined (cached; facts do not change once built)."""
        key = "joined_" + which
        if key not in self.cache:
            src = {"lines": self.lines, "asm": self.asm, "host": self.host.lines}[which]
            self.cache[key] = "\n".join(ln.text for ln in src)
        return self.cache[key]

    def idents_matching(self, pattern: str, flags: int = 0) -> list[str]:
        """Identifiers that ``pattern`` matches at their start (``re.match``), in ``idents`` order.
        One test of all identifiers joined rules out most patterns before any per-name match."""
        key = "joined_idents"
        if key not in self.cache:
            self.cache[key] = "\n".join(self.idents)
        if not rx.may_match(pattern, self.cache[key], flags):
            return []
        return [i for i in self.idents if rx.match(pattern, i, flags)]

    def has_ident(self, *names: str) -> bool:
        return any(n in self.idents for n in names)

    def snippet(self, file: str, start: int, end: int | None = None) -> str:
        lines = self.file_lines.get(file) or []
        end = end or start
        chunk = lines[max(start - 1, 0) : min(end, start + 4, len(lines))]
        return "\n".join(s.rstrip() for s in chunk)[:400]

    def constexpr_values(self, name: str) -> set[object]:
        """Values ``name`` takes across launch envs (empty set: unknown or never set)."""
        from .liveness import UNKNOWN

        out: set[object] = set()
        for env in self.envs:
            v = env.get(name, UNKNOWN)
            if v is UNKNOWN:
                return set()
            try:
                out.add(v)
            except TypeError:
                return set()
        return out

    def constant_expr(self, name: str) -> str | None:
        """Defining expression of a file constant or a local constexpr/const declaration."""
        if name in self.constants:
            return self.constants[name]
        local = self.cache.get("local_constants")
        if local is None:
            local = {d.name: d.init for d in self.decls if d.init and ("constexpr" in d.qualifiers or "const" in d.qualifiers)}
            self.cache["local_constants"] = local
        return local.get(name)

    def config_values(self, key: str) -> list[object]:
        """All values of an autotune config key (``num_stages``, ``BLOCK_M`` ...) across configs."""
        return [v for cfg in self.configs for v in cfg.get(key, [])]


# ---------------------------------------------------------------------------- shared helpers

class Piece:
    """A syntax subtree belonging to a unit, with its dead byte ranges and row -> line mapping."""

    def __init__(self, node: Node, file: str, line_of, data: bytes, dead: list[tuple[int, int]], language: str, pragmas=()):
        self.node, self.file, self.line_of, self.data, self.dead, self.language = node, file, line_of, data, dead, language
        self.pragmas = pragmas  # (row, byte, text) of pragma lines blanked before parsing

    def is_dead(self, node: Node) -> bool:
        s = node.start_byte
        return any(a <= s < b for a, b in self.dead)


def _live_nodes(piece: Piece, comments: list[tuple[int, int]] | None = None) -> Iterator[Node]:
    """Pre-order walk of the piece, skipping dead subtrees and comments (collected in ``comments``)."""
    dead = piece.dead

    def prune(n: Node) -> bool:
        if n.type == "comment":
            if comments is not None:
                comments.append((n.start_byte, n.end_byte))
            return True
        if dead:
            s = n.start_byte
            return any(a <= s < b for a, b in dead)
        return False

    return walk_pruned(piece.node, prune)


def _live_text_lines(piece: Piece, blank: Iterable[tuple[int, int]]) -> list[Line]:
    """Comment-free text of each live line of the piece (blanked ranges become spaces)."""
    start, end = piece.node.start_byte, piece.node.end_byte
    buf = bytearray(piece.data[start:end])
    for a, b in list(blank) + list(piece.dead):
        a, b = max(a, start), min(b, end)
        if a < b:
            for i in range(a - start, b - start):
                if buf[i] != 0x0A:
                    buf[i] = 0x20
    row0 = piece.node.start_point[0]
    out = []
    for i, raw in enumerate(bytes(buf).decode("utf-8", errors="replace").split("\n")):
        if raw.strip():
            out.append(Line(piece.file, piece.line_of(row0 + i), raw))
    return out


def _line(piece: Piece, node: Node) -> int:
    return piece.line_of(node.start_point[0])


def _end_line(piece: Piece, node: Node) -> int:
    return piece.line_of(node.end_point[0])


def _squash(s: str) -> str:
    """Whitespace runs as one space, trimmed (str.split's whitespace is re's ``\\s``)."""
    return " ".join(s.split())


# ---------------------------------------------------------------------------- CUDA

def _cuda_callee(fn: Node) -> tuple[str, tuple[str, ...]]:
    targs: tuple[str, ...] = ()
    if fn.type == "template_function":
        al = fn.child_by_field_name("arguments")
        targs = tuple(text(a) for a in (al.named_children if al is not None else []))
        fn = fn.child_by_field_name("name") or fn.children[0]
    if fn.type == "field_expression":
        f = fn.child_by_field_name("field")
        return (text(f) if f is not None else text(fn)), targs
    name = re.sub(r"<[^<>]*>", "", text(fn)).replace(" ", "")
    return name, targs


def _declarators(decl: Node) -> Iterator[tuple[str, tuple[str, ...], str, Node]]:
    for d in decl.children_by_field_name("declarator"):
        init = ""
        if d.type == "init_declarator":
            init = text(d.child_by_field_name("value"))
            d = d.child_by_field_name("declarator") or d
        dims: list[str] = []
        while d is not None and d.type in ("array_declarator", "pointer_declarator", "reference_declarator", "attributed_declarator"):
            if d.type == "array_declarator":
                dims.insert(0, text(d.child_by_field_name("size")))
            nxt = d.child_by_field_name("declarator")
            if nxt is None:
                nxt = next((c for c in d.named_children if c.type in ("identifier", "array_declarator", "pointer_declarator")), None)
            d = nxt
        if d is not None:
            yield text(d), tuple(dims), init, d


def extract_cuda(facts: UnitFacts, piece: Piece) -> None:
    """Add the live records of one CUDA piece (a function or a macro) to ``facts``."""
    node = piece.node
    if node.type in ("preproc_def", "preproc_function_def"):
        value = node.child_by_field_name("value")
        body = text(value)
        ln = _line(piece, node)
        facts.lines.append(Line(piece.file, ln, body))
        facts.idents.update(re.findall(r"[A-Za-z_]\w*", body))
        if "asm" in body:
            for s in re.findall(r'"((?:[^"\\]|\\.)*)"', body):
                facts.asm.append(Line(piece.file, ln, s))
        for m in re.finditer(r"([A-Za-z_][\w:]*)\s*\(", body):
            facts.calls.append(Call(m.group(1), piece.file, ln, ln, text=body[:200]))
        return
    blank: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    for n in _live_nodes(piece, comments):
        t = n.type
        if t in ("identifier", "field_identifier", "type_identifier", "namespace_identifier"):
            facts.idents.add(text(n))
        elif t == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is None:
                continue
            name, targs = _cuda_callee(fn)
            al = n.child_by_field_name("arguments")
            args = tuple(text(a) for a in (al.named_children if al is not None else []) if a.type != "comment")
            facts.calls.append(Call(name, piece.file, _line(piece, n), _end_line(piece, n), args, (), targs, _squash(text(n))[:300]))
        elif t in ("for_statement", "while_statement", "do_statement", "for_range_loop"):
            init = n.child_by_field_name("initializer")
            cond = n.child_by_field_name("condition")
            upd = n.child_by_field_name("update")
            var = ""
            if init is not None:
                m = re.search(r"([A-Za-z_]\w*)\s*=", text(init))
                var = m.group(1) if m else ""
            header_end = n.child_by_field_name("body")
            header = piece.data[n.start_byte : header_end.start_byte if header_end is not None else n.end_byte]
            facts.loops.append(
                Loop(
                    piece.file, _line(piece, n), _end_line(piece, n), var, _squash(text(init)), _squash(text(cond)),
                    _squash(text(upd)), "", (), _squash(header.decode("utf-8", errors="replace"))[:300],
                    {"for_statement": "for", "while_statement": "while", "do_statement": "do", "for_range_loop": "for"}[t],
                )
            )
        elif t in ("declaration", "field_declaration"):
            quals = frozenset(
                text(c) for c in n.children if c.type in ("type_qualifier", "storage_class_specifier") or c.type.startswith("__")
            )
            type_node = n.child_by_field_name("type")
            for name, dims, init, _ in _declarators(n):
                facts.decls.append(Decl(piece.file, _line(piece, n), name, text(type_node), quals, dims, init, _squash(text(n))[:300]))
                if init:
                    facts.assigns.append(Assign(piece.file, _line(piece, n), name, "=", _squash(init)))
        elif t == "assignment_expression":
            op = n.child_by_field_name("operator")
            facts.assigns.append(
                Assign(piece.file, _line(piece, n), _squash(text(n.child_by_field_name("left"))), text(op), _squash(text(n.child_by_field_name("right"))))
            )
        elif t == "return_statement" and n.named_children:
            # helpers often return the update itself: return {n, a.mean + d * wb, a.m2 + b.m2 + d * d * ...}
            facts.assigns.append(Assign(piece.file, _line(piece, n), "return", "=", _squash(text(n.named_children[0]))))
        elif t == "gnu_asm_expression":
            code = n.child_by_field_name("assembly_code")
            if code is not None:
                parts = [c for c in ([code] if code.type == "string_literal" else code.named_children)]
                ptx = "".join(text(p)[1:-1] for p in parts if p.type == "string_literal")
                facts.asm.append(Line(piece.file, _line(piece, n), ptx.replace("\\n", "\n").replace("\\t", " ")))
        elif t in ("string_literal", "raw_string_literal", "char_literal", "system_lib_string"):
            blank.append((n.start_byte, n.end_byte))
        elif t == "preproc_call":
            d = n.child_by_field_name("directive")
            if d is not None and text(d) == "#pragma":
                facts.pragmas.append(Line(piece.file, _line(piece, n), _squash(text(n.child_by_field_name("argument")))))
        elif t in ("launch_bounds",):
            facts.attributes.append(Line(piece.file, _line(piece, n), _squash(text(n))))
        elif t == "comment":
            blank.append((n.start_byte, n.end_byte))
    # Comments were skipped by the walk; blank them (and strings) in the line texts too.
    comments += _dead_comment_ranges(piece)
    blank += comments
    for row, byte, ptext in piece.pragmas:
        if node.start_byte <= byte < node.end_byte and not any(a <= byte < b for a, b in comments + list(piece.dead)):
            facts.pragmas.append(Line(piece.file, piece.line_of(row), ptext))
            facts.lines.append(Line(piece.file, piece.line_of(row), "#pragma " + ptext))
    facts.lines += _live_text_lines(piece, blank)


def _comment_ranges(node: Node) -> list[tuple[int, int]]:
    return [(n.start_byte, n.end_byte) for n in walk(node) if n.type == "comment"]


def _dead_comment_ranges(piece: Piece) -> list[tuple[int, int]]:
    """Comments inside dead ranges (the live walk never saw them); blanked anyway."""
    if not piece.dead:
        return []
    return [c for c in _comment_ranges(piece.node) if any(a <= c[0] < b for a, b in piece.dead)]


# ---------------------------------------------------------------------------- Python / Triton

def py_name(node: Node | None) -> str:
    if node is None:
        return ""
    name = re.sub(r"\s+", "", text(node)) if node.type in ("attribute", "identifier") else text(node)
    return name.replace("triton.language.", "tl.")


def py_args(call: Node) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    al = call.child_by_field_name("arguments")
    args: list[str] = []
    kwargs: list[tuple[str, str]] = []
    for a in al.named_children if al is not None else []:
        if a.type == "keyword_argument":
            kwargs.append((text(a.child_by_field_name("name")), _squash(text(a.child_by_field_name("value")))))
        elif a.type != "comment":
            args.append(_squash(text(a)))
    return tuple(args), tuple(kwargs)


def extract_python(facts: UnitFacts, piece: Piece) -> None:
    """Add the live records of one Triton function to ``facts``."""
    blank: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    body = piece.node.child_by_field_name("body") or piece.node
    for n in _live_nodes(Piece(body, piece.file, piece.line_of, piece.data, piece.dead, "python"), comments):
        t = n.type
        if t == "identifier":
            facts.idents.add(text(n))
        elif t == "call":
            fn = n.child_by_field_name("function")
            if fn is None:
                continue
            args, kwargs = py_args(n)
            facts.calls.append(Call(py_name(fn), piece.file, _line(piece, n), _end_line(piece, n), args, kwargs, (), _squash(text(n))[:300]))
        elif t in ("for_statement", "while_statement"):
            if t == "for_statement":
                right = n.child_by_field_name("right")
                var = text(n.child_by_field_name("left"))
                iterator, rargs, rkw = "", (), ()
                if right is not None and right.type == "call":
                    iterator = py_name(right.child_by_field_name("function"))
                    rargs, rkw = py_args(right)
                start, stop, step = "0", "", "1"
                if len(rargs) == 1:
                    stop = rargs[0]
                elif len(rargs) >= 2:
                    start, stop = rargs[0], rargs[1]
                    step = rargs[2] if len(rargs) > 2 else "1"
                step = dict(rkw).get("step", step)
                body_node = n.child_by_field_name("body")
                header = piece.data[n.start_byte : body_node.start_byte if body_node is not None else n.end_byte]
                facts.loops.append(
                    Loop(piece.file, _line(piece, n), _end_line(piece, n), var, start, stop, step, iterator, rkw,
                         _squash(header.decode("utf-8", errors="replace"))[:300])
                )
            else:
                cond = n.child_by_field_name("condition")
                facts.loops.append(Loop(piece.file, _line(piece, n), _end_line(piece, n), cond=_squash(text(cond)), header="while " + _squash(text(cond)), kind="while"))
        elif t in ("assignment", "augmented_assignment"):
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            op = "=" if t == "assignment" else text(n.child_by_field_name("operator"))
            if right is not None:
                facts.assigns.append(Assign(piece.file, _line(piece, n), _squash(text(left)), op, _squash(text(right))))
        elif t == "return_statement" and n.named_children:
            facts.assigns.append(Assign(piece.file, _line(piece, n), "return", "=", _squash(text(n.named_children[0]))))
        elif t == "expression_statement" and n.named_children and n.named_children[0].type == "string":
            blank.append((n.start_byte, n.end_byte))  # docstrings and bare strings are not code
    live_body = Piece(body, piece.file, piece.line_of, piece.data, piece.dead, "python")
    facts.lines += _live_text_lines(live_body, blank + comments + _dead_comment_ranges(live_body))
