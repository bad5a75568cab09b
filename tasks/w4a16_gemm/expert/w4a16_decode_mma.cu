// W4A16 for decode batches (M <= 16), bound by the w4a16 expert (submission.py, through load_inline;
// its settings swept by benchmarks/w4a16_decode.py): the int4 weights streamed through registers into
// tensor cores, with the weights as the MMA's 16-row operand and the few activation rows as its
// 8-column operand.
//
// Why: at M = 1-16 the product is bound by reading the packed weights (25-34 MB), and a CUDA-core
// GEMV spends several instructions per weight on the multiply-add alone. Here the weights are the
// A operand of mma.m16n8k16 (16 output columns n by 16 k) and x^T is the B operand (16 k by 8 rows
// m), so one instruction does 2048 multiply-adds with fp32 accumulation and a thread's remaining
// work per weight is the dequantisation: a lop3 per two nibbles (0x6400 magic number: the fp16
// 1024 + q), a subtract of 1024 and an fma with the group's scale and -zero * scale.
//
// The order of k inside one MMA is free as long as A and B use the same order. A thread's A slots
// (k = 2t, 2t+1 and 2t+8, 2t+9 of the fragment) take the nibble pairs (i, i+4) that one lop3 yields
// from a packed word, and its B slots take the activations of the same k, paired by byte_perm.
// Per step a warp covers one quantisation group (128 k) of 16 * TILES output columns: four lanes
// load one row's 64 bytes of that group (one 16-byte load each), so the group's scale and zero are
// one pair per row and step. The warps of a CTA split K (warp w takes groups w, w + warps, ...),
// each loads DEPTH steps before it computes them, and the CTA sums the warps' fragments in shared
// memory: no workspace, no second kernel.

#include <cuda_runtime.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace {

constexpr int kGroup = 128;  // k per quantisation group and per warp step

// (1024 + q_lo, 1024 + q_hi) as fp16: the nibbles at bits [0, 4) and [16, 20) of w under 0x6400.
__device__ __forceinline__ uint32_t nibble_pair(uint32_t w) {
  uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(w), "r"(0x000F000Fu), "r"(0x64006400u));
  return r;
}

// (q - zero) * scale for a pair of nibbles: exact q, then one fma with (scale, -zero * scale).
__device__ __forceinline__ uint32_t dequant(uint32_t w, __half2 scale, __half2 offset) {
  const uint32_t h = nibble_pair(w);
  const __half2 q = __hsub2(*reinterpret_cast<const __half2*>(&h), __float2half2_rn(1024.f));
  const __half2 v = __hfma2(q, scale, offset);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ void mma_16x8x16(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct Shape {
  int M, N, K;
};

// TILES: 16-column tiles of n per warp (they share the activation fragments);
// MT: 8-row tiles of m (1 for M <= 8, 2 for M <= 16); DEPTH: steps loaded before computing.
template <int TILES, int MT, int DEPTH>
__global__ void __launch_bounds__(256) w4a16_decode_mma_kernel(const __half* __restrict__ x,
                                                             const uint4* __restrict__ qweight,
                                                             const __half* __restrict__ scales,
                                                             const __half* __restrict__ zeros, __half* __restrict__ y,
                                                             const Shape s) {
  extern __shared__ float4 fragments[];  // [warps][TILES][MT][32 lanes]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int groups = s.K / kGroup;
  const int n0 = blockIdx.x * 16 * TILES, m0 = blockIdx.y * 8 * MT;

  // This thread's weight rows (g and g + 8 of each tile, clamped for the loads) and activation rows.
  long long wrow[TILES][2];
  int srow[TILES][2];
#pragma unroll
  for (int i = 0; i < TILES; ++i)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int n = min(n0 + 16 * i + 8 * half + g, s.N - 1);
      wrow[i][half] = static_cast<long long>(n) * (s.K / 32) + t;  // in uint4 (4 words, 32 k)
      srow[i][half] = n * groups;
    }
  const __half* xrow[MT];
  bool xvalid[MT];
#pragma unroll
  for (int j = 0; j < MT; ++j) {
    const int m = m0 + 8 * j + g;
    xvalid[j] = m < s.M;
    xrow[j] = x + static_cast<long long>(min(m, s.M - 1)) * s.K + 32 * t;
  }

  float acc[TILES][MT][4] = {};
  for (int base = warp; base < groups; base += warps * DEPTH) {
    uint4 wq[DEPTH][TILES][2];
    uint4 xq[DEPTH][MT][4];
    __half sc[DEPTH][TILES][2], ze[DEPTH][TILES][2];
    // Load DEPTH steps: 2 * TILES 16-byte weight loads and 4 * MT 16-byte activation loads each.
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
      const int grp = base + d * warps;
      if (grp < groups) {
#pragma unroll
        for (int i = 0; i < TILES; ++i)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            wq[d][i][half] = __ldcs(qweight + wrow[i][half] + grp * (kGroup / 32));  // read once: streamed
            sc[d][i][half] = scales[srow[i][half] + grp];
            ze[d][i][half] = zeros[srow[i][half] + grp];
          }
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
          for (int v = 0; v < 4; ++v)
            xq[d][j][v] = xvalid[j] ? __ldg(reinterpret_cast<const uint4*>(xrow[j] + grp * kGroup) + v)
                                    : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
      if (base + d * warps >= groups) break;
      // B fragments: activations paired (k, k + 4) to match the nibble pairs, per word and pair half.
      uint32_t b[MT][4][2][2];
#pragma unroll
      for (int j = 0; j < MT; ++j) {
        const uint32_t* xw = reinterpret_cast<const uint32_t*>(xq[d][j]);  // 16 words: k = 2i, 2i + 1
#pragma unroll
        for (int word = 0; word < 4; ++word)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            b[j][word][h][0] = __byte_perm(xw[4 * word + h], xw[4 * word + 2 + h], 0x5410);  // k = 8w+2h, +4
            b[j][word][h][1] = __byte_perm(xw[4 * word + h], xw[4 * word + 2 + h], 0x7632);  // k = 8w+2h+1, +5
          }
      }
#pragma unroll
      for (int i = 0; i < TILES; ++i) {
        __half2 scale[2], offset[2];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const float sf = __half2float(sc[d][i][half]);
          scale[half] = __half2half2(sc[d][i][half]);
          offset[half] = __float2half2_rn(-__half2float(ze[d][i][half]) * sf);
        }
        const uint32_t* lo = reinterpret_cast<const uint32_t*>(&wq[d][i][0]);  // row g
        const uint32_t* hi = reinterpret_cast<const uint32_t*>(&wq[d][i][1]);  // row g + 8
#pragma unroll
        for (int word = 0; word < 4; ++word)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int p0 = 8 * h, p1 = 8 * h + 4;  // shifts of nibble pairs 2h and 2h + 1
            const uint32_t a[4] = {dequant(lo[word] >> p0, scale[0], offset[0]),
                                   dequant(hi[word] >> p0, scale[1], offset[1]),
                                   dequant(lo[word] >> p1, scale[0], offset[0]),
                                   dequant(hi[word] >> p1, scale[1], offset[1])};
#pragma unroll
            for (int j = 0; j < MT; ++j) mma_16x8x16(acc[i][j], a, b[j][word][h][0], b[j][word][h][1]);
          }
      }
    }
  }

  // Sum the warps' fragments (each warp covered a share of K) and write y once.
