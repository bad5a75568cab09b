#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

constexpr int kPack = 8;  // bf16 per 16-byte vector

namespace rn {

__device__ __forceinline__ void unpack8(const uint4& u, float (&f)[kPack]) {
  const __nv_bfloat162* two = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int p = 0; p < kPack / 2; ++p) {
    const float2 v = __bfloat1622float2(two[p]);
    f[2 * p] = v.x;
    f[2 * p + 1] = v.y;
  }
}

__device__ __forceinline__ uint4 pack8(const float (&f)[kPack]) {
  uint4 u;
  __nv_bfloat162* two = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
  for (int p = 0; p < kPack / 2; ++p) two[p] = __floats2bfloat162_rn(f[2 * p], f[2 * p + 1]);
  return u;
}

__device__ __forceinline__ float warp_allreduce(float v) {
#pragma unroll
  for (int lane_mask = 16; lane_mask >= 1; lane_mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, lane_mask);
  return v;
}

// every thread returns the block total
__device__ __forceinline__ float block_allreduce(float v, float* scratch) {
  v = warp_allreduce(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) >> 5;
  v = lane < nwarps ? scratch[lane] : 0.f;
  return warp_allreduce(v);
}

}  // namespace rn

template <int VPT>
__global__ void __launch_bounds__(1024) fused_add_rmsnorm_vec(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ r,
                                                              const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y,
                                                              __nv_bfloat16* __restrict__ h, int nvec, float inv_n, float eps) {
  __shared__ float scratch[32];
  const size_t row0 = (size_t)blockIdx.x * nvec * kPack;
  const uint4* xv = reinterpret_cast<const uint4*>(x + row0);
  const uint4* rv = reinterpret_cast<const uint4*>(r + row0);
  uint4* hv = reinterpret_cast<uint4*>(h + row0);
  uint4* yv = reinterpret_cast<uint4*>(y + row0);
  const uint4* wv = reinterpret_cast<const uint4*>(w);

  float hreg[VPT][kPack];
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < nvec) {
      float a[kPack], b[kPack];
      rn::unpack8(xv[v], a);
      rn::unpack8(rv[v], b);
#pragma unroll
      for (int e = 0; e < kPack; ++e) hreg[k][e] = a[e] + b[e];
      const uint4 packed = rn::pack8(hreg[k]);
      hv[v] = packed;
      rn::unpack8(packed, hreg[k]);  // continue from the rounded h, as stored
#pragma unroll
      for (int e = 0; e < kPack; ++e) sq += hreg[k][e] * hreg[k][e];
    }
  }
  const float scale = rsqrtf(rn::block_allreduce(sq, scratch) * inv_n + eps);
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < nvec) {
      float g[kPack], o[kPack];
      rn::unpack8(wv[v], g);
#pragma unroll
      for (int e = 0; e < kPack; ++e) o[e] = hreg[k][e] * scale * g[e];
      yv[v] = rn::pack8(o);
    }
  }
}

// rows whose length is not a multiple of 8 (or unaligned pointers): scalar, h cached in shared memory
__global__ void fused_add_rmsnorm_scalar(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ r,
                                         const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y,
                                         __nv_bfloat16* __restrict__ h, int n, float eps) {
  extern __shared__ float hrow[];
  __shared__ float scratch[32];
  const size_t base = (size_t)blockIdx.x * n;
  float sq = 0.f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const __nv_bfloat16 hb = __float2bfloat16_rn(__bfloat162float(x[base + j]) + __bfloat162float(r[base + j]));
    h[base + j] = hb;
    const float t = __bfloat162float(hb);
    hrow[j] = t;
    sq += t * t;
  }
  const float scale = rsqrtf(rn::block_allreduce(sq, scratch) / n + eps);
  for (int j = threadIdx.x; j < n; j += blockDim.x) y[base + j] = __float2bfloat16_rn(hrow[j] * scale * __bfloat162float(w[j]));
}

template <int VPT>
static void launch_vec(const void* x, const void* r, const void* w, void* y, void* h, int m, int n, float eps, cudaStream_t s) {
  const int nvec = n / kPack;
  int threads = (nvec + VPT - 1) / VPT;
  threads = ((threads + 31) / 32) * 32;
  fused_add_rmsnorm_vec<VPT><<<m, threads, 0, s>>>((const __nv_bfloat16*)x, (const __nv_bfloat16*)r, (const __nv_bfloat16*)w,
                                                   (__nv_bfloat16*)y, (__nv_bfloat16*)h, nvec, 1.f / n, eps);
}

extern "C" int fused_add_rmsnorm_launch(const void* x, const void* r, const void* w, void* y, void* h, int m, int n,
                                        float eps, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return 0;
  const bool aligned = ((uintptr_t)x | (uintptr_t)r | (uintptr_t)w | (uintptr_t)y | (uintptr_t)h) % 16 == 0;
  if (aligned && n % kPack == 0 && n <= 2 * 1024 * kPack) {
    launch_vec<2>(x, r, w, y, h, m, n, eps, stream);
  } else if (aligned && n % kPack == 0 && n <= 4 * 1024 * kPack) {
    launch_vec<4>(x, r, w, y, h, m, n, eps, stream);
  } else {
    const size_t smem = (size_t)n * sizeof(float);
    if (smem > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(fused_add_rmsnorm_scalar, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
      if (e != cudaSuccess) return (int)e;
    }
    fused_add_rmsnorm_scalar<<<m, 256, smem, stream>>>((const __nv_bfloat16*)x, (const __nv_bfloat16*)r,
                                                       (const __nv_bfloat16*)w, (__nv_bfloat16*)y, (__nv_bfloat16*)h, n, eps);
  }
  return (int)cudaGetLastError();
}
