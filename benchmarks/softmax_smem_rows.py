"""The softmax expert's long-row kernel (rows in shared memory) against its Triton path and a copy.

Why: every Triton row design measured on the H200 left softmax 1024x32768 and 128x262144 fp32 at
0.58-0.73 of the 4.3 TB/s copy bandwidth. The expert's CUDA kernel for rows of 64 KB or more
(tasks/softmax/expert/softmax_smem_rows.cu) takes each row, or each 64 KB slice of a row split over
a thread-block cluster, into shared memory with one bulk copy, reads it twice from there and writes
y once, with ~40 registers a thread so that three CTAs share an SM. It is what a sweep of 1,451
settings of two CUDA candidates found best on those rows (a persistent ring of bulk-copied tiles,
rows in registers or in shared memory; the candidates, benchmarks/row_ring_softmax.cu and
row_ring_layernorm.cu, and the sweep's --ring mode are in commit a7de729; results in
examples/h200/dec05/ring_sweep2.jsonl and docs/h200-results.md).

Per workload of the softmax task this script times a device copy of the same bytes, the expert's
Triton path, the expert's ``run`` (what d2k-profile times) and the shared-memory kernel at every
thread count and valid cluster split. Every setting is checked against torch (fp32 math, then the
task's tolerance) on fresh inputs before it is timed; a mismatch is printed and the setting is not
timed. Timing is rows_one_barrier's: CUDA events around each call after a 240 MB read sweep of L2,
the GPU spun ahead of the queue, median of R calls. Fractions are of 4.3 TB/s.

GPU only (PYTHONPATH=.): ``python benchmarks/softmax_smem_rows.py [--reps R] [--out FILE]
[--check-only]``. ``--check-only`` runs the correctness cases alone (ragged and tiny rows, a
misaligned data pointer, every cluster split) and exits non-zero on a mismatch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from d2k_profile.loader import load_module  # noqa: E402
from checked_sweep import check_then_time, run_checked_sweep  # noqa: E402
from rows_one_barrier import _bench  # noqa: E402

BANDWIDTH = 4.3e12  # bytes/s: the H200's measured copy bandwidth
WORKLOADS = [(8192, 1024, torch.bfloat16), (4096, 8192, torch.bfloat16), (1024, 32768, torch.bfloat16),
             (128, 262144, torch.float32)]
# Correctness-only cases: ragged and tiny rows (the Triton path), a partial cluster, every split.
CHECKS = [(5, 1500, torch.bfloat16), (37, 1000, torch.float32), (3, 7, torch.bfloat16), (9, 40000, torch.bfloat16),
          (130, 1024, torch.bfloat16), (3, 262144, torch.float32), (5, 32768, torch.bfloat16), (2, 65536, torch.float32)]


def _expert():
    return load_module(ROOT / "tasks" / "softmax" / "expert", "expert_softmax")


def _inputs(m: int, n: int, dtype, seed: int, misalign: bool = False) -> torch.Tensor:
    """Logits of std 4 (peaked rows); ``misalign``: a contiguous view whose data pointer is one
    element past a 16-byte boundary, so that the kernel must copy the row itself."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    flat = torch.randn(m * n + int(misalign), generator=g, device="cuda", dtype=torch.float32).to(dtype) * 4
    return flat[int(misalign):].view(m, n)


def _mismatch(out: torch.Tensor, x: torch.Tensor) -> str | None:
    """The task's tolerances against torch in fp32: relative (bf16 rtol 1.6e-2, fp32 1e-4) and a
    relative L2 bound; NaN or an unwritten element never passes."""
    ref = torch.softmax(x.float(), dim=-1)
    o = out.float()
    if not torch.isfinite(o).all():
        return "non-finite output"
    rtol, atol, l2 = (1.6e-2, 1e-6, 1e-2) if out.dtype == torch.bfloat16 else (1e-4, 1e-9, 2e-5)
    bad = ((o - ref).abs() > atol + rtol * ref.abs()).sum().item()
    rel = ((o - ref).norm() / ref.norm()).item()
    if bad or rel > l2:
        return f"{bad} elements out of tolerance, rel L2 {rel:.2e}"
    return None


