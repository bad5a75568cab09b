#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void silu_mul_kernel(const __nv_bfloat16* in, __nv_bfloat16* out, long long total, int d) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total) return;
  long long row = i / d;
  int col = (int)(i - row * d);
  const __nv_bfloat16* src = in + row * 2 * d;
  float g = __bfloat162float(src[col]);
  float u = __bfloat162float(src[d + col]);
  float s = g / (1.0f + expf(-g));
  out[i] = __float2bfloat16(s * u);
}

extern "C" int silu_mul_launch(const void* in, void* out, long long rows, int d, cudaStream_t stream) {
  long long total = rows * d;
  if (total == 0) return 0;
  const int threads = 256;
  const long long blocks = (total + threads - 1) / threads;
  silu_mul_kernel<<<(unsigned)blocks, threads, 0, stream>>>((const __nv_bfloat16*)in, (__nv_bfloat16*)out, total, d);
  return (int)cudaGetLastError();
}
