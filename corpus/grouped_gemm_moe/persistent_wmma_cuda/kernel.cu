#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace moe {

using bf16 = __nv_bfloat16;
using namespace nvcuda;

template <int TILE_M, int TILE_N, int TILE_K>
struct Shape {
    static constexpr int kM = TILE_M;
    static constexpr int kN = TILE_N;
    static constexpr int kK = TILE_K;
    static constexpr int kLd = TILE_K + 8;
    static constexpr int kThreads = 128;
};

using Cfg = Shape<64, 64, 32>;

__device__ __forceinline__ int ceil_div(int a, int b) { return (a + b - 1) / b; }

__global__ void __launch_bounds__(Cfg::kThreads)
grouped_wmma_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                    const int* __restrict__ sizes, int experts, int n, int k) {
    __shared__ __align__(32) bf16 sa[Cfg::kM][Cfg::kLd];
    __shared__ __align__(32) bf16 sb[Cfg::kN][Cfg::kLd];
    __shared__ __align__(32) float sc[Cfg::kM][Cfg::kN + 4];

    const int tiles_n = ceil_div(n, Cfg::kN);
    int total = 0;
    for (int e = 0; e < experts; ++e) total += ceil_div(sizes[e], Cfg::kM) * tiles_n;

    const int warp = threadIdx.x >> 5;
    const int wr = warp >> 1, wc = warp & 1;

    int grp = 0, tile_base = 0, row_base = 0;
    int cnt = experts > 0 ? sizes[0] : 0;
    int span = ceil_div(cnt, Cfg::kM) * tiles_n;

    for (int tile = blockIdx.x; tile < total; tile += gridDim.x) {
        while (tile >= tile_base + span) {
            tile_base += span;
            row_base += cnt;
            ++grp;
            cnt = sizes[grp];
            span = ceil_div(cnt, Cfg::kM) * tiles_n;
        }
        const int local = tile - tile_base;
        const int m_tiles = ceil_div(cnt, Cfg::kM);
        const int tm = local % m_tiles, tn = local / m_tiles;
        const int row0 = row_base + tm * Cfg::kM;
        const int rows_left = cnt - tm * Cfg::kM;
        const int col0 = tn * Cfg::kN;
        const bf16* wg = w + (size_t)grp * n * k;

        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

        for (int k0 = 0; k0 < k; k0 += Cfg::kK) {
            for (int idx = threadIdx.x; idx < Cfg::kM * Cfg::kK; idx += Cfg::kThreads) {
                int r = idx / Cfg::kK, q = idx % Cfg::kK;
                bool ok = r < rows_left && k0 + q < k;
                sa[r][q] = ok ? x[(size_t)(row0 + r) * k + k0 + q] : __float2bfloat16(0.0f);
                bool okb = col0 + r < n && k0 + q < k;
                sb[r][q] = okb ? wg[(size_t)(col0 + r) * k + k0 + q] : __float2bfloat16(0.0f);
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < Cfg::kK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> fb[2];
#pragma unroll
                for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &sa[wr * 32 + i * 16][kk], Cfg::kLd);
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &sb[wc * 32 + j * 16][kk], Cfg::kLd);
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j)
                wmma::store_matrix_sync(&sc[wr * 32 + i * 16][wc * 32 + j * 16], acc[i][j], Cfg::kN + 4, wmma::mem_row_major);
        __syncthreads();
        for (int idx = threadIdx.x; idx < Cfg::kM * Cfg::kN; idx += Cfg::kThreads) {
            int r = idx / Cfg::kN, c = idx % Cfg::kN;
            if (r < rows_left && col0 + c < n) y[(size_t)(row0 + r) * n + col0 + c] = __float2bfloat16(sc[r][c]);
        }
        __syncthreads();
    }
}

}  // namespace moe

extern "C" int grouped_wmma_launch(const void* x, const void* w, void* y, const int* sizes, int experts, int n,
                                   int k, cudaStream_t stream) {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    moe::grouped_wmma_kernel<<<sms * 4, moe::Cfg::kThreads, 0, stream>>>(
        static_cast<const moe::bf16*>(x), static_cast<const moe::bf16*>(w), static_cast<moe::bf16*>(y), sizes, experts, n, k);
    return (int)cudaGetLastError();
}
