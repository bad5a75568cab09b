import torch
import triton
import triton.language as tl


@triton.jit
def _rope_qk(positions, q, k, cos_tab, sin_tab, HQ, HKV, HALF,
             HQ_P2: tl.constexpr, HKV_P2: tl.constexpr, HALF_P2: tl.constexpr):
    t = tl.program_id(0)
    p = tl.load(positions + t)
    j = tl.arange(0, HALF_P2)
    jm = j < HALF
    c = tl.load(cos_tab + p * HALF + j, mask=jm, other=0.0)
    s = tl.load(sin_tab + p * HALF + j, mask=jm, other=0.0)

    hq = tl.arange(0, HQ_P2)
    mq = (hq[:, None] < HQ) & jm[None, :]
    q_off = t * HQ * 2 * HALF + hq[:, None] * 2 * HALF + j[None, :]
    q1 = tl.load(q + q_off, mask=mq, other=0.0).to(tl.float32)
    q2 = tl.load(q + q_off + HALF, mask=mq, other=0.0).to(tl.float32)
    tl.store(q + q_off, (q1 * c[None, :] - q2 * s[None, :]).to(q.dtype.element_ty), mask=mq)
    tl.store(q + q_off + HALF, (q2 * c[None, :] + q1 * s[None, :]).to(q.dtype.element_ty), mask=mq)

    hk = tl.arange(0, HKV_P2)
    mk = (hk[:, None] < HKV) & jm[None, :]
    k_off = t * HKV * 2 * HALF + hk[:, None] * 2 * HALF + j[None, :]
    k1 = tl.load(k + k_off, mask=mk, other=0.0).to(tl.float32)
    k2 = tl.load(k + k_off + HALF, mask=mk, other=0.0).to(tl.float32)
    tl.store(k + k_off, (k1 * c[None, :] - k2 * s[None, :]).to(k.dtype.element_ty), mask=mk)
    tl.store(k + k_off + HALF, (k2 * c[None, :] + k1 * s[None, :]).to(k.dtype.element_ty), mask=mk)


def run(positions, q, k, cos_cache, sin_cache):
    T, HQ, D = q.shape
    HKV = k.shape[1]
    half = D // 2
    _rope_qk[(T,)](positions, q, k, cos_cache, sin_cache, HQ, HKV, half,
                   HQ_P2=triton.next_power_of_2(HQ), HKV_P2=triton.next_power_of_2(HKV),
                   HALF_P2=triton.next_power_of_2(half), num_warps=4)
    return q, k
