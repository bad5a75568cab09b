#include <cuda_runtime.h>
#include <cstdint>

namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

template <typename Word>
__device__ __forceinline__ Word load_stream(const Word* p) { return __ldcs(p); }

template <typename Word>
__device__ __forceinline__ void store_stream(Word* p, Word v) { __stcs(p, v); }

template <typename Word, int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS) transpose_tiled(const Word* __restrict__ src, Word* __restrict__ dst,
                                                                int64_t m, int64_t n) {
  __shared__ Word buf[TILE][TILE + 1];
  const int64_t row0 = (int64_t)blockIdx.y * TILE;
  const int64_t col0 = (int64_t)blockIdx.x * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;

#pragma unroll
  for (int k = 0; k < TILE; k += ROWS) {
    const int64_t r = row0 + ty + k, c = col0 + tx;
    if (r < m && c < n) buf[ty + k][tx] = load_stream(src + r * n + c);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < TILE; k += ROWS) {
    const int64_t r = col0 + ty + k, c = row0 + tx;
    if (r < n && c < m) store_stream(dst + r * m + c, buf[tx][ty + k]);
  }
}

template <typename Word>
int launch(const void* src, void* dst, int64_t m, int64_t n, cudaStream_t stream) {
  const dim3 block(kTile, kBlockRows);
  const dim3 grid((unsigned)((n + kTile - 1) / kTile), (unsigned)((m + kTile - 1) / kTile));
  transpose_tiled<Word, kTile, kBlockRows><<<grid, block, 0, stream>>>(static_cast<const Word*>(src), static_cast<Word*>(dst), m, n);
  return (int)cudaGetLastError();
}

}  // namespace

extern "C" int transpose_padded(const void* src, void* dst, int64_t m, int64_t n, int elem_bytes, cudaStream_t stream) {
  if (m == 0 || n == 0) return 0;
  return elem_bytes == 4 ? launch<unsigned int>(src, dst, m, n, stream) : launch<unsigned short>(src, dst, m, n, stream);
}
