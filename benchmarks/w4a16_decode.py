"""The w4a16 expert's tensor-core decode kernel (M <= 16) at every setting, against its Triton kernels.

Why: at M = 1 and M = 16 the product is bound by reading the packed int4 weights (25 and 34 MB),
yet the expert's Triton GEMV read them at 0.17 of the H200's 4.3 TB/s and its small-M tl.dot
kernel at 0.10 (docs/h200-results.md, family 2). The decode kernel
(tasks/w4a16_gemm/expert/w4a16_decode_mma.cu) feeds the dequantised weights to mma.m16n8k16 as the
16-row operand and the activations as the 8-column one (swap-AB), so its per-weight work is the
dequantisation alone. Its fragment mapping (nibble pairs (i, i + 4) from one lop3, activations
paired to match by byte_perm) was first checked by a NumPy emulation of one warp; this sweep
checked it on an H100 (352 checks, 0 mismatches) and chose the expert's DECODE_SETTINGS.

Per timed workload with M <= 16 this script times the reference (dequantise + torch.matmul), a
device copy of the packed weights (it reads and writes them, so it bounds from above the time to
read them once), the expert's ``run``, its Triton kernels alone (``triton_run``) and the decode
kernel at every instantiated (tiles, warps, depth). Every setting is first checked against an fp64
product of the exactly dequantised weights with the task's tolerances, on ragged shapes too (odd
M, N not a multiple of the tile, one and two 8-row batch tiles); a mismatch is printed and the
setting is not timed. Timing is rows_one_barrier's: CUDA events around each call after a read
sweep of L2, the GPU spun ahead of the queue, median of R calls.

GPU only (PYTHONPATH=.): ``python benchmarks/w4a16_decode.py [--reps R] [--out FILE] [--check-only]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from d2k_profile.loader import load_module  # noqa: E402
from d2k_spec.task import Distribution, Workload, load_task  # noqa: E402
from checked_sweep import check_then_time, print_best, run_checked_sweep  # noqa: E402
from rows_one_barrier import _bench  # noqa: E402

BANDWIDTH = 4.3e12  # bytes/s: the H200's measured copy bandwidth
TASK = ROOT / "tasks" / "w4a16_gemm"
# (tiles, depth) instantiated per batch-tile count (w4a16_decode_mma.cu), times the warps per CTA.
SETTINGS = {1: [(1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (2, 4), (4, 1), (4, 2)],
            2: [(1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (4, 1)]}
WARPS = (2, 4, 8)
# Correctness-only shapes (M, N, K): ragged N, odd M, one and two batch tiles, one group along K.
CHECKS = [(1, 40, 384), (5, 40, 384), (3, 264, 128), (9, 1000, 1024), (16, 136, 2048), (13, 8, 256), (1, 12288, 4096),
          (16, 8192, 8192)]


def _settings(m: int) -> list[tuple[int, int, int]]:
    return [(t, w, d) for t, d in SETTINGS[1 if m <= 8 else 2] for w in WARPS]


def _inputs(ref, m: int, n: int, k: int, seed: int):
    wl = Workload(name=f"m{m}_n{n}_k{k}", params={"M": m, "N": n, "K": k, "KP": k // 8, "G": k // 128,
                                                  "dtype": "float16"},
                  seeds=[seed], distribution=Distribution())
    return ref.make_inputs(wl, seed, "cuda")


def _exact(ref, x, qweight, scales, zeros) -> torch.Tensor:
    """fp64 x @ w^T with w = (q - zero) * scale computed in fp64 (no fp16 rounding anywhere)."""
    q = ref.unpack(qweight).double()
    w = (q - zeros.double().repeat_interleave(128, 1)) * scales.double().repeat_interleave(128, 1)
    return x.double() @ w.t()


def _mismatch(out: torch.Tensor, exact: torch.Tensor, tol) -> str | None:
    if out.shape != exact.shape or out.dtype != torch.float16:
        return f"shape/dtype {tuple(out.shape)} {out.dtype}"
    o = out.double()
    if not torch.isfinite(o).all():
        return "non-finite output"
    bad = ((o - exact).abs() > tol.atol + tol.rtol * exact.abs()).sum().item()
    rel = ((o - exact).norm() / exact.norm()).item()
    if bad or rel > tol.max_rel_l2:
        return f"{bad} elements out of tolerance, rel L2 {rel:.2e}"
    return None


def _check(mod, ref, tol, emit) -> int:
    failures = 0
    for m, n, k in CHECKS:
        trials = [("run", None, lambda *a: mod.run(*a)), ("triton", None, lambda *a: mod.triton_run(*a))]
        trials += [("decode", s, lambda *a, s=s: mod.decode_mma(*a, *s)) for s in _settings(m)]
        for seed in (0, 1):
            inputs = _inputs(ref, m, n, k, seed)
            exact = _exact(ref, *inputs)
            for kind, setting, fn in trials:
                try:
                    why = _mismatch(fn(*inputs), exact, tol)
                except RuntimeError as err:
                    why = f"error: {err}"
                emit({"kind": "check", "impl": kind, "M": m, "N": n, "K": k, "setting": setting, "seed": seed,
                      "ok": why is None, "why": why})
                if why is not None:
                    failures += 1
                    print(f"MISMATCH {kind} {m}x{n}x{k} {setting} seed {seed}: {why}", flush=True)
    return failures


def _sweep(mod, ref, task, tol, emit, reps: int) -> None:
    for wl in task.workloads:
        p = wl.params
        if wl.smoke or int(p["M"]) > mod.DECODE_MAX_M:
            continue
        inputs = ref.make_inputs(wl, wl.seeds[0], "cuda")
        exact = _exact(ref, *inputs)
        nbytes = ref.bytes_moved(p)
        base = {"workload": wl.name}

        timed = check_then_time(emit, base, lambda out: _mismatch(out, exact, tol), _bench, reps, nbytes, BANDWIDTH)
        qweight = inputs[1]
        copy = torch.empty_like(qweight)
        timed("weight_copy", lambda: copy.copy_(qweight), {}, check=False)
        timed("reference", lambda: ref.reference(*inputs), {})
        timed("expert", lambda: mod.run(*inputs), {})
        timed("triton", lambda: mod.triton_run(*inputs), {})
        for s in _settings(int(p["M"])):
            timed("decode", lambda s=s: mod.decode_mma(*inputs, *s), {"setting": s})


def _summary(records: list[dict]) -> None:
    print_best(records, ["weight_copy", "reference", "triton", "expert", "decode"], "decode",
               lambda r: f"{r['ms'] * 1e3:.1f} us {r['fraction']:.2f}")


def main(argv=None) -> int:
    task = load_task(TASK)
    tol = task.tolerance["float16"]
    ref = load_module(TASK / "reference.py", "w4a16_reference")
    mod = load_module(TASK / "expert", "w4a16_expert")
    return run_checked_sweep(__doc__.split("\n\n")[0], lambda emit: _check(mod, ref, tol, emit),
                             lambda emit, reps: _sweep(mod, ref, task, tol, emit, reps), _summary, argv)


if __name__ == "__main__":
    raise SystemExit(main())
