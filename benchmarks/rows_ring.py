"""Long-row softmax and LayerNorm on the H200: the expert's shared-memory kernel and the ring candidates.

Why: every Triton row design measured on the H200 left softmax 1024x32768 and LayerNorm
4096x8192 / 1024x32768 at 0.58-0.77 of the 4.3 TB/s copy bandwidth. Two CUDA candidates were
written to keep each SM's loads in flight across rows:

* the ring (benchmarks/row_ring_softmax.cu, benchmarks/row_ring_layernorm.cu): persistent CTAs
  refill a shared-memory ring of row tiles with one cp.async.bulk each, as soon as the tile is in
  registers (``vpt`` 16-byte vectors per thread) or, with ``vpt`` 0, after two passes over the
  tile in shared memory; ``persistent`` False gives one CTA per tile instead; ``split`` > 1 splits
  a row over a thread-block cluster that merges statistics through distributed shared memory;
* what the sweep of the ring found best on long softmax rows, written as the expert's kernel
  (tasks/softmax/expert/softmax_smem_rows.cu): one CTA per row or 64 KB row slice, one bulk copy,
  two passes over shared memory, ~40 registers a thread so that three CTAs share an SM.

Per workload this script times a device copy of the same bytes, the expert's Triton path, the
expert's ``run`` (what d2k-profile times), the shared-memory kernel at every thread count and
valid split (softmax rows of 64 KB or more), and with ``--ring`` every ring geometry. Every
setting is checked against torch (fp32 math, then the task's tolerance) on fresh inputs before it
is timed; a mismatch is printed and the setting is not timed. Timing is rows_one_barrier's: CUDA
events around each call after a 240 MB read sweep of L2, the GPU spun ahead of the queue, median
of R calls. Fractions are of 4.3 TB/s.

GPU only (PYTHONPATH=.): ``python benchmarks/rows_ring.py [--only softmax|layernorm] [--ring]
[--reps R] [--out FILE] [--check-only]``. ``--check-only`` runs the correctness cases alone
(ragged N, a partial last tile, tiny rows, a misaligned data pointer, split rows) and exits
non-zero on a mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NamedTuple

import torch

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from d2k_profile.loader import load_module  # noqa: E402
from rows_one_barrier import _bench  # noqa: E402

BANDWIDTH = 4.3e12  # bytes/s: the H200's measured copy bandwidth
WORKLOADS = [("softmax", 8192, 1024, torch.bfloat16), ("softmax", 4096, 8192, torch.bfloat16),
             ("softmax", 1024, 32768, torch.bfloat16), ("softmax", 128, 262144, torch.float32),
             ("layernorm", 16384, 1024, torch.bfloat16), ("layernorm", 8192, 4096, torch.bfloat16),
             ("layernorm", 4096, 8192, torch.bfloat16), ("layernorm", 1024, 32768, torch.bfloat16)]
# Correctness-only cases: ragged rows, a partial last tile, tiny rows, splits that are not the default.
CHECKS = [("softmax", 5, 1500, torch.bfloat16), ("softmax", 37, 1000, torch.float32),
          ("softmax", 3, 7, torch.bfloat16), ("softmax", 9, 40000, torch.bfloat16),
          ("softmax", 130, 1024, torch.bfloat16), ("softmax", 3, 262144, torch.float32),
          ("softmax", 5, 32768, torch.bfloat16), ("softmax", 2, 65536, torch.float32),
          ("layernorm", 5, 1500, torch.bfloat16), ("layernorm", 3, 7, torch.bfloat16),
          ("layernorm", 33, 4096, torch.bfloat16), ("layernorm", 7, 40000, torch.bfloat16),
          ("layernorm", 3, 32768, torch.bfloat16)]

RING_SOFTMAX_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int softmax_ring_launch(const void* x, void* y, int is_bf16, int M, int N, int threads, int team,
                                   int vpt, int stages, int split, int bulk, int persistent, cudaStream_t stream);

at::Tensor ring_softmax(const at::Tensor& x, int64_t threads, int64_t team, int64_t vpt, int64_t stages,
                        int64_t split, bool persistent) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x: contiguous 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kFloat, "x: bfloat16 or float32");
  const at::cuda::CUDAGuard guard(x.device());
  auto y = at::empty_like(x);
  // Bulk copies and 16-byte stores need 16-byte aligned rows; otherwise the threads copy.
  const bool bulk = x.size(1) * x.element_size() % 16 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0;
  const int err = softmax_ring_launch(x.data_ptr(), y.data_ptr(), x.scalar_type() == at::kBFloat16, x.size(0),
                                      x.size(1), threads, team, vpt, stages, split, bulk, persistent,
                                      at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "softmax_ring_launch: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
"""
RING_LAYERNORM_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int layernorm_ring_launch(const void* x, const void* weight, const void* bias, void* y, int M, int N,
                                     int threads, int team, int vpt, int stages, int split, int bulk,
                                     int persistent, cudaStream_t stream);

