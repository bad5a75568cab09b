"""Prototype for the softmax / LayerNorm experts' weak workloads (benchmarks/family1_tune.py
--only rows): a persistent grid whose row loop is software-pipelined (the next rows' loads are in
flight, through shared memory, while this row is reduced and stored), and LayerNorm's weight and
bias loaded once per program instead of once per row. Measured and not adopted: see
docs/h200-results.md, "softmax / layernorm: two more designs measured"."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def softmax_persistent(x_ptr, y_ptr, M, N, stride, BLOCK_N: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0), num_stages=STAGES):
        off = tl.cast(row, tl.int64) * stride + cols
        x = tl.load(x_ptr + off, mask=ok, other=-float("inf"), eviction_policy="evict_first").to(tl.float32)
        e = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
        tl.store(y_ptr + off, (e * (1.0 / tl.sum(e, axis=0))).to(y_ptr.dtype.element_ty), mask=ok)


@triton.jit
def layernorm_persistent(x_ptr, w_ptr, b_ptr, y_ptr, M, N, eps, BLOCK_N: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0), num_stages=STAGES):
        off = tl.cast(row, tl.int64) * N + cols
        x = tl.load(x_ptr + off, mask=ok, other=0.0, eviction_policy="evict_first").to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        d = tl.where(ok, x - mean, 0.0)
        rstd = tl.math.rsqrt(tl.sum(d * d, axis=0) / N + eps)
        tl.store(y_ptr + off, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=ok)


_fit: dict = {}


def _programs(kernel, args, meta, per_sm: int) -> int:
    """SMs x programs per SM; per_sm 0 = as many as the registers and shared memory allow."""
    props = torch.cuda.get_device_properties(args[0].device)
    if per_sm == 0:
        key = (kernel, tuple(sorted(meta.items())))
        if key not in _fit:
            c = kernel.warmup(*args, grid=(1,), **meta)
            c._init_handles()
            threads = 32 * meta["num_warps"]
            regs = -(-c.n_regs // 8) * 8
            by_regs = 65536 // max(regs * threads, 1)
            by_smem = (228 * 1024) // max(c.metadata.shared + 1024, 1)
            _fit[key] = max(1, min(by_regs, by_smem, 2048 // threads))
        per_sm = _fit[key]
    return props.multi_processor_count * per_sm


def softmax(x, num_warps: int, stages: int, per_sm: int = 0):
    y = torch.empty_like(x)
    m, n = x.shape
    meta = dict(BLOCK_N=triton.next_power_of_2(n), STAGES=stages, num_warps=num_warps, num_stages=1)
    args = (x, y, m, n, x.stride(0))
    softmax_persistent[(min(m, _programs(softmax_persistent, args, meta, per_sm)),)](*args, **meta)
    return y


def layernorm(x, w, b, num_warps: int, stages: int, per_sm: int = 0):
    y = torch.empty_like(x)
    m, n = x.shape
    meta = dict(BLOCK_N=triton.next_power_of_2(n), STAGES=stages, num_warps=num_warps, num_stages=1)
    args = (x, w, b, y, m, n, 1e-5)
    layernorm_persistent[(min(m, _programs(layernorm_persistent, args, meta, per_sm)),)](*args, **meta)
    return y
