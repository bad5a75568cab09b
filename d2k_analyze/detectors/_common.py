"""Helpers shared by detectors: questions several properties ask of the same facts.

Kept here once so that detectors stay a few lines each: which loops contain which calls, Triton's
reduction and num_stages conventions, shared-memory arrays, thread-index variables.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..parsing.liveness import UNKNOWN, literal_value
from ..parsing import rx
from ..parsing.facts import Call, Decl, Line, Loop, UnitFacts

TL_REDUCTIONS = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum", "cumsum", "cumprod", "associative_scan"}
LOW_PRECISION_CUDA = rx.compile(r"\b(__nv_bfloat16|nv_bfloat16|__half|half|bf16|__nv_bfloat162|__half2|half2|__nv_fp8\w*|fp8\w*|bfloat16|c10::BFloat16|at::BFloat16|at::Half|c10::Half)\b")
STAGE_NAME = rx.compile(r"(?i)^(k?num_?stages|k?stages|stages?_?count|pipe(line)?_?(depth|stages)|n_?stages|kStages|kNumStages)$")


_TOKEN = rx.compile(r"(?<![\w.])[A-Za-z_]\w*")


@lru_cache(maxsize=65536)
def tokens(text: str) -> frozenset[str]:
    """Identifiers in ``text`` (not field names after a dot): cheap 'does this mention X' checks."""
    return frozenset(_TOKEN.findall(text))


def mentions(text: str, *names: str) -> bool:
    toks = tokens(text)
    return any(n in toks for n in names)


IDENTIFIER = rx.compile(r"[A-Za-z_]\w*")


def mentions_any(text: str, names) -> bool:
    """Whether ``text`` uses one of ``names`` as an identifier (not after a dot): the answer of
    ``re.search(rf"(?<![\\w.]){re.escape(name)}\\b", text)`` for any name, from the cached token
    set instead of one regex per name and line. Names that are not plain identifiers
    (``threadIdx.x``, an unnamed parameter's "") keep the regex."""
    toks = tokens(text)
    for n in names:
        if n in toks:
            return True
        if not IDENTIFIER.fullmatch(n) and rx.search(rf"(?<![\w.]){re.escape(n)}\b", text):
            return True
    return False


def within(obj, loop: Loop) -> bool:
    """Whether a fact record (with file/line) lies inside ``loop``."""
    return obj.file == loop.file and loop.line <= obj.line <= loop.end_line


def calls_in(facts: UnitFacts, loop: Loop, *names: str) -> list[Call]:
    return [c for c in facts.calls_named(*names) if within(c, loop)]


def enclosing_loops(facts: UnitFacts, obj) -> list[Loop]:
    return [lp for lp in facts.loops if within(obj, lp)]


def innermost_loop(facts: UnitFacts, obj) -> Loop | None:
    loops = enclosing_loops(facts, obj)
    return min(loops, key=lambda lp: lp.end_line - lp.line) if loops else None


def disjoint(a: Loop | None, b: Loop | None) -> bool:
    """Two different loops, neither inside the other (sibling passes over data)."""
    if a is None or b is None or a == b:
        return False
    if a.file != b.file:
        return True
    return a.end_line < b.line or b.end_line < a.line


# ---------------------------------------------------------------------------- Triton conventions

def tl_calls(facts: UnitFacts, *shorts: str) -> list[Call]:
    """Calls ``tl.X`` / ``tl.math.X`` / ``triton.language.X`` or methods ``x.X`` (reductions)."""
    wanted = set(shorts)
    return [c for c in facts.calls if c.short in wanted and (c.name.startswith(("tl.", "triton.")) or "." in c.name)]


def triton_reduces(facts: UnitFacts) -> list[Call]:
    return [c for c in tl_calls(facts, *TL_REDUCTIONS) if c.name.startswith(("tl.", "triton.")) or c.short in ("sum", "max", "min")]


def dots(facts: UnitFacts) -> list[Call]:
    return [c for c in facts.calls if c.name in ("tl.dot", "tl.dot_scaled", "triton.language.dot") or c.short in ("dot", "dot_scaled") and c.name.startswith("tl")]


def loads(facts: UnitFacts) -> list[Call]:
    """``tl.load`` and descriptor ``.load`` calls."""
    return [c for c in facts.calls if c.name in ("tl.load", "tl._experimental_descriptor_load") or (c.short == "load" and not c.name.startswith("tl."))]


def loops_with_loads(facts: UnitFacts) -> list[Loop]:
    lds = loads(facts)
    return [lp for lp in facts.loops if any(within(c, lp) for c in lds)]


def num_stages(facts: UnitFacts) -> tuple[bool, set[object]]:
    """(explicit?, the values) of num_stages: every autotune config sets it, a launch passes it,
    or a ``tl.range(..., num_stages=)`` loop sets it."""
    values: set[object] = set()
    explicit = False
    if facts.configs and all("num_stages" in cfg for cfg in facts.configs):
        explicit = True
        values |= {v for cfg in facts.configs for v in cfg["num_stages"]}
    for launch in facts.launches:
        if "num_stages" in launch.kwargs:
            explicit = True
            values.add(literal_value(launch.kwargs["num_stages"]))
    for lp in loops_with_loads(facts):
        v = lp.kw("num_stages")
        if v is not None:
            explicit = True
            values.add(_env_value(facts, v))
    return explicit, values


def _env_value(facts: UnitFacts, expr: str) -> object:
    v = literal_value(expr)
    if v is UNKNOWN:
        vals = facts.constexpr_values(expr.strip())
        if len(vals) == 1:
            return next(iter(vals))
    return v


def stages_decision(facts: UnitFacts):
    """Triton's shared convention for multistage_pipeline / async_copy (PROPERTIES.md)."""
    from ._base import absent, not_applicable, present

    loops = loops_with_loads(facts)
    if not loops:
        return absent("no loop that loads: nothing to pipeline")
    explicit, values = num_stages(facts)
    if not explicit:
        return not_applicable("loop without explicit num_stages: the compiler default decides")
    known = [v for v in values if isinstance(v, int)]
    if known and max(known) >= 2:
        return present(loops[:1], f"explicit num_stages {sorted(set(known))} on a loop that loads")
    if known and max(known) < 2:
        return absent(f"num_stages={max(known)}: no pipelining")
    return not_applicable("num_stages given but not a constant")


# ---------------------------------------------------------------------------- CUDA helpers

def shared_decls(facts: UnitFacts) -> list[Decl]:
    return [d for d in facts.decls if "__shared__" in d.qualifiers]


def shared_names(facts: UnitFacts) -> set[str]:
    """Shared arrays, plus pointers carved out of them (``float* As = smem + ...``). Computed once
    per unit (several detectors ask); callers get their own copy."""
    cached = facts.cache.get("shared_names")
    if cached is None:
        cached = {d.name for d in shared_decls(facts)}
        for _ in range(2):
            for d in facts.decls:
                if d.init and "__shared__" not in d.qualifiers and mentions_any(d.init, cached):
                    if "*" in d.text.split("=")[0] or "&" in d.init or "reinterpret_cast" in d.init:
                        cached.add(d.name)
        facts.cache["shared_names"] = cached
    return set(cached)


def pointer_params(facts: UnitFacts) -> list[str]:
    return [name for name, typ in facts.params if "*" in typ or "Tensor" in typ or typ.endswith("ptr") or name.endswith("_ptr")]


def alias_map(facts: UnitFacts) -> dict[str, str]:
    """Pointer-like name -> the parameter it derives from (``row = x + r * N`` -> x), computed once."""
    cached = facts.cache.get("alias_map")
    if cached is not None:
        return cached
    roots = {p: p for p, _ in facts.params}
    pointers = set(pointer_params(facts))
    # names used as a base (not subscripted: x[i] is a load, not an alias), in source order
    simple = [(a.target, _TOKEN.findall(rx.sub(r"[A-Za-z_]\w*\s*\[[^\]]*\]", " ", a.value)))
              for a in facts.assigns if rx.fullmatch(r"[A-Za-z_]\w*", a.target)]
    for _ in range(3):
        changed = False
        for target, names in simple:
            if target in roots:
                continue
            bases = [n for n in names if n in roots]
            if bases:
                # ``xr = x + row * n`` derives from the pointer x, not from the size n: prefer a
                # pointer root, then the first base written (never set order, which varies per run)
                roots[target] = next((roots[b] for b in bases if roots[b] in pointers), roots[bases[0]])
                changed = True
        if not changed:
            break
    facts.cache["alias_map"] = roots
    return roots


def aliases_of(facts: UnitFacts, base: str) -> set[str]:
    """``base`` and the pointers derived from it (``const float* row = x + r * N``)."""
    amap = alias_map(facts)
    root = amap.get(base, base)
    return {n for n, r in amap.items() if r == root} | {base}


def thread_vars(facts: UnitFacts) -> tuple[set[str], set[str]]:
    """(lane-level variables derived from threadIdx.x, warp-level variables threadIdx.x / 32)."""
    cached = facts.cache.get("thread_vars")
    if cached is not None:
        return cached
    lane: set[str] = set()
    warp: set[str] = set()
    simple = [(a.target, a.value, tokens(a.value)) for a in facts.assigns if rx.fullmatch(r"[A-Za-z_]\w*", a.target)]
    for _ in range(3):
        for t, v, toks in simple:
            if t in warp or t in lane:
                continue
            if "threadIdx.x" not in v and not toks & lane:
                continue
            if rx.search(r"/\s*(32|warpSize|WARP_SIZE|kWarpSize|WARPSIZE)\b|>>\s*5\b", v):
                warp.add(t)
            else:
                lane.add(t)
    for lp in facts.loops:
        if lp.var and ("threadIdx" in lp.init or tokens(lp.init) & lane):
            lane.add(lp.var)
    facts.cache["thread_vars"] = (lane, warp)
    return lane, warp


def line_hits(lines: list[Line], limit: int = 4) -> list[Line]:
    return lines[:limit]
