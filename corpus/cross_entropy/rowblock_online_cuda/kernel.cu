#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#define THREADS 256


__global__ void xent_row(const __nv_bfloat16* __restrict__ logits, const int64_t* __restrict__ target,
                         float* __restrict__ loss, int cols, float inv_rows) {
  __shared__ float warp_m[THREADS / 32];
  __shared__ float warp_s[THREADS / 32];
  __shared__ float tgt_val;
  const int row = blockIdx.x;
  const __nv_bfloat16* x = logits + (size_t)row * cols;
  const int t = (int)target[row];

  float m = -FLT_MAX, s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += THREADS) {
    const float v = __bfloat162float(x[c]);
    if (c == t) tgt_val = v;
    const float m_new = fmaxf(m, v);
    s = s * expf(m - m_new) + expf(v - m_new);
    m = m_new;
  }
  for (int off = 16; off > 0; off >>= 1) {
    const float m_o = __shfl_down_sync(0xffffffff, m, off);
    const float s_o = __shfl_down_sync(0xffffffff, s, off);
    const float m_new = fmaxf(m, m_o);
    s = s * expf(m - m_new) + s_o * expf(m_o - m_new);
    m = m_new;
  }
  if ((threadIdx.x & 31) == 0) {
    warp_m[threadIdx.x / 32] = m;
    warp_s[threadIdx.x / 32] = s;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < THREADS / 32 ? warp_m[threadIdx.x] : -FLT_MAX;
    s = threadIdx.x < THREADS / 32 ? warp_s[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) {
      const float m_o = __shfl_down_sync(0xffffffff, m, off);
      const float s_o = __shfl_down_sync(0xffffffff, s, off);
      const float m_new = fmaxf(m, m_o);
      s = s * expf(m - m_new) + s_o * expf(m_o - m_new);
      m = m_new;
    }
    if (threadIdx.x == 0) atomicAdd(loss, (m + logf(s) - tgt_val) * inv_rows);
  }
}

extern "C" int xent_forward(const void* logits, const int64_t* target, float* loss, int rows, int cols,
                            cudaStream_t stream) {
  cudaMemsetAsync(loss, 0, sizeof(float), stream);
  xent_row<<<rows, THREADS, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits), target, loss, cols,
                                         1.0f / (float)rows);
  return (int)cudaGetLastError();
}
