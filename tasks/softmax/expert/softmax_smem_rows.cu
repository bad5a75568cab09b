// Row softmax for long rows on Hopper: each CTA takes its row (or row slice) into shared memory
// with one bulk copy, reads it twice from there, and writes y once.
//
// Why: a row of 32768 bf16 is 64 KB. Held in registers it needs a whole SM (one 512-thread
// program), and that SM then loads, reduces and stores strictly in turn. Held in shared memory
// it needs 66 KB and about 40 registers a thread, so three CTAs share an SM: while one reduces,
// the others' bulk copies and stores are in flight. One thread issues the copy
// (cp.async.bulk, completing on an mbarrier), so no register is spent on the load.
//
// Per CTA: a first pass over shared memory folds each 16-byte vector into a per-thread online
// (max, sum of exp) pair, rescaling the sum when the maximum grows; the pairs are merged by
// log-sum-exp (a shuffle butterfly, then one pair per warp through shared memory); a second pass
// writes exp(x - max) / sum with 16-byte streaming stores. Rows longer than one slice (the 1 MB
// rows of 128 x 262144 fp32) are split over a thread-block cluster of `split` CTAs, which swap
// their pairs through distributed shared memory: still one read of x and one write of y.
//
// Rows that are not 16-byte aligned (N * sizeof(T) % 16 != 0, or a misaligned pointer) take the
// same path with the threads copying the row into shared memory and storing y element by element.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>

#include <cstdint>

namespace cg = cooperative_groups;

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kMaxSplit = 16;

// ---- element types: one 16-byte vector widened to fp32 and narrowed back ----------------------

template <typename T>
struct Pack;

template <>
struct Pack<__nv_bfloat16> {
  static constexpr int n = 8;
  __device__ static void widen(const uint4& raw, float* out) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
  __device__ static uint4 narrow(const float* in) {
    uint4 raw;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
    return raw;
  }
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};

template <>
struct Pack<float> {
  static constexpr int n = 4;
  __device__ static void widen(const uint4& raw, float* out) {
    out[0] = __uint_as_float(raw.x);
    out[1] = __uint_as_float(raw.y);
    out[2] = __uint_as_float(raw.z);
    out[3] = __uint_as_float(raw.w);
  }
  __device__ static uint4 narrow(const float* in) {
    return make_uint4(__float_as_uint(in[0]), __float_as_uint(in[1]), __float_as_uint(in[2]), __float_as_uint(in[3]));
  }
  __device__ static float from_float(float v) { return v; }
};

// ---- PTX: fast exp2, mbarrier, bulk copy --------------------------------------------------------

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ float ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

__device__ __forceinline__ void mbar_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  }
}

// One thread: announce `bytes` on the barrier and start the copy that delivers them.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}

// ---- the (max, sum) pair and its log-sum-exp merge ---------------------------------------------

struct MaxSum {
  float m;  // running maximum
  float s;  // sum of exp(x - m)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.s * ex2((a.m - m) * kLog2e) + b.s * ex2((b.m - m) * kLog2e)};
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum v) {
#pragma unroll
  for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) {
    const MaxSum other{__shfl_xor_sync(0xffffffffu, v.m, lane_mask), __shfl_xor_sync(0xffffffffu, v.s, lane_mask)};
    v = merge(v, other);
  }
  return v;
}

struct Geometry {
  int M, N;
  int split;  // CTAs per row (the cluster size); each owns N / split columns
  int bulk;   // rows 16-byte aligned: one bulk copy in, 16-byte stores out
};

__host__ __device__ constexpr size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

// Shared memory: the slice (padded to whole vectors), its barrier, the warp pairs, the cluster pairs.
__host__ __device__ inline size_t slice_bytes(const Geometry& g, size_t elem, int vec) {
  return round_up(round_up(g.N / g.split, vec) * elem, 128);
}

__host__ __device__ inline size_t smem_bytes(const Geometry& g, size_t elem, int vec) {
  return slice_bytes(g, elem, vec) + sizeof(uint64_t) + 32 * sizeof(MaxSum) + kMaxSplit * sizeof(MaxSum);
}

