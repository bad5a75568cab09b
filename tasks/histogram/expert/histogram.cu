// Expert histogram: shared-memory histograms per CTA (one per warp where they fit), 16-byte loads,
// a persistent grid, one merge per bin per CTA. See tasks/histogram/task.toml for the reasoning.
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 2;  // 16-byte vectors in flight per thread per step

// Count one bin in the warp's share of the CTA's shared histograms. A plain shared atomic: on the
// H200, grouping lanes by bin first (__match_any_sync, or a vote for all-equal warps) measured
// 1.2-17x slower on every workload, the skewed one included (examples/h200/family1/tune_run2.txt).
__device__ __forceinline__ void count(int* hist, unsigned bin) { atomicAdd(hist + bin, 1); }

template <typename T> struct Unpack;
template <> struct Unpack<uint8_t> {
    static constexpr int kPerVec = 16;
    __device__ __forceinline__ static unsigned at(const uint4& v, int i) {
        const unsigned w = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
        return (w >> (8 * (i & 3))) & 0xffu;
    }
};
template <> struct Unpack<int32_t> {
    static constexpr int kPerVec = 4;
    __device__ __forceinline__ static unsigned at(const uint4& v, int i) {
        return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
    }
};

}  // namespace

template <typename T>
__global__ void __launch_bounds__(kThreads) histogram_kernel(const T* __restrict__ x, long long n, int bins,
                                                             int copies, int vec_ok, int* __restrict__ counts) {
    extern __shared__ int shared_counts[];
    for (int b = threadIdx.x; b < bins * copies; b += kThreads) shared_counts[b] = 0;
    __syncthreads();
    int* hist = shared_counts + ((threadIdx.x >> 5) % copies) * bins;  // warps share `copies` histograms

    constexpr int kPer = Unpack<T>::kPerVec;
    const long long threads = static_cast<long long>(gridDim.x) * kThreads;
    const long long me = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
    const long long vectors = vec_ok ? n / kPer : 0;
    const uint4* xv = reinterpret_cast<const uint4*>(x);

    long long i = me;
    for (; i + (kUnroll - 1) * threads < vectors; i += kUnroll * threads) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(xv + i + u * threads);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int e = 0; e < kPer; ++e) count(hist, Unpack<T>::at(v[u], e));
    }
    for (; i < vectors; i += threads) {
        const uint4 v = __ldcs(xv + i);
#pragma unroll
        for (int e = 0; e < kPer; ++e) count(hist, Unpack<T>::at(v, e));
    }
    for (long long j = vectors * kPer + me; j < n; j += threads) count(hist, static_cast<unsigned>(x[j]));

    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += kThreads) {
        int c = 0;
        for (int k = 0; k < copies; ++k) c += shared_counts[k * bins + b];
        if (c) atomicAdd(counts + b, c);
    }
}

#define HISTOGRAM_LAUNCH(T) \
    histogram_kernel<T><<<grid, kThreads, smem, stream>>>(static_cast<const T*>(x), n, bins, copies, vec_ok, counts)

extern "C" int histogram_launch(const void* x, long long n, int is_u8, int bins, int* counts, int blocks_per_sm,
                                int copies, cudaStream_t stream) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const int per = is_u8 ? 16 : 4;
    const long long work = (n / per + kThreads - 1) / kThreads;
    long long blocks = static_cast<long long>(sms) * blocks_per_sm;
    if (blocks > work) blocks = work;
    if (blocks < 1) blocks = 1;
    const int vec_ok = (reinterpret_cast<uintptr_t>(x) % 16) == 0;
    while (copies > 1 && static_cast<size_t>(bins) * copies * sizeof(int) > 48 * 1024) copies /= 2;
    if (copies < 1) copies = 1;
    const size_t smem = static_cast<size_t>(bins) * copies * sizeof(int);
    cudaMemsetAsync(counts, 0, static_cast<size_t>(bins) * sizeof(int), stream);
    const dim3 grid(static_cast<unsigned>(blocks));
    if (is_u8)
        HISTOGRAM_LAUNCH(uint8_t);
    else
        HISTOGRAM_LAUNCH(int32_t);
    return static_cast<int>(cudaGetLastError());
}
