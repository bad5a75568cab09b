"""Kernel times from CUPTI (through ``torch.profiler``), beside the CUDA-event times.

Events time a call from the start event to the end event, so they include the device's launch
latency (on the H200 about 2.5 us per call, measured: ``docs/h200-results.md``); CUPTI reports
when each kernel ran. After the timed loop the worker makes a few more timed calls per
implementation (same flush, stream hold and events) under ``torch.profiler`` and records, for the
very same calls, the event time and the kernel time: the busy time of the kernels each call
launched, on any stream (overlapping intervals merged). A one-kernel *launch probe* is traced with
them: its event time minus its kernel time is the launch latency of this device and process,
which ``docs/profiling.md`` uses to cross-check the event medians of the timed loop.

Which kernels belong to which call: every timed call is ``flush -> hold -> [call]``, the hold is
``torch.cuda._sleep`` (a kernel named ``spin_kernel``) and the flush is one fill kernel. So on the
GPU timeline a call's kernels are those after its hold kernel and before the next call's flush
(a last flush and hold close the final call). Kernel times are diagnostics: no status depends on
them, and a failing profiler (or a run under ncu/nsys, which own CUPTI) just leaves them out.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Sequence

import torch

from . import timing

try:  # bound before any submission import, like the timing primitives
    from torch.profiler import ProfilerActivity as _Activity, profile as _profile
except ImportError:  # pragma: no cover - every supported torch has it
    _Activity = _profile = None

HOLD_KERNEL = "spin_kernel"  # the kernel behind torch.cuda._sleep
MAX_CALLS = 10
CALL_BUDGET_MS = 250.0  # per implementation: slow kernels get fewer traced calls (at least one)
PROBE = "launch_probe"


@dataclass(frozen=True)
class Span:
    """One kernel on the GPU timeline (microseconds since the trace began)."""

    name: str
    start_us: float
    end_us: float


@dataclass
class Traced:
    """One implementation's traced calls: medians over the calls, and what ran."""

    event_ms: float  # CUDA-event time of the traced calls
    kernel_ms: float  # CUPTI busy time of the same calls
    kernels_per_call: float
    kernel_names: list[str]


def split_calls(spans: Sequence[Span], hold: str = HOLD_KERNEL) -> list[list[Span]]:
    """Kernels of each call, in launch order: the spans after each hold kernel, without the flush
    that ends the segment (the last kernel before the next hold). Spans before the first hold are
    setup; a segment that does not end in a flush (no next hold) is dropped."""
    ordered = sorted(spans, key=lambda s: s.start_us)
    holds = [i for i, s in enumerate(ordered) if hold in s.name]
    return [ordered[a + 1:b - 1] for a, b in zip(holds, holds[1:]) if b - a >= 2]


def busy_us(spans: Sequence[Span]) -> float:
    """Time during which at least one of ``spans`` ran (overlaps counted once)."""
    total, end = 0.0, float("-inf")
    for s in sorted(spans, key=lambda s: s.start_us):
        if s.end_us > end:
            total += s.end_us - max(s.start_us, end)
            end = s.end_us
    return total


def summarize(calls: list[list[Span]], events_ms: list[float]) -> Traced | None:
    """Medians over the calls of one implementation (None when nothing was traced)."""
    if not calls or len(calls) != len(events_ms):
        return None
    names: dict[str, None] = {}
    for call in calls:
        for s in call:
            names.setdefault(s.name[:160])
    return Traced(
        event_ms=statistics.median(events_ms),
        kernel_ms=statistics.median(busy_us(c) for c in calls) / 1e3,
        kernels_per_call=statistics.median(len(c) for c in calls),
        kernel_names=list(names)[:8],
    )


def unavailable_reason() -> str | None:
    """Why no trace can be taken here, or None. ncu and nsys inject themselves through
    ``CUDA_INJECTION64_PATH`` and own CUPTI; a second subscriber would fail or disturb them."""
    if _profile is None:
        return "torch.profiler is not available"
    if os.environ.get("CUDA_INJECTION64_PATH"):
        return "running under a CUDA profiler (ncu/nsys)"
    return None


def calls_for(median_ms: float | None) -> int:
    """Traced calls for an implementation whose timed median is ``median_ms``."""
    if not median_ms or median_ms <= 0:
        return MAX_CALLS
    return max(1, min(MAX_CALLS, int(CALL_BUDGET_MS / median_ms)))


class TraceMismatch(Exception):
    """The traced timeline did not split into the calls that were made (nothing is recorded)."""


def trace(impls: list[timing.Impl], inputs: tuple, n_calls: dict[str, int], flusher: timing.Flusher,
          hold_cycles: int = timing.HOLD_CYCLES) -> dict[str, Traced]:
    """Trace ``n_calls[impl.name]`` timed calls of each implementation, plus the launch probe
    (recorded under :data:`PROBE`), through :func:`timing.timed_call` with the same flush and
    hold, so the traced calls are timed exactly like the measured ones."""
    probe_buf = torch.zeros(1, device="cuda")
    probe = timing.Impl(PROBE, PROBE, lambda _inputs: probe_buf.zero_())
    plan = [(probe, n_calls.get(PROBE, MAX_CALLS))] + [(i, n_calls.get(i.name, 1)) for i in impls]
    events: dict[str, list] = {}
    with _profile(activities=[_Activity.CUDA]) as prof:
        for impl, n in plan:
            for _ in range(n):
                c = timing.timed_call(impl, inputs, flusher, hold_cycles)
                events.setdefault(impl.name, []).append((c.start, c.end))
        flusher.flush()  # closes the last call's segment: a flush, then a hold
        timing.hold_stream(1000)
        timing.synchronize()
    spans = [Span(e.name, e.time_range.start, e.time_range.end) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not spans:  # seen under ncu, which owns CUPTI without announcing itself in the environment
        raise TraceMismatch("no kernel activity recorded (is another CUDA profiler, such as ncu or nsys, attached?)")
    calls = split_calls(spans)
    expected = sum(n for _, n in plan)
    if len(calls) != expected:
        raise TraceMismatch(f"{len(calls)} calls on the GPU timeline, {expected} made")
    out, pos = {}, 0
    for impl, n in plan:
        ev = [timing.elapsed_ms(s, e) for s, e in events[impl.name]]
        if (t := summarize(calls[pos:pos + n], ev)) is not None:
            out[impl.name] = t
        pos += n
    return out
