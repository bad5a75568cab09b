"""Two-pass row softmax / LayerNorm with small programs, whose second read of x is served by L2.

Why: the row-in-registers designs (the experts, benchmarks/rows_one_barrier.py) hold a whole row
of up to 32768 elements in registers, so a 16-32-warp program fills its SM alone and each SM runs
load -> reduce -> normalize -> store strictly in sequence: nothing overlaps the reductions, the
exp2 / FMA work and the barriers with memory traffic. They reach 0.59-0.77 of 4.3 TB/s on bf16,
while a copy of the same bytes reaches 0.92-0.95. Here a program owns ROWS (1, 2 or 4) rows but
holds only one BLOCK-element chunk of each at a time (4 or 8 warps, 8-32 elements per thread),
so several programs share an SM and one program's loads overlap another's arithmetic:

* Pass 1 loops over the row's chunks. A chunk is a [ROWS, T, C] tile (C = 8 contiguous elements:
  one 16-byte bf16 vector per thread), reduced over C inside the thread, and merged into per-group
  running statistics [ROWS, T] (softmax: online max and rescaled sum, one exp2 per element plus
  one per group; LayerNorm: Chan's (count, mean, M2)). The loop has no cross-thread step at all;
  the groups are merged once per row at the end, with rows_one_barrier's combines.
* Pass 2 loops over the row again, re-reading x, which is still in L2: the row was read a few
  microseconds earlier, and between a line's two reads only the rows of the programs in flight
  pass through L2 (about 132 SMs x programs per SM x ROWS x row bytes; the L2 is 60 MB). Pass 1's
  loads keep the default policy (stay in L2); pass 2's loads and all stores are evict_first, so
  neither the consumed x nor y pushes out lines still to be re-read. LayerNorm's w and b are read
  in pass 2 with evict_last: every program re-reads them, so they stay L2-resident.
* The L2 only serves pass 2 if the rows between their two reads fit: with ~32-64 registers a
  thread, 8-16 programs of 4-8 warps can be resident per SM, and at N = 32768 (64 KB bf16 rows)
  132 x 16 rows is 135 MB. So a setting's ``per_sm`` > 0 caps the grid at 132 x per_sm programs,
  each looping over row blocks pid, pid + grid, ... (per_sm 0: one program per row block).
* DRAM traffic stays one read of x and one write of y; the price is a second read of x from L2
  (and, for softmax, 2 + 1/C exp2 per element instead of 1).

Measured once on an H200 (examples/h200/dec04/rows_two_pass_l2.jsonl; one timing per setting,
best of 22-50 settings, fractions of 4.3 TB/s): a win only at N = 32768. There, LayerNorm reaches
0.69 (8 warps, BLOCK 8192) against 0.58 for the expert, and softmax 0.73 (8 warps, BLOCK 8192,
per_sm 4) against 0.69. At N <= 8192 the experts (0.65-0.88) beat it (0.54-0.86), and
per_sm 1-2 (8-16 warps per SM) is 1.3-2.5x slower than a full grid: warps in flight matter more
than the L2 footprint. No L2 hit rate was measured.

Each JSON line of a two-pass setting records the compiled kernel's registers, spills and shared
memory, and ``ctas_per_sm``: an ESTIMATE of resident programs per SM from those (65536 registers,
64 warps, 32 CTAs, 227 KB shared memory per SM), not a measurement.

GPU (PYTHONPATH=.): ``python benchmarks/rows_l2_two_pass.py [--only softmax] [--out FILE]`` runs,
per workload, a device copy, the expert, a subset of rows_one_barrier's settings (all of them for
N = 32768, C = 16 otherwise) and every two-pass setting, one JSON line each, in one process.
``--warm --shard I/K`` only compiles (and launches once) every K-th setting, to fill Triton's
on-disk cache from several processes before the timed run. CPU correctness only:
``TRITON_INTERPRET=1 python benchmarks/rows_l2_two_pass.py --check`` (non-zero exit on mismatch).
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Shared with rows_one_barrier: one timing method (_record -> _bench), one checker, one set of combines.
from rows_one_barrier import (  # noqa: E402
    EPS,
    LOG2E,
    WORKLOADS,
    _chan_combine,
    _load_expert,
    _mismatch,
    _record,
    _reference,
    sweep_parser,
    _settings,
    _softmax_combine,
    run_layernorm,
    run_softmax,
)

C_VEC = 8  # elements per thread-local group: one 16-byte bf16 load
DEVICE = "cuda"  # where _sweep puts its tensors (a dry run of the sweep's plumbing may change it)


def _num_sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 132


@triton.jit
def softmax_two_pass_l2(x_ptr, y_ptr, M, N, stride_x, stride_y,
                        BLOCK: tl.constexpr, C: tl.constexpr, ROWS: tl.constexpr):
    """Softmax of ROWS rows at a time, BLOCK elements per loop step: online (max, sum) per group,
    one merge per row, then a second (L2) read of x that writes exp2(x * log2e - (m * log2e +
    log2 s)). A program takes row blocks pid, pid + grid, ... (one block when the grid covers M)."""
    T: tl.constexpr = BLOCK // C
    offs = tl.arange(0, T)[:, None] * C + tl.arange(0, C)[None, :]  # [T, C], C contiguous
    for rb in range(tl.program_id(0), tl.cdiv(M, ROWS), tl.num_programs(0)):
        rows = rb * ROWS + tl.arange(0, ROWS)
        rows_ld = tl.minimum(rows, M - 1).to(tl.int64)  # rows past M re-read row M-1, stores masked
        x_rows = x_ptr + rows_ld[:, None, None] * stride_x  # [R, 1, 1]
        y_rows = y_ptr + rows_ld[:, None, None] * stride_y
        m_run = tl.full([ROWS, T], float("-inf"), tl.float32)
        s_run = tl.zeros([ROWS, T], tl.float32)
        for k in range(0, N, BLOCK):
            cols = k + offs
            # Default eviction: pass 2 re-reads these lines from L2.
            x = tl.load(x_rows + cols[None, :, :], mask=(cols < N)[None, :, :], other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m_run, tl.max(x, axis=2))  # in-thread max over C
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a group with only padding so far
            e_sum = tl.sum(tl.exp2((x - m_safe[:, :, None]) * LOG2E), axis=2)
            s_run = s_run * tl.exp2((m_run - m_safe) * LOG2E) + e_sum
            m_run = m_new
        m, s = tl.reduce((m_run, s_run), axis=1, combine_fn=_softmax_combine)  # the row's one merge
        shift = m * LOG2E + tl.log2(s)  # folds 1/s into the exponent: one FMA + one exp2 per element
        row_ok = (rows < M)[:, None, None]
        for k in range(0, N, BLOCK):
            cols = k + offs
            ok = (cols < N)[None, :, :]
            x = tl.load(x_rows + cols[None, :, :], mask=ok, other=float("-inf"),
                        eviction_policy="evict_first").to(tl.float32)  # padding: exp2(-inf) = 0
            y = tl.exp2(x * LOG2E - shift[:, None, None])
            tl.store(y_rows + cols[None, :, :], y.to(y_ptr.dtype.element_ty), mask=row_ok & ok,
                     eviction_policy="evict_first")


@triton.jit
def layernorm_two_pass_l2(x_ptr, w_ptr, b_ptr, y_ptr, M, N, eps,
                          BLOCK: tl.constexpr, C: tl.constexpr, ROWS: tl.constexpr):
    """LayerNorm (biased variance) of ROWS rows at a time: per-group running (count, mean, M2) by
    Chan merges of each step's in-thread group statistics, one merge per row, then a second (L2)
    read of x with w and b (L2-resident) that writes (x - mean) * rstd * w + b. Row blocks are
    taken pid, pid + grid, ... as in softmax_two_pass_l2."""
    T: tl.constexpr = BLOCK // C
    group = tl.arange(0, T)
    offs = group[:, None] * C + tl.arange(0, C)[None, :]
    for rb in range(tl.program_id(0), tl.cdiv(M, ROWS), tl.num_programs(0)):
        rows = rb * ROWS + tl.arange(0, ROWS)
        rows_ld = tl.minimum(rows, M - 1).to(tl.int64)
        x_rows = x_ptr + rows_ld[:, None, None] * N
        y_rows = y_ptr + rows_ld[:, None, None] * N
        n_run = tl.zeros([ROWS, T], tl.float32)
        mean_run = tl.zeros([ROWS, T], tl.float32)
        m2_run = tl.zeros([ROWS, T], tl.float32)
        for k in range(0, N, BLOCK):
            cols = k + offs
            ok = (cols < N)[None, :, :]
            x = tl.load(x_rows + cols[None, :, :], mask=ok, other=0.0).to(tl.float32)  # stays in L2
            n_c = tl.minimum(tl.maximum(N - k - group * C, 0), C).to(tl.float32)[None, :]  # [1, T]
            mean_c = tl.sum(x, axis=2) / tl.maximum(n_c, 1.0)
            d = tl.where(ok, x - mean_c[:, :, None], 0.0)
            m2_c = tl.sum(d * d, axis=2)
            n_run, mean_run, m2_run = _chan_combine(n_run, mean_run, m2_run, n_c, mean_c, m2_c)
        _, mean, m2 = tl.reduce((n_run, mean_run, m2_run), axis=1, combine_fn=_chan_combine)
        rstd = tl.math.rsqrt(m2 / N + eps)
        row_ok = (rows < M)[:, None, None]
        for k in range(0, N, BLOCK):
            cols = k + offs
            ok = cols < N
            x = tl.load(x_rows + cols[None, :, :], mask=ok[None, :, :], other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + cols, mask=ok, other=0.0, eviction_policy="evict_last").to(tl.float32)
            b = tl.load(b_ptr + cols, mask=ok, other=0.0, eviction_policy="evict_last").to(tl.float32)
            y = (x - mean[:, None, None]) * rstd[:, None, None] * w[None, :, :] + b[None, :, :]
            tl.store(y_rows + cols[None, :, :], y.to(y_ptr.dtype.element_ty), mask=row_ok & ok[None, :, :],
                     eviction_policy="evict_first")


_LAST: dict = {}  # the last launch's compiled kernel, for the resource fields of a JSON line


def _grid(m: int, rows: int, programs: int) -> tuple[int]:
    """One program per row block, or (programs > 0) at most that many, each looping over blocks."""
    blocks = triton.cdiv(m, rows)
    return (min(blocks, programs) if programs else blocks,)


def run_softmax_two_pass(x: torch.Tensor, num_warps: int = 4, block: int = 4096, rows: int = 1,
                         programs: int = 0) -> torch.Tensor:
    """Softmax over the last dim of a contiguous 2-D tensor (any N), ROWS rows at a time."""
    assert x.dim() == 2 and x.is_contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    _LAST["kernel"] = softmax_two_pass_l2[_grid(m, rows, programs)](
        x, y, m, n, x.stride(0), y.stride(0), BLOCK=block, C=C_VEC, ROWS=rows, num_warps=num_warps, num_stages=1)
    return y


def run_layernorm_two_pass(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_warps: int = 4,
                           block: int = 4096, rows: int = 1, programs: int = 0) -> torch.Tensor:
    """LayerNorm over the last dim (eps 1e-5, biased variance) with weight and bias."""
    assert x.dim() == 2 and x.is_contiguous() and weight.is_contiguous() and bias.is_contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    _LAST["kernel"] = layernorm_two_pass_l2[_grid(m, rows, programs)](
        x, weight, bias, y, m, n, EPS, BLOCK=block, C=C_VEC, ROWS=rows, num_warps=num_warps, num_stages=1)
    return y


def _resources(num_warps: int, per_sm: int) -> dict:
    """Registers / spills / shared memory of the last launch and the resident-CTA estimate (the
    hardware limit from those, or per_sm when the grid caps it lower)."""
    k = _LAST.get("kernel")
    try:
        regs, spills, smem = int(k.n_regs), int(k.n_spills), int(k.metadata.shared)
    except Exception:  # noqa: BLE001 - interpreter, or a Triton without these fields
        return {}
    per_warp = 32 * ((max(regs, 1) + 7) // 8 * 8)  # registers are allocated 8 per thread at a time
    limits = [65536 // (per_warp * num_warps), 64 // num_warps, 32]
    if smem:
        limits.append(232448 // (smem + 1024))  # 227 KB usable, 1 KB reserved per CTA
    if per_sm:
        limits.append(per_sm)
    return {"regs": regs, "spills": spills, "smem": smem, "ctas_per_sm": min(limits)}


def _two_pass_settings(n: int):
    """(num_warps, BLOCK, rows, per_sm): 8..32 elements per thread per step, BLOCK no longer than
    the (padded) row, 4 rows per program only for rows of <= 2048 elements. per_sm 0 is one
    program per row block (as many resident per SM as registers allow: with ~32 registers that is
    16 four-warp programs, 132 x 16 x 64 KB = 135 MB of rows between their two reads at
    N = 32768, over the 60 MB L2); per_sm > 0 caps the grid at 132 x per_sm programs that loop
    over row blocks, which bounds that footprint (8..64 warps per SM). num_stages is left at 1:
    Triton 3.6 does not pipeline these loads (no cp.async in the sm_90 PTX at num_stages 2)."""
    np2 = max(triton.next_power_of_2(n), 1024)
    for rows in (1, 2, 4):
        for nw in (4, 8):
            for block in (1024, 2048, 4096, 8192):
                if block <= np2 and 8 <= rows * block // (32 * nw) <= 32 and (rows < 4 or np2 <= 2048):
                    for per_sm in (0, 1, 2, 4, 8):
                        if per_sm == 0 or 8 <= per_sm * nw <= 64:
                            yield nw, block, rows, per_sm


def _check_cases():
    """Tiny shapes: N not a power of two (tails inside a step and whole padding groups), several
    steps per row, odd M (ROWS > 1 tails), softmax rows with large offsets and a rising ramp (the
    running max grows every step, so every rescale is exercised), large-mean LayerNorm rows."""
    g = torch.Generator().manual_seed(0)
    ramp = torch.linspace(-40.0, 40.0, 3000)[None, :] + torch.randn(3, 3000, generator=g)
    return [
        ("softmax", torch.randn(3, 1500, generator=g) * 8.0),
        ("softmax", torch.randn(5, 1000, generator=g) * 4.0),
        ("softmax", torch.randn(4, 4100, generator=g) * 3.0 + torch.tensor([0.0, 500.0, -500.0, 60.0])[:, None]),
        ("softmax", ramp),
        ("softmax", torch.randn(2, 32768, generator=g) * 4.0),
        ("layernorm", torch.randn(3, 1500, generator=g)),
        ("layernorm", torch.randn(7, 1000, generator=g) * 2.0),
        ("layernorm", torch.randn(4, 4100, generator=g) * 4.0 + torch.tensor([100.0, -300.0, 1e3, 0.0])[:, None]),
        ("layernorm", torch.randn(3, 3000, generator=g) * 0.5 + 250.0),
        ("layernorm", torch.randn(2, 32768, generator=g) * 2.0 - 3.0),
    ]


def _check() -> int:
    """Both kernels on every case, BLOCK 1024 and 2048 (several steps, a partial last step),
    rows 1, 2 and 4, one program per row block or 1-2 programs looping over all of them; non-zero
    exit if any output misses rows_one_barrier's tolerances."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    # The loops' runtime bounds need its numpy >= 2.4 fix of the interpreter's scalar __index__.
    from d2k_profile import interpreter

    dev = "cpu" if interpreter.apply() else "cuda"
    failures = 0
    for op, x in _check_cases():
        m, n = x.shape
        x = x.to(dev, torch.bfloat16)
        w, b = torch.randn(n).to(dev, torch.bfloat16), torch.randn(n).to(dev, torch.bfloat16)
        ref = _reference(op, x, w, b)
        for block, rows, programs in ((1024, 1, 0), (1024, 2, 0), (2048, 1, 1), (1024, 4, 1), (1024, 1, 2)):
            if rows == 4 and n > 4100:
                continue
            if op == "softmax":
                out = run_softmax_two_pass(x, 4, block, rows, programs)
            else:
                out = run_layernorm_two_pass(x, w, b, 4, block, rows, programs)
            err = _mismatch(op, out, ref)
            failures += err is not None
            print(json.dumps({"check": op, "M": m, "N": n, "BLOCK": block, "rows": rows, "programs": programs,
                              "ok": err is None, **({"error": err} if err else {})}), flush=True)
    print(json.dumps({"check": "done", "failures": failures}))
    return 1 if failures else 0


