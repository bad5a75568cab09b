"""Candidate softmax / LayerNorm row kernels with ONE cross-warp reduction per row, and their sweep.

Why: on long bf16 rows the experts (tasks/{softmax,layernorm}/expert) reach 0.57-0.73 of 4.3 TB/s,
while ``row_center`` (benchmarks/rows_ceiling.py: row in registers, one cross-warp reduction,
store) reaches 0.81. The experts do two dependent cross-warp reductions per row (softmax: max then
sum; LayerNorm: sum then M2), each a shared-memory round trip with barriers, and a 16-32-warp
program is alone on its SM, so nothing hides them. Here the two statistics share one reduction:

* The row is loaded once as a [T, C] tile of C contiguous elements (C = 8: one 16-byte bf16
  vector per thread; C = 16 / 32 add one / two warp shuffles) and reduced over C first.
* One ``tl.reduce`` over T merges the per-group tuples: online-softmax (max, sum) or Chan's
  (count, mean, M2). That is the only cross-warp step.
* Softmax keeps e = exp2(x - m_g) and rescales it by one per-group factor (one exp2 per element,
  as in the expert). LayerNorm loads w and b after the reduction (before, they stay live across it,
  which was measured slower).

GPU sweep (PYTHONPATH=.): ``python benchmarks/rows_one_barrier.py [--only softmax] [--out FILE]``
(candidates next to the experts and a device copy, one JSON line each). CPU correctness only:
``TRITON_INTERPRET=1 python benchmarks/rows_one_barrier.py --check`` (non-zero exit on mismatch).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)
EPS = 1e-5
PEAK_BPS = 4.3e12  # H200 device-copy bandwidth the fractions are relative to
MIN_TILE = 4096  # short rows: the default packs rows until a program holds this many elements
ROOT = Path(__file__).resolve().parents[1]


@triton.jit
def _softmax_combine(m1, s1, m2, s2):
    """Online-softmax merge of (max, sum exp(x - max)) pairs with one exp2. An all-padding group
    is (-inf, 0): a -inf larger max is replaced by 0 in the difference, so two padding groups give
    exp2(-inf) = 0 (not -inf - -inf = NaN), and padding against a real group also gives 0."""
    hi = tl.maximum(m1, m2)
    lo = tl.minimum(m1, m2)
    d = lo - tl.where(hi == float("-inf"), 0.0, hi)
    s_hi = tl.where(m1 >= m2, s1, s2)
    s_lo = tl.where(m1 >= m2, s2, s1)
    return hi, s_hi + s_lo * tl.exp2(d * LOG2E)


@triton.jit
def softmax_one_barrier(x_ptr, y_ptr, M, N, stride_x, stride_y,
                        BLOCK_N: tl.constexpr, C: tl.constexpr, ROWS: tl.constexpr):
    """ROWS rows per program, each held in registers as [T, C]; one cross-warp reduction."""
    T: tl.constexpr = BLOCK_N // C
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    rows_ld = tl.minimum(rows, M - 1).to(tl.int64)  # rows past M re-load row M-1, store masked
    cols = tl.arange(0, T)[:, None] * C + tl.arange(0, C)[None, :]  # [T, C], C contiguous
    col_ok = cols < N
    x = tl.load(x_ptr + rows_ld[:, None, None] * stride_x + cols[None, :, :], mask=col_ok[None, :, :],
                other=float("-inf"), eviction_policy="evict_first").to(tl.float32)  # [R, T, C]
    m_g = tl.max(x, axis=2)  # [R, T]; -inf for an all-padding group
    m_safe = tl.where(m_g == float("-inf"), 0.0, m_g)  # so padding gives exp2(-inf) = 0, not NaN
    e = tl.exp2((x - m_safe[:, :, None]) * LOG2E)
    s_g = tl.sum(e, axis=2)
    m, s = tl.reduce((m_g, s_g), axis=1, combine_fn=_softmax_combine)  # the one cross-warp step
    scale = tl.exp2((m_g - m[:, None]) * LOG2E) * (1.0 / s)[:, None]  # per group; padding -> 0
    y = e * scale[:, :, None]
    ok = (rows < M)[:, None, None] & col_ok[None, :, :]
    tl.store(y_ptr + rows_ld[:, None, None] * stride_y + cols[None, :, :], y.to(y_ptr.dtype.element_ty),
             mask=ok, eviction_policy="evict_first")


@triton.jit
def _chan_combine(n1, mean1, m2a, n2, mean2, m2b):
    """Chan's parallel merge of (count, mean, M2); n == 0 (two padding groups) stays (0, 0, 0)."""
    n = n1 + n2
    frac = n2 / tl.maximum(n, 1.0)
    delta = mean2 - mean1
    return n, mean1 + delta * frac, m2a + m2b + delta * delta * n1 * frac