template <typename T, int MAX_THREADS>
__global__ void __launch_bounds__(MAX_THREADS) softmax_smem_rows_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                        const Geometry g) {
  using P = Pack<T>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int slice = g.N / g.split;
  T* line = reinterpret_cast<T*>(smem);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + slice_bytes(g, sizeof(T), P::n));
  MaxSum* warp_pairs = reinterpret_cast<MaxSum*>(full + 1);  // [32]
  MaxSum* cta_pairs = warp_pairs + 32;                       // [kMaxSplit], written by the cluster's CTAs

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long long row = blockIdx.x / g.split;
  const int rank = blockIdx.x % g.split;  // == cluster rank: clusters are consecutive blocks
  const T* src = x + row * g.N + static_cast<long long>(rank) * slice;
  T* out = y + row * g.N + static_cast<long long>(rank) * slice;

  if (tid == 0) mbar_init(full);
  // Peers write into this CTA's shared memory: every CTA of the cluster must be running first.
  if (g.split > 1) cg::this_cluster().sync();
  else __syncthreads();
  if (g.bulk) {
    if (tid == 0) bulk_load(line, src, static_cast<unsigned>(slice * sizeof(T)), full);
    mbar_wait(full, 0);
  } else {
    for (int i = tid; i < slice; i += blockDim.x) line[i] = src[i];
    __syncthreads();
  }

  // Pass 1: online (max, sum) per thread, one exp2 per element plus one per vector.
  MaxSum own{-INFINITY, 0.f};
  for (int c = tid * P::n; c < slice; c += blockDim.x * P::n) {
    float f[P::n];
    P::widen(*reinterpret_cast<const uint4*>(line + c), f);
    float top = -INFINITY;
#pragma unroll
    for (int j = 0; j < P::n; ++j) {
      if (c + j >= slice) f[j] = -INFINITY;  // the padding of a ragged slice
      top = fmaxf(top, f[j]);
    }
    const float m_new = fmaxf(own.m, top);
    const float shift = m_new * kLog2e;
    float add = 0.f;
#pragma unroll
    for (int j = 0; j < P::n; ++j) add += ex2(fmaf(f[j], kLog2e, -shift));
    own.s = fmaf(own.s, ex2(fmaf(own.m, kLog2e, -shift)), add);
    own.m = m_new;
  }

  MaxSum pair = warp_merge(own);
  if (lane == 0) warp_pairs[warp] = pair;
  __syncthreads();
  pair = warp_merge(lane < static_cast<int>(blockDim.x / 32) ? warp_pairs[lane] : MaxSum{-INFINITY, 0.f});
  if (g.split > 1) {
    cg::cluster_group cluster = cg::this_cluster();
    if (tid < g.split) cluster.map_shared_rank(cta_pairs, tid)[rank] = pair;
    cluster.sync();
    pair = warp_merge(lane < g.split ? cta_pairs[lane] : MaxSum{-INFINITY, 0.f});
  }

  // Pass 2: normalise from shared memory, one write of y.
  const float shift = pair.m * kLog2e, inv = 1.f / pair.s;
  for (int c = tid * P::n; c < slice; c += blockDim.x * P::n) {
    float o[P::n];
    P::widen(*reinterpret_cast<const uint4*>(line + c), o);
#pragma unroll
    for (int j = 0; j < P::n; ++j) o[j] = ex2(fmaf(o[j], kLog2e, -shift)) * inv;
    if (g.bulk) {
      __stcs(reinterpret_cast<uint4*>(out + c), P::narrow(o));  // streamed: y is never re-read
    } else {
#pragma unroll
      for (int j = 0; j < P::n; ++j)
        if (c + j < slice) out[c + j] = P::from_float(o[j]);
    }
  }
}

// One grid of M x split CTAs (clusters of `split` along x). The first launch of an instantiation on
// a device raises its dynamic shared-memory permission to the device's opt-in maximum (a
// permission, not a reservation) and allows cluster sizes above 8.
template <typename T, int MAX_THREADS>
int launch(const void* x, void* y, int threads, const Geometry& g, cudaStream_t stream) {
  static unsigned long long configured = 0;  // one bit per device
  auto kernel = softmax_smem_rows_kernel<T, MAX_THREADS>;
  const size_t smem = smem_bytes(g, sizeof(T), Pack<T>::n);
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (device >= 64 || !(configured >> device & 1ull)) {
    int optin = 0;
    err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (err == cudaSuccess && smem > static_cast<size_t>(optin)) err = cudaErrorInvalidValue;
    if (err == cudaSuccess) err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    if (err == cudaSuccess) err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (device < 64) configured |= 1ull << device;
  }
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = g.split;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(static_cast<long long>(g.M) * g.split), 1, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = g.split > 1 ? 1 : 0;
  err = cudaLaunchKernelEx(&cfg, kernel, static_cast<const T*>(x), static_cast<T*>(y), g);
  if (err == cudaSuccess) err = cudaGetLastError();
  return static_cast<int>(err);
}

template <typename T>
int launch_any(const void* x, void* y, int threads, const Geometry& g, cudaStream_t stream) {
  if (threads % 32 || threads < 32 || threads > 1024 || g.split < 1 || g.split > kMaxSplit || g.N % g.split)
    return static_cast<int>(cudaErrorInvalidValue);
  return threads <= 256 ? launch<T, 256>(x, y, threads, g, stream) : launch<T, 1024>(x, y, threads, g, stream);
}

}  // namespace

// Softmax of x [M, N] (bf16 or fp32, contiguous rows) into y: `threads` per CTA, `split` CTAs per
// row (a cluster; N must divide into 16-byte aligned slices when split > 1), `bulk` when rows and
// pointers are 16-byte aligned. Returns a cudaError_t.
extern "C" int softmax_smem_rows_launch(const void* x, void* y, int is_bf16, int M, int N, int threads, int split,
                                        int bulk, cudaStream_t stream) {
  const Geometry g{M, N, split, bulk};
  return is_bf16 ? launch_any<__nv_bfloat16>(x, y, threads, g, stream) : launch_any<float>(x, y, threads, g, stream);
}
