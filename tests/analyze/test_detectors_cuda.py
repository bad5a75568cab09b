"""CUDA detectors on small positive and negative snippets, including the catalogue's false positives."""

from __future__ import annotations

import pytest

from d2k_analyze.model import Status

P, A = Status.PRESENT, Status.ABSENT

GEMM_SMEM = """
#define BM 32
__global__ void k(const float* A, const float* B, float* C, int K) {
    __shared__ float As[BM][BM];
    __shared__ float Bs[BM][BM];
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += BM) {
        As[threadIdx.y][threadIdx.x] = A[blockIdx.y * BM * K + threadIdx.y * K + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * K + blockIdx.x * BM + threadIdx.x];
        __syncthreads();
        for (int k = 0; k < BM; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[threadIdx.x] = acc;
}
"""

TRANSPOSE = """
__global__ void t(const float* in, float* out, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[(blockIdx.x * 32 + threadIdx.y) * n + blockIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"""

UNUSED_SMEM = """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float buf[32][32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f;
}
"""

WARP_REDUCE = """
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__global__ void k(const float* x, float* y, int n) {
    __shared__ float part[32];
    float v = x[blockIdx.x * n + threadIdx.x];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) { v = warp_sum(part[threadIdx.x]); }
    if (threadIdx.x == 0) y[blockIdx.x] = v;
}
"""

BROADCAST_ONLY = """
__global__ void k(const float* x, float* y) {
    float v = x[threadIdx.x];
    float b = __shfl_sync(0xffffffff, v, 0);
    y[threadIdx.x] = b;
}
"""

UNUSED_HELPER = """
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__global__ void k(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }
"""

TREE_REDUCE = """
__global__ void k(const float* x, float* y) {
    __shared__ float s[256];
    s[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = s[0];
}
"""

PRAGMA_IN_COMMENT = """
__global__ void k(float* x) {
    // #pragma unroll
    for (int i = 0; i < 8; ++i) x[i] += 1.0f;
}
"""
PRAGMA_LIVE = """
__global__ void k(float* x) {
    #pragma unroll
    for (int i = 0; i < 8; ++i) x[i] += 1.0f;
}
"""
PRAGMA_RUNTIME = """
__global__ void k(float* x, int n) {
    #pragma unroll
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] += 1.0f;
}
"""
PRAGMA_ONE = """
__global__ void k(float* x) {
    #pragma unroll 1
    for (int i = 0; i < 8; ++i) x[i] += 1.0f;
}
"""

GRID_STRIDE = """
__global__ void k(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = x[i];
}
"""
BLOCK_STRIDE = """
__global__ void k(const float* x, float* y, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) y[blockIdx.x * n + i] = x[blockIdx.x * n + i];
}
"""

VEC = """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = reinterpret_cast<const float4*>(x)[i];
    reinterpret_cast<float4*>(y)[i] = v;
}
"""
MAKE_FLOAT4 = """
__global__ void k(const float* x, float* y, int n) {
    int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    float4 v = make_float4(x[i], x[i + 1], x[i + 2], x[i + 3]);
    y[i] = v.x + v.y + v.z + v.w;
}
"""

WMMA = """
#include <mma.h>
using namespace nvcuda;
__global__ void k(const half* a, const half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
"""
MMA_DEAD = """
template <bool kUseMma>
__global__ void k(float* c) {
    if constexpr (kUseMma) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0}, {%1}, {%2}, {%3};" :: "r"(0));
    } else {
        c[threadIdx.x] = 0.f;
    }
}
extern "C" void launch(float* c) { k<false><<<1, 32>>>(c); }
"""
GAMMA = """
__global__ void k(const float* x, const float* gamma, float* y) { y[threadIdx.x] = x[threadIdx.x] * gamma[threadIdx.x]; }
"""

CP_ASYNC = """
__global__ void k(const float* x, float* y) {
    __shared__ float s[2][128];
    for (int t = 0; t < 4; ++t) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(0), "l"(x + t * 128));
        asm volatile("cp.async.commit_group;");
        asm volatile("cp.async.wait_group 1;");
        y[t] = s[t % 2][threadIdx.x];
    }
}
"""
MEMCPY_ASYNC_HOST = """
__global__ void k(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }
void host(const float* x, float* y, cudaStream_t s) { cudaMemcpyAsync(y, x, 4, cudaMemcpyDeviceToDevice, s); k<<<1, 32, 0, s>>>(x, y); }
"""

