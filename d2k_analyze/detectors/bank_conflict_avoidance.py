"""bank_conflict_avoidance: shared-memory padding, skew or swizzle.

## What it means
Explicit shared-memory padding (a row pitch of 2^k + a few elements: ``[32][33]``,
``BK + 4``), an XOR or rotation swizzle of shared-memory indices, a swizzled layout type (CuTe
``Swizzle<B, M, S>``), or a TMA / wgmma 128/64/32-byte swizzle mode.

## How it is detected
On live shared-memory accesses: a constant coefficient in the offset that is a padded power of
two, a coefficient ``T + c`` of a compile-time size and a small constant (a template pitch
``TILE + 1``), or an XOR / rotation (``(a + b) % n``, terms that are multiples of ``n`` left out)
of a thread- or loop-dependent index, also when the swizzled offsets were precomputed into a
register table that the access reads. Layout types
and TMA swizzle modes by their library names (kernel and launching host code). Inline ``wgmma`` /
``tcgen05.mma`` whose matrix descriptor sets a non-zero layout field (bits 62-63 / 61-63: the
128/64/32-byte swizzle).

## Not to be confused with
A padded array that is never read or written (it earns nothing); a conflict-free access order
chosen without padding or swizzle; records whose size happens to be 2^k + a few (``2 * K + 2``
floats per thread, with the last fields read at constant columns past 2^k).
"""

import re

from ..compiled.ttgir import Reading, TritonIR
from ..facts import poly as P
from ..facts.expr import Load, Op, Sym, atoms, num, walk
from ._base import Rule, Signature, absent, present

def _swizzled(encoding: str) -> bool:
    width = re.search(r"swizzlingByteWidth = (\d+)", encoding)
    phase = re.search(r"maxPhase = (\d+)", encoding)
    return "padded_shared" in encoding or bool(width and int(width.group(1)) > 0) or bool(phase and int(phase.group(1)) > 1)


def _compiled(ir: TritonIR) -> Reading:
    """Triton: the shared encodings of the staged tiles (128-byte NVMMA swizzle, XOR swizzle with
    maxPhase > 1, padding); barrier words (i64) are not tiles."""
    tiles = [b for b in ir.buffers if b.element != "i64"]
    if not tiles:
        return Reading(None, (), "nothing is staged in shared memory")
    swizzled = [b for b in tiles if _swizzled(b.encoding)]
    if swizzled:
        return Reading(True, tuple(dict.fromkeys(b.encoding for b in swizzled))[:2], "staged tiles use a swizzled or padded layout")
    return Reading(False, tuple(dict.fromkeys(b.encoding for b in tiles))[:2], "staged tiles use a plain (unswizzled) layout")


RULE = Rule("bank_conflict_avoidance", Signature(triton=_compiled))
SWIZZLE_NAMES = ("Swizzle", "CU_TENSOR_MAP_SWIZZLE_128B", "CU_TENSOR_MAP_SWIZZLE_64B", "CU_TENSOR_MAP_SWIZZLE_32B", "SWIZZLE_128B", "SWIZZLE_64B",
                 "SWIZZLE_32B", "GMMA.Layout_K_SW128", "Layout_K_SW", "Layout_MN_SW", "swizzle_128B", "kSwizzle128B")


