// The LayerNorm expert's kernel for bf16 rows on Hopper (sm_90), bound by submission.py through
// load_inline and swept by benchmarks/layernorm_smem_rows.py: rows staged in shared memory, one bulk
// copy per row in, statistics and normalisation from shared memory, one 16-byte store per vector out.
//
// Why: a 32768-wide bf16 row is 64 KB. Held in registers it takes a whole SM (a 512-1024 thread
// program at ~120 registers a thread), and that SM then loads, reduces and stores strictly in turn.
// Held in shared memory it costs ~40 registers a thread, so several CTAs share an SM and one's
// copy and stores overlap another's arithmetic. On an H100 (four sweeps, 2026-12-05) this kernel was
// 0.52 / 0.64 / 0.63-0.64 / 0.56-0.57 of 4.3 TB/s on the task's four workloads, run to run within
// 0.01; the Triton register kernel at its best autotuned setting was 0.65 / 0.63 / 0.68 / 0.54, so
// the expert sends only rows of 16384 columns or more here.
//
// Each CTA owns `rows` consecutive rows. Thread 0 starts one cp.async.bulk per row, each completing
// on its own mbarrier, so the statistics of the first row start while the later ones still arrive.
// Statistics: every thread folds its 16-byte vectors of the row into a (count, mean, M2) triple,
// eight elements at a time by Chan's merge (no E[x^2] - E[x]^2 cancellation); the triples are
// merged the same way by a shuffle butterfly and then across warps. Normalisation walks the
// columns once: each thread loads its weight and bias vector once and applies it to every row of
// the CTA, which divides their L2 traffic by `rows` (per row they are as many bytes as x itself).
//
// `two_pass` = 1 selects the other statistics: the row sum, then the squared deviations from its
// mean, in two reads of shared memory (exact, and no divide per vector). Not used: on an H100
// (2026-12-06, examples/h100/dec06/) it was slower at every setting, 0.521 against 0.563 of
// 4.3 TB/s at the best one on 1024x32768 (the second read of the row costs more than the divides).
//
// Only 16-byte aligned rows take this path (N % 8 == 0, aligned pointers); the caller keeps the
// Triton kernel for the others.

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include <cstdint>

namespace {

constexpr int kVec = 8;        // bf16 per 16-byte vector
constexpr int kMaxRows = 16;   // rows per CTA (one mbarrier and one statistics slot each)
constexpr int kMaxWarps = 32;
// CTAs of 512 threads per SM that ptxas must leave registers for. At 3 it holds them to 40
// registers a thread (0 spills), so three CTAs share an SM, as many as the shared memory of a 64 KB
// row allows; unbounded (0), ptxas picks 48-50 registers and only two fit. Measured on an H100
// (2026-12-06, examples/h100/dec06/): 1024x32768, the workload that runs 512-thread CTAs, went
// from 0.0560 to 0.0527 ms through d2k-profile (0.563 -> 0.590 of 4.3 TB/s in the sweep); the
// other workloads moved within 1 %. benchmarks/layernorm_smem_rows.py times the uncapped build
// (-DLN_SMEM_MIN_CTAS_512=0) beside it.
#ifndef LN_SMEM_MIN_CTAS_512
#define LN_SMEM_MIN_CTAS_512 3
#endif

struct Stats {
  float n;     // elements folded in
  float mean;
  float m2;    // sum of squared deviations from mean
};

// Chan's merge of two partials; an empty side returns the other unchanged.
__device__ __forceinline__ Stats chan(Stats a, Stats b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float d = b.mean - a.mean;
  const float wb = __fdividef(b.n, n);
  return {n, fmaf(d, wb, a.mean), a.m2 + b.m2 + d * d * a.n * wb};
}

__device__ __forceinline__ Stats warp_chan(Stats s) {
#pragma unroll
  for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) {
    const Stats o{__shfl_xor_sync(0xffffffffu, s.n, lane_mask), __shfl_xor_sync(0xffffffffu, s.mean, lane_mask),
                  __shfl_xor_sync(0xffffffffu, s.m2, lane_mask)};
    s = chan(s, o);
  }
  return s;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, lane_mask);
  return v;
}

