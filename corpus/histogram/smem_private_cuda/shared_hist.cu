#include <cuda_runtime.h>
#include <algorithm>

#define THREADS 256
#define MAX_BINS 4096

template <typename scalar_t>
__global__ void shared_hist(const scalar_t* __restrict__ data, long long count, int nbins, int* __restrict__ result) {
    __shared__ int local[MAX_BINS];
    for (int k = threadIdx.x; k < nbins; k += blockDim.x) local[k] = 0;
    __syncthreads();
    long long step = (long long)blockDim.x * gridDim.x;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count; k += step) {
        int bin = static_cast<int>(data[k]);
        atomicAdd(&local[bin], 1);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < nbins; k += blockDim.x)
        atomicAdd(&result[k], local[k]);
}

static int grid_for(long long count) {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    long long need = (count + THREADS - 1) / THREADS;
    return (int)std::max<long long>(1, std::min<long long>(need, 8LL * sms));
}

extern "C" void shared_histogram_u8(const unsigned char* data, long long count, int nbins, int* result, cudaStream_t s) {
    shared_hist<unsigned char><<<grid_for(count), THREADS, 0, s>>>(data, count, nbins, result);
}

extern "C" void shared_histogram_i32(const int* data, long long count, int nbins, int* result, cudaStream_t s) {
    shared_hist<int><<<grid_for(count), THREADS, 0, s>>>(data, count, nbins, result);
}