@triton.jit
def layernorm_one_barrier(x_ptr, w_ptr, b_ptr, y_ptr, M, N, eps,
                          BLOCK_N: tl.constexpr, C: tl.constexpr, ROWS: tl.constexpr):
    """LayerNorm (biased variance) of ROWS rows held as [T, C]; one cross-warp reduction."""
    T: tl.constexpr = BLOCK_N // C
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    rows_ld = tl.minimum(rows, M - 1).to(tl.int64)
    group = tl.arange(0, T)
    cols = group[:, None] * C + tl.arange(0, C)[None, :]
    col_ok = cols < N
    offs = rows_ld[:, None, None] * N + cols[None, :, :]
    x = tl.load(x_ptr + offs, mask=col_ok[None, :, :], other=0.0,
                eviction_policy="evict_first").to(tl.float32)  # [R, T, C]
    cnt = tl.minimum(tl.maximum(N - group * C, 0), C).to(tl.float32)  # real elements per group
    cnt = tl.broadcast_to(cnt[None, :], (ROWS, T))
    mean_g = tl.sum(x, axis=2) / tl.maximum(cnt, 1.0)
    d = tl.where(col_ok[None, :, :], x - mean_g[:, :, None], 0.0)
    m2_g = tl.sum(d * d, axis=2)
    _, mean, m2 = tl.reduce((cnt, mean_g, m2_g), axis=1, combine_fn=_chan_combine)  # one step
    rstd = tl.math.rsqrt(m2 / N + eps)
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)  # after the reduction
    b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = (x - mean[:, None, None]) * rstd[:, None, None] * w[None, :, :] + b[None, :, :]
    ok = (rows < M)[:, None, None] & col_ok[None, :, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=ok, eviction_policy="evict_first")


def _geometry(n: int, c: int, rows: int | None) -> tuple[int, int]:
    block_n = max(triton.next_power_of_2(n), c)
    return block_n, rows if rows else max(1, MIN_TILE // block_n)


def run_softmax(x: torch.Tensor, num_warps: int = 16, C: int = 16, rows: int | None = None) -> torch.Tensor:
    """Softmax over the last dim of a contiguous 2-D tensor with N <= 32768 (the expert's run(x))."""
    assert x.dim() == 2 and x.is_contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    block_n, r = _geometry(n, C, rows)
    softmax_one_barrier[(triton.cdiv(m, r),)](x, y, m, n, x.stride(0), y.stride(0), BLOCK_N=block_n, C=C,
                                              ROWS=r, num_warps=num_warps, num_stages=1)
    return y


def run_layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_warps: int = 16,
                  C: int = 16, rows: int | None = None) -> torch.Tensor:
    """LayerNorm over the last dim (eps 1e-5) with weight and bias (the expert's run(x, w, b))."""
    assert x.dim() == 2 and x.is_contiguous() and weight.is_contiguous() and bias.is_contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    block_n, r = _geometry(n, C, rows)
    layernorm_one_barrier[(triton.cdiv(m, r),)](x, weight, bias, y, m, n, EPS, BLOCK_N=block_n, C=C,
                                                ROWS=r, num_warps=num_warps, num_stages=1)
    return y


def _reference(op: str, x, w=None, b=None) -> torch.Tensor:
    if op == "softmax":
        return torch.softmax(x.float(), dim=-1)
    return F.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), EPS)


def _mismatch(op: str, out: torch.Tensor, ref: torch.Tensor) -> str | None:
    """None if out matches ref (atol 1e-2, rtol 2e-2). Softmax's atol is also scaled by the row's
    max probability: on long rows every probability is << 1e-2, and a flat atol would pass anything."""
    out = out.float()
    atol = 1e-2 * ref.amax(dim=1, keepdim=True) if op == "softmax" else 1e-2
    bad = ((out - ref).abs() > atol + 2e-2 * ref.abs()) | ~torch.isfinite(out)
    if not bool(bad.any()):
        return None
    return f"{int(bad.sum())} of {bad.numel()} elements off, max abs err {float((out - ref).abs().nan_to_num(1e9).max()):.3g}"


