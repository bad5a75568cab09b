"""warp_specialization: dedicated producer and consumer warps or warpgroups.

## What it means
The block is split by warp (group) index into roles doing *different* work, typically a
producer that issues TMA / ``cp.async`` loads and consumers that issue MMAs, often with register
reallocation (``setmaxnreg``); Triton ``warp_specialize=True`` on ``tl.range`` or in a config.

## How it is detected
A branch whose condition depends on the warp / warpgroup index (``tid.x / 32``, ``/ 128``, a
canonical warpgroup id) where one side issues asynchronous copies and the other MMA; or
``setmaxnreg`` in live PTX (or the warpgroup register-allocation wrappers); Triton
``tl.range(..., warp_specialize=True)``.

## Not to be confused with
Warp indices used for reductions or for rows of work (every warp doing the same thing); the
``warp_specialize`` keyword on Python's builtin ``range`` (the compiler drops it).
"""

from ..facts.expr import Num, Op, Sym, atoms, num, walk
from ..compiled.ttgir import by_instruction
from ._base import Rule, Signature, absent, present
from ._queries import mma_calls

RULE = Rule("warp_specialization", Signature(ptx=r"\bsetmaxnreg\S*", sass=r"\bUSETMAXREG\S*",
                                             triton=by_instruction(r"\bttg\.warp_specialize\b", "ttgir")))
REG_ALLOC = ("warpgroup_reg_alloc", "warpgroup_reg_dealloc", "increase_registers", "decrease_registers", "setmaxnreg")


def _role_guard(g) -> bool:
    """A condition on the warp or warpgroup index: ``tid.x / 32``, ``tid.x / 128``, ``warp``."""
    for n in walk(g):
        if isinstance(n, Sym) and n.key == "warp":
            return True
        if isinstance(n, Op) and n.op in ("/", "//", ">>") and len(n.args) == 2 and "tid.x" in atoms(n.args[0]):
            c = num(n.args[1])
            if isinstance(c, int) and (c >= 32 if n.op != ">>" else c >= 5):
                return True
    return False


@RULE.cuda
def cuda(f):
    regs = f.asm_matching(r"\bsetmaxnreg\b") + [c for c in f.calls if any(r in c.fn for r in REG_ALLOC)]
    if regs:
        return present(regs, "register reallocation between warpgroups (setmaxnreg)")
    loads = [a for a in f.accesses if a.via in ("async", "tma")] + f.asm_matching(r"cp\.async|cp\.async\.bulk") + [c for c in f.calls if "load_async" in c.fn or "tma" in c.fn.lower()]
    mmas = mma_calls(f)
    producer = [x for x in loads if any(_role_guard(g) for g in x.guards)]
    consumer = [x for x in mmas if any(_role_guard(g) for g in x.guards)]
    if producer and consumer and {repr(g) for x in producer for g in x.guards} != {repr(g) for x in consumer for g in x.guards}:
        return present(producer[:1] + consumer[:1], "loads and MMAs issued by different warp roles")
    return absent("all warps do the same work")


@RULE.triton
def triton(f):
    hits = [lp for lp in f.loops.values() if lp.iterator == "tl.range" and lp.kwargs.get("warp_specialize") == Num(True)]
    if hits:
        return present(hits, "tl.range(..., warp_specialize=True)")
    cfg = [v for c in f.configs for v in c.get("warp_specialize", [])]
    if cfg and all(v is True for v in cfg):
        return present([f.loc], "warp_specialize in every config")
    return absent("no warp specialization")