ATOMIC = "__global__ void k(float* y, const float* x) { atomicAdd(y, x[threadIdx.x]); }"
ATOMIC_COMMENT = "__global__ void k(float* y, const float* x) { /* atomicAdd(y, 1.f); */ y[threadIdx.x] = x[threadIdx.x]; }"

FAST = "__global__ void k(float* y, const float* x) { y[threadIdx.x] = __expf(x[threadIdx.x]); }"
ACCURATE = "__global__ void k(float* y, const float* x) { y[threadIdx.x] = expf(x[threadIdx.x]); }"
EXP2_POW = "__global__ void k(float* y, const float* x, int e) { y[threadIdx.x] = x[threadIdx.x] * exp2f(e); }"

LDG = "__global__ void k(float* y, const float* __restrict__ x) { y[threadIdx.x] = __ldg(&x[threadIdx.x]); }"
RESTRICT = "__global__ void k(float* y, const float* __restrict__ x) { y[threadIdx.x] = x[threadIdx.x]; }"

BOUNDS = "__global__ void __launch_bounds__(256, 2) k(float* y) { y[threadIdx.x] = 0.f; }"
CLUSTER = "__global__ void __cluster_dims__(2, 1, 1) k(float* y) { y[threadIdx.x] = 0.f; }"
CLUSTER_ONE = "__global__ void __cluster_dims__(1, 1, 1) k(float* y) { y[threadIdx.x] = 0.f; }"
PADDED = """
__global__ void t(const float* in, float* out) {
    __shared__ float tile[32][32 + 1];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"""
HALO = """
__global__ void s(const float* in, float* out) {
    __shared__ float tile[16 + 2][16 + 2];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 16 + threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.y + 1][threadIdx.x + 1];
}
"""

ONLINE = """
__global__ void k(const float* x, float* y, int n) {
    float m = -INFINITY, s = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = x[i];
        float m_new = fmaxf(m, v);
        s = s * __expf(m - m_new) + __expf(v - m_new);
        m = m_new;
    }
    y[0] = s;
}
"""
THREE_PASS = """
__global__ void k(const float* x, float* y, int n) {
    float m = -INFINITY, s = 0.f;
    for (int i = 0; i < n; ++i) m = fmaxf(m, x[i]);
    for (int i = 0; i < n; ++i) s += expf(x[i] - m);
    for (int i = 0; i < n; ++i) y[i] = expf(x[i] - m) / s;
}
"""

WELFORD = """
__global__ void k(const float* x, float* out, int n) {
    float mean = 0.f, m2 = 0.f, count = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = x[i];
        count += 1.f;
        float delta = v - mean;
        mean += delta / count;
        m2 += delta * (v - mean);
    }
    out[0] = m2 / count;
}
"""
SUMSQ = """
__global__ void k(const float* x, float* out, int n) {
    float s = 0.f, m2 = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) { float v = x[i]; s += v; m2 += v * v; }
    float mean = s / n;
    out[0] = m2 / n - mean * mean;
}
"""

PERSISTENT = """
__global__ void k(const float* x, float* y, int tiles) {
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) y[t] = x[t];
}
void launch(const float* x, float* y, int tiles) {
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    k<<<min(sms, tiles), 256>>>(x, y, tiles);
}
"""
DATA_SIZED = """
__global__ void k(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i];
}
void launch(const float* x, float* y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }
"""

MIXED = """
__global__ void k(const __nv_bfloat16* x, float* y, int n) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += __bfloat162float(x[i]);
    y[threadIdx.x] = acc;
}
"""
FP32_ONLY = """
__global__ void k(const float* x, float* y, int n) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
    y[threadIdx.x] = acc;
}
"""

REGTILE = """
__global__ void k(const float* A, const float* B, float* C, int K) {
    __shared__ float As[64][8];
    __shared__ float Bs[8][64];
    float acc[4][4] = {0};
    float ra[4], rb[4];
    for (int k0 = 0; k0 < K; k0 += 8) {
        for (int k = 0; k < 8; ++k) {
            for (int i = 0; i < 4; ++i) ra[i] = As[threadIdx.y * 4 + i][k];
            for (int j = 0; j < 4; ++j) rb[j] = Bs[k][threadIdx.x * 4 + j];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
        }
    }
    C[0] = acc[0][0];
}
"""

