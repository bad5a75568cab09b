"""Expert vector sum in Triton: one launch, a persistent grid-stride walk, a last-program finish.

Design (tasks/reduce_sum/task.toml gives the reasoning):
- The grid is a few programs per SM (capped by the number of BLOCK-sized tiles). Program p walks
  tiles p, p + P, p + 2P, ... (a grid-stride loop unrolled by four), adding each loaded tile, widened
  to fp32, into a [BLOCK] fp32 accumulator held in registers.
- At the end each program reduces its accumulator with tl.sum (warp shuffles, then one step across
  warps), publishes the partial, and takes a ticket from an atomic counter (acq_rel). The program
  that draws the last ticket sums all partials and writes the result, then resets the counter for
  the next call: one launch, every element read once, one atomic per program.
- BLOCK = 16 elements per thread (4 x 16-byte fp32 vectors or 2 x bf16 vectors), evict_first on
  the stream, since nothing is read twice.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

_NUM_WARPS = 8
_PROGRAMS_PER_SM = 4
_workspaces: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


@triton.jit
def _vector_sum(x_ptr, partial_ptr, ticket_ptr, out_ptr, n, iters, BLOCK: tl.constexpr, P_POW2: tl.constexpr):
    pid = tl.program_id(0)
    progs = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, iters, loop_unroll_factor=4):
        offs = (pid + i * progs).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0, eviction_policy="evict_first")
        acc += v.to(tl.float32)
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))
    tl.debug_barrier()
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel", scope="gpu")
    if ticket == progs - 1:
        idx = tl.arange(0, P_POW2)
        parts = tl.load(partial_ptr + idx, mask=idx < progs, other=0.0, cache_modifier=".cg")
        tl.store(out_ptr, tl.sum(parts, axis=0))
        tl.atomic_xchg(ticket_ptr, 0)


def _sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4  # the CPU interpreter (smoke checks): a handful of programs


def _workspace(device: torch.device, programs: int) -> tuple[torch.Tensor, torch.Tensor]:
    key = (device.type, device.index)
    ws = _workspaces.get(key)
    if ws is None or ws[0].numel() < programs:
        ws = (torch.empty(max(programs, 1024), dtype=torch.float32, device=device),
              torch.zeros(1, dtype=torch.int32, device=device))
        _workspaces[key] = ws
    return ws


def run(x: torch.Tensor) -> torch.Tensor:
    """sum(x) in fp32 for a contiguous 1-D float32 or bfloat16 x."""
    assert x.dim() == 1 and x.is_contiguous()
    n = x.numel()
    out = torch.empty((), dtype=torch.float32, device=x.device)
    block = _NUM_WARPS * 32 * 16
    programs = max(1, min(_PROGRAMS_PER_SM * _sm_count(x.device), triton.cdiv(n, block)))
    partials, ticket = _workspace(x.device, programs)
    _vector_sum[(programs,)](x, partials, ticket, out, n, triton.cdiv(triton.cdiv(n, block), programs), BLOCK=block, P_POW2=max(triton.next_power_of_2(programs), 16),
                             num_warps=_NUM_WARPS, num_stages=1)
    return out
