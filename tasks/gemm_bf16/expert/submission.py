"""Expert ``gemm_bf16``: persistent, TMA-fed, L2-grouped Triton GEMM for Hopper.

C[M, N] = A[M, K] @ B[N, K]^T, bf16 in and out, fp32 accumulation.

Design (what makes it reach cuBLAS-class throughput on an H100/H200):
  * one program per SM loops over output tiles (persistent) in GROUP_SIZE_M order, so the A and B
    panels of a wave stay in L2 and the next tile's loads overlap this tile's epilogue;
  * operand tiles arrive through TMA tensor descriptors (hardware address generation, zero-fill
    of ragged edges, 128-byte swizzled shared memory that wgmma reads directly);
  * tl.dot on bf16 tiles with an fp32 accumulator lowers to wgmma on sm_90; num_stages 3-4 keeps
    several TMA loads in flight;
  * the epilogue rounds to bf16 once and stores through a TMA descriptor in two half-width
    sub-tiles, so it needs half the shared memory (room for one more pipeline stage).

The same kernel runs under TRITON_INTERPRET=1 on CPU tensors (the interpreter supports tensor
descriptors); there the autotuner is skipped and one small fixed configuration is used, because
benchmarking configurations in the interpreter is slow and meaningless.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def _set_block_shapes(nargs: dict) -> None:
    """Autotune pre-hook: descriptors carry the block shape, so it must follow the config."""
    bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bn, bk]
    nargs["c_desc"].block_shape = [bm, bn // 2 if nargs["EPILOGUE_SUBTILE"] else bn]


def _config(bm: int, bn: int, bk: int, stages: int, warps: int, subtile: bool = True) -> triton.Config:
    meta = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": 8, "EPILOGUE_SUBTILE": subtile}
    return triton.Config(meta, num_stages=stages, num_warps=warps, pre_hook=_set_block_shapes)


# Strong Hopper configurations (shared memory per stage = (BM + BN) * BK * 2 bytes):
# 128x256x64 is the workhorse (85 flop/byte from L2, two consumer warpgroups of 64x256 each);
# 128x128 variants suit M=512 (more tiles than SMs) and keep register pressure lower.
CONFIGS = [
    _config(128, 256, 64, stages=3, warps=8),
    _config(128, 256, 64, stages=4, warps=8),
    _config(128, 256, 64, stages=3, warps=8, subtile=False),
    _config(128, 128, 64, stages=4, warps=8),
    _config(128, 128, 128, stages=3, warps=8),
    _config(128, 128, 64, stages=5, warps=4),
]

# The small fixed configuration used under the CPU interpreter (ragged against the smoke shape);
# num_stages/num_warps are passed there too, so every launch site states its pipelining depth.
INTERPRETER_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_SIZE_M": 2, "EPILOGUE_SUBTILE": True}
INTERPRETER_PROGRAMS = 3


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr):
    """Grouped ("super-row") order: consecutive tiles walk GROUP_SIZE_M tile rows column by
    column, so a wave of programs shares a few A row-panels and B column-panels in L2."""
    tiles_per_group = GROUP_SIZE_M * num_pid_n
    group = tile_id // tiles_per_group
    first_m = group * GROUP_SIZE_M
    group_rows = min(num_pid_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (tile_id % tiles_per_group) % group_rows
    pid_n = (tile_id % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.jit
def gemm_persistent_tma_kernel(
    a_desc, b_desc, c_desc,
    M, N, K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    EPILOGUE_SUBTILE: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
):
    """Each program computes tiles pid, pid + NUM_PROGRAMS, ... of C (persistent schedule)."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)

    # The epilogue recomputes its tile coordinates from its own counter, so that no value flows
    # from the (software-pipelined, possibly hoisted) loads of a tile to its store.
    epilogue_tile = tl.program_id(0) - NUM_PROGRAMS

    # flatten=True lets the compiler pipeline across the tile boundary: the first loads of the next
    # tile are issued while this tile's epilogue runs.
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_PROGRAMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_tiles):
            # TMA loads; rows/columns past M, N or K are zero-filled by the hardware.
            a = a_desc.load([off_m, kk * BLOCK_K])
            b = b_desc.load([off_n, kk * BLOCK_K])
            acc = tl.dot(a, b.T, acc)  # bf16 x bf16 -> fp32 on tensor cores (wgmma)

        # Epilogue: round to bf16 once; the TMA store clips the ragged edge tiles.
        epilogue_tile += NUM_PROGRAMS
        pid_m, pid_n = _tile_coords(epilogue_tile, num_pid_m, num_pid_n, GROUP_SIZE_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        if EPILOGUE_SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            c_desc.store([off_m, off_n], left.to(c_desc.dtype))
            c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(c_desc.dtype))
        else:
            c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


gemm_persistent_tma_tuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(gemm_persistent_tma_kernel)

_NUM_SMS: dict[int, int] = {}


def _num_sms(device: torch.device) -> int:
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _NUM_SMS:
        _NUM_SMS[index] = torch.cuda.get_device_properties(index).multi_processor_count
    return _NUM_SMS[index]


def _check_inputs(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"expected a [M, K] and b [N, K], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype or a.dtype not in (torch.bfloat16, torch.float16):
        raise ValueError(f"expected bf16/fp16 operands of one dtype, got {a.dtype} and {b.dtype}")
    if not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError("a and b must be contiguous")
    if a.shape[1] % 8 or b.shape[0] % 8:
        # TMA needs 16-byte aligned row strides: K and N multiples of 8 (the task guarantees it).
        raise ValueError(f"K and N must be multiples of 8 for TMA, got K={a.shape[1]} N={b.shape[0]}")


def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B^T with fp32 accumulation, rounded to the inputs' dtype."""
    _check_inputs(a, b)
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)

    # Block shapes are placeholders here; the pre-hook (or the interpreter path) sets them.
    a_desc = TensorDescriptor.from_tensor(a, [64, 64])
    b_desc = TensorDescriptor.from_tensor(b, [64, 64])
    c_desc = TensorDescriptor.from_tensor(c, [64, 64])

    if a.device.type == "cpu":  # TRITON_INTERPRET=1: one fixed small config, no tuning
        meta = dict(INTERPRETER_CONFIG)
        _set_block_shapes({"a_desc": a_desc, "b_desc": b_desc, "c_desc": c_desc, **meta})
        tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
        programs = min(INTERPRETER_PROGRAMS, tiles)
        gemm_persistent_tma_kernel[(programs,)](
            a_desc, b_desc, c_desc, M, N, K, NUM_PROGRAMS=programs, num_stages=3, num_warps=4, **meta
        )
        return c

    num_sms = _num_sms(a.device)

    def grid(meta: dict) -> tuple[int]:
        tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
        return (min(num_sms, tiles),)

    # NUM_PROGRAMS is the grid-stride of the tile loop; with fewer tiles than SMs the extra
    # programs are never launched, so the stride stays num_sms (each program does one tile).
    gemm_persistent_tma_tuned[grid](a_desc, b_desc, c_desc, M, N, K, NUM_PROGRAMS=num_sms)
    return c
