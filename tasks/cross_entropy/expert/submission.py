"""Expert mean cross-entropy in Triton: one launch, one read of the logits, online log-sum-exp.

The kernel is issue-bound before it is bandwidth-bound: at ~4.3 TB/s an SM must retire ~8 bf16
logits per clock, and an SM issues 128 thread-instructions per clock, so the per-logit budget is
~15 instructions and one MUFU ex2 (16 per SM per clock) costs the issue slots of several plain ones.
The design therefore spends as few instructions per logit as it can:

- A persistent grid (as many programs as fit on the GPU at once, at most B) walks the rows with a
  grid-stride loop. Each row is read once, in BLOCK-column chunks of contiguous 16-byte loads.
- The loop over full chunks has no mask and no compare: per logit a widening convert, a max, one
  FMA (x * log2(e) - m * log2(e)), one exp2 and one FMA into a [BLOCK] vector of running sums
  (s * exp2(m_old - m_new) + e, the scalar rescale of the online log-sum-exp). The ragged last
  chunk, when there is one, runs once per row with a mask.
- The target's logit is one scalar load per row (2 bytes next to the row's 500 KB).
- tl.exp2 compiles to one `ex2.approx.ftz.f32` (MUFU) per logit; log2(e) is folded into that FMA.
- Row losses are added per program in fp32; each program publishes its sum and takes a ticket
  from an atomic counter (acq_rel); the program that draws the last ticket adds the partials,
  divides by B, writes the loss and resets the counter. evict_first on the logits: nothing is
  read twice.

The settings (chunk width, warps, pipeline stages) are the best of a sweep on the H200
(benchmarks/family1_tune.py --only xent, examples/h200/family1/tune_run3.txt); the profiled
result is in examples/h200/family1/cross_entropy_run7_*.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)
_workspaces: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


# The best setting of the H200 sweep (benchmarks/family1_tune.py --only xent).
BLOCK = 4096
NUM_WARPS = 4
STAGES = 3
MAX_PROGRAMS = 4096  # the grid's cap: the last program adds this many partial sums at most


@triton.jit
def _xent_mean(logits_ptr, target_ptr, partial_ptr, ticket_ptr, loss_ptr, n_rows, n_cols, row_stride,
               BLOCK: tl.constexpr, P_POW2: tl.constexpr, STAGES: tl.constexpr):
    pid = tl.program_id(0)
    progs = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    n_full = (n_cols // BLOCK) * BLOCK
    total = 0.0
    for row in tl.range(pid, n_rows, progs):
        base = logits_ptr + tl.cast(row, tl.int64) * row_stride
        picked = tl.load(base + tl.load(target_ptr + row)).to(tl.float32)
        m = -1.0e30  # running max, in the logits' own units
        s = tl.zeros([BLOCK], dtype=tl.float32)  # running sums of exp2((x - m) * log2(e))
        for start in tl.range(0, n_full, BLOCK, num_stages=STAGES):
            x = tl.load(base + start + lanes, eviction_policy="evict_first").to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            shift = m_new * LOG2E
            s = s * tl.exp2(m * LOG2E - shift) + tl.exp2(x * LOG2E - shift)
            m = m_new
        if n_full < n_cols:
            cols = n_full + lanes
            x = tl.load(base + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            shift = m_new * LOG2E
            s = s * tl.exp2(m * LOG2E - shift) + tl.exp2(x * LOG2E - shift)
            m = m_new
        total += (m * LOG2E + tl.log2(tl.sum(s, axis=0))) * LN2 - picked
    tl.store(partial_ptr + pid, total)
    tl.debug_barrier()
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel", scope="gpu")
    if ticket == progs - 1:
        idx = tl.arange(0, P_POW2)
        parts = tl.load(partial_ptr + idx, mask=idx < progs, other=0.0, cache_modifier=".cg")
        tl.store(loss_ptr, tl.sum(parts, axis=0) / n_rows)
        tl.atomic_xchg(ticket_ptr, 0)


def _on_gpu(device: torch.device) -> bool:
    return device.type == "cuda" and os.environ.get("TRITON_INTERPRET") != "1"


def _workspace(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The per-program partial sums (one slot per program, MAX_PROGRAMS at most) and the ticket
    counter, allocated once per device; the last program resets the counter, so no memset per call."""
    key = (device.type, device.index)
    if key not in _workspaces:
        _workspaces[key] = (torch.empty(MAX_PROGRAMS, dtype=torch.float32, device=device),
                            torch.zeros(1, dtype=torch.int32, device=device))
    return _workspaces[key]


_fits: dict[tuple, int] = {}


def _programs_per_sm(key: tuple, warps: int, compile_kernel) -> int:
    """How many programs of this setting one SM holds at once: the register file (64K 32-bit
    registers, allocated 8 per thread at a time) and the 227 KB of shared memory over what the
    compiled kernel needs per program, capped by the 2048-thread limit. A persistent grid larger
    than that would run its last programs as a second, partial wave."""
    if key not in _fits:
        compiled = compile_kernel()
        compiled._init_handles()
        threads = 32 * warps
        by_regs = 65536 // max(-(-compiled.n_regs // 8) * 8 * threads, 1)
        by_smem = (227 * 1024) // max(compiled.metadata.shared, 1)
        _fits[key] = max(1, min(by_regs, by_smem, 2048 // threads))
    return _fits[key]


def launch(logits: torch.Tensor, target: torch.Tensor, block: int, warps: int, stages: int) -> torch.Tensor:
    """The loss at one launch setting (the tuning sweep passes its own; run() the defaults)."""
    assert logits.dim() == 2 and logits.stride(1) == 1 and target.dim() == 1
    b, v = logits.shape
    dev = logits.device
    loss = torch.empty((), dtype=torch.float32, device=dev)
    target = target.contiguous()
    block = min(block, max(triton.next_power_of_2(v), 16))
    sms = torch.cuda.get_device_properties(dev).multi_processor_count if _on_gpu(dev) else 2
    partials, ticket = _workspace(dev)

    def compile_kernel():
        return _xent_mean.warmup(logits, target, partials, ticket, loss, b, v, logits.stride(0), BLOCK=block,
                                 P_POW2=MAX_PROGRAMS, STAGES=stages, num_warps=warps, num_stages=1,
                                 grid=(1,))

    per_sm = _programs_per_sm((block, warps, stages, dev.index), warps, compile_kernel) if _on_gpu(dev) else 2
    programs = max(1, min(per_sm * sms, b, MAX_PROGRAMS))
    _xent_mean[(programs,)](logits, target, partials, ticket, loss, b, v, logits.stride(0), BLOCK=block,
                            P_POW2=MAX_PROGRAMS, STAGES=stages, num_warps=warps, num_stages=1)
    return loss


def run(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of contiguous bf16 logits [B, V] against int64 targets [B], in fp32."""
    return launch(logits, target, block=BLOCK, warps=NUM_WARPS, stages=STAGES)
