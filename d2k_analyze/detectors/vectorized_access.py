"""vectorized_access: wide (64/128-bit) global or shared memory accesses.

## What it means
Loads or stores that move several scalars at once: ``float4``/``int4``/``uint4``/``half2``/
``__nv_bfloat162`` accesses, a ``reinterpret_cast`` to a wider type, a packed
``Pack<T, N>``-style aggregate, PTX ``ld/st .v2/.v4``, ``ldmatrix`` / ``stmatrix`` rows, or an
8/16-byte ``cp.async`` (its size operand resolved, ``"n"(16)`` included).

## How it is detected
The element type of each recorded access (the pointer's type after casts): a vector type of
the platform, or an aggregate whose size from its template arguments is at least 8 bytes.

## Not to be confused with
Wide types used only in registers; a scalar loop over a wide struct.
"""

from ..facts.types import is_vector, size_of
from ..compiled.ttgir import Reading, TritonIR
from ._base import Rule, Signature, absent, present

# a 16- or 8-byte asynchronous copy from global to shared memory: what a software-pipelined Triton
# load becomes (``num_stages`` >= 2), 128 or 64 bits per thread per copy. Triton only: in CUDA
# source ``cp.async`` is the programmer's own choice and is async_copy's evidence; the compiled
# CUDA signature stays ``ld/st .v2/.v4`` (the source's own vector types)
WIDE_ASYNC_COPY = r"\bcp\.async\.c[ag]\.shared\.global\b[^;]*,\s*(?:16|8|0x10|0x8)\s*[,;]"


def _compiled(ir: TritonIR) -> Reading:
    """Triton: global loads/stores of 64 bits or more per thread (``ld.global.v4.b32``), or
    16/8-byte ``cp.async`` copies into shared memory (a pipelined load)."""
    vector = ir.lines(r"\b(?:ld|st)\.global(?:\.[\w:]+)*?\.v[248]\.\w+")
    if vector:
        return Reading(True, vector, "vector global accesses in the PTX")
    if copies := ir.lines(WIDE_ASYNC_COPY):
        return Reading(True, copies, "16/8-byte asynchronous global-to-shared copies in the PTX")
    if ir.count(r"\b(?:ld|st)\.global\b|\bcp\.async\.c[ag]\.shared\.global\b"):
        return Reading(False, ir.lines(r"\b(?:ld|st)\.global\b", limit=2), "every global access is scalar")
    return Reading(None, (), "no global load or store through pointers")


RULE = Rule("vectorized_access", Signature(triton=_compiled, ptx=r"\b(?:ld|st)\.(?:global|shared)(?:\.[\w:]+)*?\.v[248]\.\w+", sass=r"\b(?:LDG|STG|LDS|STS)(?:\.\w+)*\.(?:64|128|256)\b\S*", upgrades=True))


@RULE.cuda
def cuda(f):
    hits = [a for a in f.accesses if a.space in ("global", "shared") and (is_vector(a.elem) or (a.elem.startswith("asm") and a.elem[3:].isdigit() and int(a.elem[3:]) >= 8))]
    hits += [a for a in f.accesses if a.space in ("global", "shared") and not is_vector(a.elem) and "<" in a.elem and (size_of(a.elem) or 0) >= 8]
    if hits:
        return present(hits, f"wide accesses ({hits[0].elem or 'vector'})")
    wide_atoms = sorted(n for n in f.lib_names | f.host_names if n.split(".")[-1] in WIDE_COPY_TYPES)
    if wide_atoms:
        return present([f.loc], f"copies through a {wide_atoms[0]} copy atom / vector type")
    return absent("scalar accesses only")


WIDE_COPY_TYPES = {"uint128_t", "uint256_t", "float4", "int4", "uint4", "double2", "longlong2", "ulonglong2"}
