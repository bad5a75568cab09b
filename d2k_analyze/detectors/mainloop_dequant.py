"""mainloop_dequant: packed low-bit weights dequantised in registers inside the GEMM main loop.

## What it means
The K loop of a GEMM / GEMV loads packed integer words of the weights, unpacks them (shifts,
masks, bit tricks) and applies the scale / zero arithmetic in registers, and the result feeds
the MMA or multiply-accumulate of the same iteration; no dequantised weight is stored to global
memory.

## How it is detected
A bit field of loaded data (``(w >> s) & 0xF``-style masks, or ``lop3`` / ``prmt`` PTX) whose
load lies in a loop that also reduces products (``tl.dot``, an MMA, an accumulation into a
loop-carried local), and that bit field is an operand of the ``tl.dot`` or of a product added to
the carried accumulator; or is stored, itself or through a register array, to a shared tile that
the same loop reads back; or reaches a factor of a multiply-accumulate of that loop through
register arrays (``deq[j]`` written from the bit field, then ``acc[r] += deq[j] * x[j]``). A
global store of a value built from the bit field that is not a reduction result (the dequantised
weights themselves) makes it absent.

## Not to be confused with
A dequantisation kernel that writes fp16 weights for a separate GEMM; a GEMM over already
dequantised weights; bit operations on indices (``k >> 3``, ``k & 7``), which are not data;
unpacking metadata in a loop that multiplies other data.
"""

from ..facts.expr import Call, Load, Op, Sym, num, short, subtree_has, walk
from ..facts.ops import NIBBLE_MASKS
from ._base import Rule, absent, present
from ._queries import dots, loads_in, mac_updates, mma_calls, products_of, stores_to

RULE = Rule("mainloop_dequant")
REDUCERS = {"dot", "dot_scaled", "sum", "mma_sync", "reduce"}


def _is_field(n) -> bool:
    return isinstance(n, Op) and n.op == "&" and len(n.args) == 2 and any(num(a) in NIBBLE_MASKS for a in n.args) and \
        any(isinstance(m, Load) for a in n.args for m in walk(a))


_has_field = subtree_has(_is_field)


def _fields(e):
    return [n for n in walk(e) if _is_field(n)]


def _field_loops(f, n) -> set[int]:
    """Loops holding the loads the bit field reads."""
    out: set[int] = set()
    for m in walk(n):
        if isinstance(m, Load) and m.access < len(f.accesses):
            out |= set(f.accesses[m.access].loops)
    return out


def _reduced(e) -> bool:
    return any(isinstance(m, Call) and short(m.fn) in REDUCERS for m in walk(e)) or \
        any(isinstance(m, Sym) and m.key.startswith(("carried#", "phi#")) for m in walk(e))


def _materialised(f) -> list:
    return [a for a in f.accesses if a.space == "global" and a.kind in ("store", "atomic") and a.value is not None
            and _has_field(a.value) and not _reduced(a.value)]


def _fed_products(f) -> list:
    """Places where a bit field of data loaded in loop L enters a reduction inside loop L."""
    hits = []
    for c in dots(f):
        for fld in _fields(c.call):
            if set(c.loops) & _field_loops(f, fld):
                hits.append(c)
                break
    for a in f.assigns:
        if not a.loops or a.cell is None or not any(a.cell in f.loops[lid].carried for lid in a.loops):
            continue
        for n in walk(a.new):
            if isinstance(n, Op) and n.op == "*" and len(n.args) >= 2 and any(_has_field(x) for x in n.args) and \
                    any(not _has_field(x) and any(isinstance(m, Load) for m in walk(x)) for x in n.args):
                if set(a.loops) & set().union(*[_field_loops(f, fl) for fl in _fields(n)]):
                    hits.append(a)
                    break
        if hits and hits[-1] is a:
            break
    return hits


def _via_shared(f) -> list:
    """A shared tile written with dequantised values and read back in the same loop by an MMA
    or multiply-accumulate."""
    mma_loops = {lid for c in mma_calls(f) for lid in getattr(c, "loops", ())}
    mma_loops |= {lid for a in f.asm if "mma" in a.text for lid in a.loops}
    mma_loops |= {lid for a in f.assigns if a.op in ("+=",) for lid in a.loops}
    for st in f.accesses:
        if st.space != "shared" or st.kind != "store" or st.value is None or not st.loops:
            continue
        if not _field_in_registers(f, st.value, set(st.loops)):
            continue
        for ld in f.accesses:
            if ld.obj == st.obj and ld.kind == "load" and set(ld.loops) & set(st.loops) & mma_loops:
                return [st, ld]
    return []


def _register_objects(f, e) -> set[int]:
    """Register arrays ``e`` reads: its local loads, and the local objects a merged value (a
    branch's phi) depends on."""
    objs = {acc.obj for acc in loads_in(f, e) if acc.space == "local"}
    for n in walk(e):
        if isinstance(n, Sym):
            for d in n.deps:
                if d.startswith("obj#") and d[4:].isdigit():
                    stores = stores_to(f, int(d[4:]))
                    if stores and all(st.space == "local" for st in stores):
                        objs.add(int(d[4:]))
    return objs


def _field_in_registers(f, e, loops: set[int], depth: int = 4) -> bool:
    """A bit field of loaded data reaches ``e`` directly or through register arrays written in
    one of ``loops``: ``deq[j] = lop3(w, 0x000F000F, 0x64006400); ... acc += deq[j] * x[j]``."""
    frontier, seen = [e], set()
    for _ in range(depth + 1):
        nxt = []
        for v in frontier:
            if _has_field(v):
                return True
            for obj in _register_objects(f, v) - seen:
                seen.add(obj)
                nxt += [st.value for st in stores_to(f, obj) if st.value is not None and set(st.loops) & loops]
        frontier = nxt
    return False


def _fed_through_registers(f) -> list:
    """A multiply-accumulate of the main loop (two different operands, see ``mac_updates``) with
    a dequantised value held in a register array among its factors."""
    for a in mac_updates(f):
        loops = set(a.loops)
        for left, right in products_of(a):
            if a.old is not None and a.old in (left, right):
                continue  # w = fma(w, scale, zero) rescales the weight itself: not the product
            if _field_in_registers(f, left, loops) or _field_in_registers(f, right, loops):
                return [a]
    return []


def _asm_unpack(f) -> list:
    mma_loops = {lid for c in mma_calls(f) for lid in getattr(c, "loops", ())} | {lid for a in f.asm if "mma" in a.text for lid in a.loops}
    return [a for a in f.asm if a.loops and ("lop3" in a.text or "prmt" in a.text) and set(a.loops) & mma_loops][:1]


@RULE.both
def detect(f):
    stored = _materialised(f)
    if stored:
        return absent("dequantised weights stored to global memory")
    hits = _fed_products(f) or _via_shared(f) or _asm_unpack(f) or _fed_through_registers(f)
    if hits:
        return present(hits[:2], "packed words unpacked in the K loop and fed to its dot / multiply-accumulate")
    return absent("no bit field of loaded weights feeds the main loop's products")