def padded(c) -> bool:
    """2^k + a few elements, the row pitch of a padded tile (33, 36, 40, 65, 72, 136 ...)."""
    if not isinstance(c, int) or c < 9:
        return False
    p = 1 << (c.bit_length() - 1)
    return p >= 8 and 0 < c - p <= min(16, p // 2) and c != p


def _halo(o) -> bool:
    """Every extent grown by the same few elements: a stencil's halo, not a row-pitch pad."""
    dims = [d for d in o.dims if d is not None]
    if len(dims) < 2 or not all(padded(d) for d in dims):
        return False
    return len({d - (1 << (d.bit_length() - 1)) for d in dims}) == 1


def _record_pitches(shared) -> set[tuple[int, int]]:
    """(object, pitch) pairs where the pitch is a record's size, not a padded row: some access
    reads or writes a constant column at or past the pitch's power of two (``rec[2 * K + 1]``
    in records of ``2 * K + 2`` floats), so the "extra" columns hold data."""
    out = set()
    for a in shared:
        const = P.constant_of(tuple((m, c) for m, c in a.poly if m == ())) or 0
        for m, c in a.poly:
            if m and c.denominator == 1 and c > 0 and padded(int(c)):
                pitch = int(c)
                if const % pitch >= 1 << (pitch.bit_length() - 1):
                    out.add((a.obj, pitch))
    return out


def _xor_or_skew(e) -> bool:
    for n in walk(e):
        if isinstance(n, Op) and n.op == "^" and len(n.args) == 2 and all(num(a) is None for a in n.args):
            return True
        if isinstance(n, Op) and n.op == "%" and isinstance(n.args[0], Op) and n.args[0].op == "+" and num(n.args[1]) is not None:
            parts = [atoms(a) for a in n.args[0].args if not _vanishes(a, num(n.args[1]))]
            if len(parts) >= 2 and all(p for p in parts) and parts[0] != parts[1] and not _linear_thread_id(n.args[0]):
                return True
    return False


def _vanishes(term, modulus) -> bool:
    """A term that is a multiple of the modulus (``i * 128`` in ``(tid + i * 128) % 4``, the
    element index of a block-stride fill loop): it drops out of the remainder, so it rotates
    nothing."""
    poly = P.poly(term)
    if not isinstance(modulus, int) or modulus <= 1 or not poly:
        return False
    return all(m and c.denominator == 1 and int(c) % modulus == 0 for m, c in poly)


MOVING = ("tid.", "lane", "warp", "iter#", "ivar#")


def _symbolic_pad(poly, same_object=()) -> bool:
    """A row pitch ``T + c`` with ``T`` a compile-time size and ``0 < c <= 16`` (``TILE + 1``,
    ``kChunk + kNElts`` once the pad resolves): the coefficient of a thread- or loop-dependent
    index has one symbolic monomial and a small constant. Not when an access to the same object
    reaches a column in ``[T, T + c)``: then the pitch is a record's size (``2 * K + 2`` with the
    last fields at ``2 * K`` and ``2 * K + 1``), not a pad."""
    for key in P.terms(poly):
        if not key.startswith(MOVING):
            continue
        c = P.coeff(poly, key)
        const = P.constant_of(tuple((m, v) for m, v in c if m == ()))
        rest = [m for m, _ in c if m != ()]
        if const is not None and 0 < const <= 16 and len(rest) == 1 and all(k.startswith(P.COMPILE_TIME) for k in rest[0]):
            width = tuple((m, v) for m, v in c if m != ())  # T
            if not any(_in_pad(b.poly, key, c, width, const) for b in same_object):
                return True
    return False


def _in_pad(poly, key: str, pitch, width, pad) -> bool:
    """The access's column (its offset without the ``key * pitch`` row term) is ``T + j`` with
    ``0 <= j < pad``."""
    if P.coeff(poly, key) != pitch:
        return False
    column = P.add(poly, P.mul(P.poly(Sym(key)), pitch), -1)
    j = P.constant_of(P.add(column, width, -1))
    return j is not None and 0 <= j < pad


def _linear_thread_id(e) -> bool:
    """``tid.y * BX + tid.x``: the linear thread index (``% 32`` of it is the lane), not a skew of
    two tile coordinates (``(row + col) % 32`` adds them with equal weight)."""
    poly = P.poly(e)
    tids = sorted({k for m, _ in poly for k in m if k.startswith("tid.")})
    if len(tids) < 2 or any(not any(k.startswith("tid.") for k in m) for m, _ in poly if m):
        return False
    return len({P.show(P.coeff(poly, t)) for t in tids}) > 1


def _index_tables(f) -> dict[int, list]:
    """Values stored into each local (register) array: offsets precomputed once per thread into a
    table (``rd[i] = swizzle(row, i)``) and read back as ``smem[rd[i]]``."""
    out: dict[int, list] = {}
    for a in f.accesses:
        if a.kind == "store" and a.space == "local" and a.value is not None:
            out.setdefault(a.obj, []).append(a.value)
    return out


def _table_values(off, tables) -> list:
    """The values a shared-memory offset reads from index tables (empty when it reads none)."""
    return [v for n in walk(off) if isinstance(n, Load) and n.space == "local" for v in tables.get(n.obj, ())]


# Where an MMA's shared-memory matrix descriptor keeps its layout: wgmma (sm_90) in bits 62-63
# (0 interleaved, 1/2/3 the 128/64/32-byte swizzle), tcgen05 (sm_100) in bits 61-63 (0 none).
_DESCRIPTOR_LAYOUT = (("tcgen05.mma", 61, 7), ("wgmma.mma_async", 62, 3))
_ALL_ONES = {2**64 - 1, 2**63 - 1}


def _layout_bits(e, shift: int, mask: int) -> bool:
    """A descriptor expression that sets a non-zero layout field: ``(uint64_t)1 << 62``, or a
    folded constant whose top bits carry it (a precomputed ``desc_hi``); an all-ones mask is not
    a layout."""
    for n in walk(e):
        if isinstance(n, Op) and n.op == "<<" and len(n.args) == 2 and num(n.args[1]) == shift and isinstance(num(n.args[0]), int) and num(n.args[0]) & mask:
            return True
        v = num(n)
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**64 and v not in _ALL_ONES and (v >> shift) & mask:
            return True
    return False


def _swizzled_descriptors(f) -> list:
    """Inline MMAs whose shared-memory descriptors name a swizzled layout: the tiles they read
    were written in that swizzle (by TMA or by hand), which is what keeps their reads conflict-free."""
    out = []
    for a in f.asm:
        for instr, shift, mask in _DESCRIPTOR_LAYOUT:
            if instr in a.text and any(_layout_bits(op, shift, mask) for op in a.operands):
                out.append(a)
                break
    return out


@RULE.cuda
def cuda(f):
    shared = [a for a in f.accesses if a.space == "shared"]
    halos = {o.id for o in f.objects.values() if _halo(o)}
    records = _record_pitches(shared)
    by_obj: dict[int, list] = {}
    for a in shared:
        by_obj.setdefault(a.obj, []).append(a)
    pads = [a for a in shared if a.obj not in halos and (any(padded(int(c)) and (a.obj, int(c)) not in records for m, c in a.poly if m and c.denominator == 1 and c > 0)
                                                         or _symbolic_pad(a.poly, by_obj[a.obj]))]
    if pads:
        return present(pads, "padded shared-memory row pitch")
    tables = _index_tables(f)
    swz = [a for a in shared if _xor_or_skew(a.off) or any(_xor_or_skew(v) for v in _table_values(a.off, tables))]
    if swz:
        return present(swz, "XOR / rotation swizzle of shared-memory indices")
    described = _swizzled_descriptors(f)
    if described:
        return present(described[:1], "MMA descriptors select a swizzled shared-memory layout")
    names = sorted(n for n in f.lib_names | f.host_names if any(s in n for s in SWIZZLE_NAMES))
    if names:
        return present([lf.loc for lf in f.launches][:1] or [f.loc], f"swizzled layout / swizzle mode: {names[0]}")
    if not shared:
        return absent("no shared memory accesses")
    return absent("shared-memory tiles without padding or swizzle", shared[:1])
