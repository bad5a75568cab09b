// Prototype for softmax on 128 rows of 262144 fp32 (benchmarks/family1_tune.py --only rowdep): a
// two-pass softmax whose second read is served by L2 instead of DRAM.
//
// Why: a row is 1 MB. The two-pass expert runs one program per row, so all 128 rows (134 MB) are
// read before any row's second pass, and the re-read comes from DRAM: 3 x 134 MB in all. Here a
// row is split over a cluster of SPLIT CTAs, and the launch keeps only PER_SM CTAs on each SM,
// so about 132 * PER_SM / SPLIT rows are in flight at once and the data between a line's first
// and second read is 132 * PER_SM segments of 1 MB / SPLIT (the L2 is 60 MB). Pass 1 reads the
// segment with an L2 evict_last policy and keeps an online (max, sum) per thread; the CTA's pair
// is combined with the cluster's through distributed shared memory; pass 2 reads the segment
// again with evict_first and writes exp(x - max) / sum with streaming stores, so the output does
// not push the segments out of L2. DRAM traffic is then one read and one write, as for a copy.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float ex2(float v) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

__device__ __forceinline__ unsigned long long policy_keep() {
    unsigned long long p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}

__device__ __forceinline__ unsigned long long policy_drop() {
    unsigned long long p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}

__device__ __forceinline__ float4 load_hinted(const float* p, unsigned long long policy) {
    float4 v;
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(policy));
    return v;
}

__device__ __forceinline__ void store_stream(float* p, float4 v) {
    asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w));
}

// (max, sum of exp2(x*log2e - max)) pairs, merged: the sum rescaled to the larger max.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    float hi = fmaxf(m, m2);
    s = (m == hi ? s : s * ex2(m - hi)) + (m2 == hi ? s2 : s2 * ex2(m2 - hi));
    m = hi;
}

__global__ void softmax_l2(const float* __restrict__ x, float* __restrict__ y, int n, int split) {
    extern __shared__ float pair[];  // [0]: this CTA's (max, sum); [2..]: per-warp pairs
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const long row = blockIdx.x / split;
    const int seg = n / split;
    const float* xs = x + row * n + (long)rank * seg;
    float* ys = y + row * n + (long)rank * seg;
    const int step = blockDim.x * 4;
    const unsigned long long keep = policy_keep(), drop = policy_drop();

    float m = -__builtin_huge_valf(), s = 0.f;
#pragma unroll 4
    for (int i = threadIdx.x * 4; i < seg; i += step) {
        float4 v = load_hinted(xs + i, keep);
        float a = v.x * kLog2e, b = v.y * kLog2e, c = v.z * kLog2e, d = v.w * kLog2e;
        float hi = fmaxf(fmaxf(a, b), fmaxf(c, d));
        if (hi > m) {
            s *= ex2(m - hi);
            m = hi;
        }
        s += ex2(a - m) + ex2(b - m) + ex2(c - m) + ex2(d - m);
    }
    for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if ((threadIdx.x & 31) == 0) {
        pair[2 + 2 * warp] = m;
        pair[3 + 2 * warp] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < warps; ++w) merge(m, s, pair[2 + 2 * w], pair[3 + 2 * w]);
        pair[0] = m;
        pair[1] = s;
    }
    cluster.sync();
    m = -__builtin_huge_valf();
    s = 0.f;
    for (int r = 0; r < split; ++r) {
        const float* peer = cluster.map_shared_rank(pair, r);
        merge(m, s, peer[0], peer[1]);
    }
    cluster.sync();  // no CTA leaves while a peer may still read its pair
    const float inv = 1.f / s;
#pragma unroll 4
    for (int i = threadIdx.x * 4; i < seg; i += step) {
        float4 v = load_hinted(xs + i, drop);
        v.x = ex2(v.x * kLog2e - m) * inv;
        v.y = ex2(v.y * kLog2e - m) * inv;
        v.z = ex2(v.z * kLog2e - m) * inv;
        v.w = ex2(v.w * kLog2e - m) * inv;
        store_stream(ys + i, v);
    }
}

// rows x n fp32, n divisible by split * threads * 4. smem_bytes sets how many CTAs share an SM
// (the launch asks for that much dynamic shared memory). Returns a cudaError_t (0: launched).
extern "C" int softmax_l2_launch(const float* x, float* y, long rows, int n, int split, int threads, int smem_bytes,
                                 cudaStream_t stream) {
    if (n % (split * threads * 4) != 0) return -1;
    int bytes = smem_bytes > (2 + 2 * threads / 32) * 4 ? smem_bytes : (2 + 2 * threads / 32) * 4;
    cudaError_t err = cudaFuncSetAttribute(softmax_l2, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (err == cudaSuccess && split > 8)
        err = cudaFuncSetAttribute(softmax_l2, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (err != cudaSuccess) return (int)err;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(rows * split));
    cfg.blockDim = dim3((unsigned)threads);
    cfg.dynamicSmemBytes = (size_t)bytes;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)split;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&cfg, softmax_l2, x, y, n, split);
}
