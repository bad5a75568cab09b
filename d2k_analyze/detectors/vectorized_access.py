"""vectorized_access: 64/128-bit loads or stores (float2/float4/int4/uint4/half2/bfloat162, a
reinterpret_cast to a wider pointer, ld.global.v4, 16-byte cp.async). Vectors built from scalar
loads (make_float4(x[i], ...)) and vector types used only as register bundles are 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, first, present

VEC = r"(?:const\s+)?(?:float2|float4|int2|int4|uint2|uint4|double2|half2|__half2|__nv_bfloat162|nv_bfloat162|bfloat162|longlong2|ulonglong2|short4|ushort4|char4|uchar4|Packed128\w*|Pack\w*|Vec\w*|AlignedVector\w*)"


def detect_cuda(facts):
    casts = facts.grep(rf"reinterpret_cast\s*<\s*{VEC}\s*(const\s*)?\*|\(\s*{VEC}\s*(const\s*)?\*\s*\)")
    vec_params = [name for name, typ in facts.params if rx.search(rf"\b{VEC}\b\s*(const\s*)?\*", typ)]
    param_use = facts.grep(rf"\b({'|'.join(map(re.escape, vec_params))})\s*\[") if vec_params else []
    helpers = facts.calls_named("load128", "store128", "load128cs", "ld_vec", "st_vec", "load_vec", "store_vec")
    asm = facts.grep_asm(r"(ld|st)\.global(\.\w+)*\.v[248]|cp\.async\.(ca|cg)\.shared\.global[^;]*,\s*16")
    # a global pointer reinterpreted as a packed/aligned type (Pack<T, VW>, an alias P) that is not a scalar
    scalar = r"(?:float|double|half|__half|__nv_bfloat16|nv_bfloat16|bf16|T|int|unsigned|char|uint8_t|int8_t|uint16_t|int16_t|uint32_t|int32_t|void|size_t|uintptr_t|unsigned\s+char|unsigned\s+int|long|int64_t|uint64_t|__nv_fp8\w*)"
    params = "|".join(rx.escape(p) for p, t in facts.params if "*" in t) or r"(?!x)x"
    packed = facts.grep(rf"reinterpret_cast\s*<\s*(const\s+)?(?!{scalar}\s*(const\s*)?\*)[A-Za-z_][\w:<>, ]*\*\s*>\s*\(\s*&?\s*\(?\s*({params})\b")
    hits = first(casts, param_use, helpers, asm, packed)
    return present(hits, "wide (vector) global loads/stores") if hits else absent("scalar global accesses only")
