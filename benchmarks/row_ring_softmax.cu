// Row softmax for Hopper: a persistent ring of row tiles moved by the bulk-copy engine.
//
// Why this shape: a row softmax is a pure streaming kernel (one read of x, one write of y), so
// its speed is how steadily each SM keeps loads in flight. A kernel that holds a whole row in
// registers and gives each row its own CTA stalls its SM at every row boundary: the next row's
// loads start only after the last row's reductions and stores. Here every CTA is persistent and
// keeps `stages` tiles in a shared-memory ring; one thread refills a slot with a single
// cp.async.bulk as soon as the CTA has copied that slot into registers, so the next rows are
// already arriving while the current one is reduced, normalised and stored.
//
// A tile is `rows` consecutive rows (one contiguous span of x). Each row is owned by a team of
// `team` threads (a multiple of 32). Each thread keeps VPT 16-byte vectors of the row in fp32
// registers, folds them into a (max, sum of exp) pair with one exp2 per element, and the pairs are
// merged by log-sum-exp: lanes by a shuffle butterfly, warps through shared memory. Rows too long
// for one SM's shared memory are split over a thread-block cluster (`split` CTAs, one slice
// each); the CTAs exchange their pairs through distributed shared memory once per row.
//
// When rows are not 16-byte aligned (N * sizeof(T) % 16 != 0) the same loop runs with the threads
// copying each tile into the ring themselves and storing y one element at a time.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

namespace cg = cooperative_groups;

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kMaxStages = 8;
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
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
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
  __device__ static float to_float(float v) { return v; }
  __device__ static float from_float(float v) { return v; }
};

// ---- PTX: mbarrier, bulk copy, fast exp2 ------------------------------------------------------

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

// One thread: announce `bytes` on the slot's barrier and start the copy that will deliver them.
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
  int team;    // threads per row, a multiple of 32
  int rows;    // rows per tile: blockDim.x / team (1 when a row is split)
  int stages;  // ring slots
  int split;   // CTAs per row (the cluster size); each owns N / split columns
  int bulk;    // rows 16-byte aligned: bulk copies in, 16-byte stores out
};

__host__ __device__ constexpr size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

// Shared memory: the ring, then the slot barriers, the per-warp pairs and the cluster's pairs.
__host__ __device__ inline size_t slot_bytes(const Geometry& g, size_t elem, int vec) {
  const size_t slice = g.N / g.split;
  const size_t pitch = g.bulk ? slice : round_up(slice, vec);
  return round_up(g.rows * pitch * elem, 128);
}

__host__ __device__ inline size_t smem_bytes(const Geometry& g, size_t elem, int vec) {
  return g.stages * slot_bytes(g, elem, vec) + kMaxStages * sizeof(uint64_t) + 2 * 32 * sizeof(MaxSum) +
         2 * kMaxSplit * sizeof(MaxSum);
}

