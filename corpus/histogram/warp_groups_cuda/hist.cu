#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace cg = cooperative_groups;

#define WARPS_PER_BLOCK 8
#define BLOCK_THREADS (WARPS_PER_BLOCK * 32)

// sub-histograms: one per warp while they fit in 48 KB, else one per block
static __device__ __forceinline__ void tally(int* sub, unsigned key) {
    cg::coalesced_group active = cg::coalesced_threads();
    cg::coalesced_group same = cg::labeled_partition(active, key);
    if (same.thread_rank() == 0) atomicAdd(sub + key, static_cast<int>(same.size()));
}

template <typename Elem>
__global__ void __launch_bounds__(BLOCK_THREADS) warp_hist(const Elem* __restrict__ src, long long total, int nb,
                                                           int copies, int* __restrict__ dst) {
    extern __shared__ int smem[];
    for (int t = threadIdx.x; t < nb * copies; t += BLOCK_THREADS) smem[t] = 0;
    __syncthreads();
    int* sub = smem + (copies > 1 ? (threadIdx.x >> 5) * nb : 0);

    const int lanes_per_load = 16 / sizeof(Elem);
    const long long packs = total / lanes_per_load;
    const long long stride = (long long)gridDim.x * BLOCK_THREADS;
    const uint4* packed = reinterpret_cast<const uint4*>(src);
    for (long long p = (long long)blockIdx.x * BLOCK_THREADS + threadIdx.x; p < packs; p += stride) {
        uint4 q = packed[p];
        const Elem* e = reinterpret_cast<const Elem*>(&q);
#pragma unroll
        for (int k = 0; k < 16 / (int)sizeof(Elem); ++k) tally(sub, static_cast<unsigned>(e[k]));
    }
    for (long long r = packs * lanes_per_load + (long long)blockIdx.x * BLOCK_THREADS + threadIdx.x; r < total; r += stride)
        tally(sub, static_cast<unsigned>(src[r]));
    __syncthreads();
    for (int b = threadIdx.x; b < nb; b += BLOCK_THREADS) {
        int s = 0;
        for (int c = 0; c < copies; ++c) s += smem[c * nb + b];
        if (s != 0) atomicAdd(dst + b, s);
    }
}

extern "C" void warp_hist_u8(const uint8_t* src, long long total, int nb, int* dst, int grid, cudaStream_t st) {
    int copies = nb * WARPS_PER_BLOCK * 4 <= 48 * 1024 ? WARPS_PER_BLOCK : 1;
    warp_hist<uint8_t><<<grid, BLOCK_THREADS, nb * copies * 4, st>>>(src, total, nb, copies, dst);
}

extern "C" void warp_hist_i32(const int32_t* src, long long total, int nb, int* dst, int grid, cudaStream_t st) {
    int copies = nb * WARPS_PER_BLOCK * 4 <= 48 * 1024 ? WARPS_PER_BLOCK : 1;
    warp_hist<int32_t><<<grid, BLOCK_THREADS, nb * copies * 4, st>>>(src, total, nb, copies, dst);
}
