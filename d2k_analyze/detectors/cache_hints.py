"""cache_hints: explicit cache-policy choices on global accesses.

## What it means
``__ldg``/``__ldcs``/``__stcs``..., PTX ``.nc``/``.L2::evict_*``/``cache_hint``, L2 access-policy
windows; Triton ``eviction_policy=`` or ``cache_modifier=``.

## How it is detected
Library intrinsics and PTX qualifiers in live code; Triton load/store keyword arguments.

## Not to be confused with
``const __restrict__`` alone; the ``.cg`` of ``cp.async``.
"""

from ..facts.expr import Str
from ._base import Rule, Signature, absent, present

RULE = Rule("cache_hints", Signature(ptx=r"\b(?:ld\.global\.(?:nc|cs|lu|cv)|st\.global\.(?:cs|wt))\S*|\.L2::(?:evict_\w+|cache_hint)|\bcreatepolicy\S*", sass=r"\bLDG\S*\.CONSTANT\S*|\b(?:LDG|STG)\S*\.E[FL]\b\S*"))
INTRINSICS = {"__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv", "__stcg", "__stcs", "__stwb", "__stwt"}


@RULE.cuda
def cuda(f):
    hits = [c for c in f.calls if c.short in INTRINSICS] + f.asm_matching(r"ld\.global\.nc|\.L2::evict|L2::cache_hint|L1::no_allocate|createpolicy|ld\.global\.(cs|lu|cv)|st\.global\.(cs|wt)")
    if hits:
        return present(hits, "cache-policy intrinsics / PTX qualifiers")
    if any("accessPolicyWindow" in n for n in f.host_names):
        return present([f.loc], "L2 access-policy window in the host code")
    return absent("default cache policy")


@RULE.triton
def triton(f):
    hits = [c for c in f.calls if c.fn in ("tl.load", "tl.store") and any(k in ("eviction_policy", "cache_modifier") and isinstance(v, Str) and v.v for k, v in c.call.kw)]
    return present(hits, "eviction_policy / cache_modifier on loads/stores") if hits else absent("default cache policy")