__device__ __forceinline__ void widen(const uint4& raw, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec / 2; ++i) {
    const float2 p = __bfloat1622float2(h[i]);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

__device__ __forceinline__ uint4 narrow(const float* f) {
  uint4 raw;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec / 2; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return raw;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
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

// Shared memory: the rows, then one barrier and one statistics slot per row, then warp partials.
__host__ __device__ constexpr size_t rows_bytes(int n, int rows) {
  return (static_cast<size_t>(n) * sizeof(__nv_bfloat16) * rows + 127) / 128 * 128;
}

__host__ __device__ constexpr size_t smem_bytes(int n, int rows) {
  return rows_bytes(n, rows) + kMaxRows * (sizeof(uint64_t) + 2 * sizeof(float)) +
         kMaxRows * kMaxWarps * sizeof(Stats);
}

template <int MAX_THREADS, int MIN_CTAS, bool TWO_PASS>
__global__ void __launch_bounds__(MAX_THREADS, MIN_CTAS) layernorm_smem_rows_kernel(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ weight,
    const __nv_bfloat16* __restrict__ bias, __nv_bfloat16* __restrict__ y, int M, int N, int rows, float eps) {
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* tile = reinterpret_cast<__nv_bfloat16*>(smem);
  uint64_t* arrived = reinterpret_cast<uint64_t*>(smem + rows_bytes(N, rows));  // [kMaxRows]
  float2* norm = reinterpret_cast<float2*>(arrived + kMaxRows);                 // [kMaxRows] (rstd, -mean * rstd)
  Stats* partial = reinterpret_cast<Stats*>(norm + kMaxRows);                   // [kMaxRows][kMaxWarps]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
  const long long first = static_cast<long long>(blockIdx.x) * rows;
  const int own = static_cast<int>(min(static_cast<long long>(rows), M - first));  // rows of this CTA
  const int step = blockDim.x * kVec;

  if (tid == 0) {
    for (int r = 0; r < own; ++r) mbar_init(&arrived[r]);
    for (int r = 0; r < own; ++r)
      bulk_load(tile + static_cast<size_t>(r) * N, x + (first + r) * N, static_cast<unsigned>(N * sizeof(__nv_bfloat16)),
                &arrived[r]);
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them

  if constexpr (TWO_PASS) {
    // Pass 1, row by row as the rows arrive: the sum, hence the mean.
    float* part = reinterpret_cast<float*>(partial);  // [kMaxRows][kMaxWarps]
    for (int r = 0; r < own; ++r) {
      mbar_wait(&arrived[r], 0);
      const __nv_bfloat16* line = tile + static_cast<size_t>(r) * N;
      float sum = 0.f;
      for (int c = tid * kVec; c < N; c += step) {
        float f[kVec];
        widen(*reinterpret_cast<const uint4*>(line + c), f);
#pragma unroll
        for (int j = 0; j < kVec; ++j) sum += f[j];
      }
      sum = warp_sum(sum);
      if (lane == 0) part[r * kMaxWarps + warp] = sum;
    }
    __syncthreads();
    for (int r = warp; r < own; r += warps) {
      const float sum = warp_sum(lane < warps ? part[r * kMaxWarps + lane] : 0.f);
      if (lane == 0) norm[r].x = sum / static_cast<float>(N);
    }
    __syncthreads();
    // Pass 2: squared deviations from that mean; exact where E[x^2] - E[x]^2 would cancel.
    for (int r = 0; r < own; ++r) {
      const __nv_bfloat16* line = tile + static_cast<size_t>(r) * N;
      const float mean = norm[r].x;
      float m2 = 0.f;
      for (int c = tid * kVec; c < N; c += step) {
        float f[kVec];
        widen(*reinterpret_cast<const uint4*>(line + c), f);
#pragma unroll
        for (int j = 0; j < kVec; ++j) m2 = fmaf(f[j] - mean, f[j] - mean, m2);
      }
      m2 = warp_sum(m2);
      if (lane == 0) part[r * kMaxWarps + warp] = m2;
    }
    __syncthreads();
    for (int r = warp; r < own; r += warps) {
      const float m2 = warp_sum(lane < warps ? part[r * kMaxWarps + lane] : 0.f);
      if (lane == 0) {
        const float mean = norm[r].x;
        const float rstd = rsqrtf(m2 / static_cast<float>(N) + eps);
        norm[r] = make_float2(rstd, -mean * rstd);
      }
    }
  } else {
    // One pass, row by row as the rows arrive: Chan's merge of 8-element partials.
    for (int r = 0; r < own; ++r) {
      mbar_wait(&arrived[r], 0);
      const __nv_bfloat16* line = tile + static_cast<size_t>(r) * N;
      Stats s{0.f, 0.f, 0.f};
      for (int c = tid * kVec; c < N; c += step) {
        float f[kVec];
        widen(*reinterpret_cast<const uint4*>(line + c), f);
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < kVec; ++j) sum += f[j];
        const float mean = sum * (1.f / kVec);
        float m2 = 0.f;
#pragma unroll
        for (int j = 0; j < kVec; ++j) m2 = fmaf(f[j] - mean, f[j] - mean, m2);
        s = chan(s, Stats{static_cast<float>(kVec), mean, m2});
      }
      s = warp_chan(s);
      if (lane == 0) partial[r * kMaxWarps + warp] = s;
    }
    __syncthreads();
    // Warp w finishes rows w, w + warps, ...: merge the row's warp partials, keep (rstd, -mean * rstd).
    for (int r = warp; r < own; r += warps) {
      Stats s = warp_chan(lane < warps ? partial[r * kMaxWarps + lane] : Stats{0.f, 0.f, 0.f});
      if (lane == 0) {
        const float rstd = rsqrtf(s.m2 / static_cast<float>(N) + eps);
        norm[r] = make_float2(rstd, -s.mean * rstd);
      }
    }
  }
  __syncthreads();

  // Normalise: one weight and bias vector per column vector, applied to every row of the CTA.
  for (int c = tid * kVec; c < N; c += step) {
    float w[kVec], b[kVec];
    widen(__ldg(reinterpret_cast<const uint4*>(weight + c)), w);
    widen(__ldg(reinterpret_cast<const uint4*>(bias + c)), b);
    for (int r = 0; r < own; ++r) {
      const float2 k = norm[r];
      float f[kVec];
      widen(*reinterpret_cast<const uint4*>(tile + static_cast<size_t>(r) * N + c), f);
#pragma unroll
      for (int j = 0; j < kVec; ++j) f[j] = fmaf(fmaf(f[j], k.x, k.y), w[j], b[j]);
      __stcs(reinterpret_cast<uint4*>(y + (first + r) * N + c), narrow(f));  // streamed: y is not re-read
    }
  }
}

template <int MAX_THREADS, int MIN_CTAS, bool TWO_PASS>
int launch(const void* x, const void* w, const void* b, void* y, int M, int N, int threads, int rows, float eps,
           cudaStream_t stream) {
  static unsigned long long configured = 0;  // one bit per device
  auto kernel = layernorm_smem_rows_kernel<MAX_THREADS, MIN_CTAS, TWO_PASS>;
  const size_t smem = smem_bytes(N, rows);
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  int optin = 0;
  err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (smem > static_cast<size_t>(optin)) return static_cast<int>(cudaErrorInvalidValue);
  if (device >= 64 || !(configured >> device & 1ull)) {
    // A permission, not a reservation: each launch still asks only for what its rows need.
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (device < 64) configured |= 1ull << device;
  }
  const unsigned grid = static_cast<unsigned>((M + rows - 1) / rows);
  kernel<<<grid, threads, smem, stream>>>(static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w),
                                          static_cast<const __nv_bfloat16*>(b), static_cast<__nv_bfloat16*>(y), M, N,
                                          rows, eps);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

// LayerNorm of bf16 x [M, N] with bf16 weight and bias [N] into y: `threads` per CTA, `rows` rows
// per CTA; `two_pass` picks the statistics (0: one pass, Chan's merge; 1: the sum, then the squared
// deviations from the mean). N must be a multiple of 8 and every pointer 16-byte aligned. Returns a
// cudaError_t.
extern "C" int layernorm_smem_rows_launch(const void* x, const void* w, const void* b, void* y, int M, int N,
                                          int threads, int rows, int two_pass, float eps, cudaStream_t stream) {
  if (threads % 32 || threads < 32 || threads > 1024 || rows < 1 || rows > kMaxRows || N % kVec || N <= 0 || M <= 0 ||
      (two_pass != 0 && two_pass != 1))
    return static_cast<int>(cudaErrorInvalidValue);
  if (two_pass) {
    if (threads <= 256) return launch<256, 0, true>(x, w, b, y, M, N, threads, rows, eps, stream);
#if LN_SMEM_MIN_CTAS_512 > 0
    if (threads <= 512) return launch<512, LN_SMEM_MIN_CTAS_512, true>(x, w, b, y, M, N, threads, rows, eps, stream);
#endif
    return launch<1024, 0, true>(x, w, b, y, M, N, threads, rows, eps, stream);
  }
  if (threads <= 256) return launch<256, 0, false>(x, w, b, y, M, N, threads, rows, eps, stream);
#if LN_SMEM_MIN_CTAS_512 > 0
  if (threads <= 512) return launch<512, LN_SMEM_MIN_CTAS_512, false>(x, w, b, y, M, N, threads, rows, eps, stream);
#endif
  return launch<1024, 0, false>(x, w, b, y, M, N, threads, rows, eps, stream);
}
