"""Expert ``gemm_splitk_skinny``: split-K, swap-AB Triton GEMM for a tiny M (decode-time GEMV-like).

C[M, N] = A[M, K] @ B[N, K]^T, bf16 in and out, fp32 accumulation, M <= 32 on the timed shapes.

The work is reading B (117-470 MB) once at full HBM bandwidth; the math is negligible. Design:
  * swap-AB: each program computes a C^T tile [BLOCK_N, BLOCK_M] = B_tile [BLOCK_N, BLOCK_K] x
    A_tile^T [BLOCK_K, BLOCK_M], so the large N feeds the MMA's M side (wgmma needs 64 rows per
    warpgroup) and the tiny M (padded to 16 or 32) is the MMA's N side; the tile is stored
    transposed into C;
  * split-K: only N / BLOCK_N = 16-64 output tiles exist, far fewer than 132 SMs, so grid axis 1
    cuts K into SPLIT_K slices and every (tile, slice) program streams its own piece of B;
  * the partial tiles go to a small fp32 workspace; a ticket counter (one atomic per program)
    elects the last-arriving program of each tile, which sums the SPLIT_K partials in slice order
    (deterministic, unlike fp32 atomics into C) and writes bf16 C. One launch, no zeroing kernel,
    no second reduction kernel: the counters reset themselves for the next call;
  * the K loop is software-pipelined (num_stages explicit) so several B tiles are in flight per SM;
    B is streamed with evict_first so the re-read A and the workspace stay in L2.

Launch settings are module constants; TUNED overrides them per shape (from the H200 sweep of
benchmarks/tune_gemm_splitk_skinny.py). Under TRITON_INTERPRET=1 (CPU tensors) a small fixed
configuration is used so that the smoke workload is ragged against it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Defaults for shapes not in TUNED.
BLOCK_N = 128          # rows of B (columns of C) per program: the MMA's M side
BLOCK_K = 128          # K step: one [128, 128] bf16 B tile is 32 KB
NUM_STAGES = 4         # B tiles in flight per program (4 x 32 KB + A tiles: ~144 KB of smem)
NUM_WARPS = 4          # one warpgroup: a 128-row wgmma tile
PROGRAMS_PER_SM = 2    # split so that tiles x SPLIT_K ~ 2 x 132 programs
MIN_K_SLICE = 1024     # never cut K finer than this (keeps the pipeline's prologue amortised)

# Per-shape settings (M, N, K) -> (BLOCK_N, BLOCK_K, SPLIT_K, NUM_STAGES, NUM_WARPS), from the
# H200 sweep; other shapes use the defaults above with the SPLIT_K heuristic.
TUNED: dict[tuple[int, int, int], tuple[int, int, int, int, int]] = {
    (16, 4096, 14336): (64, 128, 4, 4, 4),    # 256 programs; 1.22x the same tile with SPLIT_K=1
    (8, 8192, 28672): (128, 128, 2, 4, 4),    # 128 programs; 1.05x SPLIT_K=1 (64-wide split 1: within 2 %)
    (32, 2048, 16384): (64, 128, 4, 6, 4),    # 128 programs; 1.72x the same tile with SPLIT_K=1
}

# Under the CPU interpreter (smoke only): ragged against the smoke shape 12 x 200 x 456.
INTERPRETER_SETTING = (64, 64, 3, 2, 4)


@triton.jit
def splitk_swapab_kernel(
    a_ptr, b_ptr, c_ptr, part_ptr, ticket_ptr,
    M, N, K, k_slice,
    BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr, EVEN: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    pid_m = tl.program_id(2)

    rows_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)   # rows of B = columns of C
    rows_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)   # rows of A = rows of C
    cols_k = tl.arange(0, BLOCK_K)
    m_ok = rows_m < M
    n_ok = rows_n < N

    k_begin = pid_k * k_slice
    k_end = tl.minimum(k_begin + k_slice, K)
    b_tile = b_ptr + rows_n[:, None].to(tl.int64) * K + (k_begin + cols_k)[None, :]
    a_tile = a_ptr + rows_m[:, None] * K + (k_begin + cols_k)[None, :]

    acc_t = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)   # C^T tile
    for k0 in range(k_begin, k_end, BLOCK_K):
        if EVEN:
            w = tl.load(b_tile, eviction_policy="evict_first")
            x = tl.load(a_tile, mask=m_ok[:, None], other=0.0)
        else:
            k_ok = (k0 + cols_k) < k_end
            w = tl.load(b_tile, mask=n_ok[:, None] & k_ok[None, :], other=0.0, eviction_policy="evict_first")
            x = tl.load(a_tile, mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        acc_t = tl.dot(w, tl.trans(x), acc_t)   # [BN, BK] x [BK, BM]: N on the MMA's M side
        b_tile += BLOCK_K
        a_tile += BLOCK_K

    c_tile = c_ptr + rows_m[None, :] * N + rows_n[:, None]   # transposed store of C^T
    c_ok = n_ok[:, None] & m_ok[None, :]
    if SPLIT_K == 1:
        tl.store(c_tile, acc_t.to(c_ptr.dtype.element_ty), mask=c_ok)
    else:
        tile = pid_m * tl.num_programs(0) + pid_n
        inner = tl.arange(0, BLOCK_N)[:, None] * BLOCK_M + tl.arange(0, BLOCK_M)[None, :]
        base = part_ptr + tile.to(tl.int64) * (SPLIT_K * BLOCK_N * BLOCK_M)
        tl.store(base + pid_k * (BLOCK_N * BLOCK_M) + inner, acc_t)
        # acq_rel: our partial is visible before the ticket, and the last program sees them all
        arrived = tl.atomic_add(ticket_ptr + tile, 1, sem="acq_rel")
        if arrived == SPLIT_K - 1:
            total = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
            for s in tl.static_range(SPLIT_K):   # fixed order: bit-identical results every call
                total += tl.load(base + s * (BLOCK_N * BLOCK_M) + inner, cache_modifier=".cg")
            tl.store(c_tile, total.to(c_ptr.dtype.element_ty), mask=c_ok)
            tl.atomic_xchg(ticket_ptr + tile, 0)   # re-arm the counter for the next call


_SCRATCH: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}
_NUM_SMS: dict[int, int] = {}


def _num_sms(device: torch.device) -> int:
    if device.type != "cuda":
        return 4
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _NUM_SMS:
        _NUM_SMS[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return _NUM_SMS[index]


def _scratch(device: torch.device, tiles: int, part_elems: int) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 partial tiles and zeroed int32 tickets, allocated once per device and grown on demand
    (the kernel leaves every ticket at 0 when it finishes)."""
    key = (device.type, device.index)
    have = _SCRATCH.get(key)
    if have is None or have[0].numel() < part_elems or have[1].numel() < tiles:
        part = torch.empty(max(part_elems, 1), device=device, dtype=torch.float32)
        tickets = torch.zeros(max(tiles, 1), device=device, dtype=torch.int32)
        have = _SCRATCH[key] = (part, tickets)
    return have


