// Expert inclusive scan: one launch, one read and one write per element, decoupled look-back.
// Tiles of CTA x VEC_PER_THREAD x 4 elements come from an atomic ticket (so every predecessor of a
// tile has started and the look-back cannot deadlock). Each thread holds VEC_PER_THREAD 16-byte
// vectors (adjacent threads on adjacent vectors), scans each vector serially in registers and
// across the CTA (__shfl_up_sync warp scans, warp totals through shared memory). Warp 0 publishes
// the tile total in a 64-bit status word (epoch and state in the high half, the value's bits in
// the low half), reads a window of 32 predecessors' words, and adds them up to the nearest
// inclusive prefix; then it publishes the tile's own inclusive prefix. The epoch tag replaces a
// memset of the status words per call. CTA = 512 and VEC_PER_THREAD = 4 were the best of five
// shapes on the H200 (examples/h200/family1/tune_run2.txt).
#include <cuda_runtime.h>
#include <stdint.h>

#define FULL_MASK 0xffffffffu
#define CTA 512
#define VEC_PER_THREAD 4

typedef unsigned long long word_t;

namespace {

constexpr int kLanesPerVec = 4;
constexpr int kTile = CTA * VEC_PER_THREAD * kLanesPerVec;  // 4096 elements
constexpr unsigned kEmpty = 0u, kAggregate = 1u, kPrefix = 2u;

template <typename T> struct Vec;
template <> struct Vec<int> { typedef int4 type; };
template <> struct Vec<float> { typedef float4 type; };

__device__ __forceinline__ unsigned to_bits(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned to_bits(float v) { return __float_as_uint(v); }
template <typename T> __device__ __forceinline__ T from_bits(unsigned b);
template <> __device__ __forceinline__ int from_bits<int>(unsigned b) { return static_cast<int>(b); }
template <> __device__ __forceinline__ float from_bits<float>(unsigned b) { return __uint_as_float(b); }

template <typename T>
__device__ __forceinline__ word_t make_word(unsigned state, unsigned epoch, T v) {
    return (static_cast<word_t>((epoch << 2) | state) << 32) | to_bits(v);
}

__device__ __forceinline__ unsigned state_of(word_t w, unsigned epoch) {
    unsigned hi = static_cast<unsigned>(w >> 32);
    return (hi >> 2) == epoch ? (hi & 3u) : kEmpty;
}

template <typename T>
__device__ __forceinline__ T warp_inclusive(T v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T up = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += up;
    }
    return v;
}

// Inclusive scan of one value per thread across the CTA; *total gets the CTA's sum.
template <typename T>
__device__ T cta_inclusive(T v, T* sums, T* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_inclusive(v, lane);
    if (lane == 31) sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T s = lane < CTA / 32 ? sums[lane] : T(0);
        s = warp_inclusive(s, lane);
        if (lane < CTA / 32) sums[lane] = s;
    }
    __syncthreads();
    T before = warp > 0 ? sums[warp - 1] : T(0);
    *total = sums[CTA / 32 - 1];
    __syncthreads();
    return v + before;
}

}  // namespace

template <typename T>
__global__ void __launch_bounds__(CTA) scan_lookback(const T* __restrict__ in, T* __restrict__ out, word_t* flags,
                                                     unsigned* next_tile, long long n, unsigned epoch, unsigned tiles) {
    typedef typename Vec<T>::type V;
    __shared__ T sums[CTA / 32];
    __shared__ unsigned my_tile;
    __shared__ T tile_prefix;
    if (threadIdx.x == 0) my_tile = atomicAdd(next_tile, 1u);
    __syncthreads();
    const unsigned tile = my_tile;
    const long long base = static_cast<long long>(tile) * kTile;

    T x[VEC_PER_THREAD][kLanesPerVec];
#pragma unroll
    for (int j = 0; j < VEC_PER_THREAD; ++j) {
        const long long at = base + (static_cast<long long>(j) * CTA + threadIdx.x) * kLanesPerVec;
        if (at + kLanesPerVec <= n) {
            V v = __ldcs(reinterpret_cast<const V*>(in + at));
            x[j][0] = v.x; x[j][1] = v.y; x[j][2] = v.z; x[j][3] = v.w;
        } else {
#pragma unroll
            for (int k = 0; k < kLanesPerVec; ++k) x[j][k] = at + k < n ? in[at + k] : T(0);
        }
    }

    T running = T(0);
#pragma unroll
    for (int j = 0; j < VEC_PER_THREAD; ++j) {
#pragma unroll
        for (int k = 1; k < kLanesPerVec; ++k) x[j][k] += x[j][k - 1];
        T part;
        const T incl = cta_inclusive(x[j][kLanesPerVec - 1], sums, &part);
        const T shift = running + incl - x[j][kLanesPerVec - 1];
#pragma unroll
        for (int k = 0; k < kLanesPerVec; ++k) x[j][k] += shift;
        running += part;
    }

    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        T exclusive = T(0);
        if (lane == 0) {
            __threadfence();
            atomicExch(flags + tile, make_word(tile == 0 ? kPrefix : kAggregate, epoch, running));
        }
        if (tile > 0) {
            long long pred = static_cast<long long>(tile) - 1 - lane;
            for (;;) {
                word_t w = pred >= 0 ? *reinterpret_cast<volatile word_t*>(flags + pred) : make_word(kPrefix, epoch, T(0));
                const unsigned st = state_of(w, epoch);
                if (__any_sync(FULL_MASK, st == kEmpty)) continue;
                const unsigned done = __ballot_sync(FULL_MASK, st == kPrefix);
                const int stop = done ? __ffs(done) - 1 : 31;
                T v = lane <= stop ? from_bits<T>(static_cast<unsigned>(w)) : T(0);
#pragma unroll
                for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL_MASK, v, d);
                exclusive += v;
                if (done) break;
                pred -= 32;
            }
            __threadfence();
            if (lane == 0) atomicExch(flags + tile, make_word(kPrefix, epoch, exclusive + running));
        }
        if (lane == 0) tile_prefix = exclusive;
    }
    __syncthreads();
    const T add = tile_prefix;

#pragma unroll
    for (int j = 0; j < VEC_PER_THREAD; ++j) {
        const long long at = base + (static_cast<long long>(j) * CTA + threadIdx.x) * kLanesPerVec;
        if (at + kLanesPerVec <= n) {
            V v;
            v.x = x[j][0] + add; v.y = x[j][1] + add; v.z = x[j][2] + add; v.w = x[j][3] + add;
            __stcs(reinterpret_cast<V*>(out + at), v);
        } else {
#pragma unroll
            for (int k = 0; k < kLanesPerVec; ++k)
                if (at + k < n) out[at + k] = x[j][k] + add;
        }
    }
    if (threadIdx.x == 0 && tile == tiles - 1) atomicExch(next_tile, 0u);
}

#define LAUNCH_SCAN(T)                                                                                          \
    scan_lookback<T><<<tiles, CTA, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), flags, ticket, n, \
                                               epoch, tiles)

extern "C" int scan_launch(const void* in, void* out, int is_float, word_t* flags, unsigned* ticket, long long n,
                           unsigned epoch, cudaStream_t stream) {
    const unsigned tiles = static_cast<unsigned>((n + kTile - 1) / kTile);
    if (is_float)
        LAUNCH_SCAN(float);
    else
        LAUNCH_SCAN(int);
    return static_cast<int>(cudaGetLastError());
}

extern "C" long long scan_tile_elems() { return kTile; }
