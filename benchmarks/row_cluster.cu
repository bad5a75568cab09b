// Prototype for the long-row softmax / LayerNorm workloads (benchmarks/family1_tune.py --only rows):
// a row is split over a thread-block cluster; every CTA holds its slice in registers, and the
// row's statistics are combined through distributed shared memory, so x is read once and y
// written once with CLUSTER times more CTAs than rows. Measured and not adopted (slower than the
// experts on the bf16 rows): docs/h200-results.md, "softmax / layernorm: two more designs measured".
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <type_traits>

namespace cg = cooperative_groups;

__device__ __forceinline__ float ex2(float v) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

template <typename T> struct Pack;
template <> struct Pack<__nv_bfloat16> {
    static constexpr int E = 8;
    __device__ static void load(const __nv_bfloat16* p, float* f) {
        uint4 u;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p));
        const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            f[2 * i] = __uint_as_float(w[i] << 16);
            f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
        }
    }
    __device__ static void store(__nv_bfloat16* p, const float* f) {
        unsigned w[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
            w[i] = *reinterpret_cast<unsigned*>(&h);
        }
        asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]));
    }
};
template <> struct Pack<float> {
    static constexpr int E = 4;
    __device__ static void load(const float* p, float* f) {
        asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(f[0]), "=f"(f[1]), "=f"(f[2]), "=f"(f[3]) : "l"(p));
    }
    __device__ static void store(float* p, const float* f) {
        asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(f[0]), "f"(f[1]), "f"(f[2]), "f"(f[3]));
    }
};

struct Max {
    static constexpr float identity = -__builtin_huge_valf();
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Add {
    static constexpr float identity = 0.f;
    __device__ float operator()(float a, float b) const { return a + b; }
};

// Reduce v over the CTA, then over the cluster through each CTA's `slot` (DSMEM).
template <int THREADS, int CLUSTER, typename Op>
__device__ float cluster_reduce(float v, float* warp_part, float* slot, Op op) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < THREADS / 32 ? warp_part[lane] : Op::identity;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) t = op(t, __shfl_xor_sync(0xffffffffu, t, o));
        if (lane == 0) *slot = t;
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    float r = *cluster.map_shared_rank(slot, 0);
#pragma unroll
    for (int k = 1; k < CLUSTER; ++k) r = op(r, *cluster.map_shared_rank(slot, k));
    return r;
}

// OP 0: softmax; OP 1: LayerNorm (w, b, eps).
template <typename T, int CLUSTER, int THREADS, int V, int OP>
__global__ void __launch_bounds__(THREADS) row_kernel(const T* __restrict__ x, T* __restrict__ y, const T* __restrict__ w,
                                                      const T* __restrict__ b, int n, float eps) {
    constexpr int E = Pack<T>::E;
    constexpr int SLICE = THREADS * V * E;
    __shared__ float warp_part[32];
    __shared__ float slot[2];
    cg::cluster_group cluster = cg::this_cluster();
    const long row = blockIdx.x / CLUSTER;
    const int col0 = (int)cluster.block_rank() * SLICE;
    const T* xr = x + row * n + col0;
    float v[V][E];
#pragma unroll
    for (int i = 0; i < V; ++i) Pack<T>::load(xr + (i * THREADS + threadIdx.x) * E, v[i]);
    if (OP == 0) {
        float m = v[0][0];
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int j = 0; j < E; ++j) m = fmaxf(m, v[i][j]);
        m = cluster_reduce<THREADS, CLUSTER>(m, warp_part, &slot[0], Max{}) * 1.4426950408889634f;
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int j = 0; j < E; ++j) { v[i][j] = ex2(fmaf(v[i][j], 1.4426950408889634f, -m)); s += v[i][j]; }
        const float inv = 1.f / cluster_reduce<THREADS, CLUSTER>(s, warp_part, &slot[1], Add{});
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int j = 0; j < E; ++j) v[i][j] *= inv;
    } else {
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int j = 0; j < E; ++j) s += v[i][j];
        const float mean = cluster_reduce<THREADS, CLUSTER>(s, warp_part, &slot[0], Add{}) / n;
        float q = 0.f;
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int j = 0; j < E; ++j) { v[i][j] -= mean; q = fmaf(v[i][j], v[i][j], q); }
        const float rstd = rsqrtf(cluster_reduce<THREADS, CLUSTER>(q, warp_part, &slot[1], Add{}) / n + eps);
#pragma unroll
        for (int i = 0; i < V; ++i) {
            float wf[E], bf[E];
            Pack<T>::load(w + col0 + (i * THREADS + threadIdx.x) * E, wf);
            Pack<T>::load(b + col0 + (i * THREADS + threadIdx.x) * E, bf);
#pragma unroll
            for (int j = 0; j < E; ++j) v[i][j] = fmaf(v[i][j] * rstd, wf[j], bf[j]);
        }
    }
    // No CTA may leave while a peer can still read its slots: arrive now, store, then wait.
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    T* yr = y + row * n + col0;
#pragma unroll
    for (int i = 0; i < V; ++i) Pack<T>::store(yr + (i * THREADS + threadIdx.x) * E, v[i]);
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

template <typename T, int CLUSTER, int THREADS, int V, int OP>
static cudaError_t launch(const void* x, void* y, const void* w, const void* b, long rows, int n, float eps, cudaStream_t stream) {
    auto kern = row_kernel<T, CLUSTER, THREADS, V, OP>;
    if (CLUSTER > 8) cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(rows * CLUSTER));
    cfg.blockDim = dim3(THREADS);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CLUSTER;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kern, static_cast<const T*>(x), static_cast<T*>(y), static_cast<const T*>(w),
                              static_cast<const T*>(b), n, eps);
}

#define ROW_CASES(X)                                                   \
    X(__nv_bfloat16, 4, 256, 4) X(__nv_bfloat16, 8, 256, 2) X(__nv_bfloat16, 8, 128, 4) \
    X(__nv_bfloat16, 2, 512, 4) X(__nv_bfloat16, 16, 128, 2) X(__nv_bfloat16, 2, 256, 2) \
    X(__nv_bfloat16, 1, 512, 2) X(__nv_bfloat16, 4, 128, 2) X(__nv_bfloat16, 1, 256, 4) \
    X(float, 8, 1024, 8) X(float, 16, 512, 8) X(float, 16, 1024, 4) X(float, 16, 256, 16)

// -1: no compiled case matches (the caller falls back); otherwise the cudaError_t of the launch.
int row_cluster_launch(const void* x, void* y, const void* w, const void* b, long rows, int n, bool bf16, int cluster,
                       int threads, int vec, int op, float eps, cudaStream_t stream) {
#define TRY(T, C, TH, V)                                                                                     \
    if (bf16 == std::is_same<T, __nv_bfloat16>::value && cluster == C && threads == TH && vec == V &&        \
        n == C * TH * V * Pack<T>::E)                                                                        \
        return op == 0 ? (int)launch<T, C, TH, V, 0>(x, y, w, b, rows, n, eps, stream)                        \
                       : (int)launch<T, C, TH, V, 1>(x, y, w, b, rows, n, eps, stream);
    ROW_CASES(TRY)
#undef TRY
    return -1;
}
