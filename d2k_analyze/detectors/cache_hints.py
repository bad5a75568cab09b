"""cache_hints: explicit cache-policy choices (__ldg, __ldcs, ld.global.nc, evict_* hints,
access-policy windows; Triton eviction_policy= / cache_modifier=). cp.async .ca/.cg belongs to
async_copy and const __restrict__ alone does not count."""

from __future__ import annotations

from ._base import absent, first, present

CUDA_CALLS = ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv", "__stcg", "__stcs", "__stwb", "__stwt")


def detect_cuda(facts):
    hits = first(
        facts.calls_named(*CUDA_CALLS),
        facts.grep_asm(r"ld\.global\.nc|\.L1::no_allocate|evict_first|evict_last|L2::cache_hint|createpolicy|evict_normal"),
        facts.grep_host(r"accessPolicyWindow|cudaStreamAttributeAccessPolicyWindow"),
    )
    return present(hits, "explicit cache-policy load/store") if hits else absent("no cache hints")


def _hinted(call) -> bool:
    for key in ("eviction_policy", "cache_modifier"):
        v = call.kw(key)
        if v is not None and v.strip("'\" ") not in ("", "None"):
            return True
    return False


def detect_triton(facts):
    hits = [c for c in facts.calls if c.short in ("load", "store") and _hinted(c)]
    return present(hits, "eviction_policy / cache_modifier on a live load or store") if hits else absent("no cache hints")