def _jobs(op: str, m: int, n: int):
    """(kernel name, setting, runner taking (x, w, b)) in sweep order, after copy and expert. A
    per_sm cap that does not shrink the grid below one program per row block is skipped (it
    would repeat per_sm 0); ``programs`` is the grid actually launched."""
    for nw, c, rows in _settings(n):
        if n == 32768 or c == 16:
            setting = {"num_warps": nw, "C": c, "rows": rows}
            if op == "softmax":
                yield "one_barrier", setting, lambda x, w, b, s=setting: run_softmax(x, s["num_warps"], s["C"], s["rows"])
            else:
                yield "one_barrier", setting, lambda x, w, b, s=setting: run_layernorm(x, w, b, s["num_warps"], s["C"], s["rows"])
    sms = _num_sms()
    for nw, block, rows, per_sm in _two_pass_settings(n):
        blocks = triton.cdiv(m, rows)
        if per_sm and sms * per_sm >= blocks:
            continue
        setting = {"num_warps": nw, "BLOCK": block, "rows": rows, "per_sm": per_sm,
                   "programs": sms * per_sm if per_sm else blocks}
        kw = {"num_warps": nw, "block": block, "rows": rows, "programs": sms * per_sm}
        if op == "softmax":
            yield "two_pass_l2", setting, lambda x, w, b, kw=kw: run_softmax_two_pass(x, **kw)
        else:
            yield "two_pass_l2", setting, lambda x, w, b, kw=kw: run_layernorm_two_pass(x, w, b, **kw)


