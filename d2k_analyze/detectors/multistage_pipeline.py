"""multistage_pipeline: two or more shared-memory buffers in flight (a stage dimension indexed by
k % stages or toggled with ^ 1, loads issued ahead of compute); in Triton an explicit
num_stages >= 2 on the main loop (a compiler-default num_stages is undecided)."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present
from ._common import STAGE_NAME, shared_decls, stages_decision
from ..parsing.liveness import literal_value


def _stage_count(facts, dim: str) -> int | None:
    v = literal_value(dim, None, "cuda")
    if isinstance(v, int):
        return v
    vals = facts.constexpr_values(dim.strip())
    ints = [x for x in vals if isinstance(x, int)]
    if ints and len(ints) == len(vals):
        return max(ints)
    return None


def detect_cuda(facts):
    staged = []
    for d in shared_decls(facts):
        if len(d.dims) >= 2 or (d.dims and STAGE_NAME.match(d.dims[0].strip())):
            n = _stage_count(facts, d.dims[0])
            if (n is not None and 2 <= n <= 16 and len(d.dims) >= 2) or (n is None and STAGE_NAME.match(d.dims[0].strip())):
                staged.append(d)
            elif n is not None and n < 2 and STAGE_NAME.match(d.dims[0].strip()):
                return absent(f"stage count {d.dims[0]} is {n} at every launch", [d])
    stage_names = [n for n in facts.idents if STAGE_NAME.match(n)]
    for n in stage_names:
        count = _stage_count(facts, n)
        if count is None and facts.constant_expr(n):
            count = literal_value(facts.constant_expr(n), None, "cuda")
        if isinstance(count, int) and count >= 2:
            staged += facts.grep(rf"(?<![\w.]){re.escape(n)}\b")[:1]
        elif isinstance(count, int) and count < 2 and not staged:
            return absent(f"{n} = {count}: a single stage")
    ring = facts.grep(r"%\s*\(?\s*(k?[Nn]um_?[Ss]tages|k?[Ss]tages|STAGES|NUM_STAGES|kNumStages|kStages)\b|\^=?\s*1\b|1\s*-\s*(buf|stage|cur|read|write)\w*|\b(next|nxt|write|load)_?(buf|stage|idx)\b")
    waits = [ln for ln in facts.grep_asm(r"cp\.async\.wait_group\s*%?\d*") if not rx.search(r"wait_group\s+0\b", ln.text)]
    waits += [c for c in facts.calls if c.short in ("cp_async_wait", "cp_async_wait_group", "__pipeline_wait_prior", "producer_acquire", "consumer_wait")
              and ((c.args and c.args[0].strip() != "0") or (c.template_args and c.template_args[0].strip() != "0"))]
    asyncish = facts.grep_asm(r"cp\.async|mbarrier") or facts.calls_named("memcpy_async", "__pipeline_memcpy_async")
    if staged and (ring or waits or asyncish):
        return present(staged[:2] + (ring or waits)[:2], "staged shared-memory buffers with loads ahead of compute")
    pipeline_objs = facts.grep(r"cuda::pipeline|PipelineTmaAsync|make_pipeline")
    if pipeline_objs and (ring or waits):
        return present(pipeline_objs[:2] + (ring or waits)[:2], "multi-stage cuda::pipeline ring")
    return absent("no multi-buffered shared-memory pipeline")


def detect_triton(facts):
    return stages_decision(facts)