def block_m_for(m: int) -> int:
    """The M side of the MMA: at least 16 (tl.dot's minimum), at most 32 rows per program."""
    return 16 if m <= 16 else 32


def default_split(m: int, n: int, k: int, block_n: int, block_k: int, num_sms: int) -> int:
    tiles = triton.cdiv(n, block_n) * triton.cdiv(m, block_m_for(m))
    split = max(1, (PROGRAMS_PER_SM * num_sms) // tiles)
    return max(1, min(split, k // MIN_K_SLICE, triton.cdiv(k, block_k)))


def launch(a, b, block_n, block_k, split_k, stages, warps):
    """C = A @ B^T with explicit launch settings (the tuning script calls this)."""
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    block_m = block_m_for(M)
    k_steps = triton.cdiv(K, block_k)
    k_slice = triton.cdiv(k_steps, split_k) * block_k
    split_k = triton.cdiv(K, k_slice)   # no empty slices
    grid = (triton.cdiv(N, block_n), split_k, triton.cdiv(M, block_m))
    tiles = grid[0] * grid[2]
    part, tickets = _scratch(a.device, tiles, tiles * split_k * block_n * block_m)
    even = N % block_n == 0 and K % k_slice == 0
    splitk_swapab_kernel[grid](
        a, b, c, part, tickets, M, N, K, k_slice,
        BLOCK_N=block_n, BLOCK_M=block_m, BLOCK_K=block_k, SPLIT_K=split_k, EVEN=even,
        num_stages=stages, num_warps=warps,
    )
    return c


def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B^T with fp32 accumulation, rounded to the inputs' dtype once."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"expected a [M, K] and b [N, K], got {tuple(a.shape)} and {tuple(b.shape)}")
    a = a.contiguous()
    b = b.contiguous()
    M, K = a.shape
    N = b.shape[0]
    if a.device.type == "cpu":
        return launch(a, b, *INTERPRETER_SETTING)
    setting = TUNED.get((M, N, K))
    if setting is None:
        split = default_split(M, N, K, BLOCK_N, BLOCK_K, _num_sms(a.device))
        setting = (BLOCK_N, BLOCK_K, split, NUM_STAGES, NUM_WARPS)
    return launch(a, b, *setting)