def _sweep(op: str, m: int, n: int, expert, emit, reps: int, shard: tuple[int, int] | None, counter: list) -> None:
    """Copy, expert, the one-barrier subset and every two-pass setting on one workload, all on
    the same x. With shard (i, k): only launch every k-th job once, to compile it (no timing)."""
    x = torch.randn(m, n, device=DEVICE, dtype=torch.bfloat16)
    w = torch.randn(n, device=DEVICE, dtype=torch.bfloat16)
    b = torch.randn(n, device=DEVICE, dtype=torch.bfloat16)
    expert_call = functools.partial(expert.run, x) if op == "softmax" else functools.partial(expert.run, x, w, b)
    jobs = [("expert", {}, lambda x, w, b: expert_call())] + list(_jobs(op, m, n))
    if shard is not None:
        for kernel, setting, fn in jobs:
            # One launch per distinct compile: per_sm is only the grid, and the two-pass kernels
            # do not specialize on N (all N here are multiples of 16).
            key = (op, kernel, tuple(sorted((k, v) for k, v in setting.items() if k not in ("per_sm", "programs"))),
                   None if kernel == "two_pass_l2" else n)
            if key in counter[1]:
                continue
            counter[1].add(key)
            counter[0] += 1
            if counter[0] % shard[1] == shard[0]:
                fn(x, w, b)
        torch.cuda.synchronize()
        return
    nbytes = 2 * x.numel() * x.element_size() + (2 * n * w.element_size() if op == "layernorm" else 0)
    ref = _reference(op, x, w, b)
    base = {"op": op, "M": m, "N": n, "dtype": "bf16"}
    y = torch.empty_like(x)
    _record(emit, base, "copy", functools.partial(y.copy_, x), {}, None, 2 * x.numel() * x.element_size(), reps)
    for _ in range(3):  # let the expert's autotune settle before it is timed
        expert_call()
    torch.cuda.synchronize()
    for kernel, setting, fn in jobs:
        call = functools.partial(fn, x, w, b)
        if kernel == "two_pass_l2":
            def emit_with_resources(rec: dict, nw=setting["num_warps"], per_sm=setting["per_sm"]) -> None:
                emit({**rec, **_resources(nw, per_sm)} if "ms" in rec else rec)
            _record(emit_with_resources, base, kernel, call, setting, ref, nbytes, reps)
        else:
            _record(emit, base, kernel, call, setting, ref, nbytes, reps)


