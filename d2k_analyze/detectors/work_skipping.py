"""work_skipping (low confidence): loop bounds (or an early exit before loads) exclude fully masked
tiles, e.g. a causal KV loop that stops at the diagonal block. Elementwise masks over the full
range and ragged-edge guards do not count."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present

QBLOCK = r"(start_m|pid_m|m_block|q_block|qb|q_idx|block_m|q_start|query_block|blockIdx\.[xyz]|program_id|q_tile|row_block|m_start|q_blk|start_q)"


def detect(facts):
    causal = facts.grep(r"(?i)causal|\bSTAGE\b|window")
    if not causal:
        return absent("no causal / windowed structure")
    bound_vars = {a.target for a in facts.assigns if rx.search(QBLOCK, a.value) and rx.search(r"(?i)^(hi|lo|end|start|n_?blocks?|num_?\w*blocks?|kv_?(end|len|stop|blocks?)|\w*_end|\w*_hi|\w*max\w*|\w*limit\w*|\w*bound\w*)", a.target)}
    loops = [
        lp for lp in facts.loops
        if rx.search(QBLOCK, lp.cond + " " + lp.init)
        or any(rx.search(rf"(?<![\w.]){re.escape(v)}\b", lp.cond + " " + lp.init) for v in bound_vars)
    ]
    if loops:
        return present(loops[:2], "KV loop bound derived from the query block (masked tiles skipped)")
    return absent("loops cover the full range; masking is elementwise")


detect_cuda = detect_triton = detect
