"""multistage_pipeline: two or more shared-memory buffers in flight.

## What it means
Loading tile k+1 overlaps computing tile k: shared buffers indexed by a stage that cycles over
two or more values (``k % S``, a toggled ``^ 1``, a stage counter wrapping at S), filled ahead of
use (asynchronously, or through registers), with waits that leave copies in flight
(``cp.async.wait_group N`` with N ≥ 1). Triton: an explicit ``num_stages >= 2`` on the main loop.

## How it is detected
Fills of a shared object whose offset contains a stage selector that depends on the loop and not
on the thread (a modulo / mask of the iteration by a constant or by a kernel parameter, or a
loop-carried local updated by ``^ 1`` (or the XOR of an address with a power-of-two buffer
size), ``1 - s``, ``(s + 1) % S``, or stepped by one and reset to 0 when it reaches a constant),
together with asynchronous fills, a partial wait, or reads of the same object at a different
stage than the fill; or a partial ``wait_group`` with a multi-buffered fill. Fills reach a
shared tile directly, through registers (also registers loaded in one iteration and stored in
the next: register-staged double buffering), or by asynchronous copies and TMA.

## Not to be confused with
Two buffers filled and consumed in lock-step (load, sync, compute, sync); ``cp.async`` followed
by ``wait_group 0`` before every use.
"""

import re

from ..facts import poly as P
from ..facts.expr import Op, Sym, atoms, num, walk
from ..compiled.ttgir import Reading, TritonIR, has_loop
from ._base import Rule, Signature, absent, present
from ._queries import cell_of, defs_of, stages_decision
from .smem_tiling import filled_from_global

def _compiled(ir: TritonIR) -> Reading:
    """Triton: the stages actually in flight, the depth of the shared-memory ring the software
    pipeliner built for the loop (``!ttg.memdesc<3x128x64xbf16>`` indexed per stage)."""
    rings = ir.rings()
    depth = max((d for d, _ in rings), default=0)
    if depth >= 2:
        return Reading(True, tuple(dict.fromkeys(line for d, line in rings if d == depth))[:1], f"{depth} stages in flight")
    if not has_loop(ir):
        return Reading(False, (), "no loop to pipeline")
    return Reading(False, (), "the loop is not multi-buffered (1 stage)")


RULE = Rule("multistage_pipeline", Signature(triton=_compiled))


def _selectors(f, off) -> set[str]:
    """Loop-dependent stage selectors in an offset: ``iter % S``, ``iter & (S-1)``, toggled locals."""
    out: set[str] = set()
    for n in walk(off):
        if isinstance(n, Op) and n.op in ("%", "&") and len(n.args) == 2:
            c = num(n.args[1]) if num(n.args[1]) is not None else num(n.args[0])
            varying = n.args[0] if num(n.args[1]) is not None else n.args[1]
            if _per_thread(varying):
                continue  # (tid + i * threads) % chunks maps elements to threads: a stage is CTA-uniform
            if isinstance(c, int) and c >= 1 and any(k.startswith(("iter#", "carried#", "ivar#")) for k in atoms(varying)):
                out.add(repr(n))
            elif n.op == "%" and c is None and _launch_constant(n.args[1]) and any(k.startswith(("iter#", "carried#", "ivar#")) for k in atoms(n.args[0])):
                out.add(repr(n))  # a ring whose depth the launch sets (``it % stages``)
        if isinstance(n, Sym) and n.key.startswith(("carried#", "phi#")):
            cid = cell_of(n)
            defs = defs_of(f, cid) if cid is not None else []
            if any(_toggles(d.new, n) for d in defs) or _wraps(defs):
                out.add(n.key)
    return out


def _key(e) -> str | None:
    """The atom a symbol stands for (``atoms`` are keys, not symbols)."""
    return e.key if isinstance(e, Sym) else None


def _power_of_two(v) -> bool:
    return isinstance(v, int) and v >= 1 and v & (v - 1) == 0


def _per_thread(e) -> bool:
    return any(k.startswith(("tid.", "lane", "warp")) for k in atoms(e))


