"""C++/CUDA element types: their size, whether they are vectors, whether they are low precision.

These are facts of the language and of CUDA's headers (``float4`` is 16 bytes, ``__half2`` is
two halves), so detectors may rely on them; a user's own type names are only known through
what they are made of (``Pack<float, 4>`` is four floats).
"""

from __future__ import annotations

import re
from functools import lru_cache

SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1, "fp8": 1, "float8_e4m3": 1, "cutlass::float_e4m3_t": 1, "__nv_fp8x4_e4m3": 4,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "at::Half": 2, "c10::Half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "bf16": 2, "bfloat16": 2, "at::BFloat16": 2, "c10::BFloat16": 2,
    "cutlass::half_t": 2, "cutlass::bfloat16_t": 2, "half_t": 2, "bfloat16_t": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "float": 4, "half2": 4, "__half2": 4,
    "__nv_bfloat162": 4, "nv_bfloat162": 4, "bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4, "ushort2": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8,
    "double": 8, "float2": 8, "int2": 8, "uint2": 8, "short4": 8, "ushort4": 8, "half4": 8, "longlong1": 8,
    "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16, "ulonglong2": 16, "float3": 12, "int3": 12,
    "double4": 32, "longlong4": 32, "float8": 32,
}
VECTOR = frozenset({
    "half2", "__half2", "__nv_bfloat162", "nv_bfloat162", "bfloat162", "char4", "uchar4", "short2", "ushort2", "float2",
    "int2", "uint2", "short4", "ushort4", "half4", "float4", "int4", "uint4", "double2", "longlong2", "ulonglong2",
    "double4", "longlong4", "float3", "int3", "__nv_fp8x4_e4m3",
})
LOW_PRECISION = re.compile(r"\b(__nv_bfloat16\w*|nv_bfloat16\w*|__half2?|half2?|half_t|bfloat16\w*|BFloat16|Half|bf16|fp16|float16|__nv_fp8\w*|fp8\w*|float_e[45]m[23]\w*|e4m3|e5m2|int8_t|uint8_t|int4b_t)\b")
_QUALS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|class|typename|__grid_constant__|static|register|unsigned\s+)\b")


@lru_cache(maxsize=8192)
def base_type(t: str) -> str:
    """``const float* __restrict__`` -> ``float``; ``cutlass::half_t&`` -> ``cutlass::half_t``.
    (Memoised: a kernel asks it of the same few type spellings thousands of times.)"""
    t = t.replace("*", " ").replace("&", " ")
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|class|typename|__grid_constant__|static|register)\b", " ", t)
    t = " ".join(t.split())
    return t


def size_of(t: str, resolve=None) -> int | None:
    """Bytes of one element of type ``t`` (None when unknown). ``resolve`` maps a template
    argument text to an int (``Pack<float, 4>`` -> 16)."""
    b = base_type(t)
    if "|" in b:  # a template type over several instantiations: known when they agree
        sizes = {size_of(part, resolve) for part in b.split("|")}
        return sizes.pop() if len(sizes) == 1 else None
    if b in SIZES:
        return SIZES[b]
    if b.startswith("asm") and b[3:].isdigit():  # the width an inline-PTX access moves (``asm16``)
        return int(b[3:])
    short = b.split("::")[-1]
    if short in SIZES:
        return SIZES[short]
    m = re.fullmatch(r"[\w:]+<\s*([^,<>]+?)\s*,\s*([^<>]+?)\s*>", b)
    if m:  # Pack<T, N>, AlignedVector<T, N>, cutlass::Array<T, N>
        inner = size_of(m.group(1), resolve)
        n = resolve(m.group(2)) if resolve else (int(m.group(2)) if m.group(2).isdigit() else None)
        if inner and isinstance(n, int) and n > 0:
            return inner * n
    return None


_VECTOR_PARTS = re.compile(r"(?:__)?(nv_bfloat16|bfloat16|half|u?char|u?short|u?int|u?long|longlong|ulonglong|float|double)([1-4])")
_SCALAR_OF = {"nv_bfloat16": "__nv_bfloat16", "bfloat16": "__nv_bfloat16", "half": "__half", "uint": "unsigned int",
              "uchar": "unsigned char", "ushort": "unsigned short", "ulong": "unsigned long", "longlong": "long long",
              "ulonglong": "unsigned long long"}


def vector_members(t: str) -> tuple[list[str], str]:
    """The components of a CUDA built-in vector type and their scalar type: ``float4`` ->
    (``x y z w``, ``float``), ``__half2`` -> (``x y``, ``__half``); ([], "") for any other type.
    Code writes them one by one (``v.x = ...; out4[i] = v;``), as with a struct's members."""
    m = _VECTOR_PARTS.fullmatch(base_type(t).split("::")[-1])
    if m is None:
        return [], ""
    return list("xyzw"[: int(m.group(2))]), _SCALAR_OF.get(m.group(1), m.group(1))


def is_vector(t: str, resolve=None) -> bool:
    """A type that moves several scalars in one access (a type bound once per dispatched dtype,
    ``half2|__nv_bfloat162``, when every alternative does)."""
    if "|" in t:
        return all(is_vector(alt, resolve) for alt in t.split("|"))
    b = base_type(t)
    short = b.split("::")[-1]
    if b in VECTOR or short in VECTOR:
        return True
    m = re.fullmatch(r"[\w:]+<\s*([^,<>]+?)\s*,\s*([^<>]+?)\s*>", b)
    if m:  # Pack<T, N>: N elements moved as one access (N a compile-time count, not 1)
        count = m.group(2).strip()
        n = resolve(count) if resolve else (int(count) if count.isdigit() else None)
        if isinstance(n, int):
            return n >= 2
        return count.isidentifier() and count not in ("true", "false")
    return False


def is_low_precision(t: str) -> bool:
    return bool(LOW_PRECISION.search(t))


def is_float32(t: str) -> bool:
    return base_type(t) in ("float", "float32", "tl.float32", "fp32")


def top_level_arguments(angled: str) -> list[str]:
    """``<T,ReduceType::kMax>`` -> ``["T", "ReduceType::kMax"]`` (commas inside nested brackets kept)."""
    inner, depth, parts, cur = angled.strip()[1:-1], 0, [], ""
    for ch in inner:
        depth += ch in "<(["
        depth -= ch in ">)]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts
