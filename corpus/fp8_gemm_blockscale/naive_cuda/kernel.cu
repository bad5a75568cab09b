#include <cuda_runtime.h>
#include <cuda_fp8.h>
#include <cuda_bf16.h>

#define QBLK 128

__global__ void fp8_bs_naive(const __nv_fp8_e4m3* __restrict__ A, const float* __restrict__ SA,
                             const __nv_fp8_e4m3* __restrict__ B, const float* __restrict__ SB,
                             __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (n >= N || m >= M) return;
    const int kblocks = K / QBLK;
    float sum = 0.f;
    for (int k = 0; k < K; ++k) {
        float av = float(A[(size_t)m * K + k]) * SA[(size_t)(k / QBLK) * M + m];
        float bv = float(B[(size_t)n * K + k]) * SB[(size_t)(n / QBLK) * kblocks + k / QBLK];
        sum += av * bv;
    }
    C[(size_t)m * N + n] = __float2bfloat16(sum);
}

extern "C" int fp8_bs_naive_launch(const void* a, const void* sa, const void* b, const void* sb, void* c,
                                   int M, int N, int K, cudaStream_t stream) {
    dim3 block(256);
    dim3 grid((N + 255) / 256, M);
    fp8_bs_naive<<<grid, block, 0, stream>>>((const __nv_fp8_e4m3*)a, (const float*)sa, (const __nv_fp8_e4m3*)b,
                                             (const float*)sb, (__nv_bfloat16*)c, M, N, K);
    return (int)cudaGetLastError();
}