def _triton_call(mod, x: torch.Tensor):
    y = torch.empty_like(x)
    launch = mod._softmax_on_chip if x.shape[1] <= mod.MAX_ROW_ON_CHIP else mod._softmax_split_rows
    return lambda: (launch(x, y), y)[1]


def _smem_settings(mod, n: int, elem: int) -> list[tuple[int, int]]:
    """(threads, split) of the shared-memory kernel: every thread count, every split that keeps
    slices aligned and within shared memory, for rows of at least one slice."""
    if n * elem < mod.SLICE_BYTES:
        return []
    vec = 16 // elem
    splits = [s for s in (1, 2, 4, 8, 16) if n * elem // s <= 200 * 1024 and (s == 1 or n % (s * vec) == 0)]
    return [(t, s) for s in splits for t in (128, 256, 512, 1024)]


def _check(mod, emit) -> int:
    failures = 0
    for m, n, dtype, misalign in [(m, n, dt, False) for m, n, dt in CHECKS] + [(17, 32768, torch.bfloat16, True)]:
        elem = torch.tensor([], dtype=dtype).element_size()
        trials = [("run", None, mod.run)]
        trials += [("smem", (t, s), lambda x, t=t, s=s: mod.smem_rows_softmax(x, s, t))
                   for t, s in _smem_settings(mod, n, elem) if not misalign or s == 1]
        for kind, setting, fn in trials:
            for seed in (0, 1):
                x = _inputs(m, n, dtype, seed, misalign)
                try:
                    why = _mismatch(fn(x), x)
                except RuntimeError as err:
                    why = f"error: {err}"
                emit({"kind": "check", "impl": kind, "M": m, "N": n, "dtype": str(dtype), "misaligned": misalign,
                      "setting": setting, "seed": seed, "ok": why is None, "why": why})
                if why is not None:
                    failures += 1
                    print(f"MISMATCH {kind} {m}x{n} {dtype} misaligned={misalign} {setting}: {why}", flush=True)
    return failures


def _sweep(mod, emit, reps: int) -> None:
    for m, n, dtype in WORKLOADS:
        elem = torch.tensor([], dtype=dtype).element_size()
        nbytes = 2 * m * n * elem
        x = _inputs(m, n, dtype, 0)
        dst = torch.empty_like(x)
        base = {"M": m, "N": n, "dtype": str(dtype)}
        timed = check_then_time(emit, base, lambda out: _mismatch(out, x), _bench, reps, nbytes, BANDWIDTH)
        timed("copy", lambda: dst.copy_(x), {}, check=False)
        timed("triton", _triton_call(mod, x), {})
        timed("expert", lambda: mod.run(x), {})
        for t, s in _smem_settings(mod, n, elem):
            timed("smem", lambda t=t, s=s: mod.smem_rows_softmax(x, s, t), {"threads": t, "split": s})


def _summary(records: list[dict]) -> None:
    print("\nworkload           copy   triton  expert  shared-memory kernel (best threads x split)")
    for m, n, _ in WORKLOADS:
        rows = [r for r in records if r.get("M") == m and r.get("N") == n and "ms" in r]
        best = {kind: min((r for r in rows if r["kind"] == kind), key=lambda r: r["ms"], default=None)
                for kind in ("copy", "triton", "expert", "smem")}
        frac = {kind: f"{r['fraction']:.3f}" if r else "  -  " for kind, r in best.items()}
        smem = f"{frac['smem']} ({best['smem']['threads']} x {best['smem']['split']})" if best["smem"] else "  -  "
        print(f"{m}x{n:<12} {frac['copy']}  {frac['triton']}   {frac['expert']}   {smem}")


def main(argv=None) -> int:
    mod = _expert()
    return run_checked_sweep(__doc__.split("\n\n")[0], lambda emit: _check(mod, emit),
                             lambda emit, reps: _sweep(mod, emit, reps), _summary, argv)


if __name__ == "__main__":
    raise SystemExit(main())