at::Tensor ring_layernorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, int64_t threads,
                          int64_t team, int64_t vpt, int64_t stages, int64_t split, bool persistent) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous() && x.scalar_type() == at::kBFloat16,
              "x: contiguous 2-D bfloat16 CUDA tensor");
  TORCH_CHECK(weight.is_contiguous() && bias.is_contiguous() && weight.numel() == x.size(1) &&
              bias.numel() == x.size(1) && weight.scalar_type() == at::kBFloat16 &&
              bias.scalar_type() == at::kBFloat16, "weight, bias: contiguous bfloat16 [N]");
  const at::cuda::CUDAGuard guard(x.device());
  auto y = at::empty_like(x);
  // Bulk copies and 16-byte stores need 16-byte aligned rows; otherwise the threads copy.
  const bool bulk = x.size(1) % 8 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0;
  const int err = layernorm_ring_launch(x.data_ptr(), weight.data_ptr(), bias.data_ptr(), y.data_ptr(), x.size(0),
                                        x.size(1), threads, team, vpt, stages, split, bulk, persistent,
                                        at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "layernorm_ring_launch: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
"""


class RingPlan(NamedTuple):
    """A ring candidate's geometry: `split` CTAs per row (a cluster), `team` threads per row,
    `vpt` 16-byte vectors per thread held in registers (0: the tile stays in shared memory),
    `threads // team` rows per tile, `stages` tiles in the ring, and a persistent grid or one
    CTA per tile."""

    threads: int
    team: int
    vpt: int
    stages: int
    split: int = 1
    persistent: bool = True


_rings: dict = {}


def _ring(op: str):
    """The ring candidate of ``op``, built once by load_inline."""
    if op not in _rings:
        from torch.utils.cpp_extension import load_inline

        src = (HERE / f"row_ring_{op}.cu").read_text()
        bind = RING_SOFTMAX_BIND if op == "softmax" else RING_LAYERNORM_BIND
        _rings[op] = load_inline(name=f"row_ring_{op}", cpp_sources=bind, cuda_sources=src,
                                 functions=[f"ring_{op}"], extra_cuda_cflags=["-O3", "-std=c++17"])
    return _rings[op]


def _experts():
    return {op: load_module(ROOT / "tasks" / op / "expert", f"expert_{op}") for op in ("softmax", "layernorm")}


def _inputs(op: str, m: int, n: int, dtype, seed: int, misalign: bool = False):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if misalign:  # a contiguous view whose data pointer is one element past a 16-byte boundary
        flat = torch.randn(m * n + 1, generator=g, device="cuda", dtype=torch.float32).to(dtype)
        x = flat[1:].view(m, n)
    else:
        x = torch.randn(m, n, generator=g, device="cuda", dtype=torch.float32).to(dtype)
    if op == "softmax":
        return (x * 4,) if not misalign else (x,)
    w = (1 + 0.1 * torch.randn(n, generator=g, device="cuda")).to(dtype)
    b = (0.1 * torch.randn(n, generator=g, device="cuda")).to(dtype)
    return (x + 1.0, w, b) if not misalign else (x, w, b)


def _reference(op: str, args) -> torch.Tensor:
    if op == "softmax":
        return torch.softmax(args[0].float(), dim=-1)
    x, w, b = args
    return torch.nn.functional.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), 1e-5)


def _mismatch(op: str, out: torch.Tensor, ref: torch.Tensor) -> str | None:
    """The tasks' tolerances: softmax relative (bf16 rtol 1.6e-2, fp32 1e-4), LayerNorm atol 1e-2 /
    rtol 2e-2, and a relative L2 bound; NaN or an unwritten element never passes."""
    o = out.float()
    if not torch.isfinite(o).all():
        return "non-finite output"
    if op == "softmax":
        rtol, atol, l2 = (1.6e-2, 1e-6, 1e-2) if out.dtype == torch.bfloat16 else (1e-4, 1e-9, 2e-5)
    else:
        rtol, atol, l2 = 2e-2, 1e-2, 1e-2
    bad = ((o - ref).abs() > atol + rtol * ref.abs()).sum().item()
    rel = ((o - ref).norm() / ref.norm()).item()
    if bad or rel > l2:
        return f"{bad} elements out of tolerance, rel L2 {rel:.2e}"
    return None


def _ring_call(op: str, args, plan: RingPlan):
    p = (plan.threads, plan.team, plan.vpt, plan.stages, plan.split, plan.persistent)
    if op == "softmax":
        return lambda: _ring(op).ring_softmax(args[0], *p)
    return lambda: _ring(op).ring_layernorm(*args, *p)


def _triton_call(mod, op: str, args):
    if op == "layernorm":
        return lambda: mod.run(*args)
    x = args[0]
    y = torch.empty_like(x)
    if x.shape[1] <= mod.MAX_ROW_ON_CHIP:
        return lambda: mod._softmax_on_chip(x, y)
    return lambda: mod._softmax_split_rows(x, y)


def _smem_settings(mod, n: int, elem: int) -> list[tuple[int, int]]:
    """(threads, split) of the expert's shared-memory kernel: every thread count, every split
    that keeps slices aligned and within shared memory."""
    if n * elem < mod.SLICE_BYTES:
        return []
    vec = 16 // elem
    splits = [s for s in (1, 2, 4, 8, 16) if n * elem // s <= 200 * 1024 and (s == 1 or n % (s * vec) == 0)]
    return [(t, s) for s in splits for t in (128, 256, 512, 1024)]


def _ring_plans(op: str, n: int, elem: int) -> list[RingPlan]:
    """Ring geometries: rows per tile, ring depth, cluster split, vectors per thread in registers
    (or none), persistent or one CTA per tile."""
    seen: list[RingPlan] = []
    vec = 16 // elem
    wb = 0 if op == "softmax" else 2
    for split in (1, 2, 4, 8, 16):
        if n % (split * vec) or n * elem // split > 128 * 1024:
            continue
        vecs = n // split // vec
        for vpt in (2, 4, 8):  # the row held in registers: vpt 16-byte vectors per thread
            team = max(32, -(-(-(-vecs // vpt)) // 32) * 32)
            if team > 1024 or team * vpt - vecs >= 32 * vpt:
                continue
            for rows in ((1, 2, 4, 8, 16) if split == 1 else (1,)):
                threads = team * rows
                if threads > 1024 or (threads > 512 and (vpt * vec > 32)) or (threads < 64 and rows > 1):
                    continue
                slot = rows * vecs * 16
                free = 227 * 1024 - 2048 - wb * vecs * 16
                seen += [RingPlan(threads, team, vpt, st, split) for st in (1, 2, 3, 4, 6, 8) if st * slot <= free]
        for threads in (128, 256, 512, 1024):  # vpt 0: the tile stays in shared memory
            for rows in ((1, 2, 4, 8, 16, 32) if split == 1 else (1,)):
                team = threads // rows
                if team < 32 or team % 32 or team > vecs:
                    continue
                slot = rows * vecs * 16
                free = 227 * 1024 - 2048 - wb * vecs * 16
                seen += [RingPlan(threads, team, 0, st, split) for st in (1, 2, 3) if st * slot <= free]
    seen = list(dict.fromkeys(seen))
    return seen + [p._replace(persistent=False) for p in seen if p.stages == 1]


def _check(mods, emit, ring: bool) -> int:
    failures = 0
    cases = [(op, m, n, dt, False) for op, m, n, dt in CHECKS] + [("softmax", 17, 32768, torch.bfloat16, True),
                                                                    ("layernorm", 17, 4096, torch.bfloat16, True)]
    for op, m, n, dtype, misalign in cases:
        elem = torch.tensor([], dtype=dtype).element_size()
        trials: list[tuple[str, object, object]] = [("run", None, lambda a: mods[op].run(*a))]
        if op == "softmax":
            trials += [("smem", (t, s), lambda a, t=t, s=s: mods[op].smem_rows_softmax(a[0], s, t))
                       for t, s in _smem_settings(mods[op], n, elem) if not misalign or s == 1]
        if ring:
            plans = _ring_plans(op, n, elem)
            trials += [("ring", p, lambda a, p=p: _ring_call(op, a, p)()) for p in plans[:: max(1, len(plans) // 12)]]
        for kind, setting, fn in trials:
            for seed in (0, 1):
                args = _inputs(op, m, n, dtype, seed, misalign)
                try:
                    why = _mismatch(op, fn(args), _reference(op, args))
                except RuntimeError as err:
                    why = f"error: {err}"
                emit({"kind": "check", "impl": kind, "op": op, "M": m, "N": n, "dtype": str(dtype), "misaligned": misalign,
                      "setting": setting._asdict() if isinstance(setting, RingPlan) else setting, "seed": seed,
                      "ok": why is None, "why": why})
                if why is not None and "invalid configuration" not in why:
                    failures += 1
                    print(f"MISMATCH {kind} {op} {m}x{n} {dtype} misaligned={misalign} {setting}: {why}", flush=True)
    return failures


def _sweep(mods, emit, only: str | None, reps: int, ring: bool) -> None:
    for op, m, n, dtype in WORKLOADS:
        if only and op != only:
            continue
        mod = mods[op]
        elem = torch.tensor([], dtype=dtype).element_size()
        nbytes = 2 * m * n * elem
        args = _inputs(op, m, n, dtype, 0)
        ref = _reference(op, args)
        src = args[0]
        dst = torch.empty_like(src)
        base = {"op": op, "M": m, "N": n, "dtype": str(dtype)}

        def timed(kind: str, fn, extra: dict) -> None:
            try:
                why = _mismatch(op, fn(), ref) if kind != "copy" else None
            except RuntimeError as err:
                why = f"error: {err}"
            if why is not None:
                emit({**base, "kind": kind, **extra, "skipped": why})
                return
            ms = _bench(fn, reps)
            emit({**base, "kind": kind, **extra, "ms": ms, "fraction": nbytes / (ms * 1e-3) / BANDWIDTH})

        timed("copy", lambda: dst.copy_(src), {})
        timed("triton", _triton_call(mod, op, args), {})
        timed("expert", lambda: mod.run(*args), {})
        if op == "softmax":
            for t, s in _smem_settings(mod, n, elem):
                timed("smem", lambda t=t, s=s: mod.smem_rows_softmax(args[0], s, t), {"threads": t, "split": s})
        if ring:
            for plan in _ring_plans(op, n, elem):
                timed("ring", _ring_call(op, args, plan), {"plan": plan._asdict()})


def _summary(records: list[dict]) -> None:
    print("\nop          workload          copy   triton expert  best smem kernel        best ring plan")
    keys = list(dict.fromkeys((r["op"], r["M"], r["N"]) for r in records if "ms" in r))
    for k in keys:
        rows = [r for r in records if (r.get("op"), r.get("M"), r.get("N")) == k and "ms" in r]
        best = {kind: min((r for r in rows if r["kind"] == kind), key=lambda r: r["ms"], default=None)
                for kind in ("copy", "triton", "expert", "smem", "ring")}
        frac = {kind: f"{r['fraction']:.3f}" if r else "  -  " for kind, r in best.items()}
        smem = f"{frac['smem']} {best['smem']['threads']}x{best['smem']['split']}" if best["smem"] else "  -  "
        ring = f"{frac['ring']} {best['ring']['plan']}" if best["ring"] else "  -  "
        print(f"{k[0]:<11} {k[1]}x{k[2]:<10} {frac['copy']}  {frac['triton']}  {frac['expert']}  {smem:<22} {ring}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("softmax", "layernorm"))
    ap.add_argument("--ring", action="store_true", help="also check and time every ring candidate geometry")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--check-only", action="store_true")
    args = ap.parse_args(argv)
    records: list[dict] = []
    sink = args.out.open("w") if args.out else None

    def emit(rec: dict) -> None:
        records.append(rec)
        if sink:
            sink.write(json.dumps(rec) + "\n")
            sink.flush()

    mods = _experts()
    failures = _check(mods, emit, args.ring)
    print(f"correctness: {sum(1 for r in records if r['kind'] == 'check' and r['ok'])} ok, {failures} mismatches",
          flush=True)
    if not args.check_only:
        _sweep(mods, emit, args.only, args.reps, args.ring)
        _summary(records)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
