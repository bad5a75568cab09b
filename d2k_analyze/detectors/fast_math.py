"""fast_math: approximate transcendental forms chosen in the source (__expf, exp2f with log2e,
rsqrtf, ex2.approx; Triton exp2 / rsqrt / libdevice fast ops), or --use_fast_math in the
submission's own compile flags. expf / tl.exp are the accurate forms and do not count."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, first, present

CUDA_FAST = {"__expf", "__exp10f", "__logf", "__log2f", "__log10f", "__powf", "__sinf", "__cosf", "__tanf", "__sincosf",
             "__fdividef", "__fdiv_rn", "rsqrtf", "rsqrt", "hexp2", "h2exp2", "h2rsqrt", "hrsqrt", "__frsqrt_rn", "exp2f", "__exp2f", "fast_exp", "ex2_approx"}


def _is_power_of_two_scale(call) -> bool:
    """exp2f(k) with an integer-ish argument computes an exact power of two, not an exp."""
    return call.short in ("exp2f", "exp2") and bool(call.args) and not rx.search(r"[*\-]|\blog2e|LOG2E|M_LOG2E", call.args[0])


def detect_cuda(facts):
    calls = [c for c in facts.calls if c.short in CUDA_FAST and not _is_power_of_two_scale(c)]
    hits = first(calls, facts.grep_asm(r"\b(ex2|tanh|rsqrt|lg2|sin|cos)\.approx"), facts.grep_host(r"use_fast_math"))
    return present(hits, "fast/approximate math intrinsic or fast-math flag") if hits else absent("only accurate math forms")


def detect_triton(facts):
    calls = [
        c for c in facts.calls
        if (c.short in ("exp2", "rsqrt") and (c.name.startswith(("tl.", "libdevice", "triton")) or "math" in c.name))
        or c.short.startswith("fast_")
    ]
    asm = [c for c in facts.calls if c.short == "inline_asm_elementwise" and rx.search(r"approx", c.text)]
    hits = first(calls, asm)
    return present(hits, "exp2 / rsqrt / fast libdevice op in live code") if hits else absent("no exp2 / rsqrt / fast ops")
