"""Event times against CUPTI kernel times, per stream-hold length, on every pilot workload.

For each workload the reference is traced through d2k_profile's own timed call (cold L2, stream
hold, CUDA events) under torch.profiler (``d2k_profile.kernel_trace``), so both clocks see the
same calls; with the one-kernel launch probe traced beside it. Prints, per hold length, the event
and kernel medians, their ratio, and the ratio after subtracting the probe's launch latency.
(The per-record version of this check, over every implementation of a whole run, is
``benchmarks/profile_check_results.py kernels RESULTS.jsonl``.)
Usage: PYTHONPATH=. python benchmarks/profile_crosscheck.py softmax layernorm gemm_bf16
"""

from __future__ import annotations

import sys

import torch

from d2k_profile import kernel_trace, timing
from d2k_profile.loader import load_module
from d2k_spec.task import default_tasks_root, load_task

CALLS = 30
HOLDS = (0, 20_000, timing.HOLD_CYCLES)  # device-sleep cycles before the start event


def traced(fn, flusher: timing.Flusher, hold: int) -> tuple[kernel_trace.Traced, float]:
    """The reference's traced calls at this hold length, and the probe's launch latency (ms)."""
    impl = timing.Impl("reference", "reference", lambda _inputs: fn())
    out = kernel_trace.trace([impl], (), {"reference": CALLS, kernel_trace.PROBE: CALLS}, flusher, hold)
    probe = out[kernel_trace.PROBE]
    return out["reference"], probe.event_ms - probe.kernel_ms


def main(task_ids: list[str]) -> int:
    flusher = timing.Flusher()
    print(f"{'task/workload':40s} {'hold':>7s} {'events ms':>10s} {'kernels ms':>11s} {'ratio':>7s} {'latency us':>10s} {'corrected':>9s} kernels/call")
    worst: dict[int, list[float]] = {h: [0.0, 0.0] for h in HOLDS}
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
                t, latency = traced(fn, flusher, hold)
                ratio, corrected = t.event_ms / t.kernel_ms, (t.event_ms - latency) / t.kernel_ms
                worst[hold] = [max(worst[hold][0], abs(ratio - 1)), max(worst[hold][1], abs(corrected - 1))]
                print(f"{tid + '/' + wl.name:40s} {hold:7d} {t.event_ms:10.4f} {t.kernel_ms:11.4f} {ratio:7.3f} {latency * 1e3:10.2f} {corrected:9.3f} {t.kernels_per_call:g}", flush=True)
    for hold, (raw, corr) in worst.items():
        print(f"hold {hold:7d} cycles: worst |events/kernels - 1| = {raw * 100:.2f} %, after the launch latency {corr * 100:.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["softmax", "layernorm", "gemm_bf16"]))
