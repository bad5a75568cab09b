"""warp_specialization: producer and consumer warps/warpgroups running different code (TMA or
cp.async producer, MMA consumers), often with setmaxnreg; Triton warp_specialize=True on a live
loop or num_consumer_groups > 0. if (warp_id == 0) for a final reduction is 0."""

from __future__ import annotations

from ._base import absent, first, present


def detect_cuda(facts):
    regs = first(facts.grep_asm(r"setmaxnreg"), facts.calls_named("warpgroup_reg_alloc", "warpgroup_reg_dealloc", "decrease_registers", "increase_registers", "setmaxnreg_inc", "setmaxnreg_dec"))
    roles = facts.grep(r"(?i)\bproducer\w*\b") and facts.grep(r"(?i)\bconsumer\w*\b")
    if regs:
        return present(regs, "register reallocation between warpgroup roles")
    if roles:
        branch = facts.grep(r"(?i)if\s*\(.*(warp_?group|warp_?idx|warp_?id|wg|is_producer|role).*\)")
        if branch:
            return present(branch[:2] + facts.grep(r"(?i)\bproducer\w*\b")[:1], "producer / consumer warp roles")
    return absent("all warps run the same code")


def detect_triton(facts):
    loops = [lp for lp in facts.loops if (lp.kw("warp_specialize") or "").strip() == "True"]
    cfg = [v for v in facts.config_values("num_consumer_groups") if isinstance(v, int) and v > 0]
    gl = [c for c in facts.calls if c.short == "warp_specialize"]
    hits = first(loops, gl, [d for d in facts.decorators if "num_consumer_groups" in d.text] if cfg else [])
    return present(hits, "warp-specialized loop / consumer groups") if hits else absent("no warp specialization")
