// Online-softmax CUDA kernel: one block per row.
//
// Pass 1: each thread walks its share of the row (16-byte vectors where the row is aligned and
// N is a multiple of the vector width, scalars otherwise) keeping a running max m and a running
// sum s that is rescaled by exp(m_old - m_new) whenever m grows. The (m, s) pairs are merged
// with warp shuffles, then across warps through shared memory. Pass 2 re-reads the row and
// writes exp(x - m) / s. Two reads and one write per element instead of three reads.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 512;

// 16 bytes <-> floats (bf16 is the high half of an fp32).
template <typename T> struct Vec16;
template <> struct Vec16<float> {
  static constexpr int kElems = 4;
  __device__ static void unpack(const uint4& r, float* f) {
    f[0] = __uint_as_float(r.x); f[1] = __uint_as_float(r.y); f[2] = __uint_as_float(r.z); f[3] = __uint_as_float(r.w);
  }
  __device__ static uint4 pack(const float* f) {
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
  }
};
template <> struct Vec16<__nv_bfloat16> {
  static constexpr int kElems = 8;
  __device__ static void unpack(const uint4& r, float* f) {
    const unsigned w[4] = {r.x, r.y, r.z, r.w};
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
  __device__ static unsigned pack2(float lo, float hi) {
    return static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
           (static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
  }
  __device__ static uint4 pack(const float* f) {
    return make_uint4(pack2(f[0], f[1]), pack2(f[2], f[3]), pack2(f[4], f[5]), pack2(f[6], f[7]));
  }
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store_float(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_float(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Fold one element into a running (max, sum).
__device__ __forceinline__ void online_add(float& m, float& s, float x) {
  if (x > m) {
    s = s * expf(m - x) + 1.f;  // first element: s = 0 * exp(-inf) + 1
    m = x;
  } else {
    s += expf(x - m);
  }
}

// Merge two running states; a state that has seen nothing is (-inf, 0).
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;  // both empty
  s = (m == -INFINITY ? 0.f : s * expf(m - mn)) + (m2 == -INFINITY ? 0.f : s2 * expf(m2 - mn));
  m = mn;
}

__device__ __forceinline__ void warp_merge(float& m, float& s) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    online_merge(m, s, m2, s2);
  }
}

}  // namespace

template <typename T, bool kVec>
__global__ void __launch_bounds__(kThreads) softmax_online_block_kernel(const T* __restrict__ x, T* __restrict__ y, int N) {
  constexpr int E = Vec16<T>::kElems;
  __shared__ float warp_m[32], warp_s[32];
  const T* row_x = x + static_cast<long long>(blockIdx.x) * N;
  T* row_y = y + static_cast<long long>(blockIdx.x) * N;

  // Pass 1: running (max, sum) per thread, one read of the row.
  float m = -INFINITY, s = 0.f;
  if (kVec) {
    const uint4* xv = reinterpret_cast<const uint4*>(row_x);
    for (int i = threadIdx.x; i < N / E; i += blockDim.x) {
      float f[E];
      Vec16<T>::unpack(xv[i], f);
      for (int e = 0; e < E; ++e) online_add(m, s, f[e]);
    }
  } else {
    for (int j = threadIdx.x; j < N; j += blockDim.x) online_add(m, s, to_float(row_x[j]));
  }

  // Merge: shuffles within each warp, then the warp states through shared memory.
  warp_merge(m, s);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_s[warp] = s;
  }
  __syncthreads();
  m = lane < (blockDim.x >> 5) ? warp_m[lane] : -INFINITY;
  s = lane < (blockDim.x >> 5) ? warp_s[lane] : 0.f;
  warp_merge(m, s);  // every warp ends with the row's (max, sum)
  const float inv = 1.f / s;

  // Pass 2: normalize (second read of the row).
  if (kVec) {
    const uint4* xv = reinterpret_cast<const uint4*>(row_x);
    uint4* yv = reinterpret_cast<uint4*>(row_y);
    for (int i = threadIdx.x; i < N / E; i += blockDim.x) {
      float f[E];
      Vec16<T>::unpack(xv[i], f);
      for (int e = 0; e < E; ++e) f[e] = expf(f[e] - m) * inv;
      yv[i] = Vec16<T>::pack(f);
    }
  } else {
    for (int j = threadIdx.x; j < N; j += blockDim.x) store_float(row_y + j, expf(to_float(row_x[j]) - m) * inv);
  }
}

// Left over from an experiment with a warp per row and read-only-cache loads (fp32 only);
// never launched.
__global__ void softmax_online_warp_ldg_kernel(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (row >= M) return;
  const int lane = threadIdx.x & 31;
  const float* row_x = x + row * N;
  float m = -INFINITY, s = 0.f;
#pragma unroll 4
  for (int j = lane; j < N; j += 32) online_add(m, s, __ldg(row_x + j));
  warp_merge(m, s);
  const float inv = 1.f / s;
  for (int j = lane; j < N; j += 32) y[row * N + j] = __expf(__ldg(row_x + j) - m) * inv;
}

namespace {

template <typename T>
void launch(const void* x, void* y, int M, int N, cudaStream_t stream) {
  const bool vec = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0 &&
                   N % Vec16<T>::kElems == 0;
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (vec) softmax_online_block_kernel<T, true><<<M, kThreads, 0, stream>>>(xt, yt, N);
  else softmax_online_block_kernel<T, false><<<M, kThreads, 0, stream>>>(xt, yt, N);
}

}  // namespace

// dtype: 0 = float32, 1 = bfloat16. Returns a cudaError_t.
extern "C" int softmax_online_launch(const void* x, void* y, int M, int N, int dtype, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;
  if (dtype == 0) launch<float>(x, y, M, N, stream);
  else if (dtype == 1) launch<__nv_bfloat16>(x, y, M, N, stream);
  else return cudaErrorInvalidValue;
  return cudaGetLastError();
}
