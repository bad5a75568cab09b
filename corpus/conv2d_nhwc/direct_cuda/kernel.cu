#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void conv3x3_direct(const __nv_bfloat16* __restrict__ in, const __nv_bfloat16* __restrict__ filt,
                               __nv_bfloat16* __restrict__ out, int n_img, int height, int width, int cin, int cout) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)n_img * height * width * cout;
    if (idx >= total) return;
    int ko = (int)(idx % cout);
    long long pix = idx / cout;
    int ox = (int)(pix % width);
    int oy = (int)((pix / width) % height);
    int b = (int)(pix / ((long long)width * height));
    float sum = 0.f;
    for (int r = 0; r < 3; ++r) {
        int iy = oy + r - 1;
        for (int s = 0; s < 3; ++s) {
            int ix = ox + s - 1;
            if (iy >= 0 && iy < height && ix >= 0 && ix < width) {
                const __nv_bfloat16* src = in + (((long long)b * height + iy) * width + ix) * cin;
                const __nv_bfloat16* wt = filt + ((ko * 3 + r) * 3 + s) * (long long)cin;
                for (int c = 0; c < cin; ++c) {
                    sum += __bfloat162float(src[c]) * __bfloat162float(wt[c]);
                }
            }
        }
    }
    out[idx] = __float2bfloat16_rn(sum);
}

extern "C" int conv3x3_direct_launch(const void* x, const void* w, void* y, int N, int H, int W, int C, int K,
                                     cudaStream_t stream) {
    long long total = (long long)N * H * W * K;
    int threads = 256;
    unsigned blocks = (unsigned)((total + threads - 1) / threads);
    conv3x3_direct<<<blocks, threads, 0, stream>>>((const __nv_bfloat16*)x, (const __nv_bfloat16*)w, (__nv_bfloat16*)y,
                                                   N, H, W, C, K);
    return (int)cudaGetLastError();
}
