"""Triton decorators and autotune configs, read statically.

Configs may be written inline, in a module-level list, built by a function or a comprehension,
or made by a small factory (``_config(128, 64, stages=3)``); each key's possible values are kept
so that num_stages / num_ctas / BLOCK constants can be folded like launch-site constants.
"""

from __future__ import annotations

import itertools

from . import liveness
from .liveness import UNKNOWN
from .python import PyFunction, PySource, py_args, py_name
from .treesitter import Node, text, walk


def module_constants(py: PySource) -> dict[str, object]:
    return liveness.resolve_constants(py.constants, "python")


def _resolve_value_node(node: Node, py: PySource, others: list[PySource] = ()) -> list[Node]:
    """Where configs actually live: a list literal, a module-level list, or a config-building
    function (in this module or another module of the submission)."""
    modules = [py] + [o for o in others if o is not py]
    if node.type == "identifier":
        name = text(node)
        for mod in modules:
            for mn in mod.module_nodes:
                for n in walk(mn):
                    if n.type == "assignment" and text(n.child_by_field_name("left")) == name:
                        return [n.child_by_field_name("right") or n]
            for fn in mod.functions:
                if fn.name == name:
                    return [fn.node]
    if node.type == "call":
        callee = py_name(node.child_by_field_name("function")).split(".")[-1]
        for mod in modules:
            for fn in mod.functions:
                if fn.name == callee:
                    return [fn.node]
    if node.type == "binary_operator":  # configs_a() + configs_b() / [..] + helper()
        return [r for side in ("left", "right") if node.child_by_field_name(side) is not None
                for r in _resolve_value_node(node.child_by_field_name(side), py, others)]
    return [node]


def call_bindings(call: Node, fn: PyFunction, consts: dict[str, object]) -> dict[str, object]:
    """Literal values a call gives to ``fn``'s parameters (defaults where the call gives none):
    ``linear_configs([16, 64], [32, 64])`` binds the lists the builder's loops run over."""
    args, kwargs = py_args(call)
    out: dict[str, object] = {}
    for (pname, _, default), arg in zip(fn.params, list(args) + [None] * len(fn.params)):
        expr = dict(kwargs).get(pname, arg if arg is not None else default)
        if expr:
            v = liveness.literal_value(expr, consts)
            if v is not UNKNOWN:
                out[pname] = v
    return out


def returned_values(fn: PyFunction, index: int | None, consts: dict[str, object]) -> list[object] | None:
    """Every literal value ``fn`` can return (the ``index``-th item of a returned tuple): each
    ``return`` expression, with a returned local read from all of its literal assignments
    (``if size >= 2**15: stages = 3 ... else: stages = 5; return warps, stages`` gives [3, 4, 5]).
    None when any return is not literal."""
    values: list[object] = []
    for n in walk(fn.node):
        if n.type != "return_statement" or not n.named_children:
            continue
        e = n.named_children[0]
        if index is not None:
            items = [c for c in e.named_children if c.type != "comment"] if e.type in ("expression_list", "tuple") else []
            if index >= len(items):
                return None
            e = items[index]
        if e.type == "identifier":
            found = [r for a in walk(fn.node) if a.type == "assignment" for r in [_assigned(a, text(e))] if r is not None]
            vals = [liveness.literal_value(text(r), consts) for r in found]
        else:
            vals = [liveness.literal_value(text(e), consts)]
        if not vals or any(v is UNKNOWN for v in vals):
            return None
        values += [v for v in vals if v not in values]
    return values or None


def _assigned(a: Node, name: str) -> Node | None:
    """What an assignment gives ``name``: ``name = v``, or its item of ``a, name = u, v``."""
    left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
    if left is None or right is None:
        return None
    if left.type == "identifier":
        return right if text(left) == name else None
    if left.type in ("pattern_list", "tuple_pattern") and right.type in ("expression_list", "tuple"):
        names = [text(c) for c in left.named_children]
        items = [c for c in right.named_children if c.type != "comment"]
        if name in names and len(items) == len(names):
            return items[names.index(name)]
    return None