def _summary(records: list[dict]) -> None:
    """One line per workload: copy, expert, best one-barrier, best two-pass (fraction, ms)."""
    by_wl: dict = {}
    for r in records:
        if "ms" in r:
            by_wl.setdefault((r["op"], r["M"], r["N"]), {}).setdefault(r["kernel"], []).append(r)
    for (op, m, n), kinds in by_wl.items():
        parts = []
        for kernel in ("copy", "expert", "one_barrier", "two_pass_l2"):
            if kernel in kinds:
                best = min(kinds[kernel], key=lambda r: r["ms"])
                keys = {k: v for k, v in best.items() if k in ("num_warps", "C", "BLOCK", "rows", "per_sm",
                                                               "regs", "ctas_per_sm")}
                parts.append(f"{kernel} {best['frac']:.3f} {best['ms']:.4f}ms {keys if keys else ''}".rstrip())
        print(f"# {op} {m}x{n}: " + " | ".join(parts), flush=True)


def main(argv=None) -> int:
    p = sweep_parser(__doc__.split("\n")[0])
    p.add_argument("--warm", action="store_true", help="compile only (with --shard I/K), no timing")
    p.add_argument("--shard", default="0/1", help="I/K: with --warm, this process takes every K-th job")
    args = p.parse_args(argv)
    if args.check:
        return _check()
    shard = tuple(int(v) for v in args.shard.split("/")) if args.warm else None
    records: list[dict] = []
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.out, "w")) if args.out else None

        def emit(rec: dict) -> None:
            records.append(rec)
            print(json.dumps(rec), flush=True)
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()

        experts: dict = {}
        counter = [-1, set()]  # --warm: job index, compile keys seen
        torch.manual_seed(0)
        for op, m, n in WORKLOADS:
            if args.only in f"{op} {m}x{n}":
                if op not in experts:
                    experts[op] = _load_expert(op)
                _sweep(op, m, n, experts[op], emit, args.reps, shard, counter)
    _summary(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