STRIDED = """
__global__ void k(const float* x, float* y, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    for (int j = 0; j < n; ++j) s += x[row * n + j];
    y[row] = s;
}
"""

PDL = 'asm volatile("griddepcontrol.wait;");'

CASES = [
    ("smem_tiling", GEMM_SMEM, P), ("smem_tiling", TRANSPOSE, A), ("smem_tiling", UNUSED_SMEM, A), ("smem_tiling", TREE_REDUCE, A),
    ("warp_shuffle_reduction", WARP_REDUCE, P), ("warp_shuffle_reduction", BROADCAST_ONLY, A), ("warp_shuffle_reduction", UNUSED_HELPER, A),
    ("block_reduction", WARP_REDUCE, P), ("block_reduction", TREE_REDUCE, P), ("block_reduction", BROADCAST_ONLY, A),
    ("loop_unrolling", PRAGMA_LIVE, P), ("loop_unrolling", PRAGMA_IN_COMMENT, A), ("loop_unrolling", PRAGMA_RUNTIME, A), ("loop_unrolling", PRAGMA_ONE, A),
    ("grid_stride_loop", GRID_STRIDE, P), ("grid_stride_loop", BLOCK_STRIDE, A),
    ("vectorized_access", VEC, P), ("vectorized_access", MAKE_FLOAT4, A),
    ("tensor_cores", WMMA, P), ("tensor_cores", MMA_DEAD, A), ("tensor_cores", GAMMA, A),
    ("mixed_precision_accumulation", WMMA, P), ("mixed_precision_accumulation", MIXED, P), ("mixed_precision_accumulation", FP32_ONLY, A),
    ("async_copy", CP_ASYNC, P), ("async_copy", MEMCPY_ASYNC_HOST, A), ("multistage_pipeline", CP_ASYNC, P), ("multistage_pipeline", GEMM_SMEM, A),
    ("atomics", ATOMIC, P), ("atomics", ATOMIC_COMMENT, A),
    ("fast_math", FAST, P), ("fast_math", ACCURATE, A), ("fast_math", EXP2_POW, A),
    ("cache_hints", LDG, P), ("cache_hints", RESTRICT, A),
    ("launch_bounds", BOUNDS, P), ("launch_bounds", RESTRICT, A),
    ("thread_block_cluster", CLUSTER, P), ("thread_block_cluster", CLUSTER_ONE, A),
    ("bank_conflict_avoidance", PADDED, P), ("bank_conflict_avoidance", HALO, A), ("bank_conflict_avoidance", GEMM_SMEM, A),
    ("online_softmax", ONLINE, P), ("online_softmax", THREE_PASS, A),
    ("single_pass_io", ONLINE, P), ("single_pass_io", THREE_PASS, A),
    ("welford", WELFORD, P), ("welford", SUMSQ, A),
    ("persistent_kernel", PERSISTENT, P), ("persistent_kernel", DATA_SIZED, A), ("grid_stride_loop", PERSISTENT, P),
    ("register_tiling", REGTILE, P), ("register_tiling", GEMM_SMEM, A),
    ("coalesced_access", VEC, P), ("coalesced_access", STRIDED, A),
    ("programmatic_dependent_launch", "__global__ void k(float* y) { " + PDL + " y[0] = 1.f; }", P),
    ("programmatic_dependent_launch", ATOMIC, A),
    ("ldmatrix", '__global__ void k(unsigned* r) { asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(0)); }', P),
    ("ldmatrix", WMMA, A),
    ("tma", '__global__ void k(const __grid_constant__ CUtensorMap tm) { asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" :: "r"(0), "l"(&tm), "r"(0), "r"(0), "r"(0)); }', P),
    ("tma", CP_ASYNC, A),
    ("mbarrier", '__global__ void k() { asm volatile("mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;" :: "r"(0), "r"(0)); }', P),
    ("mbarrier", TREE_REDUCE, A),
]


@pytest.mark.parametrize("prop,src,expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_cuda_detector(prop, src, expected, prop_status):
    assert prop_status(prop, src) == expected
