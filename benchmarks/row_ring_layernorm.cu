// LayerNorm (weight and bias) for Hopper: persistent CTAs fed by a ring of bulk-copied row tiles.
//
// LayerNorm moves two bytes in and two out per bf16 element and does a handful of flops, so the
// kernel is as fast as its SMs keep HBM busy. A CTA that owns one row at a time idles its SM's
// memory pipe while it reduces and stores; here each CTA is persistent, keeps `stages` tiles of
// rows in a shared-memory ring, and one thread refills a slot with one cp.async.bulk as soon as
// the CTA has taken the slot into registers. The next rows stream in while the current row's
// statistics are merged and its output is written with 16-byte streaming stores.
//
// Statistics: each thread takes its elements' exact (count, mean, M2) from registers (mean first,
// then squared deviations), and the triples are merged with Chan's formula, lanes by a shuffle
// butterfly and warps through shared memory. Weight and bias are staged in shared memory once per
// CTA. Rows whose weight, bias and ring slots do not fit one SM are split over a thread-block
// cluster of `split` CTAs, which exchange their triples through distributed shared memory.
//
// Rows that are not 16-byte aligned (N * 2 % 16 != 0) take the same loop with the threads copying
// the tile into the ring and storing y element by element.

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

namespace cg = cooperative_groups;

namespace {

constexpr int kMaxStages = 8;
constexpr int kMaxSplit = 16;
constexpr int kVec = 8;  // bf16 elements per 16-byte vector
constexpr float kEps = 1e-5f;

using bf16 = __nv_bfloat16;

__device__ __forceinline__ void widen8(const uint4& raw, float* out) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

__device__ __forceinline__ uint4 narrow8(const float* in) {
  uint4 raw;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
  return raw;
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void barrier_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
}

__device__ __forceinline__ void barrier_wait(uint64_t* bar, unsigned parity) {
  for (unsigned ready = 0; !ready;) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ready)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  }
}

__device__ __forceinline__ void copy_async(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(shared_address(dst)), "l"(src), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}

// Count, mean and sum of squared deviations from that mean: merged exactly by Chan's formula.
struct Moments {
  float n, mean, m2;
};

__device__ __forceinline__ Moments chan(Moments a, Moments b) {
  const float n = a.n + b.n;
  if (n == 0.f) return {0.f, 0.f, 0.f};
  const float delta = b.mean - a.mean;
  const float wb = __fdividef(b.n, n);
  return {n, fmaf(delta, wb, a.mean), a.m2 + b.m2 + delta * delta * a.n * wb};
}

__device__ __forceinline__ Moments butterfly(Moments v) {
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) {
    Moments o;
    o.n = __shfl_xor_sync(0xffffffffu, v.n, d);
    o.mean = __shfl_xor_sync(0xffffffffu, v.mean, d);
    o.m2 = __shfl_xor_sync(0xffffffffu, v.m2, d);
    v = chan(v, o);
  }
  return v;
}

struct Plan {
  int M, N;
  int team;    // threads per row (multiple of 32)
  int rows;    // rows per tile = threads / team (1 when split)
  int stages;  // ring depth
  int split;   // CTAs per row = cluster size
  int bulk;    // 16-byte aligned rows
};

__host__ __device__ constexpr size_t align_to(size_t v, size_t a) { return (v + a - 1) / a * a; }

__host__ __device__ inline int row_pitch(const Plan& p) {
  const int cols = p.N / p.split;
  return p.bulk ? cols : static_cast<int>(align_to(cols, kVec));
}

__host__ __device__ inline size_t ring_slot_bytes(const Plan& p) {
  return align_to(static_cast<size_t>(p.rows) * row_pitch(p) * sizeof(bf16), 128);
}

// Layout: ring slots | weight | bias | slot barriers | per-warp triples [2][32] | cluster triples [2][16].
__host__ __device__ inline size_t dynamic_smem(const Plan& p) {
  return p.stages * ring_slot_bytes(p) + 2 * align_to(row_pitch(p) * sizeof(bf16), 128) +
         kMaxStages * sizeof(uint64_t) + 2 * 32 * sizeof(Moments) + 2 * kMaxSplit * sizeof(Moments);
}

