"""Kernel times from the CUPTI trace of the timed calls, beside their event times.

The native loop traces every timed call of the measured phase (CUPTI activity: kernels, memcpys
and memsets on every stream of the sandbox, and the API calls that launched them) and reports,
per call, the busy time of the activity that the call's own API calls launched (overlaps counted
once), how far that activity ran before the start marker (the end of the stream hold) or after the
end marker (a kernel enqueued right after the end event), and its kernel names. Events include the
device's launch latency (~3 us per call on an H200); the kernel time does not. A one-kernel launch
probe, traced with the rest, measures that latency: its event time minus its kernel time.

This module only summarises; :mod:`.crosscheck` decides what the numbers imply.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from .frames import TraceCallFrame

PROBE = "launch_probe"
PROBE_CALLS = 10


@dataclass
class Traced:
    """One implementation's traced calls: medians over the calls, and what ran."""

    event_ms: float  # CUDA-event time of the traced calls
    kernel_ms: float  # CUPTI busy time of the same calls
    kernels_per_call: float
    kernel_names: list[str]
    calls: int


def unavailable_reason(enabled: bool) -> str | None:
    """Why the judge asks for no trace, or None. ncu and nsys inject themselves through
    ``CUDA_INJECTION64_PATH`` and own CUPTI; a second subscriber would fail or disturb them. The
    judge reads its own environment: the sandbox's cannot turn the trace off."""
    if not enabled:
        return "turned off (--no-kernel-trace)"
    if os.environ.get("CUDA_INJECTION64_PATH"):
        return "running under a CUDA profiler (ncu/nsys)"
    return None


def summarize(traces: list[TraceCallFrame], events_ms: dict[int, float]) -> Traced | None:
    """Medians over one implementation's traced calls (None when nothing was traced)."""
    pairs = [(t, events_ms[t.call_id]) for t in traces if t.call_id in events_ms]
    if not pairs:
        return None
    names: dict[str, None] = {}
    for t, _ in pairs:
        for n in t.names:
            names.setdefault(n[:160])
    return Traced(
        event_ms=statistics.median(ev for _, ev in pairs),
        kernel_ms=statistics.median(t.busy_us for t, _ in pairs) / 1e3,
        kernels_per_call=statistics.median(t.activities for t, _ in pairs),
        kernel_names=list(names)[:8],
        calls=len(pairs),
    )


def by_impl(traces: list[TraceCallFrame], calls: list[tuple[str, int, float]]) -> dict[str, Traced]:
    """Per implementation name (the probe under :data:`PROBE`)."""
    impl_of = {cid: impl for impl, cid, _ in calls}
    events = {cid: ev for _, cid, ev in calls}
    out = {}
    for impl in dict.fromkeys(impl_of.values()):
        t = summarize([tr for tr in traces if impl_of.get(tr.call_id) == impl], events)
        if t is not None:
            out[impl] = t
    return out


def launch_latency_ms(traced: dict[str, Traced]) -> float | None:
    probe = traced.get(PROBE)
    return probe.event_ms - probe.kernel_ms if probe else None
