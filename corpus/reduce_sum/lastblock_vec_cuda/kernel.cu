#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 2;

__device__ unsigned int blocks_done = 0;

template <bool kBf16>
__device__ __forceinline__ float widen_sum(const uint4& v) {
  if constexpr (kBf16) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
    float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
    float2 c = __bfloat1622float2(h[2]), d = __bfloat1622float2(h[3]);
    return ((a.x + a.y) + (b.x + b.y)) + ((c.x + c.y) + (d.x + d.y));
  } else {
    return (__uint_as_float(v.x) + __uint_as_float(v.y)) + (__uint_as_float(v.z) + __uint_as_float(v.w));
  }
}

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ __forceinline__ float lane_sum(float v) {
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

// every thread passes its sum; block partials go to partial[], the last block to arrive writes the total
__device__ void finish(float v, float* __restrict__ partial, float* __restrict__ result) {
  __shared__ float per_warp[kThreads / 32];
  __shared__ bool finisher;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  v = lane_sum(v);
  if (lane == 0) per_warp[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < kThreads / 32 ? per_warp[lane] : 0.f;
    v = lane_sum(v);
    if (lane == 0) {
      partial[blockIdx.x] = v;
      __threadfence();
      finisher = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (!finisher) return;
  float s = 0.f;
  for (int b = threadIdx.x; b < gridDim.x; b += kThreads) s += __ldcg(&partial[b]);
  s = lane_sum(s);
  __syncthreads();
  if (lane == 0) per_warp[w] = s;
  __syncthreads();
  if (w == 0) {
    s = lane < kThreads / 32 ? per_warp[lane] : 0.f;
    s = lane_sum(s);
    if (lane == 0) {
      *result = s;
      blocks_done = 0;
    }
  }
}

// 16-byte chunks (4 floats or 8 bf16) with a grid-stride loop, kUnroll chunks in flight per thread
template <bool kBf16>
__global__ void __launch_bounds__(kThreads) sum_vec(const uint4* __restrict__ src, float* __restrict__ partial,
                                                    float* __restrict__ result, long long chunks) {
  const long long stride = (long long)gridDim.x * kThreads;
  float acc[kUnroll] = {};
  for (long long base = (long long)blockIdx.x * kThreads + threadIdx.x; base < chunks; base += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long j = base + u * stride;
      v[u] = j < chunks ? __ldcs(&src[j]) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += widen_sum<kBf16>(v[u]);
  }
  finish(acc[0] + acc[1], partial, result);
}

// any length or alignment: one element per thread per step
template <typename T>
__global__ void __launch_bounds__(kThreads) sum_scalar(const T* __restrict__ src, float* __restrict__ partial,
                                                       float* __restrict__ result, long long n) {
  float acc = 0.f;
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < n; i += (long long)gridDim.x * kThreads)
    acc += widen(src[i]);
  finish(acc, partial, result);
}

int grid_for(long long items, int max_blocks) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const long long per_block = (long long)kThreads * kUnroll;
  long long blocks = (items + per_block - 1) / per_block;
  if (blocks > 2LL * sms) blocks = 2LL * sms;
  if (blocks > max_blocks) blocks = max_blocks;
  return blocks < 1 ? 1 : (int)blocks;
}

}  // namespace

extern "C" int vector_sum(const void* x, int is_bf16, float* partial, int max_blocks, float* out, long long n,
                          cudaStream_t stream) {
  const int width = is_bf16 ? 8 : 4;
  if ((uintptr_t)x % 16 == 0 && n % width == 0) {
    const long long chunks = n / width;
    const int blocks = grid_for(chunks, max_blocks);
    if (is_bf16)
      sum_vec<true><<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(x), partial, out, chunks);
    else
      sum_vec<false><<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(x), partial, out, chunks);
  } else {
    const int blocks = grid_for(n, max_blocks);
    if (is_bf16)
      sum_scalar<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), partial, out, n);
    else
      sum_scalar<float><<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(x), partial, out, n);
  }
  return (int)cudaGetLastError();
}
