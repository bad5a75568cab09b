// Naive CUDA softmax: one block per row, three passes over global memory (max, sum of exp,
// normalize), each reduced with a shared-memory tree. Scalar loads; every pass re-reads x.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;  // power of two: the tree reduction halves it

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void from_float(float* p, float v) { *p = v; }
__device__ __forceinline__ void from_float(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// Shared-memory tree over the block: kThreads values, log2(kThreads) barrier-separated steps.
// (An earlier version had "#pragma unroll" on this loop; the trip count depends on blockDim.)
template <bool kIsMax>
__device__ float block_reduce_tree(float v, float* smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) {
      const float other = smem[threadIdx.x + stride];
      smem[threadIdx.x] = kIsMax ? fmaxf(smem[threadIdx.x], other) : smem[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = smem[0];
  __syncthreads();  // the next reduction overwrites smem
  return result;
}

}  // namespace

template <typename T>
__global__ void softmax_naive_kernel(const T* __restrict__ x, T* __restrict__ y, int N) {
  __shared__ float red[kThreads];
  const T* row_x = x + static_cast<long long>(blockIdx.x) * N;
  T* row_y = y + static_cast<long long>(blockIdx.x) * N;

  float m = -INFINITY;  // pass 1: max
  for (int j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, to_float(row_x[j]));
  m = block_reduce_tree<true>(m, red);

  float s = 0.f;  // pass 2: sum of exp (re-reads x)
  for (int j = threadIdx.x; j < N; j += blockDim.x) s += expf(to_float(row_x[j]) - m);
  s = block_reduce_tree<false>(s, red);

  for (int j = threadIdx.x; j < N; j += blockDim.x)  // pass 3: normalize (re-reads x again)
    from_float(row_y + j, expf(to_float(row_x[j]) - m) / s);
}

// dtype: 0 = float32, 1 = bfloat16. Returns a cudaError_t.
extern "C" int softmax_naive_launch(const void* x, void* y, int M, int N, int dtype, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;
  const dim3 grid(M), block(kThreads);
  if (dtype == 0) {
    softmax_naive_kernel<float><<<grid, block, 0, stream>>>(static_cast<const float*>(x), static_cast<float*>(y), N);
  } else if (dtype == 1) {
    softmax_naive_kernel<__nv_bfloat16><<<grid, block, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y), N);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
