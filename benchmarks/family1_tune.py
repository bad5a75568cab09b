"""Tuning sweeps and bandwidth ceilings for the family-1 experts, on one GPU.

    python3 benchmarks/family1_tune.py [--only scan,hist,copy] [--reps 20]

Prints three tables (CUDA events, median of ``--reps`` timed calls after warm-up, L2 flushed
before each call by writing a 256 MB buffer):

* ``scan``: the prefix_scan expert (CUDA) and its variants at other (CTA, vectors per thread),
  the Triton look-back corpus kernel at three tile sizes, and torch.cumsum, on each workload's first seed, each result checked against
  torch.cumsum (exact for int32, the task's tolerance for float32).
* ``hist``: the histogram expert at each (CTAs per SM, shared copies per CTA), plus
  torch.bincount, each result checked exactly. (The warp-aggregation variants measured in
  examples/h200/family1/tune_run2.txt were taken out of the expert after that run.)
* ``copy``: the bandwidth a plain device copy reaches at each memory-bound workload's own bytes
  (read the input bytes once, write the output bytes once) - the ceiling an elementwise-class
  kernel of that size can reach on this GPU, to set the "fraction of HBM bandwidth" of the
  experts against what the memory system gives at that size.

Numbers go to standard output; nothing is written elsewhere. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from d2k_spec.inputs_check import load_reference  # noqa: E402
from d2k_spec.task import load_tasks  # noqa: E402

_flush = None


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def time_ms(fn, reps: int) -> float:
    """Median ms of ``fn()`` over ``reps`` calls, each after an L2 flush, by CUDA events."""
    global _flush
    if _flush is None:
        _flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        _flush.fill_(1)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def _workloads(task):
    return [w for w in task.workloads]


_variants: dict = {}


def _scan_variant(cta: int, vec: int):
    """The CUDA expert scan rebuilt with another CTA size and vectors per thread."""
    if (cta, vec) not in _variants:
        from torch.utils.cpp_extension import load_inline

        folder = REPO / "tasks/prefix_scan/expert"
        src = (folder / "kernel.cu").read_text()
        src = src.replace("#define CTA 512", f"#define CTA {cta}").replace("#define VEC_PER_THREAD 4", f"#define VEC_PER_THREAD {vec}")
        bind = _load(folder / "submission.py", "scan_cuda_bind")._BIND
        _variants[(cta, vec)] = load_inline(name=f"scan_variant_{cta}_{vec}", cpp_sources=bind, cuda_sources=src,
                                            functions=["inclusive_scan"], extra_cuda_cflags=["-O3"])
    return _variants[(cta, vec)]


def _scan_state(mod, x):
    """Status words, ticket and a fresh epoch from the expert submission's own buffers."""
    tiles = (x.numel() + 4095) // 4096
    b = mod._bufs.get(x.device)
    if b is None or b[0].numel() < tiles:
        b = mod._bufs[x.device] = [torch.zeros(max(tiles, 4096), dtype=torch.int64, device=x.device),
                                   torch.zeros(1, dtype=torch.int32, device=x.device), 0]
    b[2] = b[2] % (1 << 29) + 1
    return b[0], b[1], b[2]


