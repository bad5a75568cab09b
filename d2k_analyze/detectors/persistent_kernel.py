"""persistent_kernel: both halves visible: a grid sized from the SM count / occupancy at the
launch site and a loop over several tiles or rows in the kernel (static stride by the grid, a
tile scheduler, or an atomic work counter). A grid-stride loop over a data-sized grid is 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present

SM_HOST = r"multi_processor_count|cudaDevAttrMultiProcessorCount|multiProcessorCount|\bNUM_SMS\b|\bnum_sms\b|\bsm_count\b|\bn_sms\b|cudaOccupancyMaxActiveBlocksPerMultiprocessor|get_num_sms|num_SMs"
GRIDLIKE = r"(?i)gridDim\.[xyz]|num_programs|NUM_PROGRAMS|NUM_SMS|num_sms|sm_count|n_sms|num_SMs|NUM_PROGS|num_progs|n_progs|nprogs|NUM_CTAS|grid_size|num_ctas|num_blocks|NUM_BLOCKS"


def detect(facts):
    host = facts.grep_host(SM_HOST)
    loops = [lp for lp in facts.loops if rx.search(GRIDLIKE, lp.step + " " + lp.header)]
    stride_vars = {a.target for a in facts.assigns if rx.search(GRIDLIKE, a.value)}
    loops += [lp for lp in facts.loops if any(rx.search(rf"(?<![\w.]){re.escape(v)}\b", lp.step) for v in stride_vars)]
    work = [c for c in facts.calls if rx.match(r"^(atomicAdd|atomic_add)$", c.short) and any(lp.kind in ("while", "do", "for") and lp.line <= c.line <= lp.end_line for lp in facts.loops)]
    sched = facts.grep(r"(?i)tile_?scheduler|get_next_work|next_tile|PersistentTileScheduler")
    kernel_side = loops or work or sched
    if host and kernel_side:
        return present(host[:1] + (loops or work or sched)[:2], "SM-sized grid and a loop over tiles/rows")
    if kernel_side:
        return absent("loop over work units, but the grid is sized to the data", kernel_side[:1])
    return absent("one tile/row per block/program")


detect_cuda = detect_triton = detect
