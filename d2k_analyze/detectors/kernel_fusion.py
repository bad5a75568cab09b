"""kernel_fusion: two or more logically separate operations in one kernel.

## What it means
Residual + norm, GEMM + bias (+ activation), silu · mul, QKᵀ + softmax + PV, loss + gradient,
scale + mask + softmax, norm + softmax, bias + activation, int4 dequantisation + GEMM, logit softcapping + loss,
norm + int8 quantisation, a norm's backward + the residual branch's gradient, a linear layer's bias +
the residual add, int8/int32 dequantisation + bias or residual.
One operation does not count even if called "fused": softmax, LayerNorm with its affine step,
RMSNorm · weight, GEMM with an alpha/beta epilogue.

## How it is detected
Operations are recognised by their formulas on the kernel's dataflow (:mod:`d2k_analyze.facts.ops`):
a multiply-accumulate / MMA loop (GEMM), ``exp(x - max)`` (softmax), ``x · rsqrt(s + eps)``
(normalisation; also through a function the analyzer cannot see, when it is applied to a
reduction of the data plus an epsilon), sigmoid/tanh/erf/ReLU forms (activation), ``act(a) · b`` of two different
inputs (gated), an addition of two different input tensors (residual / bias add), a -inf mask,
a tensor read at the output's own element and added after another operation (a residual, as in
``y = norm(x) + r`` or a backward that adds the residual branch's gradient), a value rounded and
clamped to a low-bit range (quantisation), a vector read at a subset of the output's coordinates and
added to it (a broadcast bias), an integer load converted to float and scaled by a non-constant
(int8/int32 dequantisation), a log-sum-exp with a gathered target (loss), random
numbers (dropout), bit fields of loaded
integers or ``lop3``/``prmt`` unpacking (dequantisation of packed low-bit weights), and a stored
``exp(x - lse)`` with a one-hot test of the column against a loaded target (``==`` or ``!=``), seen
through values merged by run-time flags (the cross-entropy gradient), a rotary embedding
(``x0 * cos - x1 * sin`` of two elements of one tensor turned by angles read from other tensors),
and a store through an index read from memory (a paged-cache append). A kernel with two or more of
them in one of the fused combinations is fused.

## Not to be confused with
Extra ``torch`` ops in the Python wrapper; a norm's own affine weight and bias.
"""

from ..facts.ops import operations
from ._base import Rule, absent, present

RULE = Rule("kernel_fusion")
COMBINATIONS = (
    ("gemm", "softmax"), ("gemm", "activation"), ("gemm", "bias"), ("gemm", "norm"), ("gated",), ("add", "norm"),
    ("add", "activation"), ("mask", "softmax"), ("add", "softmax"), ("softmax", "dropout"),
    ("activation", "dropout"), ("add", "dropout"), ("norm", "activation"), ("loss", "gradient"),
    ("gemm", "dequant"), ("loss", "activation"), ("norm", "softmax"), ("residual", "norm"),
    ("norm", "quant"), ("activation", "quant"), ("softmax", "quant"), ("gemm", "quant"),
    ("bias_vector", "residual"), ("int_dequant", "residual"), ("int_dequant", "bias_vector"), ("int_dequant", "add"),
    ("rotary", "scatter"), ("gemm", "rotary"), ("norm", "rotary"),
)


@RULE.both
def detect(f):
    ops = operations(f)
    for combo in COMBINATIONS:
        if all(op in ops for op in combo):
            hits = [ops[op][0] for op in combo]
            return present(hits, "fused operations: " + " + ".join(combo))
    if ops:
        return absent(f"one operation: {', '.join(sorted(ops))}", [v[0] for v in ops.values()][:2])
    return absent("one operation per kernel")
