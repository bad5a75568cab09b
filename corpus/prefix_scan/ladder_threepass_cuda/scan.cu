#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void hs_block_scan(const scalar_t* x, scalar_t* y, scalar_t* block_sum, int n) {
    extern __shared__ unsigned char raw[];
    scalar_t* buf = reinterpret_cast<scalar_t*>(raw);
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int src = 0;
    buf[t] = i < n ? x[i] : scalar_t(0);
    __syncthreads();
    for (int step = 1; step < blockDim.x; step *= 2) {
        int dst = 1 - src;
        scalar_t v = buf[src * blockDim.x + t];
        if (t >= step) v += buf[src * blockDim.x + t - step];
        buf[dst * blockDim.x + t] = v;
        __syncthreads();
        src = dst;
    }
    if (i < n) y[i] = buf[src * blockDim.x + t];
    if (t == blockDim.x - 1) block_sum[blockIdx.x] = buf[src * blockDim.x + t];
}

template <typename scalar_t>
__global__ void serial_offsets(scalar_t* block_sum, int count) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        scalar_t run = 0;
        for (int b = 0; b < count; ++b) {
            scalar_t s = block_sum[b];
            block_sum[b] = run;
            run += s;
        }
    }
}

template <typename scalar_t>
__global__ void add_offsets(scalar_t* y, const scalar_t* block_sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += block_sum[blockIdx.x];
}

template <typename scalar_t>
static void three_pass(const scalar_t* x, scalar_t* y, scalar_t* sums, int n) {
    const int threads = 1024;
    int blocks = (n + threads - 1) / threads;
    hs_block_scan<scalar_t><<<blocks, threads, 2 * threads * sizeof(scalar_t)>>>(x, y, sums, n);
    serial_offsets<scalar_t><<<1, 32>>>(sums, blocks);
    add_offsets<scalar_t><<<blocks, threads>>>(y, sums, n);
}

extern "C" void scan_int(const int* x, int* y, int* sums, int n) { three_pass<int>(x, y, sums, n); }
extern "C" void scan_float(const float* x, float* y, float* sums, int n) { three_pass<float>(x, y, sums, n); }
