#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define LOG2E_F 1.4426950408889634f

template <typename T>
struct alignas(16) Chunk {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

__device__ __forceinline__ float silu_fast(float g) {
  return __fdividef(g, 1.0f + exp2f(-g * LOG2E_F));
}

// grid: (ceil(d / (VECS * 8 * blockDim.x)), rows); each thread handles VECS 8-wide chunks of a row
template <int VECS>
__global__ void swiglu_vec8(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int d) {
  using C = Chunk<__nv_bfloat16>;
  const size_t row = blockIdx.y;
  const C* gate = reinterpret_cast<const C*>(x + row * 2 * (size_t)d);
  const C* up = reinterpret_cast<const C*>(x + row * 2 * (size_t)d + d);
  C* dst = reinterpret_cast<C*>(y + row * (size_t)d);
  const int nchunks = d / C::N;
  const int first = blockIdx.x * VECS * blockDim.x + threadIdx.x;

  C g[VECS], u[VECS];
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int c = first + k * blockDim.x;
    if (c < nchunks) {
      *reinterpret_cast<uint4*>(&g[k]) = __ldcs(reinterpret_cast<const uint4*>(gate + c));
      *reinterpret_cast<uint4*>(&u[k]) = __ldcs(reinterpret_cast<const uint4*>(up + c));
    }
  }
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int c = first + k * blockDim.x;
    if (c < nchunks) {
      C o;
#pragma unroll
      for (int e = 0; e < C::N; ++e)
        o.v[e] = __float2bfloat16_rn(silu_fast(__bfloat162float(g[k].v[e])) * __bfloat162float(u[k].v[e]));
      __stcs(reinterpret_cast<uint4*>(dst + c), *reinterpret_cast<const uint4*>(&o));
    }
  }
}

// any d: one element per thread, 2-D grid over (column block, row)
__global__ void swiglu_elem(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int d) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= d) return;
  const size_t row = blockIdx.y;
  const float g = __bfloat162float(x[row * 2 * d + col]);
  const float u = __bfloat162float(x[row * 2 * d + d + col]);
  y[row * d + col] = __float2bfloat16_rn(silu_fast(g) * u);
}

extern "C" int swiglu_forward(const void* x, void* y, int rows, int d, cudaStream_t stream) {
  if (rows == 0 || d == 0) return 0;
  constexpr int kThreads = 256, kVecs = 2;
  const bool aligned = ((uintptr_t)x % 16 == 0) && ((uintptr_t)y % 16 == 0) && (d % 8 == 0);
  if (aligned) {
    const int per_block = kThreads * kVecs;
    dim3 grid((d / 8 + per_block - 1) / per_block, rows);
    swiglu_vec8<kVecs><<<grid, kThreads, 0, stream>>>((const __nv_bfloat16*)x, (__nv_bfloat16*)y, d);
  } else {
    dim3 grid((d + kThreads - 1) / kThreads, rows);
    swiglu_elem<<<grid, kThreads, 0, stream>>>((const __nv_bfloat16*)x, (__nv_bfloat16*)y, d);
  }
  return (int)cudaGetLastError();
}
