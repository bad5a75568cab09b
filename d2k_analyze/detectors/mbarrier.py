"""mbarrier: shared-memory mbarrier objects (PTX mbarrier.*, split-phase cuda::barrier or tx
barriers, CUTLASS ClusterTransactionBarrier, ThunderKittens semaphores). __syncthreads, named
barriers and arrive_and_wait-only cuda::barrier do not count."""

from __future__ import annotations

import re

from ._base import absent, first, present

IDENTS = r"^(ClusterBarrier|ClusterTransactionBarrier|PipelineTmaAsync|PipelineAsync|barrier_arrive_tx|init_semaphore|expect_bytes|arrive_and_expect_tx|expect_tx|mbarrier_\w+|mbar_\w+|Barrier)$"


def detect_cuda(facts):
    ids = sorted(facts.idents_matching(IDENTS))
    split_phase = [c for c in facts.calls if c.short == "arrive"] and [c for c in facts.calls if c.short == "wait"]
    hits = first(
        facts.grep_asm(r"\bmbarrier\.|cp\.async\.mbarrier"),
        facts.grep(r"\b(" + "|".join(map(re.escape, ids)) + r")\b") if ids else [],
        facts.grep(r"cuda::barrier") if split_phase else [],
    )
    return present(hits, "mbarrier / transaction barrier") if hits else absent("no mbarrier (only __syncthreads-style barriers)")
