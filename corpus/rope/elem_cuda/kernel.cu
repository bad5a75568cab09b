#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void rope_pairs(__nv_bfloat16* x, const int64_t* pos, const float* cos_tab, const float* sin_tab,
                           int64_t tokens, int heads, int half) {
  int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t total = tokens * heads * half;
  if (idx >= total) return;
  int i = (int)(idx % half);
  int64_t th = idx / half;           // token * heads + head
  int64_t t = th / heads;
  int64_t p = pos[t];
  float c = cos_tab[p * half + i];
  float s = sin_tab[p * half + i];
  __nv_bfloat16* row = x + th * 2 * half;
  float a = __bfloat162float(row[i]);
  float b = __bfloat162float(row[i + half]);
  row[i] = __float2bfloat16(a * c - b * s);
  row[i + half] = __float2bfloat16(b * c + a * s);
}

extern "C" int rope_pairs_launch(void* x, const void* pos, const void* cos_tab, const void* sin_tab,
                                 int64_t tokens, int heads, int half, cudaStream_t stream) {
  int64_t total = tokens * heads * half;
  if (total == 0) return 0;
  int threads = 256;
  int64_t blocks = (total + threads - 1) / threads;
  rope_pairs<<<(unsigned)blocks, threads, 0, stream>>>((__nv_bfloat16*)x, (const int64_t*)pos, (const float*)cos_tab,
                                                      (const float*)sin_tab, tokens, heads, half);
  return (int)cudaGetLastError();
}
