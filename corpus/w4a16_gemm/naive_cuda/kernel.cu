#include <cuda_fp16.h>
#include <cstdint>

__global__ void w4_naive_kernel(const __half* x, const int32_t* qw, const __half* scales, const __half* zeros,
                                __half* y, int M, int N, int K) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (n >= N || m >= M) return;
    int groups = K / 128;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        uint32_t word = (uint32_t)qw[(size_t)n * (K / 8) + k / 8];
        int q = (word >> (4 * (k % 8))) & 0xF;
        float s = __half2float(scales[n * groups + k / 128]);
        float z = __half2float(zeros[n * groups + k / 128]);
        acc += __half2float(x[(size_t)m * K + k]) * ((float)q - z) * s;
    }
    y[(size_t)m * N + n] = __float2half(acc);
}

extern "C" int w4_naive_launch(const void* x, const void* qw, const void* s, const void* z, void* y,
                               int M, int N, int K, cudaStream_t stream) {
    dim3 block(128);
    dim3 grid((N + 127) / 128, M);
    w4_naive_kernel<<<grid, block, 0, stream>>>((const __half*)x, (const int32_t*)qw, (const __half*)s,
                                                (const __half*)z, (__half*)y, M, N, K);
    return (int)cudaGetLastError();
}
