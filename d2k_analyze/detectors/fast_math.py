"""fast_math: approximate transcendental forms and the exp2 trick.

## What it means
CUDA ``__expf``/``__logf``/``__fdividef``/``rsqrtf``/``exp2f``..., PTX ``.approx`` ops; Triton
``tl.exp2`` / ``tl.math.exp2``, ``rsqrt``, libdevice fast ops.

## How it is detected
Library calls by name (they are the property) and PTX mnemonics in live code.

## Not to be confused with
``expf``/``tl.exp`` (the compiler may approximate them, the source does not choose it).
"""

from ..facts.expr import Num, Op, walk
from ._base import Rule, Signature, absent, present

RULE = Rule("fast_math", Signature(ptx=r"\b(?:ex2|lg2|rsqrt|rcp|div|sin|cos|tanh)\.approx\S*", sass=r"\bMUFU\.\S+"))
CUDA_FAST = {"__expf", "__exp10f", "__logf", "__log2f", "__log10f", "__powf", "__sinf", "__cosf", "__tanf", "__fdividef", "__frcp_rn",
             "rsqrtf", "rsqrt", "hexp2", "h2exp2", "h2rsqrt", "hrsqrt", "exp2f", "__exp2f", "__frsqrt_rn", "fast_exp", "__saturatef", "exp2"}
TRITON_FAST = {"exp2", "rsqrt", "fast_expf", "fast_dividef", "fast_logf", "fast_log2f", "fast_exp2f", "fdiv", "div_rn"}


EXP2 = {"exp2f", "exp2", "__exp2f", "hexp2", "h2exp2"}


def _exp_trick(call) -> bool:
    """exp2 used for e^x: log2(e) folded into the argument, or a difference (x - max) scaled;
    exp2 of a plain integer is a power of two, not the trick."""
    for n in walk(call.call):
        if isinstance(n, Num) and isinstance(n.v, float) and abs(n.v - 1.4426950408889634) < 1e-3:
            return True
    arg = call.call.args[0] if call.call.args else None
    return arg is not None and any(isinstance(n, Op) and n.op in ("-", "*", "/", "fdiv") for n in walk(arg))


@RULE.cuda
def cuda(f):
    hits = [c for c in f.calls if c.short in CUDA_FAST and (c.short not in EXP2 or _exp_trick(c))] + f.asm_matching(r"\.approx")
    return present(hits, "fast/approximate math intrinsics") if hits else absent("accurate math library calls only")


@RULE.triton
def triton(f):
    hits = [c for c in f.calls if c.short in TRITON_FAST and (c.fn.startswith(("tl.", "libdevice.")))]
    hits += [c for c in f.calls if c.fn == "tl.inline_asm_elementwise"]
    return present(hits, "exp2 / rsqrt / fast libdevice ops") if hits else absent("no fast-math forms")