#pragma unroll
  for (int i = 0; i < TILES; ++i)
#pragma unroll
    for (int j = 0; j < MT; ++j)
      fragments[((warp * TILES + i) * MT + j) * 32 + lane] = make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2],
                                                                          acc[i][j][3]);
  __syncthreads();
  const int outputs = TILES * MT * 32 * 4;
  const float* flat = reinterpret_cast<const float*>(fragments);
  for (int o = threadIdx.x; o < outputs; o += blockDim.x) {
    float sum = 0.f;
    for (int w = 0; w < warps; ++w) sum += flat[w * outputs + o];
    const int e = o & 3, l = (o >> 2) & 31, tile = o >> 7;  // tile = i * MT + j
    const int n = n0 + 16 * (tile / MT) + (l >> 2) + 8 * (e >> 1);
    const int m = m0 + 8 * (tile % MT) + 2 * (l & 3) + (e & 1);
    if (n < s.N && m < s.M) y[static_cast<long long>(m) * s.N + n] = __float2half_rn(sum);
  }
}

template <int TILES, int MT, int DEPTH>
int launch(const void* x, const void* qweight, const void* scales, const void* zeros, void* y, const Shape& s,
           int warps, cudaStream_t stream) {
  const dim3 grid((s.N + 16 * TILES - 1) / (16 * TILES), (s.M + 8 * MT - 1) / (8 * MT));
  const size_t smem = static_cast<size_t>(warps) * TILES * MT * 32 * sizeof(float4);
  w4a16_decode_mma_kernel<TILES, MT, DEPTH><<<grid, warps * 32, smem, stream>>>(
      static_cast<const __half*>(x), static_cast<const uint4*>(qweight), static_cast<const __half*>(scales),
      static_cast<const __half*>(zeros), static_cast<__half*>(y), s);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

// y [M, N] = x [M, K] @ dequant(qweight [N, K/8], scales, zeros [N, K/128])^T for M <= 16, with
// `tiles` 16-column tiles per warp (1, 2 or 4), `warps` warps per CTA splitting K (1-8) and
// `depth` steps loaded ahead (1, 2 or 4; the instantiated combinations are listed below). K must be a multiple of 128 and the pointers of x and
// qweight 16-byte aligned. Returns a cudaError_t.
extern "C" int w4a16_decode_mma_launch(const void* x, const void* qweight, const void* scales, const void* zeros,
                                       void* y, int M, int N, int K, int tiles, int warps, int depth,
                                       cudaStream_t stream) {
  const Shape s{M, N, K};
  if (M < 1 || M > 16 || N < 1 || K < kGroup || K % kGroup || warps < 1 || warps > 8)
    return static_cast<int>(cudaErrorInvalidValue);
  const int mt = M <= 8 ? 1 : 2;
#define W4A16_CASE(T, R, D) \
  if (tiles == T && mt == R && depth == D) return launch<T, R, D>(x, qweight, scales, zeros, y, s, warps, stream);
  W4A16_CASE(1, 1, 1) W4A16_CASE(1, 1, 2) W4A16_CASE(1, 1, 4)
  W4A16_CASE(2, 1, 1) W4A16_CASE(2, 1, 2) W4A16_CASE(2, 1, 4)
  W4A16_CASE(4, 1, 1) W4A16_CASE(4, 1, 2)
  W4A16_CASE(1, 2, 1) W4A16_CASE(1, 2, 2) W4A16_CASE(1, 2, 4)
  W4A16_CASE(2, 2, 1) W4A16_CASE(2, 2, 2)
  W4A16_CASE(4, 2, 1)
#undef W4A16_CASE
  return static_cast<int>(cudaErrorInvalidValue);
}