template <typename T, int VPT, int MAX_THREADS>
__global__ void __launch_bounds__(MAX_THREADS) softmax_ring_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                   const Geometry g) {
  using P = Pack<T>;
  constexpr int E = P::n * VPT;
  extern __shared__ __align__(128) unsigned char smem[];

  const int slice = g.N / g.split;
  const int pitch = g.bulk ? slice : static_cast<int>(round_up(slice, P::n));
  const size_t slot = slot_bytes(g, sizeof(T), P::n);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + g.stages * slot);
  MaxSum* warp_pairs = reinterpret_cast<MaxSum*>(full + kMaxStages);  // [2][32]
  MaxSum* cta_pairs = warp_pairs + 2 * 32;                            // [2][kMaxSplit], written by peers

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int r = tid / g.team, t_in_team = tid % g.team;
  const int rank = blockIdx.x % g.split;  // == cluster rank: clusters are consecutive blocks
  const long long group = blockIdx.x / g.split, groups = gridDim.x / g.split;
  const long long tiles = (g.M + g.rows - 1) / g.rows;
  const size_t col0 = static_cast<size_t>(rank) * slice;

  auto slot_ptr = [&](int s) { return reinterpret_cast<T*>(smem + s * slot); };
  auto refill = [&](long long tile, int s) {
    const long long row0 = tile * g.rows;
    const long long nrows = min(static_cast<long long>(g.rows), g.M - row0);
    bulk_load(slot_ptr(s), x + row0 * g.N + col0, static_cast<unsigned>(nrows * slice * sizeof(T)), &full[s]);
  };

  if (tid == 0) {
    for (int s = 0; s < g.stages; ++s) mbar_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // Peers write into this CTA's shared memory: every CTA of the cluster must be running first.
  if (g.split > 1) cg::this_cluster().sync();
  else __syncthreads();
  if (g.bulk && tid == 0) {
    for (int s = 0; s < g.stages; ++s) {
      const long long tile = group + s * groups;
      if (tile < tiles) refill(tile, s);
    }
  }

  int it = 0;
  for (long long tile = group; tile < tiles; tile += groups, ++it) {
    const int s = it % g.stages;
    const T* ring = slot_ptr(s);
    const long long row0 = tile * g.rows;
    if (g.bulk) {
      mbar_wait(&full[s], (it / g.stages) & 1);
    } else {
      const long long nrows = min(static_cast<long long>(g.rows), g.M - row0);
      T* dst = slot_ptr(s);
      for (long long i = tid; i < nrows * slice; i += blockDim.x) {
        const long long rr = i / slice, c = i % slice;
        dst[rr * pitch + c] = x[(row0 + rr) * g.N + col0 + c];
      }
      __syncthreads();
    }

    const long long row = row0 + r;
    const bool live = row < g.M;
    const T* src = ring + r * pitch;
    float v[E > 0 ? E : 1];
    float m_own = -INFINITY, s_own = 0.f;
    if constexpr (VPT > 0) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int c = (t_in_team + k * g.team) * P::n;
        if (live && c < slice) {
          P::widen(*reinterpret_cast<const uint4*>(src + c), v + k * P::n);
#pragma unroll
          for (int j = 0; j < P::n; ++j)
            if (c + j >= slice) v[k * P::n + j] = -INFINITY;
        } else {
#pragma unroll
          for (int j = 0; j < P::n; ++j) v[k * P::n + j] = -INFINITY;
        }
#pragma unroll
        for (int j = 0; j < P::n; ++j) m_own = fmaxf(m_own, v[k * P::n + j]);
      }
      // One exp2 per element: keep e = exp(x - m_own) in place of x and rescale once at the end.
      const float shift = m_own == -INFINITY ? 0.f : m_own * kLog2e;
#pragma unroll
      for (int i = 0; i < E; ++i) {
        v[i] = ex2(fmaf(v[i], kLog2e, -shift));
        s_own += v[i];
      }
    } else {
      // The row stays in shared memory: a first pass folds each vector into an online
      // (max, sum), rescaling the sum whenever the maximum grows; a second pass normalises.
      for (int c = t_in_team * P::n; live && c < slice; c += g.team * P::n) {
        float f[P::n];
        P::widen(*reinterpret_cast<const uint4*>(src + c), f);
        float top = -INFINITY;
#pragma unroll
        for (int j = 0; j < P::n; ++j) {
          if (c + j >= slice) f[j] = -INFINITY;
          top = fmaxf(top, f[j]);
        }
        const float m_new = fmaxf(m_own, top);
        const float shift = m_new * kLog2e;
        float add = 0.f;
#pragma unroll
        for (int j = 0; j < P::n; ++j) add += ex2(fmaf(f[j], kLog2e, -shift));
        s_own = fmaf(s_own, ex2(fmaf(m_own, kLog2e, -shift)), add);
        m_own = m_new;
      }
    }

    MaxSum pair = warp_merge({m_own, s_own});
    if (lane == 0) warp_pairs[(it & 1) * 32 + warp] = pair;
    __syncthreads();  // the warp pairs are visible (and, with VPT > 0, the slot is in registers)
    const long long next = tile + static_cast<long long>(g.stages) * groups;
    if constexpr (VPT > 0) {
      if (g.bulk && tid == 0 && next < tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        refill(next, s);
      }
    }
    const int team_warps = g.team / 32;
    pair = warp_merge(lane < team_warps ? warp_pairs[(it & 1) * 32 + r * team_warps + lane] : MaxSum{-INFINITY, 0.f});
    if (g.split > 1) {
      cg::cluster_group cluster = cg::this_cluster();
      if (tid < g.split) cluster.map_shared_rank(cta_pairs, tid)[(it & 1) * kMaxSplit + rank] = pair;
      cluster.sync();
      pair = warp_merge(lane < g.split ? cta_pairs[(it & 1) * kMaxSplit + lane] : MaxSum{-INFINITY, 0.f});
    }

    T* out = y + row * g.N + col0;
    if constexpr (VPT > 0) {
      const float scale = m_own == -INFINITY ? 0.f : ex2((m_own - pair.m) * kLog2e) / pair.s;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int c = (t_in_team + k * g.team) * P::n;
        if (!live || c >= slice) continue;
        float o[P::n];
#pragma unroll
        for (int j = 0; j < P::n; ++j) o[j] = v[k * P::n + j] * scale;
        if (g.bulk) {
          __stcs(reinterpret_cast<uint4*>(out + c), P::narrow(o));  // streamed: y is never re-read
        } else {
#pragma unroll
          for (int j = 0; j < P::n; ++j)
            if (c + j < slice) out[c + j] = P::from_float(o[j]);
        }
      }
    } else {
      const float shift = pair.m * kLog2e, inv = 1.f / pair.s;
      for (int c = t_in_team * P::n; live && c < slice; c += g.team * P::n) {
        float o[P::n];
        P::widen(*reinterpret_cast<const uint4*>(src + c), o);
#pragma unroll
        for (int j = 0; j < P::n; ++j) o[j] = ex2(fmaf(o[j], kLog2e, -shift)) * inv;
        if (g.bulk) {
          __stcs(reinterpret_cast<uint4*>(out + c), P::narrow(o));
        } else {
#pragma unroll
          for (int j = 0; j < P::n; ++j)
            if (c + j < slice) out[c + j] = P::from_float(o[j]);
        }
      }
      __syncthreads();  // the slot has been read twice: it can be refilled
      if (g.bulk && tid == 0 && next < tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        refill(next, s);
      }
    }
  }
}

