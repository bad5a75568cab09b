#include <cuda_runtime.h>
#include <stdint.h>

template <typename T>
__global__ void transpose_naive(const T* src, T* dst, int m, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n) {
    dst[(size_t)col * m + row] = src[(size_t)row * n + col];
  }
}

extern "C" int transpose_naive_launch(const void* src, void* dst, int m, int n, int elem_bytes, cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((n + block.x - 1) / block.x, (m + block.y - 1) / block.y);
  if (elem_bytes == 4) {
    transpose_naive<uint32_t><<<grid, block, 0, stream>>>((const uint32_t*)src, (uint32_t*)dst, m, n);
  } else {
    transpose_naive<uint16_t><<<grid, block, 0, stream>>>((const uint16_t*)src, (uint16_t*)dst, m, n);
  }
  return (int)cudaGetLastError();
}
