// LayerNorm forward, register-resident row with Welford/Chan statistics.
//
// One block per row; each thread loads VPT 16-byte vectors of the row into registers (one global
// read of x), folds its elements into a Welford partial (count, mean, M2), and the block merges
// the partials with Chan's formula: butterfly shuffles inside each warp, then the per-warp
// partials through shared memory. The output is normalized from the registers (one write of y).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

enum : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

constexpr int kMaxThreads = 512;  // with __launch_bounds__: up to 128 registers per thread
constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// VW consecutive elements moved as one access: 16 bytes (a 128-bit load/store) when VW = 16 / sizeof(T).
template <typename T, int VW>
struct alignas(sizeof(T) * VW) Pack {
  T v[VW];
};

// Read-only-cache load of a pack (weight and bias are shared by every row).
template <typename P>
__device__ __forceinline__ P load_readonly(const P* p) {
  P out;
  if constexpr (sizeof(P) == 16) {
    *reinterpret_cast<uint4*>(&out) = __ldg(reinterpret_cast<const uint4*>(p));
  } else if constexpr (sizeof(P) == 4) {
    *reinterpret_cast<unsigned*>(&out) = __ldg(reinterpret_cast<const unsigned*>(p));
  } else {
    static_assert(sizeof(P) == 2, "packs are 2, 4 or 16 bytes");
    *reinterpret_cast<unsigned short*>(&out) = __ldg(reinterpret_cast<const unsigned short*>(p));
  }
  return out;
}

struct WelfordStat {
  float count, mean, m2;  // m2: sum of squared deviations from `mean`
};

__device__ __forceinline__ void welford_add(WelfordStat& s, float v) {
  s.count += 1.f;
  const float d = v - s.mean;
  s.mean += __fdividef(d, s.count);
  s.m2 += d * (v - s.mean);
}

// Chan et al.'s pairwise merge; an empty partial (count 0) is the identity.
__device__ __forceinline__ WelfordStat chan_merge(const WelfordStat& a, const WelfordStat& b) {
  const float count = a.count + b.count;
  if (count == 0.f) return a;
  const float d = b.mean - a.mean;
  const float wb = __fdividef(b.count, count);
  return {count, a.mean + d * wb, a.m2 + b.m2 + d * d * a.count * wb};
}

// Butterfly over the warp: five shuffle rounds of the triple, merged with Chan at each step.
__device__ __forceinline__ WelfordStat warp_merge(WelfordStat s) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
    WelfordStat other;
    other.count = __shfl_xor_sync(kFullMask, s.count, offset);
    other.mean = __shfl_xor_sync(kFullMask, s.mean, offset);
    other.m2 = __shfl_xor_sync(kFullMask, s.m2, offset);
    s = chan_merge(s, other);
  }
  return s;
}

// n: row length; VW: elements per access; VPT: accesses per thread, so one block holds
// VPT * VW * blockDim.x >= n elements in registers. blockDim.x is a multiple of 32, <= kMaxThreads.
template <typename T, int VW, int VPT>
__global__ void __launch_bounds__(kMaxThreads)
layernorm_welford_kernel(const T* __restrict__ x, const T* __restrict__ weight,
                         const T* __restrict__ bias, T* __restrict__ y, int64_t n, float eps) {
  using P = Pack<T, VW>;
  __shared__ WelfordStat warp_stats[kMaxThreads / kWarpSize];

  const int64_t nvec = n / VW;
  const P* xr = reinterpret_cast<const P*>(x + static_cast<int64_t>(blockIdx.x) * n);
  P* yr = reinterpret_cast<P*>(y + static_cast<int64_t>(blockIdx.x) * n);

  // The only read of x: all VPT loads are issued before any arithmetic depends on them.
  P regs[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (i < nvec) regs[k] = xr[i];
  }

  WelfordStat st = {0.f, 0.f, 0.f};
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (i < nvec) {
#pragma unroll
      for (int e = 0; e < VW; ++e) welford_add(st, to_float(regs[k].v[e]));
    }
  }

  // Block merge: warps first, then the per-warp partials (every warp merges them in the same
  // order, and lane 0's result is broadcast so that all threads use identical statistics).
  st = warp_merge(st);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (lane == 0) warp_stats[warp] = st;
  __syncthreads();
  const int num_warps = blockDim.x / kWarpSize;
  WelfordStat t = lane < num_warps ? warp_stats[lane] : WelfordStat{0.f, 0.f, 0.f};
  t = warp_merge(t);
  const float mean = __shfl_sync(kFullMask, t.mean, 0);
  const float m2 = __shfl_sync(kFullMask, t.m2, 0);
  const float rstd = rsqrtf(m2 / static_cast<float>(n) + eps);

  const P* wv = reinterpret_cast<const P*>(weight);
  const P* bv = reinterpret_cast<const P*>(bias);
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (i < nvec) {
      const P pw = load_readonly(wv + i), pb = load_readonly(bv + i);
      P out;
#pragma unroll
      for (int e = 0; e < VW; ++e) {
        const float v = (to_float(regs[k].v[e]) - mean) * rstd;
        out.v[e] = from_float<T>(v * to_float(pw.v[e]) + to_float(pb.v[e]));
      }
      yr[i] = out;
    }
  }
}

static bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <typename T, int VW, int VPT>
static int launch_vpt(const T* x, const T* w, const T* b, T* y, int64_t m, int64_t n, float eps,
                      cudaStream_t stream) {
  const int64_t nvec = n / VW;
  const int64_t per_block = (nvec + VPT - 1) / VPT;
  const int threads = static_cast<int>((per_block + kWarpSize - 1) / kWarpSize * kWarpSize);
  layernorm_welford_kernel<T, VW, VPT><<<static_cast<unsigned>(m), threads, 0, stream>>>(x, w, b, y, n, eps);
  return static_cast<int>(cudaGetLastError());
}

// Smallest VPT (accesses per thread) that covers the row with at most kMaxThreads threads, so that
// short rows get one vector per thread and long rows fill 512 threads.
template <typename T, int VW>
static int launch_vw(const T* x, const T* w, const T* b, T* y, int64_t m, int64_t n, float eps,
                     cudaStream_t stream) {
  const int64_t nvec = n / VW;
  if (nvec <= 1 * kMaxThreads) return launch_vpt<T, VW, 1>(x, w, b, y, m, n, eps, stream);
  if (nvec <= 2 * kMaxThreads) return launch_vpt<T, VW, 2>(x, w, b, y, m, n, eps, stream);
  if (nvec <= 4 * kMaxThreads) return launch_vpt<T, VW, 4>(x, w, b, y, m, n, eps, stream);
  if (nvec <= 8 * kMaxThreads) return launch_vpt<T, VW, 8>(x, w, b, y, m, n, eps, stream);
  if (nvec <= 16 * kMaxThreads) return launch_vpt<T, VW, 16>(x, w, b, y, m, n, eps, stream);
  if constexpr (VW == 1) {  // scalar packs are 2-4 bytes, so more of them fit in registers
    if (nvec <= 32 * kMaxThreads) return launch_vpt<T, VW, 32>(x, w, b, y, m, n, eps, stream);
    if (nvec <= 64 * kMaxThreads) return launch_vpt<T, VW, 64>(x, w, b, y, m, n, eps, stream);
  }
  return -1;  // row too long to keep in registers
}

template <typename T>
static int launch(const void* x, const void* w, const void* b, void* y, int64_t m, int64_t n,
                  float eps, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const T* xt = static_cast<const T*>(x);
  const T* wt = static_cast<const T*>(w);
  const T* bt = static_cast<const T*>(b);
  T* yt = static_cast<T*>(y);
  const bool vec_ok = n % kVec == 0 && aligned16(x) && aligned16(w) && aligned16(b) && aligned16(y);
  if (vec_ok) return launch_vw<T, kVec>(xt, wt, bt, yt, m, n, eps, stream);
  return launch_vw<T, 1>(xt, wt, bt, yt, m, n, eps, stream);  // ragged rows: scalar accesses
}

// Returns 0 on success, -1 for an unsupported dtype or size (rows longer than 65536 16-byte-aligned
// bf16/fp16 elements, 32768 fp32, or 32768 ragged), otherwise a cudaError_t.
extern "C" int layernorm_welford_launch(const void* x, const void* w, const void* b, void* y,
                                        int64_t m, int64_t n, float eps, int dtype,
                                        cudaStream_t stream) {
  if (m == 0 || n == 0) return 0;
  if (m < 0 || n < 0 || m > 0x7fffffffLL) return -1;
  switch (dtype) {
    case kFloat32: return launch<float>(x, w, b, y, m, n, eps, stream);
    case kFloat16: return launch<__half>(x, w, b, y, m, n, eps, stream);
    case kBFloat16: return launch<__nv_bfloat16>(x, w, b, y, m, n, eps, stream);
    default: return -1;
  }
}