cudaLaunchAttribute cluster_attr(int split) {
  cudaLaunchAttribute a;
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = split;
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = 1;
  return a;
}

// How many CTAs of `fn` fit on one SM (split 1), or clusters on the GPU (split > 1), with `smem`
// bytes each. Asked once per kernel and shape of launch: the answer is kept for later calls.
int resident(const void* fn, int threads, size_t smem, int split, int* fit) {
  struct Entry {
    const void* fn;
    int threads, split, device, fit;
    size_t smem;
  };
  static Entry seen[64];
  static int n_seen = 0;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  for (int i = 0; i < n_seen; ++i) {
    const Entry& e = seen[i];
    if (e.fn == fn && e.threads == threads && e.smem == smem && e.split == split && e.device == device) {
      *fit = e.fit;
      return 0;
    }
  }
  // The shared-memory limit is a per-kernel permission, not a reservation: raise it to the
  // device's opt-in maximum once, so that no plan of this kernel ever falls above it.
  int optin = 0;
  err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err == cudaSuccess && smem > static_cast<size_t>(optin)) err = cudaErrorInvalidValue;
  if (err == cudaSuccess) err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  if (err == cudaSuccess && split > 8) err = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (split == 1) {
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(fit, fn, threads, smem);
  } else {
    cudaLaunchAttribute attr = cluster_attr(split);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(split, 1, 1);
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    err = cudaOccupancyMaxActiveClusters(fit, fn, &cfg);
  }
  if (err == cudaSuccess && n_seen < 64) seen[n_seen++] = Entry{fn, threads, split, device, *fit, smem};
  return static_cast<int>(err);
}

