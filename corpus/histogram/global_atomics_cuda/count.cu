#include <cuda_runtime.h>
#include <stdint.h>

template <typename T>
__global__ void count_each(const T* in, int* hist, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[(int)in[i]], 1);
}

extern "C" void count_u8(const uint8_t* in, int* hist, long n) {
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    count_each<uint8_t><<<blocks, threads>>>(in, hist, n);
}

extern "C" void count_i32(const int* in, int* hist, long n) {
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    count_each<int><<<blocks, threads>>>(in, hist, n);
}