def _unpacked_from_call(node: Node, name: str, py: PySource, consts: dict[str, object]) -> list[object] | None:
    """Possible values of a local of the function enclosing ``node`` that is unpacked from a call
    to a function of the module (``warps, stages = pick(size)``)."""
    scope = node
    while scope.parent is not None and scope.type != "function_definition":
        scope = scope.parent
    by_name = {f.name: f for f in py.functions if not f.is_class}
    for a in walk(scope):
        if a.type != "assignment":
            continue
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        if left is None or right is None or right.type != "call":
            continue
        callee = by_name.get(py_name(right.child_by_field_name("function")).split(".")[-1])
        if callee is None:
            continue
        if left.type == "identifier" and text(left) == name:
            return returned_values(callee, None, consts)
        if left.type in ("pattern_list", "tuple_pattern"):
            names = [text(c) for c in left.named_children]
            if name in names:
                return returned_values(callee, names.index(name), consts)
    return None


def _comprehension_values(node: Node, consts: dict[str, object]) -> dict[str, list[object]]:
    """Loop variables of enclosing comprehensions / for loops mapped to the literal values they take."""
    out: dict[str, list[object]] = {}
    p = node.parent
    while p is not None:
        holders = []
        if p.type in ("list_comprehension", "generator_expression"):
            holders = [c for c in p.children if c.type == "for_in_clause"]
        elif p.type == "for_statement":
            holders = [p]
        for h in holders:
            left, right = h.child_by_field_name("left"), h.child_by_field_name("right")
            if left is None or right is None:
                continue
            vals = liveness.literal_value(text(right), consts)
            if vals is UNKNOWN and right.type == "call" and py_name(right.child_by_field_name("function")) == "range":
                bounds, _ = py_args(right)
                nums = [liveness.literal_value(b, consts) for b in bounds]
                if nums and all(isinstance(v, int) for v in nums) and len(nums) <= 3:
                    vals = list(range(*nums))[:64]
            if vals is UNKNOWN and right.type == "identifier":
                vals = _local_value(p, text(right), consts)
            if vals is UNKNOWN and right.type == "call" and py_name(right.child_by_field_name("function")).split(".")[-1] in ("product", "zip"):
                vals = _combined(right, consts)
            if vals is UNKNOWN and right.type == "call" and py_name(right.child_by_field_name("function")) != "range":
                # ``for bs in powers_of_2(1, 8)``: a helper's list, not evaluated here; a loop
                # over it is a sweep of several values, each unknown
                vals = [UNKNOWN, UNKNOWN]
            if isinstance(vals, (list, tuple)) and left.type == "identifier":
                out[text(left)] = list(vals)
            elif isinstance(vals, (list, tuple)) and left.type in ("pattern_list", "tuple_pattern"):
                names = [text(c) for c in left.named_children]
                for i, nm in enumerate(names):
                    # a row of an unevaluated helper's list is itself unknown: each name still sweeps
                    out[nm] = [v[i] if isinstance(v, (list, tuple)) and len(v) > i else UNKNOWN for v in vals]
        p = p.parent
    return out


def _combined(call: Node, consts: dict[str, object]) -> object:
    """The rows of ``itertools.product(a, b)`` or ``zip(a, b)`` over lists that evaluate here
    (``for bs, nw in product(block_sizes, warps)`` in a config builder), else UNKNOWN."""
    args, kw = py_args(call)
    lists = [liveness.literal_value(a, consts) for a in args]
    if kw or not lists or not all(isinstance(v, (list, tuple)) for v in lists):
        return UNKNOWN
    rows = list(itertools.product(*lists)) if py_name(call.child_by_field_name("function")).split(".")[-1] == "product" else list(zip(*lists))
    return [list(r) for r in rows[:256]]


def _local_value(node: Node, name: str, consts: dict[str, object]) -> object:
    """Value of ``name = <literal>`` (or its item of ``a, name = u, <literal>``) assigned in the
    function (or module) enclosing ``node``."""
    scope = node
    while scope.parent is not None and scope.type not in ("function_definition", "module"):
        scope = scope.parent
    for n in walk(scope):
        right = _assigned(n, name) if n.type == "assignment" else None
        if right is not None:
            if right.type == "conditional_expression":
                # X if flag else Y with an unknown flag: either list; the configs are as many
                branches = [c for c in right.named_children if c.type != "comment"]
                values = [liveness.literal_value(text(b), consts) for b in (branches[0], branches[-1])]
                lists = [v for v in values if isinstance(v, (list, tuple))]
                return max(lists, key=len) if lists else UNKNOWN
            return liveness.literal_value(text(right), consts)
    return UNKNOWN


# ``triton.Config(kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook)``: the positional order
CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")


