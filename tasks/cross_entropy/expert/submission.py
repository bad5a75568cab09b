"""Expert mean cross-entropy in Triton: one launch, one read of the logits, online log-sum-exp.

Design (tasks/cross_entropy/task.toml gives the reasoning):
- A persistent grid (a few programs per SM, at most B) walks the rows with a grid-stride loop.
  Each row is read once in BLOCK-column chunks, widened to fp32 and scaled by log2(e); the row
  keeps a running max m (a scalar, in the log2 domain) and a [BLOCK] vector of running sums that
  is rescaled by exp2(m - m_new) whenever a chunk raises the max: one exp2 per logit.
- The target's logit is picked out of the chunk that holds it (a compare per column, no second
  read); the row loss is (m + log2(sum)) * ln 2 - x[target], added to the program's fp32 sum.
- Each program publishes its sum and takes a ticket from an atomic counter (acq_rel); the program
  that draws the last ticket adds the partials, divides by B and writes the loss, then resets the
  counter. evict_first on the logits: nothing is read twice.
- 8 programs per SM of 4 warps, the chunk loop software-pipelined over 2 stages (the next chunk's
  load is in flight while this chunk's max is reduced): on the H200 1.67-1.81x the first setting
  (4 programs per SM of 8 warps, 1 stage), which was the slowest kernel of the task
  (examples/h200/family1/cross_entropy_settings.jsonl).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)
_NUM_WARPS = 4
_BLOCK = 4096
_PROGRAMS_PER_SM = 8
_STAGES = 2
_workspaces: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


@triton.jit
def _xent_mean(logits_ptr, target_ptr, partial_ptr, ticket_ptr, loss_ptr, n_rows, n_cols, row_stride,
               BLOCK: tl.constexpr, P_POW2: tl.constexpr, STAGES: tl.constexpr):
    pid = tl.program_id(0)
    progs = tl.num_programs(0)
    total = tl.zeros([1], dtype=tl.float32)
    for row in tl.range(pid, n_rows, progs):
        base = logits_ptr + tl.cast(row, tl.int64) * row_stride
        tgt = tl.load(target_ptr + row)
        m = tl.full([1], -1.0e30, dtype=tl.float32)
        s = tl.zeros([BLOCK], dtype=tl.float32)
        picked = tl.zeros([BLOCK], dtype=tl.float32)
        for start in tl.range(0, n_cols, BLOCK, num_stages=STAGES):
            cols = start + tl.arange(0, BLOCK)
            inside = cols < n_cols
            x = tl.load(base + cols, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32)
            picked += tl.where(cols == tgt, x, 0.0)
            y = tl.where(inside, x * LOG2E, -float("inf"))
            m_new = tl.maximum(m, tl.max(y, axis=0))
            s = s * tl.exp2(m - m_new) + tl.exp2(y - m_new)
            m = m_new
        total += (m + tl.log2(tl.sum(s, axis=0))) * LN2 - tl.sum(picked, axis=0)
    tl.store(partial_ptr + pid, tl.sum(total, axis=0))
    tl.debug_barrier()
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel", scope="gpu")
    if ticket == progs - 1:
        idx = tl.arange(0, P_POW2)
        parts = tl.load(partial_ptr + idx, mask=idx < progs, other=0.0, cache_modifier=".cg")
        tl.store(loss_ptr, tl.sum(parts, axis=0) / n_rows)
        tl.atomic_xchg(ticket_ptr, 0)


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 2  # the CPU interpreter (smoke checks)


def _workspace(device: torch.device, programs: int) -> tuple[torch.Tensor, torch.Tensor]:
    key = (device.type, device.index)
    ws = _workspaces.get(key)
    if ws is None or ws[0].numel() < programs:
        ws = (torch.empty(max(programs, 1024), dtype=torch.float32, device=device),
              torch.zeros(1, dtype=torch.int32, device=device))
        _workspaces[key] = ws
    return ws


def run(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of contiguous bf16 logits [B, V] against int64 targets [B], in fp32."""
    assert logits.dim() == 2 and logits.stride(1) == 1 and target.dim() == 1
    b, v = logits.shape
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    programs = max(1, min(_PROGRAMS_PER_SM * _sm_count(logits.device), b))
    partials, ticket = _workspace(logits.device, programs)
    block = min(_BLOCK, max(triton.next_power_of_2(v), 16))
    _xent_mean[(programs,)](logits, target.contiguous(), partials, ticket, loss, b, v, logits.stride(0), BLOCK=block,
                            P_POW2=max(triton.next_power_of_2(programs), 16), STAGES=_STAGES, num_warps=_NUM_WARPS, num_stages=1)
    return loss
