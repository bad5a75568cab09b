#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kScaleK = 128;
constexpr int kRow = kScaleK + 16;  // bytes per staged row
constexpr int kThreads = 128;

__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int ROWS>
__device__ __forceinline__ void stage(uint8_t (*dst)[kRow], const uint8_t* src, int row0, int rows, int K, int k0) {
    // ROWS x 128 bytes = ROWS * 8 chunks of 16 bytes
#pragma unroll
    for (int c = threadIdx.x; c < ROWS * 8; c += kThreads) {
        int r = c >> 3, q = c & 7;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (row0 + r < rows) v = *reinterpret_cast<const uint4*>(src + (size_t)(row0 + r) * K + k0 + q * 16);
        *reinterpret_cast<uint4*>(&dst[r][q * 16]) = v;
    }
}

}  // namespace

__global__ void __launch_bounds__(kThreads) blockscaled_mma_kernel(
        const uint8_t* __restrict__ A, const float* __restrict__ SA, const uint8_t* __restrict__ B,
        const float* __restrict__ SB, __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) uint8_t As[kTileM][kRow];
    __shared__ __align__(16) uint8_t Bs[kTileN][kRow];

    const int m0 = blockIdx.y * kTileM, n0 = blockIdx.x * kTileN;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const int g = lane >> 2, t = lane & 3;
    const int KB = K / kScaleK;

    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    for (int kb = 0; kb < KB; ++kb) {
        stage<kTileM>(As, A, m0, M, K, kb * kScaleK);
        stage<kTileN>(Bs, B, n0, N, K, kb * kScaleK);
        __syncthreads();

        float part[2][4][4];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) part[i][j][r] = 0.f;

#pragma unroll
        for (int ks = 0; ks < kScaleK; ks += 32) {
            uint32_t af[2][4], bf[4][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int r = wm + i * 16 + g;
                af[i][0] = *reinterpret_cast<const uint32_t*>(&As[r][ks + t * 4]);
                af[i][1] = *reinterpret_cast<const uint32_t*>(&As[r + 8][ks + t * 4]);
                af[i][2] = *reinterpret_cast<const uint32_t*>(&As[r][ks + 16 + t * 4]);
                af[i][3] = *reinterpret_cast<const uint32_t*>(&As[r + 8][ks + 16 + t * 4]);
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = wn + j * 8 + g;
                bf[j][0] = *reinterpret_cast<const uint32_t*>(&Bs[c][ks + t * 4]);
                bf[j][1] = *reinterpret_cast<const uint32_t*>(&Bs[c][ks + 16 + t * 4]);
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) mma_m16n8k32_e4m3(part[i][j], af[i], bf[j]);
        }

        const float sb = SB[(size_t)(n0 / kScaleK) * KB + kb];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int r_lo = m0 + wm + i * 16 + g, r_hi = r_lo + 8;
            const float s_lo = r_lo < M ? SA[(size_t)kb * M + r_lo] * sb : 0.f;
            const float s_hi = r_hi < M ? SA[(size_t)kb * M + r_hi] * sb : 0.f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                acc[i][j][0] += part[i][j][0] * s_lo;
                acc[i][j][1] += part[i][j][1] * s_lo;
                acc[i][j][2] += part[i][j][2] * s_hi;
                acc[i][j][3] += part[i][j][3] * s_hi;
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int row = m0 + wm + i * 16 + g, col = n0 + wn + j * 8 + t * 2;
            if (col < N) {
                if (row < M)
                    *reinterpret_cast<__nv_bfloat162*>(&C[(size_t)row * N + col]) = __floats2bfloat162_rn(acc[i][j][0], acc[i][j][1]);
                if (row + 8 < M)
                    *reinterpret_cast<__nv_bfloat162*>(&C[(size_t)(row + 8) * N + col]) = __floats2bfloat162_rn(acc[i][j][2], acc[i][j][3]);
            }
        }
}

extern "C" int blockscaled_mma_launch(const void* a, const void* sa, const void* b, const void* sb, void* c,
                                      int M, int N, int K, cudaStream_t stream) {
    dim3 grid((N + kTileN - 1) / kTileN, (M + kTileM - 1) / kTileM);
    blockscaled_mma_kernel<<<grid, kThreads, 0, stream>>>((const uint8_t*)a, (const float*)sa, (const uint8_t*)b,
                                                          (const float*)sb, (__nv_bfloat16*)c, M, N, K);
    return (int)cudaGetLastError();
}
