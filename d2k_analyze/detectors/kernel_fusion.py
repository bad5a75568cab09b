"""kernel_fusion (low confidence): two or more logically separate operations in one kernel
(GEMM + bias/activation, QK^T + softmax + PV, residual + norm, silu * mul, loss + gradient).
Recognised as a combination of operation families; a single operation (softmax, a norm with its
affine step, a GEMM with alpha/beta) is 0. The judge decides borderline cases."""

from __future__ import annotations

from ._base import absent, present
from ._common import dots


def _families(facts) -> dict[str, list]:
    fam: dict[str, list] = {}
    gemm = dots(facts) or [c for c in facts.calls if "mma" in c.short.lower()] or facts.grep_asm(r"mma")
    if gemm:
        fam["gemm"] = gemm[:1]
    exp = facts.grep(r"\b(__expf|expf|exp2f|exp|tl\.exp2?|tl\.math\.exp2?)\s*\(")
    mx = facts.grep(r"(?:fmaxf|tl\.max(?:imum)?|\bmax)\s*\(")
    if exp and mx:
        fam["softmax"] = exp[:1]
    act = facts.grep(r"(?i)\b(silu|gelu|sigmoid|relu|swish|tanh|erf|softplus)\b|1(\.0f?)?\s*\+\s*(__)?expf?\s*\(\s*-")
    if act:
        fam["activation"] = act[:1]
    if facts.grep(r"(?i)\b(residual|res_ptr|skip)\w*\b"):
        fam["residual"] = facts.grep(r"(?i)\b(residual|res_ptr|skip)\w*\b")[:1]
    if facts.grep(r"(?i)\bbias\w*\b") and "gemm" in fam:
        fam["bias"] = facts.grep(r"(?i)\bbias\w*\b")[:1]
    if facts.grep(r"(?i)\b(target|label)s?\w*\b") and facts.grep(r"\b(logf|__logf|log|tl\.log)\s*\("):
        fam["loss"] = facts.grep(r"(?i)\b(target|label)s?\w*\b")[:1]
    if facts.grep(r"(?i)\b(gate|up)_?\w*\b") and "activation" in fam:
        fam["gated"] = facts.grep(r"(?i)\b(gate|up)_?\w*\b")[:1]
    return fam


def detect(facts):
    fam = _families(facts)
    combos = [("gemm", "softmax"), ("gemm", "activation"), ("gemm", "bias"), ("residual",), ("activation", "gated"), ("softmax", "loss")]
    for combo in combos:
        if all(f in fam for f in combo) and (len(combo) > 1 or len(fam) >= 2):
            hits = [h for f in combo for h in fam[f]]
            return present(hits, "fused operations: " + " + ".join(combo))
    return absent("one operation per kernel")


detect_cuda = detect_triton = detect
