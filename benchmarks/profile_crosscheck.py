"""Cross-check event timing against torch.profiler kernel times, on every pilot workload.

For each workload the reference is timed with d2k_profile's own primitives (cold L2, CUDA events,
median of N calls) and, separately, under torch.profiler, where the per-call time is the sum of
the CUDA kernel durations of one call (the L2-flush and stream-hold kernels excluded). Prints one line per
workload with both medians and their ratio (target: within 3 %).
Usage: PYTHONPATH=. python benchmarks/profile_crosscheck.py softmax layernorm gemm_bf16
"""

from __future__ import annotations

import statistics
import sys

import torch

from d2k_profile import timing
from d2k_profile.loader import load_module
from d2k_spec.task import default_tasks_root, load_task

CALLS = 30


def event_median(fn, flusher) -> float:
    """The profiler's own timed call (flush, stream hold, events around the call only)."""
    impl = timing.Impl(name="reference", role="reference", call=lambda _inputs: fn())
    times = []
    for _ in range(CALLS):
        _, start, end = timing._timed_call(impl, (), flusher)
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def profiler_median(fn, flusher) -> tuple[float, int]:
    """Median over calls of the summed kernel time of one call; also kernels per call."""
    from torch.profiler import ProfilerActivity, profile

    # No record_function ranges here: their GPU-side projections are CUDA events too and would be
    # counted as kernels (doubling every sum).
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(CALLS):
            flusher.flush()
            fn()
            torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and not any(w in e.name.lower() for w in ("fill", "sleep", "spin"))]
    kernels.sort(key=lambda e: e.time_range.start)
    per_call = len(kernels) // CALLS
    if per_call == 0:
        return float("nan"), 0
    sums = [sum(k.time_range.elapsed_us() for k in kernels[i * per_call:(i + 1) * per_call]) / 1e3 for i in range(CALLS)]
    return statistics.median(sums), per_call


def main(task_ids: list[str]) -> int:
    flusher = timing.Flusher()
    print(f"{'task/workload':40s} {'events ms':>10s} {'profiler ms':>12s} {'ratio':>7s} kernels/call")
    worst = 0.0
    for tid in task_ids:
        task = load_task(default_tasks_root() / tid)
        ref = load_module(task.reference_path, f"ref_{tid}")
        for wl in task.workloads:
            inputs = ref.make_inputs(wl, 0, "cuda")
            fn = lambda: ref.reference(*inputs)  # noqa: E731
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            ev = event_median(fn, flusher)
            pr, k = profiler_median(fn, flusher)
            ratio = ev / pr if pr == pr and pr > 0 else float("nan")
            worst = max(worst, abs(ratio - 1.0)) if ratio == ratio else worst
            print(f"{tid + '/' + wl.name:40s} {ev:10.4f} {pr:12.4f} {ratio:7.3f} {k}", flush=True)
    print(f"worst |events/profiler - 1| = {worst * 100:.2f} % (target 3 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["softmax", "layernorm", "gemm_bf16"]))
