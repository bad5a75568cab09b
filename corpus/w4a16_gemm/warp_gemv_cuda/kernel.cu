#include <cuda_fp16.h>
#include <cstdint>

namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kGroup = 128;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// one warp per output column n; lanes stride over 32-nibble chunks (one uint4 of packed words)
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
q4_col_warp(const __half* __restrict__ x, const uint4* __restrict__ qw, const __half* __restrict__ scl,
            const __half* __restrict__ zer, __half* __restrict__ y, int M, int N, int K) {
    const int lane = threadIdx.x & 31;
    const int n = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
    if (n >= N) return;
    const int chunks = K / 32;  // uint4 chunks per row
    const int groups = K / kGroup;
    const uint4* row = qw + (size_t)n * chunks;
    for (int m = 0; m < M; ++m) {
        const __half* xr = x + (size_t)m * K;
        float acc = 0.f;
        for (int c = lane; c < chunks; c += 32) {
            uint4 pk = __ldg(row + c);
            const int g = (c * 32) / kGroup;
            const float s = __half2float(scl[n * groups + g]);
            const float z = __half2float(zer[n * groups + g]);
            const uint32_t words[4] = {pk.x, pk.y, pk.z, pk.w};
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const int k0 = c * 32 + w * 8;
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    float q = (float)((words[w] >> (4 * j)) & 0xFu);
                    acc += (q - z) * s * __half2float(xr[k0 + j]);
                }
            }
        }
        acc = warp_sum(acc);
        if (lane == 0) y[(size_t)m * N + n] = __float2half(acc);
    }
}

}  // namespace

extern "C" int q4_col_warp_launch(const void* x, const void* qw, const void* s, const void* z, void* y,
                                  int M, int N, int K, cudaStream_t stream) {
    const int blocks = (N + kWarpsPerBlock - 1) / kWarpsPerBlock;
    q4_col_warp<<<blocks, kWarpsPerBlock * 32, 0, stream>>>((const __half*)x, (const uint4*)qw, (const __half*)s,
                                                              (const __half*)z, (__half*)y, M, N, K);
    return (int)cudaGetLastError();
}