template <int VPT, int MAX_THREADS>
__global__ void __launch_bounds__(MAX_THREADS)
    layernorm_ring_kernel(const bf16* __restrict__ x, const bf16* __restrict__ weight, const bf16* __restrict__ bias,
                          bf16* __restrict__ y, const Plan p) {
  extern __shared__ __align__(128) unsigned char smem[];

  const int cols = p.N / p.split;
  const int pitch = row_pitch(p);
  const size_t slot = ring_slot_bytes(p);
  bf16* w_s = reinterpret_cast<bf16*>(smem + p.stages * slot);
  bf16* b_s = w_s + align_to(pitch * sizeof(bf16), 128) / sizeof(bf16);
  uint64_t* full = reinterpret_cast<uint64_t*>(b_s + align_to(pitch * sizeof(bf16), 128) / sizeof(bf16));
  Moments* per_warp = reinterpret_cast<Moments*>(full + kMaxStages);
  Moments* per_cta = per_warp + 2 * 32;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int r = tid / p.team, idx = tid % p.team;
  const int rank = blockIdx.x % p.split;
  const long long first = blockIdx.x / p.split, step = gridDim.x / p.split;
  const long long tiles = (p.M + p.rows - 1) / p.rows;
  const size_t col0 = static_cast<size_t>(rank) * cols;

  auto slot_of = [&](int s) { return reinterpret_cast<bf16*>(smem + s * slot); };
  auto fetch = [&](long long tile, int s) {
    const long long row0 = tile * p.rows;
    const long long n = min(static_cast<long long>(p.rows), p.M - row0);
    copy_async(slot_of(s), x + row0 * p.N + col0, static_cast<unsigned>(n * cols * sizeof(bf16)), &full[s]);
  };

  for (int c = tid; c < cols; c += blockDim.x) {
    w_s[c] = weight[col0 + c];
    b_s[c] = bias[col0 + c];
  }
  if (tid == 0) {
    for (int s = 0; s < p.stages; ++s) barrier_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // Peers write into this CTA's shared memory: every CTA of the cluster must be running first.
  if (p.split > 1) cg::this_cluster().sync();
  else __syncthreads();
  if (p.bulk && tid == 0) {
    for (int s = 0; s < p.stages; ++s)
      if (first + s * step < tiles) fetch(first + s * step, s);
  }

  int it = 0;
  for (long long tile = first; tile < tiles; tile += step, ++it) {
    const int s = it % p.stages;
    const long long row0 = tile * p.rows;
    if (p.bulk) {
      barrier_wait(&full[s], (it / p.stages) & 1);
    } else {
      const long long n = min(static_cast<long long>(p.rows), p.M - row0);
      bf16* dst = slot_of(s);
      for (long long i = tid; i < n * cols; i += blockDim.x) dst[(i / cols) * pitch + i % cols] = x[(row0 + i / cols) * p.N + col0 + i % cols];
      __syncthreads();
    }

    const long long row = row0 + r;
    const bool live = row < p.M;
    const bf16* src = slot_of(s) + r * pitch;
    // VPT > 0: the row stays packed (8 bf16 per uint4) in registers and is widened again for each
    // use (a conversion is one instruction; packed values leave room for 32 per thread at 1024
    // threads). VPT == 0: the row stays in shared memory and is read in two passes.
    uint4 raw[VPT > 0 ? VPT : 1];
    Moments own{0.f, 0.f, 0.f};
    if constexpr (VPT > 0) {
      float sum = 0.f;
      int n_own = 0;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int c = (idx + k * p.team) * kVec;
        const int valid = live ? max(0, min(cols - c, kVec)) : 0;  // kVec or 0 except at a ragged row end
        raw[k] = valid > 0 ? *reinterpret_cast<const uint4*>(src + c) : make_uint4(0, 0, 0, 0);
        float f[kVec];
        widen8(raw[k], f);
#pragma unroll
        for (int j = 0; j < kVec; ++j) sum += j < valid ? f[j] : 0.f;
        n_own += valid;
      }
      const float mean_own = n_own > 0 ? sum / n_own : 0.f;
      float m2 = 0.f;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int c = (idx + k * p.team) * kVec;
        const int valid = live ? max(0, min(cols - c, kVec)) : 0;
        float f[kVec];
        widen8(raw[k], f);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float d = f[j] - mean_own;
          m2 = j < valid ? fmaf(d, d, m2) : m2;
        }
      }
      own = Moments{static_cast<float>(n_own), mean_own, m2};
    } else {
      // First pass over shared memory: each vector's exact (count, mean, M2), Chan-merged.
      for (int c = idx * kVec; live && c < cols; c += p.team * kVec) {
        const int valid = min(cols - c, kVec);
        float f[kVec];
        widen8(*reinterpret_cast<const uint4*>(src + c), f);
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < kVec; ++j) sum += j < valid ? f[j] : 0.f;
        const float mean = sum / valid;
        float m2 = 0.f;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float d = f[j] - mean;
          m2 = j < valid ? fmaf(d, d, m2) : m2;
        }
        own = chan(own, Moments{static_cast<float>(valid), mean, m2});
      }
    }

    Moments stat = butterfly(own);
    if (lane == 0) per_warp[(it & 1) * 32 + warp] = stat;
    __syncthreads();  // the warp triples are visible (with VPT > 0 the slot is in registers too)
    const long long next = tile + static_cast<long long>(p.stages) * step;
    if constexpr (VPT > 0) {
      if (p.bulk && tid == 0 && next < tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        fetch(next, s);
      }
    }
    const int warps_per_row = p.team / 32;
    stat = butterfly(lane < warps_per_row ? per_warp[(it & 1) * 32 + r * warps_per_row + lane] : Moments{0.f, 0.f, 0.f});
    if (p.split > 1) {
      cg::cluster_group cluster = cg::this_cluster();
      if (tid < p.split) cluster.map_shared_rank(per_cta, tid)[(it & 1) * kMaxSplit + rank] = stat;
      cluster.sync();
      stat = butterfly(lane < p.split ? per_cta[(it & 1) * kMaxSplit + lane] : Moments{0.f, 0.f, 0.f});
    }

    const float rstd = rsqrtf(stat.m2 / stat.n + kEps);
    bf16* out = y + row * p.N + col0;
    auto emit = [&](int c, const uint4& packed) {
      float xv[kVec], w[kVec], b[kVec], o[kVec];
      widen8(packed, xv);
      widen8(*reinterpret_cast<const uint4*>(w_s + c), w);
      widen8(*reinterpret_cast<const uint4*>(b_s + c), b);
#pragma unroll
      for (int j = 0; j < kVec; ++j) o[j] = fmaf((xv[j] - stat.mean) * rstd, w[j], b[j]);
      if (p.bulk) {
        __stcs(reinterpret_cast<uint4*>(out + c), narrow8(o));
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          if (c + j < cols) out[c + j] = __float2bfloat16_rn(o[j]);
      }
    };
    if constexpr (VPT > 0) {
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        const int c = (idx + k * p.team) * kVec;
        if (live && c < cols) emit(c, raw[k]);
      }
    } else {
      for (int c = idx * kVec; live && c < cols; c += p.team * kVec) emit(c, *reinterpret_cast<const uint4*>(src + c));
      __syncthreads();  // both passes have read the slot: it can be refilled
      if (p.bulk && tid == 0 && next < tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        fetch(next, s);
      }
    }
  }
}

