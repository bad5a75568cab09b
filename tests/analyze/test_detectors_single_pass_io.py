"""single_pass_io on snippets: GEMM-style kernels are 0 (operands re-read across output tiles by
design), streaming dot products and row kernels are not mistaken for them, and a pointer alias
(``xr = x + row * n``) re-read in a sibling loop is 0 whatever the hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from d2k_analyze.detectors._common import alias_map
from d2k_analyze.detectors._gemm import gemm_evidence
from d2k_analyze.model import Status

P, A = Status.PRESENT, Status.ABSENT
ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------- CUDA GEMMs (0)

SMEM_GEMM = """
__global__ void k(const float* A, const float* B, float* C, int N, int K) {
    __shared__ float As[16][16], Bs[16][16];
    int ty = threadIdx.y, tx = threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[ty][tx] = A[(blockIdx.y * 16 + ty) * K + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * N + blockIdx.x * 16 + tx];
        __syncthreads();
        for (int kk = 0; kk < 16; ++kk) acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    C[(blockIdx.y * 16 + ty) * N + blockIdx.x * 16 + tx] = acc;
}
"""

NAIVE_GEMM = """
__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    const float* a = A + row * K;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += a[k] * B[k * N + col];
    C[row * N + col] = acc;
}
"""

FMA_REGTILE = """
__global__ void k(const float* A, const float* B, float* C, int N, int K) {
    float acc[4][4] = {};
    for (int k = 0; k < K; ++k) {
        float a[4], b[4];
        for (int i = 0; i < 4; ++i) a[i] = A[(threadIdx.y * 4 + i) * K + k];
        for (int j = 0; j < 4; ++j) b[j] = B[k * N + threadIdx.x * 4 + j];
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    C[threadIdx.x] = acc[0][0];
}
"""

TWO_STATEMENT_GEMM = """
__global__ void k(const float* A, const float* B, float* C, int N, int K) {
    __shared__ float As[16][16], Bs[16][16];
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[threadIdx.y][threadIdx.x] = A[threadIdx.y * K + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + threadIdx.x];
        __syncthreads();
        for (int kk = 0; kk < 16; ++kk) {
            float av = As[threadIdx.y][kk];
            acc = acc + av * Bs[kk][threadIdx.x];
        }
        __syncthreads();
    }
    C[threadIdx.y * N + threadIdx.x] = acc;
}
"""

WMMA_GEMM = """
#include <mma.h>
using namespace nvcuda;
__global__ void k(const half* A, const half* B, float* C, int K) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> af;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> bf;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(af, A + k, K);
        wmma::load_matrix_sync(bf, B + k, K);
        wmma::mma_sync(acc, af, bf, acc);
    }
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}
"""

# ---------------------------------------------------------------------------- CUDA streaming (1)

DOT_PRODUCT = """
__global__ void k(const float* x, const float* y, float* out, int n) {
    float s = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += x[i] * y[i];
    atomicAdd(out, s);
}
"""

ROW_CACHE_NORM = """
__global__ void k(const float* x, const float* w, float* y, int n) {
    const float* xr = x + blockIdx.x * n;
    float v[4];
    float ss = 0.f;
    for (int i = 0; i < 4; ++i) { v[i] = xr[threadIdx.x + 32 * i]; ss += v[i] * v[i]; }
    float r = rsqrtf(ss / n);
    for (int i = 0; i < 4; ++i) y[blockIdx.x * n + threadIdx.x + 32 * i] = v[i] * r * w[threadIdx.x + 32 * i];
}
"""

GAMMA_CALL = """
__device__ float gamma(float v) { return v * 0.5f; }
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gamma(x[i]);
}
"""

# ---------------------------------------------------------------------------- alias + sibling loops (0)

WELFORD_WARP_REREAD = """
__global__ void k(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, long m, long n) {
    const long row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= m) return;
    const float* xr = x + row * n;
    float count = 0.f, mean = 0.f, m2 = 0.f;
    for (long i = lane; i < n; i += 32) {
        const float v = xr[i];
        count += 1.f;
        const float d = v - mean;
        mean += d / count;
        m2 += d * (v - mean);
    }
    const float rstd = rsqrtf(m2 / n + 1e-5f);
    for (long i = lane; i < n; i += 32) {
        y[row * n + i] = (xr[i] - mean) * rstd * w[i];
    }
}
"""

SIBLING_LOOPS_DIFFERENT_INPUTS = """
__global__ void k(const float* x, const float* r, float* y, int n) {
    const float* xr = x + blockIdx.x * n;
    const float* rr = r + blockIdx.x * n;
    float v[8];
    for (int i = 0; i < 8; ++i) v[i] = xr[threadIdx.x + 32 * i];
    for (int i = 0; i < 8; ++i) y[blockIdx.x * n + threadIdx.x + 32 * i] = v[i] + rr[threadIdx.x + 32 * i];
}
"""

CUDA_CASES = [
    (SMEM_GEMM, A), (NAIVE_GEMM, A), (FMA_REGTILE, A), (TWO_STATEMENT_GEMM, A), (WMMA_GEMM, A),
    (DOT_PRODUCT, P), (ROW_CACHE_NORM, P), (GAMMA_CALL, P),
    (WELFORD_WARP_REREAD, A), (SIBLING_LOOPS_DIFFERENT_INPUTS, P),
]

# ---------------------------------------------------------------------------- Triton

TL_DOT_GEMM = '''
import triton
import triton.language as tl

@triton.jit
def k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

def run(a, b, c):
    k[(1, 1)](a, b, c, 16, 16, 16, BM=16, BN=16, BK=16)
'''

BROADCAST_SUM_GEMM = '''
import triton
import triton.language as tl

@triton.jit
def k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + rn[None, :] * K + (k0 + rk)[:, None])
        prod = a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :]
        acc += tl.sum(prod, axis=1)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

def run(a, b, c):
    k[(1, 1)](a, b, c, 16, 16, 16, BM=16, BN=16, BK=16)
'''

RANK1_GEMM = '''
import triton
import triton.language as tl

@triton.jit
def k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, K):
        a = tl.load(a_ptr + rm * K + kk)
        b = tl.load(b_ptr + kk * N + rn)
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

def run(a, b, c):
    k[(1, 1)](a, b, c, 16, 16, 16, BM=16, BN=16)
'''

ROW_LAYERNORM_2D = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, w_ptr, y_ptr, n, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=cols[None, :] < n, other=0.0)
    w = tl.load(w_ptr + cols, mask=cols < n, other=0.0)
    mean = tl.sum(x, axis=1) / n
    xc = x - mean[:, None]
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n + 1e-5)
    y = xc * rstd[:, None] * w[None, :]
    tl.store(y_ptr + rows[:, None] * n + cols[None, :], y, mask=cols[None, :] < n)

def run(x, w, y):
    k[(1,)](x, w, y, 16, BR=4, BC=16)
'''

CHUNKED_DOT = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
        y = tl.load(y_ptr + cols, mask=cols < n, other=0.0)
        acc += x * y
    tl.store(out_ptr + row, tl.sum(acc, axis=0))

def run(x, y, out):
    k[(4,)](x, y, out, 16, BLOCK=16)
'''

TRITON_CASES = [
    (TL_DOT_GEMM, A), (BROADCAST_SUM_GEMM, A), (RANK1_GEMM, A),
    (ROW_LAYERNORM_2D, P), (CHUNKED_DOT, P),
]


@pytest.mark.parametrize("src,expected", CUDA_CASES, ids=[f"cuda-{i}" for i in range(len(CUDA_CASES))])
def test_single_pass_io_cuda(src, expected, prop_status):
    assert prop_status("single_pass_io", src) == expected


@pytest.mark.parametrize("src,expected", TRITON_CASES, ids=[f"triton-{i}" for i in range(len(TRITON_CASES))])
def test_single_pass_io_triton(src, expected, prop_status):
    assert prop_status("single_pass_io", {"submission.py": src}) == expected


@pytest.mark.parametrize("src", [SMEM_GEMM, NAIVE_GEMM, FMA_REGTILE, TWO_STATEMENT_GEMM, WMMA_GEMM], ids=["smem", "naive", "fma", "two_statement", "wmma"])
def test_gemm_reason_is_given(src, make_units):
    from d2k_analyze.detectors import detect

    decision = detect("single_pass_io", make_units({"kernel.cu": src})[0].ast)
    assert decision.status == A and "GEMM" in decision.reason and decision.hits


@pytest.mark.parametrize("src", [DOT_PRODUCT, ROW_CACHE_NORM, GAMMA_CALL, WELFORD_WARP_REREAD], ids=["dot", "row_cache", "gamma", "welford_warp"])
def test_streaming_kernels_are_not_gemm(src, make_units):
    assert gemm_evidence(make_units({"kernel.cu": src})[0].ast) == []


def test_alias_roots_at_the_pointer_not_the_size(make_units):
    """``xr = x + row * n``: n is a parameter too, but xr points into x."""
    facts = make_units({"kernel.cu": WELFORD_WARP_REREAD})[0].ast
    assert alias_map(facts)["xr"] == "x"


def test_alias_is_stable_across_hash_seeds(tmp_path):
    """Set iteration order changes with PYTHONHASHSEED; the finding must not."""
    (tmp_path / "kernel.cu").write_text(textwrap.dedent(WELFORD_WARP_REREAD))
    code = (
        "import sys; from pathlib import Path; from d2k_analyze.model import SourceFile;"
        "from d2k_analyze.parsing import kernel_units; from d2k_analyze.detectors import detect;"
        "u = kernel_units([SourceFile(Path(sys.argv[1]), 'cuda', Path(sys.argv[1]).read_text())])[0][0];"
        "print(detect('single_pass_io', u.ast).status.value)"
    )
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "kernel.cu")], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        seen.add(out.stdout.strip())
    assert seen == {"absent"}
