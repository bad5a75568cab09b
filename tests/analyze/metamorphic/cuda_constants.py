"""CUDA constants for transformation (d): ``#define`` <-> ``constexpr``, and a file constant turned
into a kernel template parameter given at the launch (see constants.py for why)."""

from __future__ import annotations

import re

from . import cpp

_INT_LITERAL = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")

def _file_scope(node: cpp.Node) -> bool:
    p = node.parent
    return p is not None and (p.type == "translation_unit" or (
        p.type == "declaration_list" and p.parent is not None and p.parent.type == "namespace_definition"))


def _constexpr_declarations(root: cpp.Node) -> list[cpp.Node]:
    """File/namespace-scope ``constexpr``/``const`` variable declarations with initialisers."""
    out = []
    for n in cpp.walk(root):
        if n.type != "declaration" or not _file_scope(n):
            continue
        quals = {cpp.node_text(c) for c in n.children if c.type == "type_qualifier"}
        decls = [c for i, c in enumerate(n.children) if n.field_name_for_child(i) == "declarator"]
        if not quals & {"constexpr", "const"} or not decls:
            continue
        if all(d.type == "init_declarator" and d.child_by_field_name("value") is not None
               and d.child_by_field_name("declarator").type == "identifier" for d in decls):
            out.append(n)
    return out