def _load_expert(op: str):
    path = ROOT / "tasks" / op / "expert" / "submission.py"
    spec = importlib.util.spec_from_file_location(f"{op}_expert", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@triton.jit
def _merge_probe(m_ptr, s_ptr, n_ptr, mean_ptr, m2_ptr, out_ptr, K: tl.constexpr):
    """--check only: both combines over given partials, padding first and in between (the
    interpreter folds left to right, so the main kernels never merge two padding groups there)."""
    k = tl.arange(0, K)
    m, s = tl.reduce((tl.load(m_ptr + k), tl.load(s_ptr + k)), 0, _softmax_combine)
    n, mean, m2 = tl.reduce((tl.load(n_ptr + k), tl.load(mean_ptr + k), tl.load(m2_ptr + k)), 0, _chan_combine)
    tl.store(out_ptr, m)
    tl.store(out_ptr + 1, s)
    tl.store(out_ptr + 2, n)
    tl.store(out_ptr + 3, mean)
    tl.store(out_ptr + 4, m2)


def _probe(dev: str) -> str | None:
    """Merge 10 real groups of 8 with 6 padding groups at positions 0, 1, 5, 9, 14, 15."""
    v = torch.randn(10, 8, dtype=torch.float64) * 8 + 50
    real = [i for i in range(16) if i not in (0, 1, 5, 9, 14, 15)]
    parts = torch.tensor([[float("-inf"), 0.0, 0.0, 0.0, 0.0]] * 16, dtype=torch.float64)
    mg, mean_g = v.amax(1), v.mean(1)
    parts[real] = torch.stack([mg, (v - mg[:, None]).exp().sum(1), torch.full((10,), 8.0), mean_g,
                               ((v - mean_g[:, None]) ** 2).sum(1)], 1)
    cols = [parts[:, j].float().to(dev).contiguous() for j in range(5)]
    out = torch.zeros(5, device=dev)
    _merge_probe[(1,)](*cols, out, K=16)
    want = torch.tensor([v.max(), (v - v.max()).exp().sum(), 80.0, v.mean(), ((v - v.mean()) ** 2).sum()])
    got = out.double().cpu()
    return None if torch.allclose(got, want, rtol=1e-4, atol=1e-5) else f"got {got.tolist()} want {want.tolist()}"


def _check() -> int:
    """Tiny shapes through every C (and packed rows for short N): padding groups (N = 1500, 1000),
    large-magnitude / offset softmax rows, a large-mean LayerNorm row block, packed-row tails."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cases = [  # (op, M, N, scale, per-row offsets)
        ("softmax", 3, 1500, 8.0, [0.0]), ("softmax", 5, 1000, 4.0, [0.0]),
        ("softmax", 4, 4096, 3.0, [0.0, 500.0, -500.0, 60.0]), ("softmax", 2, 32768, 4.0, [0.0]),
        ("layernorm", 3, 1500, 1.0, [0.0]), ("layernorm", 7, 1000, 2.0, [0.0]),
        ("layernorm", 4, 4096, 4.0, [100.0]), ("layernorm", 2, 32768, 2.0, [-3.0]),
    ]
    dev = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    err = _probe(dev)
    failures = int(err is not None)
    print(json.dumps({"check": "combines", "ok": err is None, **({"error": err} if err else {})}), flush=True)
    for op, m, n, scale, offset in cases:
        x = (torch.randn(m, n) * scale + torch.tensor(offset)[:, None]).to(dev, torch.bfloat16)
        w, b = torch.randn(n).to(dev, torch.bfloat16), torch.randn(n).to(dev, torch.bfloat16)
        ref = _reference(op, x, w, b)
        for c in (8, 16, 32):
            for rows in ((1, 4) if n <= 1024 else (1,)):
                out = run_softmax(x, 4, c, rows) if op == "softmax" else run_layernorm(x, w, b, 4, c, rows)
                err = _mismatch(op, out, ref)
                failures += err is not None
                print(json.dumps({"check": op, "M": m, "N": n, "C": c, "rows": rows, "ok": err is None,
                                  **({"error": err} if err else {})}), flush=True)
    print(json.dumps({"check": "done", "failures": failures}))
    return 1 if failures else 0


_FLUSH: torch.Tensor | None = None


def _bench(fn, reps: int) -> float:
    """Median ms of fn() by CUDA events, each call after a read sweep of 2 x 60 MB (zeroed once,
    so the sweep leaves clean lines in L2 and no write-back lands in the timed call). A GPU spin
    first lets the CPU queue every call ahead of the GPU: otherwise a short kernel's launch cost
    (Python, autotune dispatch) lands between the start event and the kernel and is timed too."""
    global _FLUSH
    if _FLUSH is None:
        _FLUSH = torch.zeros(30_000_000, dtype=torch.float32, device="cuda")
    for _ in range(5):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    torch.cuda.synchronize()
    torch.cuda._sleep(reps * 500_000)  # ~250 us of GPU per call queued (~2 GHz clock)
    for a, b in ev:
        _FLUSH.sum()
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


def _settings(n: int):
    """(num_warps, C, rows) giving each thread 8..64 elements; packed rows only for N <= 2048."""
    block_n = triton.next_power_of_2(n)
    for rows in ((1, 2, 4) if block_n <= 2048 else (1,)):
        for w in (4, 8, 16, 32):
            if 8 <= rows * block_n // (32 * w) <= 64:
                for c in (8, 16, 32):
                    yield w, c, rows


WORKLOADS = [("softmax", 1024, 32768), ("softmax", 4096, 8192), ("softmax", 8192, 1024),
             ("layernorm", 1024, 32768), ("layernorm", 4096, 8192), ("layernorm", 8192, 4096),
             ("layernorm", 16384, 1024)]


def _record(emit, base: dict, kernel: str, fn, setting: dict, ref, nbytes: int, reps: int) -> None:
    """Check fn() against ref (ref None: no check), then time it; one JSON line either way."""
    rec = {**base, "kernel": kernel, **setting}
    try:
        err = _mismatch(base["op"], fn(), ref) if ref is not None else None
        if err is None:
            ms = _bench(fn, reps)
            rec.update(ms=round(ms, 5), tbps=round(nbytes / ms / 1e9, 3),
                       frac=round(nbytes / (ms * 1e-3) / PEAK_BPS, 4))
        else:
            rec["error"] = err
    except Exception as exc:  # noqa: BLE001 - a setting that fails to compile / launch is a row
        rec["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    emit(rec)


def _sweep(op: str, m: int, n: int, expert, emit, reps: int) -> None:
    """Copy, expert, then every one-barrier setting on one workload, all on the same x."""
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    nbytes = 2 * x.numel() * x.element_size() + (2 * n * w.element_size() if op == "layernorm" else 0)
    ref = _reference(op, x, w, b)
    base = {"op": op, "M": m, "N": n, "dtype": "bf16"}
    y = torch.empty_like(x)
    copy_bytes = 2 * x.numel() * x.element_size()
    _record(emit, base, "copy", functools.partial(y.copy_, x), {}, None, copy_bytes, reps)
    call = functools.partial(expert.run, x) if op == "softmax" else functools.partial(expert.run, x, w, b)
    for _ in range(3):  # let the expert's autotune settle before it is timed
        call()
    torch.cuda.synchronize()
    _record(emit, base, "expert", call, {}, ref, nbytes, reps)
    for nw, c, rows in _settings(n):
        if op == "softmax":
            fn = functools.partial(run_softmax, x, nw, c, rows)
        else:
            fn = functools.partial(run_layernorm, x, w, b, nw, c, rows)
        _record(emit, base, "one_barrier", fn, {"num_warps": nw, "C": c, "rows": rows}, ref, nbytes, reps)


def sweep_parser(description: str) -> argparse.ArgumentParser:
    """The options every row-kernel sweep takes (this one's and rows_l2_two_pass.py's)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--check", action="store_true", help="tiny-shape correctness only (TRITON_INTERPRET=1 ok)")
    p.add_argument("--out", help="also write the JSON lines to this file")
    p.add_argument("--only", default="", help="run only workloads whose 'op MxN' contains this")
    p.add_argument("--reps", type=int, default=100)
    return p


def main(argv=None) -> int:
    args = sweep_parser(__doc__.split("\n")[0]).parse_args(argv)
    if args.check:
        return _check()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.out, "w")) if args.out else None

        def emit(rec: dict) -> None:
            print(json.dumps(rec), flush=True)
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()

        experts: dict = {}
        torch.manual_seed(0)
        for op, m, n in WORKLOADS:
            if args.only in f"{op} {m}x{n}":
                if op not in experts:
                    experts[op] = _load_expert(op)
                _sweep(op, m, n, experts[op], emit, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