// A persistent launch of one instantiation: as many CTAs (or clusters of `split` CTAs) as are
// resident at once, never more than there are tiles; each loops over its share of the tiles.
template <typename T, int VPT, int MAX_THREADS>
int launch_kernel(const void* x, void* y, int threads, const Geometry& g, bool persistent, cudaStream_t stream) {
  const size_t smem = smem_bytes(g, sizeof(T), Pack<T>::n);
  int fit = 0, sms = 0, device = 0;
  int err = resident(reinterpret_cast<const void*>(softmax_ring_kernel<T, VPT, MAX_THREADS>), threads, smem, g.split, &fit);
  if (err == 0) err = static_cast<int>(cudaGetDevice(&device));
  if (err == 0) err = static_cast<int>(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (err != 0) return err;
  if (fit < 1) return static_cast<int>(cudaErrorInvalidConfiguration);  // this plan does not fit an SM
  const long long tiles = (g.M + g.rows - 1) / g.rows;
  // persistent: as many CTAs (clusters) as are resident at once; otherwise one per tile
  const long long resident_units = g.split == 1 ? static_cast<long long>(fit) * sms : fit;
  const long long grid = g.split * (persistent ? std::min<long long>(resident_units, tiles) : tiles);
  cudaLaunchAttribute attr = cluster_attr(g.split);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid), 1, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = g.split > 1 ? 1 : 0;
  cudaError_t status = cudaLaunchKernelEx(&cfg, softmax_ring_kernel<T, VPT, MAX_THREADS>, static_cast<const T*>(x),
                                          static_cast<T*>(y), g);
  if (status == cudaSuccess) status = cudaGetLastError();
  return static_cast<int>(status);
}

// Each vector count comes in two register budgets: 64 per thread (blocks of up to 1024 threads)
// and 128 (up to 512). A launch takes the larger budget whenever its block allows it; more than
// 32 elements per thread only fit the larger one.
template <typename T>
int launch(const void* x, void* y, int threads, int vpt, const Geometry& g, bool persistent, cudaStream_t stream) {
  const bool roomy = threads <= 512;
  switch (vpt) {
    case 0: return roomy ? launch_kernel<T, 0, 512>(x, y, threads, g, persistent, stream) : launch_kernel<T, 0, 1024>(x, y, threads, g, persistent, stream);
    case 1: return roomy ? launch_kernel<T, 1, 512>(x, y, threads, g, persistent, stream) : launch_kernel<T, 1, 1024>(x, y, threads, g, persistent, stream);
    case 2: return roomy ? launch_kernel<T, 2, 512>(x, y, threads, g, persistent, stream) : launch_kernel<T, 2, 1024>(x, y, threads, g, persistent, stream);
    case 4: return roomy ? launch_kernel<T, 4, 512>(x, y, threads, g, persistent, stream) : launch_kernel<T, 4, 1024>(x, y, threads, g, persistent, stream);
    case 8:
      if (roomy) return launch_kernel<T, 8, 512>(x, y, threads, g, persistent, stream);
      if constexpr (Pack<T>::n * 8 <= 32) return launch_kernel<T, 8, 1024>(x, y, threads, g, persistent, stream);
      return static_cast<int>(cudaErrorInvalidValue);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace

// Row softmax of x [M, N] (bf16 or fp32, contiguous) into y under one plan: `threads` per CTA,
// `team` threads per row, `vpt` 16-byte vectors per thread, `stages` ring slots, `split` CTAs per
// row. `bulk`: rows and pointers 16-byte aligned. `persistent`: a grid of resident CTAs that loop
// over the tiles, else one CTA per tile. Returns a cudaError_t.
extern "C" int softmax_ring_launch(const void* x, void* y, int is_bf16, int M, int N, int threads, int team, int vpt,
                                   int stages, int split, int bulk, int persistent, cudaStream_t stream) {
  const Geometry g{M, N, team, threads / team, stages, split, bulk};
  return is_bf16 ? launch<__nv_bfloat16>(x, y, threads, vpt, g, persistent != 0, stream)
                 : launch<float>(x, y, threads, vpt, g, persistent != 0, stream);
}
