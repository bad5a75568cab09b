"""ldmatrix: ldmatrix / stmatrix fragment moves (PTX or CuTe LDSM/STSM atoms). wmma::load_matrix_sync
does not count (the source does not choose ldmatrix)."""

from __future__ import annotations

import re

from ._base import absent, first, present


def detect_cuda(facts):
    ids = facts.idents_matching(r"^(SM75_U(16|32)x\d_LDSM\w*|SM90_U(16|32)x\d_STSM\w*|ldsm\w*|stsm\w*)$")
    hits = first(facts.grep_asm(r"\b(ldmatrix|stmatrix)\b"), facts.grep(r"\b(" + "|".join(map(re.escape, sorted(ids))) + r")\b") if ids else [])
    return present(hits, "ldmatrix/stmatrix fragment loads") if hits else absent("no ldmatrix/stmatrix")
