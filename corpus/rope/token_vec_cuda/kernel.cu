#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

#define PACK 8
#define THREADS 128

struct alignas(16) Bf16x8 { __nv_bfloat162 v[4]; };

__device__ __forceinline__ void rotate8(Bf16x8& lo, Bf16x8& hi, const float* c, const float* s) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 a = __bfloat1622float2(lo.v[j]);
    float2 b = __bfloat1622float2(hi.v[j]);
    float2 na = make_float2(a.x * c[2 * j] - b.x * s[2 * j], a.y * c[2 * j + 1] - b.y * s[2 * j + 1]);
    float2 nb = make_float2(b.x * c[2 * j] + a.x * s[2 * j], b.y * c[2 * j + 1] + a.y * s[2 * j + 1]);
    lo.v[j] = __float22bfloat162_rn(na);
    hi.v[j] = __float22bfloat162_rn(nb);
  }
}

// one block per token; thread (chunk, lane-group) keeps its 8 cos/sin values for every head
__global__ void __launch_bounds__(THREADS) rope_token_vec(__nv_bfloat16* __restrict__ q, __nv_bfloat16* __restrict__ k,
                                                          const int64_t* __restrict__ pos, const float* __restrict__ cos_tab,
                                                          const float* __restrict__ sin_tab, int hq, int hkv, int half) {
  const int64_t t = blockIdx.x;
  const int chunks = half / PACK;
  const int chunk = threadIdx.x % chunks;
  const int first = threadIdx.x / chunks;
  const int stride = blockDim.x / chunks;
  const int64_t p = __ldg(pos + t);
  float c[PACK], s[PACK];
  const float4* cp = reinterpret_cast<const float4*>(cos_tab + p * half + chunk * PACK);
  const float4* sp = reinterpret_cast<const float4*>(sin_tab + p * half + chunk * PACK);
  *reinterpret_cast<float4*>(c) = __ldg(cp);
  *reinterpret_cast<float4*>(c + 4) = __ldg(cp + 1);
  *reinterpret_cast<float4*>(s) = __ldg(sp);
  *reinterpret_cast<float4*>(s + 4) = __ldg(sp + 1);
  const int total = hq + hkv;
#pragma unroll 4
  for (int h = first; h < total; h += stride) {
    __nv_bfloat16* row = h < hq ? q + (t * hq + h) * 2 * half : k + (t * hkv + (h - hq)) * 2 * half;
    uint4* lo_ptr = reinterpret_cast<uint4*>(row + chunk * PACK);
    uint4* hi_ptr = reinterpret_cast<uint4*>(row + half + chunk * PACK);
    uint4 lo_raw = __ldcs(lo_ptr), hi_raw = __ldcs(hi_ptr);
    Bf16x8 lo = *reinterpret_cast<Bf16x8*>(&lo_raw), hi = *reinterpret_cast<Bf16x8*>(&hi_raw);
    rotate8(lo, hi, c, s);
    __stcs(lo_ptr, *reinterpret_cast<uint4*>(&lo));
    __stcs(hi_ptr, *reinterpret_cast<uint4*>(&hi));
  }
}

// any head size: one thread per pair column, heads looped
__global__ void rope_token_scalar(__nv_bfloat16* q, __nv_bfloat16* k, const int64_t* pos, const float* cos_tab,
                                  const float* sin_tab, int hq, int hkv, int half) {
  const int64_t t = blockIdx.x;
  const int64_t p = pos[t];
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float c = cos_tab[p * half + i], s = sin_tab[p * half + i];
    for (int h = 0; h < hq + hkv; ++h) {
      __nv_bfloat16* row = h < hq ? q + (t * hq + h) * 2 * half : k + (t * hkv + (h - hq)) * 2 * half;
      const float a = __bfloat162float(row[i]), b = __bfloat162float(row[i + half]);
      row[i] = __float2bfloat16(a * c - b * s);
      row[i + half] = __float2bfloat16(b * c + a * s);
    }
  }
}

extern "C" int rope_qk_inplace(void* q, void* k, const void* pos, const void* cos_tab, const void* sin_tab,
                               int64_t tokens, int hq, int hkv, int half, cudaStream_t stream) {
  if (tokens == 0) return 0;
  auto* qb = static_cast<__nv_bfloat16*>(q);
  auto* kb = static_cast<__nv_bfloat16*>(k);
  auto* pp = static_cast<const int64_t*>(pos);
  auto* cp = static_cast<const float*>(cos_tab);
  auto* sp = static_cast<const float*>(sin_tab);
  if (half % PACK == 0 && half / PACK <= THREADS && THREADS % (half / PACK) == 0) {
    rope_token_vec<<<(unsigned)tokens, THREADS, 0, stream>>>(qb, kb, pp, cp, sp, hq, hkv, half);
  } else {
    rope_token_scalar<<<(unsigned)tokens, 64, 0, stream>>>(qb, kb, pp, cp, sp, hq, hkv, half);
  }
  return (int)cudaGetLastError();
}