def evaluate(expr: str, known: dict[str, int]) -> int | None:
    """Value of an integer constant expression over literals and ``known`` names, or None."""
    tokens = re.findall(r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|<<|>>|[-+*/%()]|\S", expr)
    out = []
    for t in tokens:
        if _INT_LITERAL.match(t):
            out.append(str(int(t.rstrip("uUlL"), 0)))
        elif t in known:
            out.append(str(known[t]))
        elif t in ("+", "-", "*", "%", "(", ")", "<<", ">>"):
            out.append(t)
        elif t == "/":
            out.append("//")
        else:
            return None
    try:
        value = eval("".join(out), {"__builtins__": {}}, {})  # noqa: S307 - digits and operators only
    except Exception:
        return None
    return value if isinstance(value, int) and value >= 0 else None


def known_constants(root: cpp.Node) -> dict[str, int]:
    """File-scope integer constants whose values follow from literals (in declaration order)."""
    known: dict[str, int] = {}
    for n in _constexpr_declarations(root):
        for d in (c for i, c in enumerate(n.children) if n.field_name_for_child(i) == "declarator"):
            value = evaluate(cpp.node_text(d.child_by_field_name("value")), known)
            if value is not None:
                known[cpp.node_text(d.child_by_field_name("declarator"))] = value
    for e in cpp.walk(root):  # enumerators with explicit values
        if e.type == "enumerator" and e.child_by_field_name("value") is not None:
            value = evaluate(cpp.node_text(e.child_by_field_name("value")), known)
            if value is not None:
                known[cpp.node_text(e.child_by_field_name("name"))] = value
    return known


def _name_uses(root: cpp.Node, name: str) -> list[cpp.Node]:
    return [n for n in cpp.walk(root) if n.type in cpp.NAME_LEAVES and cpp.node_text(n) == name]


def _macro_safe(root: cpp.Node, name: str) -> bool:
    """A constant can become a macro if its name is declared once and never qualified or a member."""
    declared = 0
    for n in _name_uses(root, name):
        p = n.parent
        if n.type == "field_identifier" or (p is not None and p.type == "qualified_identifier"):
            return False
        if cpp.declarator_name(p) == n if p is not None else False:
            declared += 1
    return declared == 1


def _line_rest_is_comment(text: bytes, end: int) -> bool:
    rest = text[end:].split(b"\n", 1)[0].strip()
    return not rest or rest.startswith(b"//") or rest.startswith(b"/*")


def constexpr_to_define(text: str) -> tuple[str, list[str]]:
    tree = cpp.parse(text)
    root, data = tree.root_node, text.encode("utf-8")
    edits, names = [], []
    for n in _constexpr_declarations(root):
        type_node = n.child_by_field_name("type")
        type_text = cpp.node_text(type_node) if type_node is not None else "int"
        decls = [c for i, c in enumerate(n.children) if n.field_name_for_child(i) == "declarator"]
        decl_names = [cpp.node_text(d.child_by_field_name("declarator")) for d in decls]
        if not all(_macro_safe(root, x) for x in decl_names):
            continue
        lines = []
        for name, d in zip(decl_names, decls):
            value = " ".join(cpp.node_text(d.child_by_field_name("value")).split())
            body = f"({value})" if type_text in ("int", "auto") else f"(static_cast<{type_text}>({value}))"
            lines.append(f"#define {name} {body}")
        prefix = "" if data[:n.start_byte].endswith(b"\n") or n.start_byte == 0 else "\n"
        suffix = "" if _line_rest_is_comment(data, n.end_byte) else "\n"
        edits.append(cpp.Edit(n.start_byte, n.end_byte, prefix + "\n".join(lines) + suffix))
        names += decl_names
    return cpp.apply_edits(text, edits), names


def define_to_constexpr(text: str) -> tuple[str, list[str]]:
    """File-scope object-like ``#define NAME value`` -> ``constexpr auto NAME = value;`` (names the
    preprocessor itself tests in ``#if``/``#ifdef`` stay macros)."""
    tree = cpp.parse(text)
    root = tree.root_node
    edits, names = [], []
    conditions = " ".join(cpp.node_text(n.child_by_field_name("condition") or n.child_by_field_name("name") or n)
                          for n in cpp.walk(root) if n.type in ("preproc_if", "preproc_ifdef", "preproc_elif"))
    for n in cpp.walk(root):
        if n.type != "preproc_def" or not _file_scope(n) or n.child_by_field_name("value") is None:
            continue
        name = cpp.node_text(n.child_by_field_name("name"))
        value = " ".join(cpp.node_text(n.child_by_field_name("value")).split())
        if not value or re.search(rf"\b{re.escape(name)}\b", conditions):
            continue
        edits.append(cpp.Edit(n.start_byte, n.end_byte, f"constexpr auto {name} = {value};\n"))
        names.append(name)
    return cpp.apply_edits(text, edits), names


# ---------------------------------------------------------------------------------------------
# A constant as a kernel template parameter


def _launch_references(root: cpp.Node, kernel: str, definition: cpp.Node) -> list[cpp.Node]:
    return [n for n in cpp.walk(root) if n.type == "identifier" and cpp.node_text(n) == kernel
            and not (definition.start_byte <= n.start_byte < definition.end_byte)]


def _pick_constant(fn: cpp.Node, known: dict[str, int]) -> str | None:
    """The file constant to turn into a template parameter: a shared-array dimension if any,
    else a __launch_bounds__ argument, else the first one used in the kernel."""
    body = fn.child_by_field_name("body")
    used = [cpp.node_text(n) for n in cpp.walk(fn) if n.type in ("identifier", "type_identifier")]
    shared, bounds = [], []
    for n in cpp.walk(fn):
        if n.type == "declaration" and "__shared__" in cpp.node_text(n).split("(")[0]:
            shared += [cpp.node_text(x) for x in cpp.walk(n) if x.type == "identifier"]
        if n.type == "launch_bounds":
            bounds += [cpp.node_text(x) for x in cpp.walk(n) if x.type == "identifier"]
    local = cpp.declarations(body).all() if body is not None else set()
    for group in (shared, bounds, used):
        for name in group:
            if name in known and name not in local:
                return name
    return None


def _fresh(text: str, stem: str):
    taken = set(re.findall(r"[A-Za-z_]\w*", text))
    i = 0
    while True:
        i += 1
        if f"{stem}{i}" not in taken:
            taken.add(f"{stem}{i}")
            yield f"{stem}{i}"


def _is_launched(refs: list[cpp.Node]) -> bool:
    """Some reference is the callee of a ``<<<...>>>`` launch."""
    for r in refs:
        call = r.parent.parent if r.parent is not None and r.parent.type == "template_function" else r.parent
        if call is not None and any(c.type == "kernel_call_syntax" for c in call.children):
            return True
    return False


def constant_to_template_param(text: str) -> tuple[str, list[tuple[str, str, str, int]]]:
    """(new text, [(kernel, constant, template parameter, value)]).

    The parameter gets a new name, so that inside the kernel its value is known only from the
    launch's template argument, not from the file constant's declaration."""
    tree = cpp.parse(text)
    root = tree.root_node
    known = known_constants(root)
    fresh = _fresh(text, "TP")
    edits: list[cpp.Edit] = []
    done = []
    for fn in cpp.functions(root):
        if not cpp.is_kernel(fn):
            continue
        kernel = cpp.function_name(fn)
        refs = _launch_references(root, kernel, fn)
        if not refs or not _is_launched(refs):
            continue
        if any(r.parent is not None and r.parent.type == "function_declarator" for r in refs):
            continue  # a prototype would need the same template header
        constant = _pick_constant(fn, known)
        if constant is None:
            continue
        param, value = next(fresh), known[constant]
        for leaf in cpp.walk(fn):
            if leaf.type in ("identifier", "type_identifier") and cpp.node_text(leaf) == constant \
                    and (leaf.parent is None or leaf.parent.type != "qualified_identifier"):
                edits.append(cpp.Edit(leaf.start_byte, leaf.end_byte, param))
        tmpl = cpp.template_of(fn)
        if tmpl is not None:
            params = tmpl.child_by_field_name("parameters")
            close = params.children[-1]
            sep = ", " if params.named_child_count else ""
            edits.append(cpp.Edit(close.start_byte, close.start_byte, f"{sep}int {param}"))
        else:
            edits.append(cpp.Edit(fn.start_byte, fn.start_byte, f"template <int {param}>\n"))
        for r in refs:
            if r.parent is not None and r.parent.type == "template_function":
                close = r.parent.child_by_field_name("arguments").children[-1]
                edits.append(cpp.Edit(close.start_byte, close.start_byte, f", {value}"))
            else:
                edits.append(cpp.Edit(r.end_byte, r.end_byte, f"<{value}>"))
        done.append((kernel, constant, param, value))
    return cpp.apply_edits(text, edits), done
