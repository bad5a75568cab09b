// LayerNorm forward with single-pass sum / sum-of-squares statistics.
//
// One block per row. Each thread loads 16-byte vectors of the row, keeps a copy of the row in
// shared memory and accumulates sum(x) and sum(x^2) in fp32 in the same pass; the block reduces
// both with warp shuffles and then across warps; var = E[x^2] - E[x]^2. The normalize pass reads the
// row back from shared memory, so x is read from global memory once and y written once.
// E[x^2] - E[x]^2 is fine for the task's inputs (|mean| <= ~2 * std) but cancels when |mean| >> std.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

enum : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

constexpr int kMaxThreads = 1024;
constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr size_t kDefaultSmem = 48 * 1024;      // dynamic smem allowed without opting in
constexpr size_t kMaxRowCacheBytes = 160 * 1024;  // stay well under Hopper's 227 KB per block

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

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

// Sums two values over the block: shuffles inside each warp, one partial per warp through shared
// memory, then every warp reduces the partials itself (no second barrier, no broadcast step).
// blockDim.x must be a multiple of 32.
__device__ __forceinline__ float2 block_sum2(float a, float b, float2* warp_partials) {
  a = warp_sum(a);
  b = warp_sum(b);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (lane == 0) warp_partials[warp] = make_float2(a, b);
  __syncthreads();
  const int num_warps = blockDim.x / kWarpSize;
  float2 t = lane < num_warps ? warp_partials[lane] : make_float2(0.f, 0.f);
  return make_float2(warp_sum(t.x), warp_sum(t.y));
}

// x, weight, bias, y: row-major, 16-byte aligned when VW > 1 and n % VW == 0 (checked by the launcher).
// cache_row: keep the row in dynamic shared memory (n * sizeof(T) bytes); otherwise the normalize
// pass re-reads global memory (only for rows too long for the cache).
template <typename T, int VW>
__global__ void layernorm_sumsq_kernel(const T* __restrict__ x, const T* __restrict__ weight,
                                       const T* __restrict__ bias, T* __restrict__ y, int64_t n,
                                       float eps, int cache_row) {
  using P = Pack<T, VW>;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float2 warp_partials[kMaxThreads / kWarpSize];
  P* row_cache = reinterpret_cast<P*>(smem);

  const int64_t nvec = n / VW;
  const P* xr = reinterpret_cast<const P*>(x + static_cast<int64_t>(blockIdx.x) * n);
  P* yr = reinterpret_cast<P*>(y + static_cast<int64_t>(blockIdx.x) * n);
  const P* wv = reinterpret_cast<const P*>(weight);
  const P* bv = reinterpret_cast<const P*>(bias);

  float sum = 0.f, sumsq = 0.f;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const P p = xr[i];
    if (cache_row) row_cache[i] = p;  // read back later by this same thread: no barrier needed
#pragma unroll
    for (int e = 0; e < VW; ++e) {
      const float v = to_float(p.v[e]);
      sum += v;
      sumsq += v * v;
    }
  }
  const float2 tot = block_sum2(sum, sumsq, warp_partials);
  const float inv_n = 1.0f / static_cast<float>(n);
  const float mean = tot.x * inv_n;
  const float var = fmaxf(tot.y * inv_n - mean * mean, 0.f);
  const float rstd = rsqrtf(var + eps);

  const P* src = cache_row ? row_cache : xr;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const P p = src[i], pw = wv[i], pb = bv[i];
    P out;
#pragma unroll
    for (int e = 0; e < VW; ++e) {
      const float v = (to_float(p.v[e]) - mean) * rstd;
      out.v[e] = from_float<T>(v * to_float(pw.v[e]) + to_float(pb.v[e]));
    }
    yr[i] = out;
  }
}

// Warp-per-row Welford variant for short rows. Not wired into the launcher: the block kernel above
// was as fast on the 1024-wide rows, so this stayed behind.
__global__ void layernorm_welford_warp_kernel(const __nv_bfloat16* __restrict__ x,
                                              const __nv_bfloat16* __restrict__ weight,
                                              const __nv_bfloat16* __restrict__ bias,
                                              __nv_bfloat16* __restrict__ y, int64_t m, int64_t n,
                                              float eps) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  if (row >= m) return;  // whole warps exit together, so the shuffles below stay convergent
  const __nv_bfloat16* xr = x + row * n;
  float count = 0.f, mean = 0.f, m2 = 0.f;
  for (int64_t i = lane; i < n; i += kWarpSize) {
    const float v = to_float(xr[i]);
    count += 1.f;
    const float d = v - mean;
    mean += d / count;
    m2 += d * (v - mean);
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
    const float c2 = __shfl_xor_sync(kFullMask, count, offset);
    const float mean2 = __shfl_xor_sync(kFullMask, mean, offset);
    const float m22 = __shfl_xor_sync(kFullMask, m2, offset);
    const float c = count + c2;
    if (c > 0.f) {
      const float d = mean2 - mean;
      const float wb = c2 / c;
      mean += d * wb;
      m2 += m22 + d * d * count * wb;
    }
    count = c;
  }
  mean = __shfl_sync(kFullMask, mean, 0);
  const float rstd = rsqrtf(__shfl_sync(kFullMask, m2, 0) / static_cast<float>(n) + eps);
  for (int64_t i = lane; i < n; i += kWarpSize) {
    const float v = (to_float(xr[i]) - mean) * rstd;
    y[row * n + i] = from_float<__nv_bfloat16>(v * to_float(weight[i]) + to_float(bias[i]));
  }
}

static bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <typename T, int VW>
static int launch_vw(const T* x, const T* w, const T* b, T* y, int64_t m, int64_t n, float eps,
                     cudaStream_t stream) {
  const int64_t nvec = n / VW;
  // Threads sized to the row: 1 to 8 vectors per thread for the task's rows.
  const int threads = nvec >= 2048 ? 512 : (nvec >= 512 ? 256 : 128);
  const size_t cache_bytes = static_cast<size_t>(n) * sizeof(T);
  const int cache_row = cache_bytes <= kMaxRowCacheBytes;
  const size_t smem = cache_row ? cache_bytes : 0;
  if (smem > kDefaultSmem) {
    const cudaError_t err = cudaFuncSetAttribute(layernorm_sumsq_kernel<T, VW>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(smem));
    if (err != cudaSuccess) return static_cast<int>(err);
  }
  layernorm_sumsq_kernel<T, VW><<<static_cast<unsigned>(m), threads, smem, stream>>>(x, w, b, y, n, eps, cache_row);
  return static_cast<int>(cudaGetLastError());
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

// Returns 0 on success, -1 for an unsupported dtype or size, otherwise a cudaError_t.
extern "C" int layernorm_sumsq_launch(const void* x, const void* w, const void* b, void* y,
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
