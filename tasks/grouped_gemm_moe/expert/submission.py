"""Expert ``grouped_gemm_moe``: one persistent Triton launch over the output tiles of every expert.

y[rows of expert e] = x[rows of expert e] @ w[e]^T, bf16 in and out, fp32 accumulation. The rows
of x are already grouped by expert (expert 0's rows first); ``group_sizes[e]`` says how many rows
expert e owns and lives on the GPU.

Design:
  * a single launch of a fixed grid (the SM count) for all experts: no host loop of GEMMs and no
    host read of the group sizes (``.tolist()`` would cost a device sync, ~10-20 us, and serialise
    the launch behind the previous kernel);
  * every program loads the E group sizes once, turns them into per-group tile counts
    (ceil(rows / BLOCK_M) x the N tiles) and an inclusive prefix of them (``tl.cumsum``), then walks
    a global tile index in steps of the grid size; each tile index is located in the prefix (the
    number of groups whose tiles end at or before it), which gives the group, its first row and its
    m/n tile (m fastest, so the programs of a wave share one weight panel of one expert in L2);
  * operand tiles come through TMA tensor descriptors over x [T, K] and over w seen as [E*N, K]:
    rows past a group's end belong to the next group (or are zero-filled past T / E*N by the
    hardware), they only feed output rows the masked epilogue never writes;
  * tl.dot on bf16 tiles with an fp32 accumulator (wgmma on sm_90), num_stages deep pipeline.

Empty experts own no tiles and cost nothing. The launch settings are the module constants below,
chosen by ``benchmarks/tune_grouped_gemm_moe.py`` on an H200: one setting for experts with many
rows each and one for experts with few (the average group size T / E is known from the shapes,
without reading the sizes).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages), picked by the average rows per expert.
# From benchmarks/tune_grouped_gemm_moe.py on an H200 (2026-12-02, seed 0, 10 reps): 128x256x64
# with 4 stages won e8 (1.32 ms, 0.98x the cuBLAS loop) and e64 (0.206 ms, 10.5x); 64x256x64 won
# the skewed e128 (0.123 ms, 27.5x), where most experts own 1-3 rows.
LARGE_GROUPS = (128, 256, 64, 8, 4)  # T / E >= SMALL_GROUP_ROWS (e8: ~1024 rows each, e64: ~256)
SMALL_GROUPS = (64, 256, 64, 8, 4)  # T / E < SMALL_GROUP_ROWS (e128 skewed: 32 on average)
SMALL_GROUP_ROWS = 128
PROGRAMS_PER_SM = 1
# CPU interpreter (TRITON_INTERPRET=1): small tiles, ragged against the smoke shape, few programs.
INTERPRETER = (16, 16, 32, 4, 2)
INTERPRETER_PROGRAMS = 3


@triton.jit
def grouped_gemm_persistent_kernel(
    x_desc, w_desc, y_ptr, sizes_ptr,
    E, N, K,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_E: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
):
    # Per-group tile counts and their prefix, computed once per program from the sizes on device.
    groups = tl.arange(0, BLOCK_E)
    rows = tl.load(sizes_ptr + groups, mask=groups < E, other=0)
    n_tiles = tl.cdiv(N, BLOCK_N)
    m_tiles = (rows + BLOCK_M - 1) // BLOCK_M
    tiles = m_tiles * n_tiles
    tiles_end = tl.cumsum(tiles, 0)  # inclusive prefix: group g owns [tiles_end[g] - tiles[g], tiles_end[g])
    rows_end = tl.cumsum(rows, 0)
    total_tiles = tl.sum(tiles, 0)
    k_steps = tl.cdiv(K, BLOCK_K)

    for tile in tl.range(tl.program_id(0), total_tiles, NUM_PROGRAMS):
        # the group whose tile range holds this tile: the number of groups that end before it
        g = tl.sum((tiles_end <= tile).to(tl.int32), 0)
        here = groups == g
        g_tiles_end = tl.sum(tl.where(here, tiles_end, 0), 0)
        g_m_tiles = tl.sum(tl.where(here, m_tiles, 0), 0)
        g_rows_end = tl.sum(tl.where(here, rows_end, 0), 0)
        g_rows = tl.sum(tl.where(here, rows, 0), 0)
        local = tile - (g_tiles_end - g_m_tiles * n_tiles)
        pid_m = local % g_m_tiles
        pid_n = local // g_m_tiles
        row0 = g_rows_end - g_rows + pid_m * BLOCK_M
        col0 = pid_n * BLOCK_N

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_steps):
            a = x_desc.load([row0, kk * BLOCK_K])
            b = w_desc.load([g * N + col0, kk * BLOCK_K])
            acc = tl.dot(a, b.T, acc)

        offs_m = row0 + tl.arange(0, BLOCK_M)
        offs_n = col0 + tl.arange(0, BLOCK_N)
        y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
        mask = (offs_m[:, None] < g_rows_end) & (offs_n[None, :] < N)
        tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask)


_NUM_SMS: dict[int, int] = {}


def _num_sms(device: torch.device) -> int:
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _NUM_SMS:
        _NUM_SMS[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return _NUM_SMS[index]


def _check(x: torch.Tensor, w: torch.Tensor, group_sizes: torch.Tensor) -> None:
    if x.dim() != 2 or w.dim() != 3 or x.shape[1] != w.shape[2] or group_sizes.shape != (w.shape[0],):
        raise ValueError(f"expected x [T, K], w [E, N, K], group_sizes [E]; got {tuple(x.shape)}, "
                         f"{tuple(w.shape)}, {tuple(group_sizes.shape)}")
    if x.dtype != w.dtype or x.dtype not in (torch.bfloat16, torch.float16):
        raise ValueError(f"expected bf16/fp16 x and w of one dtype, got {x.dtype} and {w.dtype}")
    if group_sizes.dtype != torch.int32:
        raise ValueError(f"group_sizes must be int32, got {group_sizes.dtype}")
    if x.shape[1] % 8:
        raise ValueError(f"K must be a multiple of 8 (16-byte rows for TMA), got {x.shape[1]}")


def launch(x, w, group_sizes, setting, programs):
    """Launch the kernel with ``setting`` = (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) on
    ``programs`` programs (the tuning script calls this directly)."""
    bm, bn, bk, warps, stages = setting
    T, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((T, N), device=x.device, dtype=x.dtype)
    x_desc = TensorDescriptor.from_tensor(x, [bm, bk])
    w_desc = TensorDescriptor.from_tensor(w.view(E * N, K), [bn, bk])
    grouped_gemm_persistent_kernel[(programs,)](
        x_desc, w_desc, y, group_sizes, E, N, K, y.stride(0),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, BLOCK_E=max(128, triton.next_power_of_2(E)),
        NUM_PROGRAMS=programs, num_warps=warps, num_stages=stages,
    )
    return y


def run(x: torch.Tensor, w: torch.Tensor, group_sizes: torch.Tensor) -> torch.Tensor:
    """y[T, N]: the rows of expert e are x_e @ w[e]^T (fp32 accumulation, rounded once)."""
    _check(x, w, group_sizes)
    x, w, group_sizes = x.contiguous(), w.contiguous(), group_sizes.contiguous()
    if x.device.type == "cpu":  # TRITON_INTERPRET=1
        return launch(x, w, group_sizes, INTERPRETER, INTERPRETER_PROGRAMS)
    setting = LARGE_GROUPS if x.shape[0] >= SMALL_GROUP_ROWS * w.shape[0] else SMALL_GROUPS
    return launch(x, w, group_sizes, setting, PROGRAMS_PER_SM * _num_sms(x.device))
