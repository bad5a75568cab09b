#include <cuda_runtime.h>
#include <stdint.h>

#define TILE_DIM 32

template <typename T>
__global__ void tile_transpose(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[TILE_DIM][TILE_DIM];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  if (y < rows && x < cols) tile[threadIdx.y][threadIdx.x] = in[(long long)y * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  if (y < cols && x < rows) out[(long long)y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

extern "C" int tile_transpose_launch(const void* in, void* out, int rows, int cols, int bytes, cudaStream_t stream) {
  dim3 threads(TILE_DIM, TILE_DIM);
  dim3 blocks((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  if (bytes == 4)
    tile_transpose<float><<<blocks, threads, 0, stream>>>((const float*)in, (float*)out, rows, cols);
  else
    tile_transpose<unsigned short><<<blocks, threads, 0, stream>>>((const unsigned short*)in, (unsigned short*)out, rows, cols);
  return (int)cudaGetLastError();
}