def _config_items(call: Node) -> list[tuple[str, str]]:
    """(key, value text) of a ``triton.Config({...}, num_warps=.., num_stages=..)`` call; the
    launch options may also be given by position (``triton.Config({...}, 4, 3)``)."""
    items: list[tuple[str, str]] = []
    cal = call.child_by_field_name("arguments")
    positional = [a for a in (cal.named_children if cal is not None else []) if a.type not in ("keyword_argument", "comment")]
    for i, a in enumerate(positional[1:], start=1):
        if i < len(CONFIG_POSITIONAL) and CONFIG_POSITIONAL[i] != "pre_hook":
            items.append((CONFIG_POSITIONAL[i], text(a)))
    for a in cal.named_children if cal is not None else []:
        if a.type == "dictionary":
            for pair in a.named_children:
                if pair.type == "pair":
                    items.append((text(pair.child_by_field_name("key")).strip("'\""), text(pair.child_by_field_name("value"))))
        elif a.type == "keyword_argument":
            items.append((text(a.child_by_field_name("name")), text(a.child_by_field_name("value"))))
        elif a.type == "call" and py_name(a.child_by_field_name("function")) == "dict":
            _, kw = py_args(a)
            items += list(kw)
    return items


def autotune_configs(fn: PyFunction, py: PySource, consts: dict[str, object], others: list[PySource] = ()) -> tuple[list[dict[str, list[object]]], int]:
    """Autotune configs: per config, each key's possible values (comprehension variables expanded).

    Configs may be written inline, in a module-level list, built by a function, or made by a small
    factory (``_config(bm, bn, stages=3)``); each Config (or factory call) is one config per
    combination of the comprehension/loop variables around it."""
    configs: list[dict[str, list[object]]] = []
    total = 0
    factories = {f.name: f for f in py.functions if not f.is_class and b"Config(" in (f.node.text or b"") and any(
        n.type == "call" and py_name(n.child_by_field_name("function")).endswith("Config") for n in walk(f.node))}
    for expr in fn.decorator_exprs():
        if expr.type != "call" or not py_name(expr.child_by_field_name("function")).endswith("autotune"):
            continue
        al = expr.child_by_field_name("arguments")
        value = None
        for a in al.named_children if al is not None else []:
            if a.type == "keyword_argument" and text(a.child_by_field_name("name")) == "configs":
                value = a.child_by_field_name("value")
            elif a.type != "keyword_argument" and value is None:
                value = a
        if value is None:
            continue
        if value.type == "identifier":
            # ``CONFIGS = make_configs([128, 256], [4, 8])`` at module level: the builder's call
            # (with its arguments) is what the name holds
            held = _resolve_value_node(value, py, others)
            if len(held) == 1 and held[0].type == "call":
                value = held[0]
        for holder in _resolve_value_node(value, py, others):
            builder = next((f for m in [py, *others] for f in m.functions if f.node is holder), None)
            bound = call_bindings(value, builder, consts) if builder is not None and value.type == "call" else {}
            for n in walk(holder):
                if n.type != "call":
                    continue
                callee = py_name(n.child_by_field_name("function"))
                env = dict(consts) | bound
                if callee.endswith("Config"):
                    items = _config_items(n)
                elif callee.split(".")[-1] in factories and holder is not factories[callee.split(".")[-1]].node:
                    factory = factories[callee.split(".")[-1]]
                    env.update(call_bindings(n, factory, consts))
                    inner = next((m for m in walk(factory.node) if m.type == "call" and py_name(m.child_by_field_name("function")).endswith("Config")), None)
                    items = _config_items(inner) if inner is not None else []
                else:
                    continue
                loopvars = _comprehension_values(n, env)
                cfg: dict[str, list[object]] = {}
                for k, v in items:
                    unpacked = _unpacked_from_call(n, v.strip(), py, env) if v.strip().isidentifier() else None
                    if v.strip() in loopvars:
                        cfg[k] = list(loopvars[v.strip()])
                    elif unpacked is not None:
                        cfg[k] = unpacked
                    elif len(loopvars) == 1 and liveness.literal_value(v, env) is UNKNOWN:
                        (var, vals), = loopvars.items()  # num_warps=2 ** i over i in range(6)
                        cfg[k] = [liveness.literal_value(v, {**env, var: x}) for x in vals]
                    else:
                        cfg[k] = [liveness.literal_value(v, env)]
                count = 1
                for vals in loopvars.values():
                    count *= max(len(vals), 1)
                configs.append(cfg)
                total += count
    return configs, total
