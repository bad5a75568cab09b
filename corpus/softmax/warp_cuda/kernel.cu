// Warp-per-row CUDA softmax for short rows, block-per-row fallback for everything else.
//
// softmax_warp_row_kernel: one warp per row, four rows per block. Each lane loads up to VECS
// 16-byte vectors (8 bf16 / 4 fp32 each) with adjacent lanes on adjacent vectors, keeps them
// in registers, reduces max and sum with __shfl_xor_sync butterflies and writes the row back
// from registers: one read and one write. Used when the row is short (<= 256 vectors) and the
// rows are 16-byte aligned (N a multiple of the vector width).
//
// softmax_block_row_kernel: one block per row for long or ragged rows; scalar loads, warp
// shuffles then one shared-memory round across warps; it re-reads the row for each pass.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace {

constexpr int kWarpRowsPerBlock = 4;
constexpr int kMaxVecsPerLane = 8;    // 8 x 16 B = 128 B per lane: N <= 2048 bf16 / 1024 fp32
constexpr int kBlockThreads = 512;

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// 16 bytes <-> floats. bf16 is the high half of an fp32, so widening is a shift.
template <typename T> struct Pack;
template <> struct Pack<float> {
  static constexpr int kElems = 4;
  __device__ static void unpack(const uint4& r, float* out) {
    out[0] = __uint_as_float(r.x); out[1] = __uint_as_float(r.y);
    out[2] = __uint_as_float(r.z); out[3] = __uint_as_float(r.w);
  }
  __device__ static uint4 pack(const float* in) {
    return make_uint4(__float_as_uint(in[0]), __float_as_uint(in[1]), __float_as_uint(in[2]), __float_as_uint(in[3]));
  }
};
template <> struct Pack<__nv_bfloat16> {
  static constexpr int kElems = 8;
  __device__ static void unpack(const uint4& r, float* out) {
    const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __uint_as_float(w[i] << 16);            // element 2i: low half
      out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);  // element 2i+1: high half
    }
  }
  __device__ static unsigned pack2(float lo, float hi) {
    return static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
           (static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
  }
  __device__ static uint4 pack(const float* in) {
    return make_uint4(pack2(in[0], in[1]), pack2(in[2], in[3]), pack2(in[4], in[5]), pack2(in[6], in[7]));
  }
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store_float(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_float(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Block-wide all-reduce: shuffles inside each warp, one value per warp through shared memory,
// then every warp reduces the warp values with shuffles again.
template <bool kIsMax>
__device__ float block_allreduce(float v, float* warp_vals) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = kIsMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) warp_vals[warp] = v;
  __syncthreads();
  v = lane < warps ? warp_vals[lane] : (kIsMax ? -INFINITY : 0.f);
  v = kIsMax ? warp_max(v) : warp_sum(v);
  __syncthreads();  // warp_vals is reused by the next call
  return v;
}

}  // namespace

template <typename T, int VECS>
__global__ void __launch_bounds__(kWarpRowsPerBlock * 32)
softmax_warp_row_kernel(const T* __restrict__ x, T* __restrict__ y, int M, int N) {
  constexpr int E = Pack<T>::kElems;
  const int lane = threadIdx.x & 31;
  const long long row = static_cast<long long>(blockIdx.x) * kWarpRowsPerBlock + (threadIdx.x >> 5);
  if (row >= M) return;  // the whole warp leaves together, so the shuffles below stay full-warp
  const int nvec = N / E;
  const uint4* xv = reinterpret_cast<const uint4*>(x + row * N);
  uint4* yv = reinterpret_cast<uint4*>(y + row * N);

  float v[VECS][E];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int vi = lane + 32 * k;
    if (vi < nvec) {
      Pack<T>::unpack(xv[vi], v[k]);
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) v[k][e] = -INFINITY;
    }
#pragma unroll
    for (int e = 0; e < E; ++e) m = fmaxf(m, v[k][e]);
  }
  m = warp_max(m);

  float s = 0.f;
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      v[k][e] = __expf(v[k][e] - m);  // padding: __expf(-inf) = 0
      s += v[k][e];
    }
  }
  const float inv = 1.f / warp_sum(s);

#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int vi = lane + 32 * k;
    if (vi < nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) v[k][e] *= inv;
      yv[vi] = Pack<T>::pack(v[k]);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
softmax_block_row_kernel(const T* __restrict__ x, T* __restrict__ y, int N) {
  __shared__ float warp_vals[32];
  const T* row_x = x + static_cast<long long>(blockIdx.x) * N;
  T* row_y = y + static_cast<long long>(blockIdx.x) * N;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, to_float(row_x[j]));
  m = block_allreduce<true>(m, warp_vals);
  float s = 0.f;
  for (int j = threadIdx.x; j < N; j += blockDim.x) s += __expf(to_float(row_x[j]) - m);
  const float inv = 1.f / block_allreduce<false>(s, warp_vals);
  for (int j = threadIdx.x; j < N; j += blockDim.x) store_float(row_y + j, __expf(to_float(row_x[j]) - m) * inv);
}

namespace {

template <typename T, int VECS>
void launch_warp(const void* x, void* y, int M, int N, cudaStream_t stream) {
  const dim3 grid((M + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock), block(kWarpRowsPerBlock * 32);
  softmax_warp_row_kernel<T, VECS><<<grid, block, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), M, N);
}

template <typename T>
void launch(const void* x, void* y, int M, int N, cudaStream_t stream) {
  constexpr int E = Pack<T>::kElems;
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  const int vecs_per_lane = (N / E + 31) / 32;
  if (aligned && N % E == 0 && vecs_per_lane <= kMaxVecsPerLane) {
    if (vecs_per_lane <= 1) launch_warp<T, 1>(x, y, M, N, stream);
    else if (vecs_per_lane <= 2) launch_warp<T, 2>(x, y, M, N, stream);
    else if (vecs_per_lane <= 4) launch_warp<T, 4>(x, y, M, N, stream);
    else launch_warp<T, 8>(x, y, M, N, stream);
  } else {
    softmax_block_row_kernel<T><<<M, kBlockThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), N);
  }
}

}  // namespace

// dtype: 0 = float32, 1 = bfloat16. Returns a cudaError_t.
extern "C" int softmax_warp_launch(const void* x, void* y, int M, int N, int dtype, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;
  if (dtype == 0) launch<float>(x, y, M, N, stream);
  else if (dtype == 1) launch<__nv_bfloat16>(x, y, M, N, stream);
  else return cudaErrorInvalidValue;
  return cudaGetLastError();
}