using Kernel = void (*)(const bf16*, const bf16*, const bf16*, bf16*, Plan);

// Each variant comes in two register budgets: 64 per thread (up to 1024 threads) and 128 (up to
// 512); a launch takes the larger budget whenever its block allows it.
Kernel kernel_for(int vpt, int threads) {
  const bool roomy = threads <= 512;
  switch (vpt) {
    case 0: return roomy ? layernorm_ring_kernel<0, 512> : layernorm_ring_kernel<0, 1024>;
    case 1: return roomy ? layernorm_ring_kernel<1, 512> : layernorm_ring_kernel<1, 1024>;
    case 2: return roomy ? layernorm_ring_kernel<2, 512> : layernorm_ring_kernel<2, 1024>;
    case 4: return roomy ? layernorm_ring_kernel<4, 512> : layernorm_ring_kernel<4, 1024>;
    case 8: return roomy ? layernorm_ring_kernel<8, 512> : nullptr;
    default: return nullptr;
  }
}

cudaLaunchAttribute cluster_of(int split) {
  cudaLaunchAttribute a;
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = split;
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = 1;
  return a;
}

// CTAs of `fn` resident on one SM (split 1) or clusters resident on the GPU (split > 1) with
// `smem` bytes each; computed once per kernel and launch shape, then remembered.
int occupancy(Kernel fn, int threads, size_t smem, int split, int* fit) {
  struct Known {
    Kernel fn;
    int threads, split, device, fit;
    size_t smem;
  };
  static Known known[64];
  static int count = 0;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  for (int i = 0; i < count; ++i) {
    if (known[i].fn == fn && known[i].threads == threads && known[i].smem == smem && known[i].split == split &&
        known[i].device == device) {
      *fit = known[i].fit;
      return 0;
    }
  }
  // Raise the kernel's dynamic shared-memory permission to the device maximum once: it is not a
  // reservation, and then no other plan of this kernel can exceed it.
  int limit = 0;
  err = cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err == cudaSuccess && smem > static_cast<size_t>(limit)) err = cudaErrorInvalidValue;
  if (err == cudaSuccess) err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
  if (err == cudaSuccess && split > 8) err = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (err == cudaSuccess && split == 1) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(fit, fn, threads, smem);
  if (err == cudaSuccess && split > 1) {
    cudaLaunchAttribute attr = cluster_of(split);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(split, 1, 1);
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    err = cudaOccupancyMaxActiveClusters(fit, fn, &cfg);
  }
  if (err == cudaSuccess && count < 64) known[count++] = Known{fn, threads, split, device, *fit, smem};
  return static_cast<int>(err);
}

}  // namespace

