"""Cross-check event timing against torch.profiler kernel times, on every pilot workload.

For each workload the reference is called N times with d2k_profile's own timed call (cold L2,
stream hold, CUDA events around the call) *under* torch.profiler, so both clocks see the same
calls: the event time of each call and the summed duration of the kernels it launched (the
L2-flush and stream-hold kernels excluded). Prints both medians and their ratio per workload and
per stream-hold length (target: within 3 %).
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
HOLDS = (0, 20_000, timing.HOLD_CYCLES)  # device-sleep cycles before the start event


def same_calls(fn, flusher, hold: int) -> tuple[float, float, int]:
    """Time the same CALLS calls two ways at once: CUDA events around each call (the profiler's
    own timed call, with a stream hold of ``hold`` cycles) and, under torch.profiler, the summed
    duration of the kernels each call launched. Returns (event median, kernel median, kernels/call)."""
    from torch.profiler import ProfilerActivity, profile

    impl = timing.Impl(name="reference", role="reference", call=lambda _inputs: fn())
    saved, timing.HOLD_CYCLES = timing.HOLD_CYCLES, hold
    events = []
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                _, start, end = timing._timed_call(impl, (), flusher)
                end.synchronize()
                events.append(start.elapsed_time(end))
    finally:
        timing.HOLD_CYCLES = saved
    # The flush (a fill) and the hold (a sleep/spin kernel) are outside the event window.
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and not any(w in e.name.lower() for w in ("fill", "sleep", "spin"))]
    kernels.sort(key=lambda e: e.time_range.start)
    per_call = len(kernels) // CALLS
    if per_call == 0:
        return statistics.median(events), float("nan"), 0
    sums = [sum(k.time_range.elapsed_us() for k in kernels[i * per_call:(i + 1) * per_call]) / 1e3 for i in range(CALLS)]
    return statistics.median(events), statistics.median(sums), per_call


def main(task_ids: list[str]) -> int:
    flusher = timing.Flusher()
    print(f"{'task/workload':40s} {'hold':>7s} {'events ms':>10s} {'kernels ms':>11s} {'ratio':>7s} kernels/call")
    worst: dict[int, float] = {h: 0.0 for h in HOLDS}
    for tid in task_ids:
        task = load_task(default_tasks_root() / tid)
        ref = load_module(task.reference_path, f"ref_{tid}")
        for wl in task.workloads:
            inputs = ref.make_inputs(wl, 0, "cuda")
            fn = lambda: ref.reference(*inputs)  # noqa: E731
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            for hold in HOLDS:
                ev, kr, k = same_calls(fn, flusher, hold)
                ratio = ev / kr if kr == kr and kr > 0 else float("nan")
                if ratio == ratio:
                    worst[hold] = max(worst[hold], abs(ratio - 1.0))
                print(f"{tid + '/' + wl.name:40s} {hold:7d} {ev:10.4f} {kr:11.4f} {ratio:7.3f} {k}", flush=True)
    for hold in HOLDS:
        print(f"hold {hold:7d} cycles: worst |events/kernels - 1| = {worst[hold] * 100:.2f} %")
    if timing.HOLD_CYCLES in worst:
        print(f"worst |events/profiler - 1| = {worst[timing.HOLD_CYCLES] * 100:.2f} % at the default hold (target 3 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["softmax", "layernorm", "gemm_bf16"]))
