// Naive CUDA GEMM: C[M,N] = A[M,K] @ B[N,K]^T, one thread per output element, fp32 accumulation.
//
// Threads of a block run along N (threadIdx.x -> column), all on the same output row, so the
// C store is coalesced and every thread needs the same A row. That A row is cached in shared
// memory chunk by chunk (one row, read by all threads: a cache, not a 2D operand tile); B rows
// are read straight from global memory, K-strided across the warp.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

constexpr int kThreads = 256;   // threads per block, all on one output row
constexpr int kRowChunk = 256;  // A-row elements cached per pass

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <typename T>
__global__ void gemm_naive_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                  int M, int N, int K) {
    __shared__ float a_row[kRowChunk];
    const int m = blockIdx.y;
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const T* a = A + static_cast<size_t>(m) * K;
    const T* b = B + static_cast<size_t>(n < N ? n : 0) * K;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += kRowChunk) {
        const int len = min(kRowChunk, K - k0);
        for (int i = threadIdx.x; i < len; i += blockDim.x) a_row[i] = to_float(a[k0 + i]);
        __syncthreads();
        if (n < N) {
            for (int i = 0; i < len; ++i) acc += a_row[i] * to_float(b[k0 + i]);
        }
        __syncthreads();  // the chunk is overwritten on the next pass
    }
    if (n < N) C[static_cast<size_t>(m) * N + n] = from_float<T>(acc);
}

template <typename T>
cudaError_t launch(const void* a, const void* b, void* c, int M, int N, int K, cudaStream_t stream) {
    dim3 block(kThreads);
    dim3 grid((N + kThreads - 1) / kThreads, M);
    gemm_naive_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                     static_cast<T*>(c), M, N, K);
    return cudaGetLastError();
}

}  // namespace

// dtype: 0 = bfloat16, 1 = float16. Returns a cudaError_t value (0 = success).
extern "C" int d2k_gemm_naive_launch(const void* a, const void* b, void* c, int M, int N, int K, int dtype,
                                     cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return 0;
    if (M > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);  // grid.y limit
    switch (dtype) {
        case 0: return static_cast<int>(launch<__nv_bfloat16>(a, b, c, M, N, K, stream));
        case 1: return static_cast<int>(launch<__half>(a, b, c, M, N, K, stream));
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
}