// LayerNorm of bf16 x [M, N] with weight and bias [N] into y under one plan: `threads` per CTA,
// `team` threads per row, `vpt` 16-byte vectors per thread, `stages` ring slots, `split` CTAs per
// row (a cluster); `bulk`: 16-byte aligned rows. `persistent`: as many CTAs (clusters) as are
// resident at once, never more than there are tiles, else one per tile. Returns a cudaError_t.
extern "C" int layernorm_ring_launch(const void* x, const void* weight, const void* bias, void* y, int M, int N,
                                     int threads, int team, int vpt, int stages, int split, int bulk,
                                     int persistent, cudaStream_t stream) {
  const Plan p{M, N, team, threads / team, stages, split, bulk};
  Kernel fn = kernel_for(vpt, threads);
  if (fn == nullptr) return static_cast<int>(cudaErrorInvalidValue);
  const size_t smem = dynamic_smem(p);
  int fit = 0, sms = 0, device = 0;
  int err = occupancy(fn, threads, smem, split, &fit);
  if (err == 0) err = static_cast<int>(cudaGetDevice(&device));
  if (err == 0) err = static_cast<int>(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (err != 0) return err;
  if (fit < 1) return static_cast<int>(cudaErrorInvalidConfiguration);  // the plan does not fit an SM
  const long long tiles = (static_cast<long long>(M) + p.rows - 1) / p.rows;
  // persistent: as many CTAs (clusters) as are resident at once; otherwise one per tile
  const long long resident_units = split == 1 ? static_cast<long long>(fit) * sms : fit;
  const long long grid = split * (persistent ? std::min<long long>(resident_units, tiles) : tiles);
  cudaLaunchAttribute attr = cluster_of(split);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid), 1, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = split > 1 ? 1 : 0;
  cudaError_t status = cudaLaunchKernelEx(&cfg, fn, static_cast<const bf16*>(x), static_cast<const bf16*>(weight),
                                          static_cast<const bf16*>(bias), static_cast<bf16*>(y), p);
  return static_cast<int>(status == cudaSuccess ? cudaGetLastError() : status);
}