def scan_table(tasks, reps: int) -> None:
    task = tasks["prefix_scan"]
    ref = load_reference(task)
    expert = _load(REPO / "corpus/prefix_scan/lookback_triton/submission.py", "scan_triton")
    cuda = _load(REPO / "tasks/prefix_scan/expert/submission.py", "scan_expert")
    tol = task.tolerance["float32"]
    print("\n== scan: prefix_scan (GB/s from bytes_moved; ok = matches torch.cumsum)")
    print(f"{'workload':22s} {'variant':26s} {'ms':>9s} {'GB/s':>7s} ok")
    for w in _workloads(task):
        (x,) = ref.make_inputs(w, w.seeds[0], "cuda")
        want = torch.cumsum(x, 0, dtype=x.dtype)
        nbytes = ref.bytes_moved(dict(w.params))

        def check(y):
            if x.dtype == torch.int32:
                return bool(torch.equal(y, want))
            return bool(torch.allclose(y, want, rtol=tol.rtol, atol=tol.atol))

        rows = [("torch.cumsum", lambda: torch.cumsum(x, 0, dtype=x.dtype))]
        for block in (4096, 8192, 16384):
            def call(block=block):
                expert.TILE = block
                return expert.run(x)
            rows.append((f"triton look-back TILE={block}", call))
        rows.append(("expert (CUDA)", lambda: cuda.run(x)))
        for cta, vec in ((256, 4), (512, 8), (128, 8)):
            mod = _scan_variant(cta, vec)
            rows.append((f"cuda CTA={cta} VEC={vec}", lambda mod=mod: mod.inclusive_scan(x, *_scan_state(cuda, x))))
        for name, fn in rows:
            try:
                ok = check(fn())
                ms = time_ms(fn, reps)
                print(f"{w.name:22s} {name:26s} {ms:9.4f} {nbytes / ms / 1e6:7.0f} {ok}", flush=True)
            except Exception as exc:  # noqa: BLE001 - a failing variant is a row, not the end
                print(f"{w.name:22s} {name:26s} failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
        expert.TILE = 4096


def hist_table(tasks, reps: int) -> None:
    task = tasks["histogram"]
    ref = load_reference(task)
    expert = _load(REPO / "tasks/histogram/expert/submission.py", "hist_expert")
    defaults = (expert.BLOCKS_PER_SM, expert.COPIES)
    print("\n== hist: histogram (GB/s from bytes_moved; ok = equals torch.bincount)")
    print(f"{'workload':28s} {'variant':26s} {'ms':>9s} {'GB/s':>7s} ok")
    for w in _workloads(task):
        x, bins = ref.make_inputs(w, w.seeds[0], "cuda")
        want = torch.bincount(x, minlength=bins).to(torch.int32)
        nbytes = ref.bytes_moved(dict(w.params))
        rows = [("torch.bincount", lambda: torch.bincount(x, minlength=bins).to(torch.int32))]
        for per_sm in (2, 4):
            for copies in (1, 16):
                def call(per_sm=per_sm, copies=copies):
                    expert.BLOCKS_PER_SM, expert.COPIES = per_sm, copies
                    return expert.run(x, bins)
                rows.append((f"expert ctas/sm={per_sm} copies={copies}", call))
        for name, fn in rows:
            try:
                ok = bool(torch.equal(fn(), want))
                ms = time_ms(fn, reps)
                print(f"{w.name:28s} {name:26s} {ms:9.4f} {nbytes / ms / 1e6:7.0f} {ok}", flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"{w.name:28s} {name:26s} failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
        expert.BLOCKS_PER_SM, expert.COPIES = defaults


def copy_table(tasks, reps: int) -> None:
    print("\n== copy: a device copy of each workload's minimum bytes (half read, half written where the task writes as much as it reads)")
    print(f"{'task':18s} {'workload':28s} {'MB':>8s} {'copy ms':>9s} {'copy GB/s':>9s}")
    for tid in ("softmax", "layernorm", "rmsnorm_residual", "swiglu", "cross_entropy", "rope", "reduce_sum",
                "transpose", "prefix_scan", "histogram"):
        if tid not in tasks:
            continue
        ref = load_reference(tasks[tid])
        for w in _workloads(tasks[tid]):
            total = int(ref.bytes_moved(dict(w.params)))
            half = max(total // 2, 16) // 16 * 16
            src = torch.empty(half, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            ms = time_ms(lambda: dst.copy_(src), reps)
            print(f"{tid:18s} {w.name:28s} {2 * half / 1e6:8.1f} {ms:9.4f} {2 * half / ms / 1e6:9.0f}", flush=True)
            del src, dst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="scan,hist,copy", help="comma-separated tables: scan, hist, copy")
    ap.add_argument("--reps", type=int, default=20, help="timed calls per row (median)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("family1_tune: needs a CUDA GPU", file=sys.stderr)
        return 2
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    tasks = load_tasks(REPO / "tasks")
    only = set(args.only.split(","))
    if "hist" in only:
        hist_table(tasks, args.reps)
    if "copy" in only:
        copy_table(tasks, args.reps)
    if "scan" in only:  # last: a look-back bug would spin until the caller's timeout
        scan_table(tasks, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
