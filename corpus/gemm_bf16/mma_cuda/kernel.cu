// Tensor-core CUDA GEMM: C[M,N] = A[M,K] @ B[N,K]^T with nvcuda::wmma bf16 16x16x16 fragments,
// fp32 accumulators and a cp.async double-buffered shared-memory pipeline.
//
//   * block tile 128x128x32, 8 warps as a 2 (M) x 4 (N) grid; each warp owns a 64x32 warp tile,
//     i.e. 4x2 accumulator fragments of 16x16 (fp32) for the whole K loop;
//   * operand tiles are copied global -> shared with cp.async.cg (16 bytes per copy, no register
//     round trip) into two buffers: while the tensor cores consume buffer t&1, the copies for the
//     next K step are already in flight into the other one (commit_group / wait_group 1);
//   * shared rows are padded from 32 to 40 elements (80 bytes) so the 16 rows a fragment load
//     touches do not all start in the same banks;
//   * ragged edges: rows past M/N and K chunks past K are zero-filled by cp.async (src-size 0);
//     the epilogue stages each fragment through shared memory and stores with bounds checks.
// Requirements checked by the launcher: K % 8 == 0 and 16-byte aligned A and B (cp.async chunks).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

namespace {

using namespace nvcuda;

constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kPad = 8;                          // 16 bytes: keeps cp.async destinations aligned
constexpr int kLd = kBK + kPad;                  // shared row stride in elements
constexpr int kWarpsM = 2, kWarpsN = 4;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;   // 64 x 32 warp tile
constexpr int kFragsM = kWM / 16, kFragsN = kWN / 16;     // 4 x 2 fragments per warp
constexpr int kThreads = 32 * kWarpsM * kWarpsN;          // 256
constexpr int kStages = 2;
constexpr int kTileElems = kBM * kLd;                      // one operand tile in one stage
constexpr int kPipeBytes = kStages * 2 * kTileElems * 2;   // A and B, 2-byte elements: 40 KB
constexpr int kStageFloats = 16 * 16;                      // epilogue staging per warp
constexpr int kEpiBytes = (kThreads / 32) * kStageFloats * 4;
constexpr int kSmemBytes = kPipeBytes > kEpiBytes ? kPipeBytes : kEpiBytes;

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// 16-byte global -> shared copy; when !valid nothing is read and the destination is zero-filled.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    const int src_bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Issue the copies of a 128 x 32 tile (rows row0.., K from k0) into dst; 2 chunks per thread.
template <typename T>
__device__ __forceinline__ void load_tile_async(T* dst, const T* __restrict__ src, int row0, int rows, int k0, int K) {
    constexpr int kChunksPerRow = kBK / 8;
#pragma unroll
    for (int it = 0; it < (kBM * kChunksPerRow) / kThreads; ++it) {
        const int idx = threadIdx.x + it * kThreads;
        const int r = idx / kChunksPerRow;          // adjacent threads: adjacent 16-byte chunks of a row
        const int ck = (idx % kChunksPerRow) * 8;
        const bool valid = (row0 + r < rows) && (k0 + ck < K);
        const T* g = valid ? src + static_cast<size_t>(row0 + r) * K + k0 + ck : src;
        cp_async_16(dst + r * kLd + ck, g, valid);
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
gemm_wmma_pipelined_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                           int M, int N, int K, bool vec_store) {
    __shared__ __align__(128) unsigned char smem[kSmemBytes];
    T* As = reinterpret_cast<T*>(smem);               // [stage][kBM][kLd]
    T* Bs = As + kStages * kTileElems;                // [stage][kBN][kLd]

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
    const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    const int k_tiles = (K + kBK - 1) / kBK;
    load_tile_async(As, A, m0, M, 0, K);
    load_tile_async(Bs, B, n0, N, 0, K);
    cp_async_commit();

    for (int t = 0; t < k_tiles; ++t) {
        const int cur = t & 1;
        if (t + 1 < k_tiles) {  // prefetch the next K step into the other buffer, then wait for this one
            load_tile_async(As + (cur ^ 1) * kTileElems, A, m0, M, (t + 1) * kBK, K);
            load_tile_async(Bs + (cur ^ 1) * kTileElems, B, n0, N, (t + 1) * kBK, K);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();  // every thread's copies for buffer `cur` have landed

        const T* a_tile = As + cur * kTileElems + (warp_m * kWM) * kLd;
        const T* b_tile = Bs + cur * kTileElems + (warp_n * kWN) * kLd;
#pragma unroll
        for (int kk = 0; kk < kBK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a_frag[kFragsM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b_frag[kFragsN];
#pragma unroll
            for (int i = 0; i < kFragsM; ++i) wmma::load_matrix_sync(a_frag[i], a_tile + (i * 16) * kLd + kk, kLd);
            // B is stored [N][K]: read as column-major K x N, i.e. B^T.
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) wmma::load_matrix_sync(b_frag[j], b_tile + (j * 16) * kLd + kk, kLd);
#pragma unroll
            for (int i = 0; i < kFragsM; ++i)
#pragma unroll
                for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
        }
        __syncthreads();  // buffer `cur` is refilled by the prefetch of the next iteration
    }

    // Epilogue: fragment -> per-warp fp32 staging (reusing the pipeline buffers) -> bf16 global.
    float* stage = reinterpret_cast<float*>(smem) + warp * kStageFloats;
    const int r = lane / 2, c0 = (lane % 2) * 8;  // each lane writes 8 consecutive outputs of a row
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) {
            wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int m = m0 + warp_m * kWM + i * 16 + r;
            const int n = n0 + warp_n * kWN + j * 16 + c0;
            const float* v = stage + r * 16 + c0;
            if (m < M) {
                T* out = C + static_cast<size_t>(m) * N + n;
                if (vec_store && n + 8 <= N) {
                    __align__(16) T packed[8];
#pragma unroll
                    for (int e = 0; e < 8; ++e) packed[e] = from_float<T>(v[e]);
                    *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(packed);
                } else {
                    for (int e = 0; e < 8; ++e)
                        if (n + e < N) out[e] = from_float<T>(v[e]);
                }
            }
            __syncwarp();  // the staging buffer is reused by the next fragment
        }
    }
}

template <typename T>
cudaError_t launch(const void* a, const void* b, void* c, int M, int N, int K, cudaStream_t stream) {
    const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0;
    if (K % 8 != 0 || !aligned) return cudaErrorInvalidValue;  // cp.async moves whole 16-byte chunks
    const bool vec_store = N % 8 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0;
    dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
    gemm_wmma_pipelined_kernel<T><<<grid, kThreads, 0, stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), M, N, K, vec_store);
    return cudaGetLastError();
}

}  // namespace

