// Register-tiled CUDA GEMM: C[M,N] = A[M,K] @ B[N,K]^T on CUDA cores, fp32 accumulation.
//
// A 256-thread block owns a 128x128 tile of C and walks K in steps of 32:
//   * global -> shared: each thread moves 16-byte (8 x bf16) chunks of A and B rows with uint4
//     loads; adjacent threads take adjacent chunks of a row, so a warp reads 8 rows x 64 bytes;
//   * shared layout: tiles are kept K-contiguous as 32-bit words, each holding a (k, k+1) pair,
//     with one padding word per row (17 words, not 16). Thread (tx, ty) reads B rows tx + 16j:
//     without the pad those 16 rows would start in only 2 banks (8-way conflict), with it they
//     fall in 16 different banks;
//   * registers: each thread accumulates an 8x8 micro-tile (rows ty + 16i, columns tx + 16j) with
//     outer-product FMAs: per K pair it loads 8 A and 8 B words and performs 128 FMAs.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kTM = 8, kTN = 8;                // micro-tile per thread
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 16 x 16 = 256
constexpr int kWordsPerRow = kBK / 2;          // (k, k+1) pairs per tile row
constexpr int kPaddedWords = kWordsPerRow + 1; // +1 word against bank conflicts
constexpr int kChunksPerRow = kBK / 8;         // 16-byte chunks per tile row

template <typename T> struct Pair;
template <> struct Pair<__nv_bfloat16> {
    using type = __nv_bfloat162;
    static __device__ __forceinline__ float2 to_float2(uint32_t w) {
        return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
    }
};
template <> struct Pair<__half> {
    using type = __half2;
    static __device__ __forceinline__ float2 to_float2(uint32_t w) {
        return __half22float2(*reinterpret_cast<const __half2*>(&w));
    }
};

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// Pack two 16-bit values (low = first) into one 32-bit word.
template <typename T>
__device__ __forceinline__ uint32_t pack2(T lo, T hi) {
    return static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&lo)) |
           (static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&hi)) << 16);
}

// Stage rows [row0, row0 + 128) x K [k0, k0 + 32) of a K-contiguous matrix into tile (zero-filled
// outside [0, rows) x [0, K)). vec_ok: K % 8 == 0 and 16-byte aligned base, so uint4 loads are legal.
template <typename T>
__device__ __forceinline__ void load_tile(uint32_t (*tile)[kPaddedWords], const T* __restrict__ src,
                                          int row0, int rows, int k0, int K, bool vec_ok) {
#pragma unroll
    for (int it = 0; it < (kBM * kChunksPerRow) / kThreads; ++it) {
        const int idx = threadIdx.x + it * kThreads;
        const int r = idx / kChunksPerRow;
        const int chunk = idx % kChunksPerRow;
        const int grow = row0 + r;
        const int gk = k0 + chunk * 8;
        uint32_t words[4];
        if (vec_ok && grow < rows && gk + 8 <= K) {
            const uint4 v = *reinterpret_cast<const uint4*>(src + static_cast<size_t>(grow) * K + gk);
            words[0] = v.x; words[1] = v.y; words[2] = v.z; words[3] = v.w;
        } else {
            const T zero = from_float<T>(0.0f);
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const int ka = gk + 2 * w, kb = ka + 1;
                const T lo = (grow < rows && ka < K) ? src[static_cast<size_t>(grow) * K + ka] : zero;
                const T hi = (grow < rows && kb < K) ? src[static_cast<size_t>(grow) * K + kb] : zero;
                words[w] = pack2(lo, hi);
            }
        }
#pragma unroll
        for (int w = 0; w < 4; ++w) tile[r][chunk * 4 + w] = words[w];
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 2)
gemm_regtile_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                    int M, int N, int K, bool vec_ok) {
    __shared__ uint32_t As[kBM][kPaddedWords];  // As[m][k/2]
    __shared__ uint32_t Bs[kBN][kPaddedWords];  // Bs[n][k/2]

    const int tx = threadIdx.x % (kBN / kTN);  // 0..15 -> columns tx + 16j
    const int ty = threadIdx.x / (kBN / kTN);  // 0..15 -> rows    ty + 16i
    const int m0 = blockIdx.y * kBM;
    const int n0 = blockIdx.x * kBN;

    float acc[kTM][kTN];
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += kBK) {
        load_tile<T>(As, A, m0, M, k0, K, vec_ok);
        load_tile<T>(Bs, B, n0, N, k0, K, vec_ok);
        __syncthreads();

#pragma unroll
        for (int kp = 0; kp < kWordsPerRow; ++kp) {
            float2 a[kTM], b[kTN];
#pragma unroll
            for (int i = 0; i < kTM; ++i) a[i] = Pair<T>::to_float2(As[ty + 16 * i][kp]);
#pragma unroll
            for (int j = 0; j < kTN; ++j) b[j] = Pair<T>::to_float2(Bs[tx + 16 * j][kp]);
#pragma unroll
            for (int i = 0; i < kTM; ++i)
#pragma unroll
                for (int j = 0; j < kTN; ++j) {
                    acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
                    acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
                }
        }
        __syncthreads();  // tiles are overwritten by the next K step
    }

#pragma unroll
    for (int i = 0; i < kTM; ++i) {
        const int m = m0 + ty + 16 * i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
            const int n = n0 + tx + 16 * j;
            if (n < N) C[static_cast<size_t>(m) * N + n] = from_float<T>(acc[i][j]);
        }
    }
}

template <typename T>
cudaError_t launch(const void* a, const void* b, void* c, int M, int N, int K, cudaStream_t stream) {
    const bool vec_ok = (K % 8 == 0) && (reinterpret_cast<uintptr_t>(a) % 16 == 0) &&
                        (reinterpret_cast<uintptr_t>(b) % 16 == 0);
    dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
    gemm_regtile_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                         static_cast<T*>(c), M, N, K, vec_ok);
    return cudaGetLastError();
}

}  // namespace

// dtype: 0 = bfloat16, 1 = float16. Returns a cudaError_t value (0 = success).
extern "C" int d2k_gemm_regtile_launch(const void* a, const void* b, void* c, int M, int N, int K, int dtype,
                                       cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return 0;
    switch (dtype) {
        case 0: return static_cast<int>(launch<__nv_bfloat16>(a, b, c, M, N, K, stream));
        case 1: return static_cast<int>(launch<__half>(a, b, c, M, N, K, stream));
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
}
