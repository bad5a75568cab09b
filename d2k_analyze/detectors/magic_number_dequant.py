"""magic_number_dequant: int -> float conversion by the magic-number (or lop3) bit trick.

## What it means
Low-bit integers become floats by OR-ing them into the mantissa of a float constant (0x6400 is
fp16 1024.0, 0x4B000000 fp32 2^23, 0x4300 bf16 128.0), reinterpreting the bits as the float type
and subtracting the constant, instead of an int-to-float conversion instruction; or PTX
``lop3.b32`` merging masked nibbles with such a constant.

## How it is detected
An ``|`` (or ``+``) of a magic exponent pattern with a value computed from loaded data, whose
result is reinterpreted or cast to a float type (a Triton ``.to(float)`` of the word, CUDA
``__int_as_float`` / ``__ushort_as_half`` / a pointer cast) or has the magic float value
subtracted from it; or inline asm with ``lop3`` and a magic exponent, as an immediate in the
template or as an input operand whose value resolves to one.

## Not to be confused with
A plain cast of the integer (``q.to(tl.float16)``, ``__int2half_rn``, ``cvt``); the constant
used as an offset or a size; a bitcast that only reads fp16 data stored as integers.
"""

import re

from ..facts.expr import Call, Cast, Load, Op, num, short, walk
from ..facts.ops import holds
from ..facts.ops import values as kept_values
from ._base import Rule, absent, present

RULE = Rule("magic_number_dequant")
MAGIC = {0x6400, 0x64006400, 0x4B000000, 0x4300, 0x43004300, 0x5400, 0x54005400, 0x6480, 0x64806480}
MAGIC_FLOATS = {1024.0, 8388608.0, 128.0, 64.0, 1032.0, 1152.0}
REINTERPRET = {"__int_as_float", "__uint_as_float", "__ushort_as_half", "__short_as_half", "__ushort_as_bfloat16",
               "__short_as_bfloat16", "bit_cast", "reinterpret", "bitcast"}
FLOATISH = re.compile(r"float|half|bf16|fp16|bfloat|f16|f32")
ASM_MAGIC = re.compile(r"(?i)0x(6400|64006400|4b000000|43004300|54005400|64806480)\b")


def _magic_or(n) -> bool:
    if not (isinstance(n, Op) and n.op in ("|", "+") and len(n.args) == 2):
        return False
    consts = [a for a in n.args if num(a) in MAGIC]
    rest = [a for a in n.args if num(a) not in MAGIC]
    if not consts or not rest:
        return False
    data = any(isinstance(m, Load) for m in walk(rest[0]))
    if n.op == "+":
        data = data and any(isinstance(m, Op) and m.op == "&" for m in walk(rest[0]))
    return data


def _converted(e, node) -> bool:
    for m in walk(e):
        if isinstance(m, Cast) and FLOATISH.search(m.type) and any(x is node or x == node for x in walk(m.arg)):
            return True
        if isinstance(m, Call) and short(m.fn) in REINTERPRET and any(x == node for a in m.args for x in walk(a)):
            return True
        if isinstance(m, Op) and m.op in ("-", "+") and any(num(a) is not None and abs(float(num(a))) in MAGIC_FLOATS for a in m.args) \
                and any(x == node for x in walk(m)):
            return True
    return False


@RULE.both
def detect(f):
    values = kept_values(f)
    ors = []
    # most kernels have no magic OR at all: the kernel's node index tells at once
    candidates = values if holds(f, _magic_or, {"|", "+"}) else []
    for rec, v in candidates:
        for n in walk(v):
            if _magic_or(n):
                ors.append((rec, n))
        if len(ors) > 8:
            break
    for rec, n in ors:
        for rec2, v in values:
            if _converted(v, n):
                return present([rec, rec2], "integer OR-ed into a float's mantissa, reinterpreted, magic value subtracted")
    asm = [a for a in f.asm if "lop3" in a.text and (ASM_MAGIC.search(a.text) or any(num(v) in MAGIC for v in a.operands))]
    if asm:
        return present(asm[:1], "lop3.b32 merging bits into a magic exponent (an immediate or a constant operand)")
    return absent("integers converted with ordinary casts (no magic-number trick)")