def _launch_constant(e) -> bool:
    """A value fixed for the whole launch: built from kernel parameters and constants only."""
    keys = atoms(e)
    return bool(keys) and all(k.startswith(("param#", "cexpr#")) for k in keys)


def _wraps(defs) -> bool:
    """A stage counter: stepped by one and reset to 0 under a comparison with a constant S >= 2
    (``if (stage == STAGES) stage = 0``)."""
    steps = any(d.op in ("+=", "++") or (isinstance(d.new, Op) and d.new.op == "+" and any(num(a) == 1 for a in d.new.args)) for d in defs)
    resets = any(num(d.new) == 0 and any(isinstance(g, Op) and g.op in ("==", ">=", ">") and any(isinstance(num(a), int) and num(a) >= 2 for a in g.args)
                                          for g in d.guards) for d in defs)
    return steps and resets


def _toggles(new, old) -> bool:
    for n in walk(new):
        if isinstance(n, Op) and n.op == "^" and any(_power_of_two(num(a)) for a in n.args) and \
                any(m == old for a in n.args for m in walk(a)):
            return True  # s ^ 1 flips a buffer index; addr ^ 8192 flips a byte address between two buffers
        if isinstance(n, Op) and n.op == "-" and len(n.args) == 2 and num(n.args[0]) == 1 and n.args[1] == old:
            return True
        if isinstance(n, Op) and n.op in ("%", "?:") and _key(old) in atoms(n) and any(isinstance(num(a), int) and num(a) >= 2 for a in n.args):
            return True
    return False


def _stage_terms(f, acc) -> set[str]:
    """The parts of an access's offset that select a stage (``buf``, ``buf ^ 1``, ``k % S``)."""
    keys = _selectors(f, acc.off)
    out = set()
    for k in P.terms(acc.poly):
        sub = P.opaque_expr(k) if k.startswith("~") else None
        if k in keys or (sub is not None and (repr(sub) in keys or any(x in keys for x in atoms(sub)))):
            out.add(k)
    return out


def _partial_waits(f) -> list:
    hits = f.asm_matching(r"cp\.async\.wait_group\s+(?!0\b)\d|cp\.async\.bulk\.wait_group(\.read)?\s+(?!0\b)\d")
    for c in f.calls:
        if c.short in ("cp_async_wait", "cp_async_wait_group", "__pipeline_wait_prior", "cp_async_wait_all") or "wait_group" in c.short:
            arg = c.call.targs[0] if c.call.targs else (c.call.args[0] if c.call.args else None)
            if arg is not None and (num(arg) is None or num(arg) >= 1):  # not provably wait-all
                hits.append(c)
    return hits


@RULE.cuda
def cuda(f):
    waits = _partial_waits(f)
    for obj in sorted({a.obj for a in f.accesses if a.space == "shared"}):
        fills = [a for a in filled_from_global(f, obj) if a.loops]
        staged = [a for a in fills if _selectors(f, a.off)]
        if not staged:
            continue
        asynchronous = [a for a in staged if a.via in ("async", "tma", "asm")]
        reads = [r for r in f.accesses if r.obj == obj and r.kind == "load" and r.loops]
        fill_stage = _stage_terms(f, staged[0])
        offset_stage = [r for r in reads if _stage_terms(f, r) and _stage_terms(f, r) != fill_stage]
        if asynchronous or waits or offset_stage:
            return present(staged[:1] + (waits or asynchronous or offset_stage)[:1], "stage-indexed shared buffers filled ahead of use")
    async_copies = any(a.via in ("async", "tma") for a in f.accesses) or f.asm_matching(r"cp\.async") or any("CP_ASYNC" in n or "TMA" in n for n in f.lib_names)
    if waits and async_copies:
        return present(waits, "copies left in flight across iterations (partial wait)")
    pipes = [c for c in f.calls if c.short in ("producer_acquire", "consumer_wait", "producer_commit", "consumer_release")]
    if pipes and any("pipeline" in n for n in f.lib_names):
        return present(pipes, "cuda::pipeline producer/consumer stages")
    return absent("no multi-buffered shared-memory pipeline")


@RULE.triton
def triton(f):
    return stages_decision(f)