// An earlier version, kept for reference and never launched: 32x32 block tile, four warps with
// one fragment each, synchronous bf16 loads into padded shared tiles, no pipelining.
__global__ void gemm_wmma_simple_kernel(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                        __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    using namespace nvcuda;
    constexpr int kT = 32, kS = 16 + 8;
    __shared__ __align__(32) __nv_bfloat16 as[kT][kS];
    __shared__ __align__(32) __nv_bfloat16 bs[kT][kS];
    __shared__ __align__(32) float out[4][16 * 16];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m0 = blockIdx.y * kT, n0 = blockIdx.x * kT;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = threadIdx.x; e < kT * 16; e += blockDim.x) {
            const int rr = e / 16, kk = e % 16;
            const bool ka = k0 + kk < K;
            as[rr][kk] = (m0 + rr < M && ka) ? A[static_cast<size_t>(m0 + rr) * K + k0 + kk] : __float2bfloat16(0.0f);
            bs[rr][kk] = (n0 + rr < N && ka) ? B[static_cast<size_t>(n0 + rr) * K + k0 + kk] : __float2bfloat16(0.0f);
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> af;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> bf;
        wmma::load_matrix_sync(af, &as[(warp / 2) * 16][0], kS);
        wmma::load_matrix_sync(bf, &bs[(warp % 2) * 16][0], kS);
        wmma::mma_sync(acc, af, bf, acc);
        __syncthreads();
    }
    wmma::store_matrix_sync(out[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
        const int m = m0 + (warp / 2) * 16 + e / 16, n = n0 + (warp % 2) * 16 + e % 16;
        if (m < M && n < N) C[static_cast<size_t>(m) * N + n] = __float2bfloat16_rn(out[warp][e]);
    }
}

// dtype: 0 = bfloat16, 1 = float16. Returns a cudaError_t value (0 = success).
extern "C" int d2k_gemm_mma_launch(const void* a, const void* b, void* c, int M, int N, int K, int dtype,
                                   cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return 0;
    switch (dtype) {
        case 0: return static_cast<int>(launch<__nv_bfloat16>(a, b, c, M, N, K, stream));
        case 1: return static_cast<int>(launch<__half>(a, b, c, M, N, K, stream));
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
}
