"""Expert ``conv2d_nhwc``: Triton implicit-GEMM 3x3 convolution (stride 1, pad 1), NHWC bf16.

y[n, p, q, k] = sum_{r, s, c} x[n, p + r - 1, q + s - 1, c] * w[k, r, s, c]

GEMM view: M = N*H*W output pixels, N_gemm = K output channels, reduction 9*C. The filter in KRSC
order already is the [K, 9C] operand. The activation operand is never materialised: each
iteration of the reduction loop (tap-major, channel blocks inner) computes the input addresses
of its [BLOCK_M, BLOCK_K] tile from the tile's output pixels plus the tap offset and loads it with
a padding mask, then feeds tl.dot (wgmma on sm_90) with an fp32 accumulator. Program ids are
grouped GROUP_M pixel tiles at a time. The reduction can be split over SPLIT_K programs that add
fp32 partials atomically into a workspace, converted to bf16 by a second tiny kernel; on the H200
small 64x64 tiles filled the SMs of the small-spatial shape better, so the GPU settings use
SPLIT_K 1 and only the CPU/interpreter setting exercises the split. Launch settings are per input-channel count (CONFIGS below, picked by
benchmarks/tune_conv2d_nhwc.py on an H200).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_K, num_warps, num_stages) per input-channel count C.
CONFIGS = {
    64: (128, 64, 64, 8, 1, 4, 3),     # n32_h56_w56_c64_k64: 784 tiles, BLOCK_N = K; H200 0.0304 ms (0.88x cuDNN)
    256: (128, 256, 64, 8, 1, 8, 3),   # n16_h28_w28_c256_k256: 98 tiles of 128x256; H200 0.0476 ms (0.66x cuDNN)
    512: (64, 64, 64, 8, 1, 4, 4),     # n8_h14_w14_c512_k512: 25 x 8 = 200 small tiles; H200 0.0410 ms (0.49x cuDNN)
}
# (H200, benchmarks/tune_conv2d_nhwc.py, 2026-12-02: SPLIT_K 2-4 at C=512 measured 0.049-0.33 ms, slower than
# small tiles: the workspace zeroing and the cast kernel cost more than the idle SMs on a 20 us op.)
DEFAULT_CONFIG = (128, 128, 64, 8, 1, 8, 3)
# CPU / TRITON_INTERPRET=1: small tiles, ragged against the smoke shape; SPLIT_K 2 exercises the combine.
INTERPRETER_CONFIG = (32, 16, 16, 2, 2, 4, 2)

CAST_BLOCK = 1024


@triton.jit
def conv3x3_nhwc_igemm_kernel(
    x_ptr, w_ptr, y_ptr, ws_ptr,
    NB, H, W, C, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
):
    M = NB * H * W
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(K, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    rows = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % rows
    pid_n = (pid % in_group) // rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_c = tl.arange(0, BLOCK_K)
    m_ok = offs_m < M
    n_ok = offs_n < K
    q = offs_m % W
    p = (offs_m // W) % H
    img = offs_m // (W * H)

    c_blocks = tl.cdiv(C, BLOCK_K)
    steps = 9 * c_blocks
    per_split = tl.cdiv(steps, SPLIT_K)
    t_lo = pid_k * per_split
    t_hi = min(t_lo + per_split, steps)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for t in range(t_lo, t_hi):
        tap = t // c_blocks
        c0 = (t % c_blocks) * BLOCK_K
        r = tap // 3
        s = tap % 3
        ih = p + r - 1
        iw = q + s - 1
        pix_ok = m_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        cc = c0 + offs_c
        c_ok = cc < C
        a_off = ((img * H + ih) * W + iw) * C
        a = tl.load(x_ptr + a_off[:, None] + cc[None, :], mask=pix_ok[:, None] & c_ok[None, :], other=0.0)
        b_off = offs_n * (9 * C) + tap * C
        b = tl.load(w_ptr + b_off[None, :] + cc[:, None], mask=n_ok[None, :] & c_ok[:, None], other=0.0)
        acc = tl.dot(a, b, acc)

    out = offs_m[:, None] * K + offs_n[None, :]
    ok = m_ok[:, None] & n_ok[None, :]
    if SPLIT_K == 1:
        tl.store(y_ptr + out, acc.to(y_ptr.dtype.element_ty), mask=ok)
    else:
        tl.atomic_add(ws_ptr + out, acc, mask=ok)


@triton.jit
def fp32_to_bf16_kernel(src_ptr, dst_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < numel
    v = tl.load(src_ptr + offs, mask=ok, other=0.0)
    tl.store(dst_ptr + offs, v.to(dst_ptr.dtype.element_ty), mask=ok)


def launch(x: torch.Tensor, w: torch.Tensor, config: tuple) -> torch.Tensor:
    """One convolution with an explicit launch setting (the tuning script calls this)."""
    bm, bn, bk, group_m, split_k, warps, stages = config
    nb, h, wd, c = x.shape
    k = w.shape[0]
    m = nb * h * wd
    y = torch.empty((nb, h, wd, k), device=x.device, dtype=x.dtype)
    ws = torch.zeros((nb, h, wd, k), device=x.device, dtype=torch.float32) if split_k > 1 else y
    grid = (triton.cdiv(m, bm) * triton.cdiv(k, bn), split_k)
    conv3x3_nhwc_igemm_kernel[grid](
        x, w, y, ws, nb, h, wd, c, k,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m, SPLIT_K=split_k,
        num_warps=warps, num_stages=stages,
    )
    if split_k > 1:
        numel = y.numel()
        fp32_to_bf16_kernel[(triton.cdiv(numel, CAST_BLOCK),)](ws, y, numel, BLOCK=CAST_BLOCK, num_warps=4)
    return y


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if x.dim() != 4 or w.dim() != 4 or tuple(w.shape[1:3]) != (3, 3) or w.shape[3] != x.shape[3]:
        raise ValueError(f"expected x [N, H, W, C] and w [K, 3, 3, C], got {tuple(x.shape)} and {tuple(w.shape)}")
    if not (x.is_contiguous() and w.is_contiguous()):
        raise ValueError("x and w must be plain contiguous NHWC / KRSC tensors")
    if x.device.type == "cpu":
        return launch(x, w, INTERPRETER_CONFIG)
    return launch(x, w, CONFIGS.get(x.shape[3], DEFAULT_CONFIG))
