"""Check and time every pilot submission on a GPU: reference, expert and every corpus kernel.

For each task and each of its submissions (the expert and every ``corpus/<task>/*`` folder) a fresh
subprocess imports the submission, checks it against the reference on every workload and seed, and
times it against the reference with CUDA events (cold L2, median of repetitions). A crash in one
submission costs only its own row.

    PYTHONPATH=. python3 benchmarks/verify_pilots.py [--tasks softmax layernorm gemm_bf16] [--out results.jsonl]

This is the foundation's verification script; ``d2k-profile`` is the full, cheat-resistant profiler.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def submissions_of(task_id: str) -> list[Path]:
    corpus = sorted(p.parent for p in (REPO / "corpus" / task_id).glob("*/submission.py"))
    return [REPO / "tasks" / task_id / "expert"] + corpus


def time_call(fn, args, flush, budget_s: float = 0.4, max_reps: int = 50) -> list[float]:
    """Milliseconds per call: L2 flushed before each call (outside the events), warmup first."""
    import torch

    fn(*args)
    torch.cuda.synchronize()
    samples: list[float] = []
    spent = 0.0
    while len(samples) < max_reps and (len(samples) < 3 or spent < budget_s):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
        spent += samples[-1] / 1e3
    return samples


def worker(task_id: str, sub_dir: Path) -> list[dict]:
    """Run one submission over every workload of its task (in this process)."""
    import torch

    from d2k_profile.checks import tolerance_for
    from d2k_profile.correctness import compare_all
    from d2k_profile.loader import load_module
    from d2k_spec.inputs_check import load_reference
    from d2k_spec.task import load_task

    task = load_task(REPO / "tasks" / task_id)
    ref = load_reference(task)
    sub = load_module(sub_dir, f"sub_{task_id}_{sub_dir.name}")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 256 << 20), dtype=torch.uint8, device="cuda")
    rows = []
    for w in task.workloads:
        row = {"task": task_id, "submission": sub_dir.name, "workload": w.name}
        try:
            tol = tolerance_for(task, w)
            worst = 0.0
            for seed in w.seeds:
                inputs = ref.make_inputs(w, seed, "cuda")
                expected = ref.reference(*inputs)
                check = compare_all(sub.run(*inputs), expected, tol)
                if not check.ok:
                    raise AssertionError(f"seed {seed}: {check.reason}")
                worst = max(worst, check.rel_l2_err)
            inputs = ref.make_inputs(w, w.seeds[0], "cuda")
            ref_ms = time_call(ref.reference, inputs, flush)
            sub_ms = time_call(sub.run, inputs, flush)
            ref_med, sub_med = statistics.median(ref_ms), statistics.median(sub_ms)
            row.update(status="ok", rel_l2=worst, ref_ms=ref_med, sub_ms=sub_med, speedup=ref_med / sub_med,
                       tflops=ref.flops(dict(w.params)) / sub_med / 1e9, gbps=ref.bytes_moved(dict(w.params)) / sub_med / 1e6,
                       reps=len(sub_ms))
        except Exception as exc:  # report and go on with the next workload
            row.update(status="fail", error=f"{type(exc).__name__}: {exc}"[:600])
            if "CUDA" in str(exc) or "illegal" in str(exc):
                rows.append(row)
                break  # the context may be poisoned
        rows.append(row)
        torch.cuda.empty_cache()
    return rows


def warm(task_id: str, sub_dir: Path) -> None:
    """Build the submission (CUDA extension, Triton JIT) and run the smoke workload once: the
    compile caches are shared, so the timed subprocesses later start warm."""
    from d2k_profile.loader import load_module
    from d2k_spec.inputs_check import load_reference
    from d2k_spec.task import load_task

    task = load_task(REPO / "tasks" / task_id)
    sub = load_module(sub_dir, f"warm_{task_id}_{sub_dir.name}")
    sub.run(*load_reference(task).make_inputs(task.smoke, 0, "cuda"))


def warm_all(pairs: list[tuple[str, Path]], timeout: float) -> None:
    """Compile every submission in parallel processes (nvcc builds dominate otherwise)."""
    procs = [(t, d, subprocess.Popen([sys.executable, __file__, "--warm", t, str(d)], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)) for t, d in pairs]
    deadline = time.time() + timeout
    for task_id, sub_dir, proc in procs:
        try:
            out, _ = proc.communicate(timeout=max(1.0, deadline - time.time()))
            if proc.returncode:
                print(f"warm-up failed: {task_id}/{sub_dir.name}:\n{out[-1500:]}", flush=True)
        except subprocess.TimeoutExpired:
            proc.kill()
            print(f"warm-up timed out: {task_id}/{sub_dir.name}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="*", default=["softmax", "layernorm", "gemm_bf16"])
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "pilots.jsonl")
    ap.add_argument("--worker", nargs=2, metavar=("TASK", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--warm", nargs=2, metavar=("TASK", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=400.0, help="seconds per submission (compile included)")
    args = ap.parse_args()
    if args.warm:
        warm(args.warm[0], Path(args.warm[1]))
        return 0
    if args.worker:
        for row in worker(args.worker[0], Path(args.worker[1])):
            print("ROW " + json.dumps(row), flush=True)
        return 0

    started = time.time()
    warm_all([(t, d) for t in args.tasks for d in submissions_of(t)], args.timeout)
    print(f"compiled and warmed every submission in {time.time() - started:.0f} s", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as fh:
        for task_id in args.tasks:
            for sub_dir in submissions_of(task_id):
                t0 = time.time()
                try:
                    proc = subprocess.run([sys.executable, __file__, "--worker", task_id, str(sub_dir)],
                                          capture_output=True, text=True, timeout=args.timeout)
                    rows = [json.loads(line[4:]) for line in proc.stdout.splitlines() if line.startswith("ROW ")]
                    if proc.returncode != 0 or not rows:
                        rows.append({"task": task_id, "submission": sub_dir.name, "workload": "*", "status": "crash",
                                     "error": (proc.stderr or proc.stdout)[-1500:]})
                except subprocess.TimeoutExpired:
                    rows = [{"task": task_id, "submission": sub_dir.name, "workload": "*", "status": "timeout"}]
                for row in rows:
                    row["wall_s"] = round(time.time() - t0, 1)
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    ok = row["status"] == "ok"
                    print(f"{task_id:10s} {sub_dir.name:16s} {row['workload']:22s} {row['status']:7s} "
                          + (f"ref {row['ref_ms']:8.3f} ms  sub {row['sub_ms']:8.3f} ms  speedup {row['speedup']:6.3f}  "
                             f"{row['tflops']:7.1f} TFLOP/s {row['gbps']:7.0f} GB/s  relL2 {row['rel_l2']:.1e}"
                             if ok else row.get("error", "")[:300]), flush=True)
    print(f"total wall time {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
