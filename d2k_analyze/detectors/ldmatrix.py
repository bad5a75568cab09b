"""ldmatrix: warp-cooperative shared->register fragment loads (``ldmatrix`` / ``stmatrix``).

## What it means
PTX ``ldmatrix.sync.aligned`` / ``stmatrix`` (directly or through CuTe ``SM75_U32x*_LDSM`` /
``SM90_U32x*_STSM`` atoms), which load MMA fragments from shared memory.

## How it is detected
The PTX mnemonic in live inline assembly, or the CuTe atom names.

## Not to be confused with
``wmma::load_matrix_sync`` (which the compiler may or may not lower to ldmatrix).
"""

from ._base import Rule, Signature, absent, present

RULE = Rule("ldmatrix", Signature(ptx=r"\b(?:ldmatrix|stmatrix)\S*", sass=r"\b(?:LDSM|STSM)\S*", refutes=True, upgrades=True))


@RULE.cuda
def cuda(f):
    hits = f.asm_matching(r"\b(ldmatrix|stmatrix)\b")
    if hits:
        return present(hits, "ldmatrix/stmatrix fragment loads")
    names = sorted(n for n in f.lib_names_used() if "LDSM" in n or "STSM" in n)
    if names:
        return present([f.loc], f"CuTe ldmatrix atoms: {', '.join(names[:3])}")
    return absent("no ldmatrix/stmatrix")
