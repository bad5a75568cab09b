"""atomics: atomic read-modify-write operations on memory.

## What it means
The kernel uses CUDA ``atomic*`` functions (any scope: ``atomicAdd_block``, ``atomicAdd_system``)
or Triton ``tl.atomic_*`` on global or shared memory, or PTX ``atom.`` / ``red.`` instructions.

## How it is detected
An access of kind ``atomic`` recorded by the interpreter (library intrinsic or ``tl.atomic_*``),
or inline PTX with an ``atom.``/``red.`` instruction, in live code.

## Not to be confused with
A helper merely *named* like an atomic that does a plain store: only the library operation counts.
"""

from ._base import Rule, Signature, absent, present

RULE = Rule("atomics", Signature(ptx=r"(?<![.\w])(?:atom|red)\.[\w.:]+", sass=r"\b(?:ATOMG?|ATOMS|RED)\.\S+", refutes=True))


@RULE.both
def detect(f):
    hits = [a for a in f.accesses if a.kind == "atomic"] + f.asm_matching(r"(?<![.\w])(atom|red)\.(global|shared|add|max|min|inc|cas|exch|relaxed|release|acquire|gpu|sys)")
    if hits:
        return present(hits, "atomic read-modify-write in live code")
    return absent("no atomic operations")
