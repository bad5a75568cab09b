#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

template <int TM, int TN, int TK>
struct ConvTile {
    static constexpr int kLds = TK + 8;
    static constexpr int kWarps = (TM / 32) * (TN / 32);
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kLdc = TN + 4;
};

using Cfg = ConvTile<64, 64, 32>;

struct Geo {
    int n, h, w, c, k, m;
};

template <int TM, int TN, int TK>
__global__ void __launch_bounds__(ConvTile<TM, TN, TK>::kThreads)
conv3x3_wmma_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ wt,
                    __nv_bfloat16* __restrict__ y, Geo g) {
    using T = ConvTile<TM, TN, TK>;
    constexpr int LDS = T::kLds;
    __shared__ __align__(16) unsigned char smem_raw[(TM + TN) * LDS * 2 > TM * T::kLdc * 4 ? (TM + TN) * LDS * 2 : TM * T::kLdc * 4];
    __nv_bfloat16* As = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    __nv_bfloat16* Bs = As + TM * LDS;
    float* Cs = reinterpret_cast<float*>(smem_raw);

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int wm = warp / (TN / 32), wn = warp % (TN / 32);
    const int m0 = blockIdx.x * TM, n0 = blockIdx.y * TN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);

    constexpr int CHUNKS = TK / 8;
    const int cblocks = (g.c + TK - 1) / TK;
    for (int tap = 0; tap < 9; ++tap) {
        const int dr = tap / 3 - 1, ds = tap % 3 - 1;
        for (int cb = 0; cb < cblocks; ++cb) {
            const int c0 = cb * TK;
            for (int e = tid; e < TM * CHUNKS; e += T::kThreads) {
                const int row = e / CHUNKS, ch = c0 + (e % CHUNKS) * 8;
                const int pix = m0 + row;
                const int q = pix % g.w, p = (pix / g.w) % g.h, img = pix / (g.w * g.h);
                const int ih = p + dr, iw = q + ds;
                uint4 v = make_uint4(0u, 0u, 0u, 0u);
                if (pix < g.m && ih >= 0 && ih < g.h && iw >= 0 && iw < g.w && ch < g.c)
                    v = *reinterpret_cast<const uint4*>(x + ((size_t)(img * g.h + ih) * g.w + iw) * g.c + ch);
                *reinterpret_cast<uint4*>(As + row * LDS + (e % CHUNKS) * 8) = v;
            }
            for (int e = tid; e < TN * CHUNKS; e += T::kThreads) {
                const int col = e / CHUNKS, ch = c0 + (e % CHUNKS) * 8;
                const int ko = n0 + col;
                uint4 v = make_uint4(0u, 0u, 0u, 0u);
                if (ko < g.k && ch < g.c)
                    v = *reinterpret_cast<const uint4*>(wt + ((size_t)ko * 9 + tap) * g.c + ch);
                *reinterpret_cast<uint4*>(Bs + col * LDS + (e % CHUNKS) * 8) = v;
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < TK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb[2];
#pragma unroll
                for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], As + (wm * 32 + i * 16) * LDS + kk, LDS);
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], Bs + (wn * 32 + j * 16) * LDS + kk, LDS);
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
            __syncthreads();
        }
    }

#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(Cs + (wm * 32 + i * 16) * T::kLdc + wn * 32 + j * 16, acc[i][j], T::kLdc, wmma::mem_row_major);
    __syncthreads();
    for (int e = tid; e < TM * TN; e += T::kThreads) {
        const int row = e / TN, col = e % TN;
        if (m0 + row < g.m && n0 + col < g.k)
            y[(size_t)(m0 + row) * g.k + n0 + col] = __float2bfloat16_rn(Cs[row * T::kLdc + col]);
    }
}

extern "C" int conv3x3_wmma_launch(const void* x, const void* w, void* y, int N, int H, int W, int C, int K,
                                   cudaStream_t stream) {
    if (C % 8 != 0) return (int)cudaErrorInvalidValue;
    Geo g{N, H, W, C, K, N * H * W};
    dim3 grid((g.m + 63) / 64, (K + 63) / 64);
    conv3x3_wmma_kernel<64, 64, 32><<<grid, Cfg::kThreads, 0, stream>>>(
        (const __nv_bfloat16*)x, (const __nv_bfloat16*)w, (__nv_bfloat16*)y, g);
    return (int)cudaGetLastError();
}
