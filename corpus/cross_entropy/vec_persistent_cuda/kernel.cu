#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 512;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kFloor = -1.0e30f;

// (hi, acc): running max and sum of exp2(v - hi), in the log2 domain
__device__ __forceinline__ void push(float& hi, float& acc, float y) {
  const float top = fmaxf(hi, y);
  acc = acc * exp2f(hi - top) + exp2f(y - top);
  hi = top;
}

__device__ __forceinline__ void warp_merge(float& hi, float& acc) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const float hi_o = __shfl_xor_sync(0xffffffffu, hi, d);
    const float acc_o = __shfl_xor_sync(0xffffffffu, acc, d);
    const float top = fmaxf(hi, hi_o);
    acc = acc * exp2f(hi - top) + acc_o * exp2f(hi_o - top);
    hi = top;
  }
}

// block-wide merge; returns the row's natural-log LSE in thread 0
__device__ float block_lse(float hi, float acc) {
  __shared__ float part_hi[kThreads / 32];
  __shared__ float part_acc[kThreads / 32];
  warp_merge(hi, acc);
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) {
    part_hi[wid] = hi;
    part_acc[wid] = acc;
  }
  __syncthreads();
  if (wid == 0) {
    hi = lane < kThreads / 32 ? part_hi[lane] : kFloor;
    acc = lane < kThreads / 32 ? part_acc[lane] : 0.f;
    warp_merge(hi, acc);
  }
  return (hi + __log2f(acc)) * kLn2;
}

// rows of V = 8k bf16, 16-byte aligned: one uint4 (8 logits) per thread per step, rows grid-strided
__global__ void __launch_bounds__(kThreads) xent_vec8(const uint4* __restrict__ logits, const int64_t* __restrict__ target,
                                                      float* __restrict__ loss, int rows, int chunks_per_row,
                                                      float inv_rows) {
  __shared__ float picked;
  float block_total = 0.f;
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint4* x = logits + (size_t)row * chunks_per_row;
    const int t = (int)__ldg(&target[row]);
    float hi = kFloor, acc = 0.f;
    for (int c = threadIdx.x; c < chunks_per_row; c += kThreads) {
      const uint4 raw = __ldcs(&x[c]);
      const __nv_bfloat162* pair = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pair[k]);
        if (c * 8 + 2 * k == t) picked = f.x;
        if (c * 8 + 2 * k + 1 == t) picked = f.y;
        push(hi, acc, f.x * kLog2e);
        push(hi, acc, f.y * kLog2e);
      }
    }
    const float lse = block_lse(hi, acc);
    __syncthreads();
    if (threadIdx.x == 0) block_total += lse - picked;
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(loss, block_total * inv_rows);
}

// any V: one logit per thread per step (the ragged case)
__global__ void __launch_bounds__(kThreads) xent_any(const __nv_bfloat16* __restrict__ logits,
                                                     const int64_t* __restrict__ target, float* __restrict__ loss,
                                                     int rows, int cols, float inv_rows) {
  __shared__ float picked;
  float block_total = 0.f;
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const __nv_bfloat16* x = logits + (size_t)row * cols;
    const int t = (int)target[row];
    float hi = kFloor, acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
      const float v = __bfloat162float(x[c]);
      if (c == t) picked = v;
      push(hi, acc, v * kLog2e);
    }
    const float lse = block_lse(hi, acc);
    __syncthreads();
    if (threadIdx.x == 0) block_total += lse - picked;
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(loss, block_total * inv_rows);
}

}  // namespace

extern "C" int xent_mean(const void* logits, const int64_t* target, float* loss, int rows, int cols,
                         cudaStream_t stream) {
  int dev = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaMemsetAsync(loss, 0, sizeof(float), stream);
  const bool vec = cols % 8 == 0 && (uintptr_t)logits % 16 == 0;
  if (vec)
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, xent_vec8, kThreads, 0);
  else
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, xent_any, kThreads, 0);
  int grid = sms * (per_sm > 0 ? per_sm : 1);
  if (grid > rows) grid = rows;
  if (vec)
    xent_vec8<<<grid, kThreads, 0, stream>>>(static_cast<const uint4*>(logits), target, loss, rows, cols / 8,
                                             1.0f / (float)rows);
  else
    xent_any<<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits), target, loss, rows, cols,
                                            1.0f / (float)rows);
  return (int)cudaGetLastError();
}
