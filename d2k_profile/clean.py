"""Clean reference timing: the reference and the expert timed in the sandbox *before* the
submission is imported, with the same native call, the same cross-process input hand-off and the
same schedule as afterwards.

Until the judge says ``Import``, the sandbox has run nothing but the task's own code: it is a
clean process. A submission that later makes the reference look slow in that same process — a
kernel left running on a side stream, a patched torch function, a replaced global of the
reference module — inflates its speedup; :func:`d2k_profile.crosscheck.clean_findings` compares the
reference's time then and afterwards. Timing it in the same process (rather than in the judge's)
keeps the comparison like with like: the same CUDA context, the same context switch per call.
"""

from __future__ import annotations

import dataclasses
import random

from . import kernel_trace, metrics
from .frames import TraceCallFrame
from .results import Timing
from .timing import Measurement, TimedDevice, TimingConfig, hold_for, measure, warmup


def time_clean(device: TimedDevice, names: list[str], cfg: TimingConfig, rng: random.Random,
               cycles_per_us: float) -> tuple[dict[str, Timing], Measurement]:
    """The implementations ``names`` on one workload, warmed up, then interleaved for
    ``min(clean_budget_s, budget_s)``; the measurement too (its calls, for the kernel times)."""
    clean_cfg = TimingConfig(**{**cfg.__dict__, "budget_s": min(cfg.clean_budget_s, cfg.budget_s)})
    host = warmup(names, device, clean_cfg)
    m = measure(names, device, clean_cfg, rng, hold_for(host, cycles_per_us))
    timings = {n: Timing(**metrics.summarize_samples(m.samples[n]), samples_ms=[round(x, 6) for x in m.samples[n]]) for n in names}
    return timings, m


def with_kernel_times(timings: dict[str, Timing], traces: list[TraceCallFrame], m: Measurement) -> dict[str, Timing]:
    """The clean timings with the CUPTI kernel times of the same calls, which the comparison uses
    where the event times hold host time (:func:`d2k_profile.crosscheck.clean_findings`)."""
    traced = kernel_trace.by_impl(traces, m.calls)
    return {n: dataclasses.replace(t, kernel_ms=traced[n].kernel_ms, traced_event_ms=traced[n].event_ms) if n in traced else t
            for n, t in timings.items()}
