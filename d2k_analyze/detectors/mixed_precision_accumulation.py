"""mixed_precision_accumulation: half/bf16/fp8 operands accumulated in fp32 (fp32 MMA
accumulators, float registers summing converted values; Triton fp32 tl.zeros accumulating tl.dot
or .to(tl.float32) before reducing). fp32 data throughout, or half/bf16 accumulators, are 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, first, present
from ._common import LOW_PRECISION_CUDA, dots, mentions_any

CONVERT = r"__bfloat162float|__half2float|__low2float|__high2float|__bfloat1622float2|__half22float2|static_cast<float>|\(float\)|float\(|to_float|__bfloat162float|convert|cvt\w*|float2\s*\(|__ushort_as|make_float"


def detect_cuda(facts):
    low = (
        any(LOW_PRECISION_CUDA.search(t) for _, t in facts.params)
        or any(LOW_PRECISION_CUDA.search(d.type) for d in facts.decls)
        or any(LOW_PRECISION_CUDA.search(",".join(l.template_args)) for l in facts.launches)
        or bool(facts.grep(LOW_PRECISION_CUDA.pattern))
        or facts.low_precision
    )
    if not low:
        return absent("no half/bf16/fp8 operands (fp32 throughout)")
    floats = {d.name for d in facts.decls if rx.match(r"^(float|double)$", d.type.strip())}
    acc = [a for a in facts.assigns if a.op in ("+=", "=") and a.target.split("[")[0].strip() in floats
           and (rx.search(CONVERT, a.value) or a.op == "+=" and rx.search(r"\*", a.value)
                or rx.search(r"\bfmaf?\s*\(", a.value) and a.target.split("[")[0].strip() in a.value)]
    mma = first(
        facts.grep_asm(r"mma\.\S*f32\.(bf16|f16|e4m3|e5m2)|wgmma\.\S*f32\.(bf16|f16|e4m3|e5m2)"),
        facts.grep(r"fragment\s*<\s*(wmma::)?accumulator[^>]*\bfloat\b"),
    )
    converts = [c for c in facts.calls if rx.match(r"^(__bfloat162float|__half2float|__bfloat1622float2|__half22float2|__low2float|__high2float|to_float\w*|unpack\w*|load_float\w*)$", c.short)]
    accumulates = [a for a in facts.assigns if a.op == "+=" or (rx.search(r"\+|fma", a.value) and mentions_any(a.value, (a.target.split('[')[0].strip(),)))]
    hits = first(mma, [a for a in acc if a.op == "+="] or acc, converts if accumulates else [])
    return present(hits, "low-precision operands accumulated in fp32") if hits else absent("accumulation stays in low precision")


def detect_triton(facts):
    f32_zeros = {a.target for a in facts.assigns if rx.search(r"tl\.zeros\(.*float32", a.value)}
    downcast = [a for a in facts.assigns if a.target in f32_zeros and rx.search(r"\.to\(\s*tl\.(bfloat16|float16|float8\w*)", a.value)]
    dot_acc = [a for a in facts.assigns if a.target in f32_zeros and rx.search(r"tl\.dot\(", a.value) or (a.op == "+=" and a.target in f32_zeros and "tl.dot(" in a.value)]
    low_dot = [c for c in dots(facts) if rx.search(r"out_dtype\s*=\s*tl\.(float16|bfloat16)", c.text)]
    if dot_acc and not downcast and not low_dot:
        return present(dot_acc[:2], "fp32 accumulator for tl.dot")
    ups = {a.target for a in facts.assigns if rx.search(r"\.to\(\s*tl\.float32\s*\)", a.value) and rx.search(r"\.load\(|tl\.load", a.value)}
    ups |= {a.target for a in facts.assigns if rx.search(r"\.to\(\s*tl\.float32\s*\)", a.value) and rx.fullmatch(r"\(?\s*\w+\s*\)?\.to\(\s*tl\.float32\s*\)", a.value)}
    loaded = {a.target for a in facts.assigns if rx.search(r"tl\.load|\.load\(", a.value)}
    ups |= {a.target for a in facts.assigns if rx.search(r"\.to\(\s*tl\.float32\s*\)", a.value)
            and any(rx.search(rf"(?<![\w.]){re.escape(n)}\b\s*\.to\(\s*tl\.float32", a.value) for n in loaded)}
    tainted = set(ups)
    for _ in range(3):
        for a in facts.assigns:
            if rx.fullmatch(r"[A-Za-z_]\w*", a.target) and mentions_any(a.value, tainted):
                tainted.add(a.target)
    reduced = [c for c in facts.calls if c.short in ("sum", "reduce", "cumsum", "dot", "associative_scan") and mentions_any(c.text, tainted | ups)]
    accumulated = [a for a in facts.assigns if (a.op == "+=" or mentions_any(a.value, (a.target,))) and mentions_any(a.value, tainted - {a.target})]
    sum32 = [c for c in facts.calls if c.short in ("sum", "reduce", "cumsum") and rx.search(r"dtype\s*=\s*tl\.float32", c.text)]
    hits = reduced or accumulated or sum32
    if ups and hits or sum32:
        return present(hits[:2], "low-precision data upcast to fp32 and accumulated")
    return absent("no fp32 accumulation of low-precision operands")
