"""fast_math: approximate transcendental forms and the exp2 trick.

## What it means
CUDA ``__expf``/``__logf``/``__fdividef``/``rsqrtf``/``exp2f``..., PTX ``.approx`` ops; Triton
``tl.exp2`` / ``tl.math.exp2``, ``rsqrt``, libdevice fast ops.

## How it is detected
Library calls by name (they are the property) and PTX mnemonics in live code.

## Not to be confused with
``expf``/``tl.exp`` (the compiler may approximate them, the source does not choose it).
"""

from ._base import Rule, Signature, absent, present

RULE = Rule("fast_math", Signature(ptx=r"\b(?:ex2|lg2|rsqrt|rcp|div|sin|cos|tanh)\.approx\S*", sass=r"\bMUFU\.\S+"))
CUDA_FAST = {"__expf", "__exp10f", "__logf", "__log2f", "__log10f", "__powf", "__sinf", "__cosf", "__tanf", "__fdividef", "__frcp_rn",
             "rsqrtf", "rsqrt", "hexp2", "h2exp2", "h2rsqrt", "hrsqrt", "exp2f", "__exp2f", "__frsqrt_rn", "fast_exp", "__saturatef", "exp2"}
TRITON_FAST = {"exp2", "rsqrt", "fast_expf", "fast_dividef", "fast_logf", "fast_log2f", "fast_exp2f", "fdiv", "div_rn"}


@RULE.cuda
def cuda(f):
    hits = [c for c in f.calls if c.short in CUDA_FAST] + f.asm_matching(r"\.approx")
    return present(hits, "fast/approximate math intrinsics") if hits else absent("accurate math library calls only")


@RULE.triton
def triton(f):
    hits = [c for c in f.calls if c.short in TRITON_FAST and (c.fn.startswith(("tl.", "libdevice.")))]
    hits += [c for c in f.calls if c.fn == "tl.inline_asm_elementwise"]
    return present(hits, "exp2 / rsqrt / fast libdevice ops") if hits else absent("no fast-math forms")
