// Shared-memory tiled CUDA GEMM: C[M,N] = A[M,K] @ B[N,K]^T, one output per thread, fp32 accumulation.
//
// The textbook scheme: a 32x32 thread block owns a 32x32 tile of C. For every 32-wide K step the
// block stages a 32x32 tile of A and a 32x32 tile of B (converted to fp32) in shared memory,
// synchronises, and each thread reads a row of the A tile and a column of the B tile from shared
// memory. Each staged element is reused by 32 threads instead of being fetched 32 times from L2.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

constexpr int kTile = 32;

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <typename T>
__global__ void gemm_smem_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                 int M, int N, int K) {
    __shared__ float As[kTile][kTile];  // As[m][k]
    __shared__ float Bs[kTile][kTile];  // Bs[k][n]: B tile stored transposed for the inner loop

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * kTile + ty;  // output row m
    const int col = blockIdx.x * kTile + tx;  // output column n
    const int b_row = blockIdx.x * kTile + ty; // B row (= output column) this thread loads

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        const int k = k0 + tx;  // adjacent threads load adjacent K elements (coalesced rows)
        As[ty][tx] = (row < M && k < K) ? to_float(A[static_cast<size_t>(row) * K + k]) : 0.0f;
        Bs[tx][ty] = (b_row < N && k < K) ? to_float(B[static_cast<size_t>(b_row) * K + k]) : 0.0f;
        __syncthreads();

        // Plain loop; the compiler may unroll it, we do not ask it to ("#pragma unroll" is left out
        // on purpose to keep this the textbook version).
        for (int kk = 0; kk < kTile; ++kk) acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = from_float<T>(acc);
}

template <typename T>
cudaError_t launch(const void* a, const void* b, void* c, int M, int N, int K, cudaStream_t stream) {
    dim3 block(kTile, kTile);
    dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
    gemm_smem_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                    static_cast<T*>(c), M, N, K);
    return cudaGetLastError();
}

}  // namespace

// dtype: 0 = bfloat16, 1 = float16. Returns a cudaError_t value (0 = success).
extern "C" int d2k_gemm_smem_launch(const void* a, const void* b, void* c, int M, int N, int K, int dtype,
                                    cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return 0;
    switch (dtype) {
        case 0: return static_cast<int>(launch<__nv_bfloat16>(a, b, c, M, N, K, stream));
        case 1: return static_cast<int>(launch<__half>(a, b, c, M, N, K, stream));
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
}
