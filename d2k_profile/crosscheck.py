"""Cross-checks the judge decides, each turning a disagreement into ``cheat_suspected``.

* **Device activity** (CUPTI, every timed call, every stream): a call's activity may not start
  before its start marker (the end of the stream hold, right before the start event) nor end after
  its end marker (a kernel enqueued right after the end event), its busy time may not exceed its
  event time by more than the launch latency plus noise, no activity may be launched outside
  every call, and a submission's call must launch something.
* **Kernel names**: the kernels of the task's forbidden library op (traced in the judge on the
  same workload) may not appear among the submission's kernels; this sees C++ and
  mode-dependent calls that a Python-level recorder misses.
* **Clean reference**: the reference (and expert) timed in the judge before the sandbox existed,
  against their times inside the submission's sandbox: slower there beyond the noise means
  something slowed them down.
* **Roofline**: a median below 0.9 x the roofline floor is impossible.

(The wall-clock bound — no reported event time longer than the judge's own clock around that
call — is checked per call, in :class:`d2k_profile.session.SandboxDevice`.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import metrics
from .frames import TraceCallFrame, TraceSummaryFrame
from .results import Timing

EARLY_US = 1.0  # activity allowed to start this long before the start marker (timestamp jitter)
LATE_US = 1.0
KERNEL_SLACK_MS = 0.002  # noise on top of the launch latency when kernel time exceeds event time
KERNEL_SLACK_REL = 0.02
CLEAN_TOLERANCE = 0.05  # reference slower inside the sandbox than clean by more than this
CLEAN_SIGMAS = 4.0


@dataclass
class Findings:
    problems: list[str]
    notes: list[str]


def kernel_base(name: str) -> str:
    """A kernel's function name without namespaces, template arguments and parameters, so that
    names from torch.profiler (the judge) and from the sandbox's trace (truncated) compare:
    ``void (anonymous namespace)::cunn_SoftMaxForward<4, float>(float*, ...)`` -> ``cunn_SoftMaxForward``."""
    n = name.replace("(anonymous namespace)::", "").strip()
    n = n[5:] if n.startswith("void ") else n
    for stop in ("<", "("):
        n = n.split(stop, 1)[0]
    return n.rsplit("::", 1)[-1].strip()


def _first(items: list[str], n: int = 3) -> str:
    return "; ".join(items[:n]) + (f"; and {len(items) - n} more" if len(items) > n else "")


def trace_findings(traces: list[TraceCallFrame], summary: TraceSummaryFrame, calls: list[tuple[str, int, float]],
                   latency_ms: float | None, forbidden: set[str], submission: str) -> Findings:
    """What the device activity of the timed calls says (``calls``: implementation, call id, event
    ms of every timed call; the probe's calls included under its own name)."""
    f = Findings([], [])
    if summary.foreign:
        f.problems.append(f"{summary.foreign} device activities were launched outside every timed call ({summary.text})")
    if summary.unattributed:
        f.notes.append(f"{summary.unattributed} traced activities had no recorded API call ({summary.text})")
    if summary.dropped:
        f.notes.append(f"CUPTI dropped {summary.dropped} records: the trace may be incomplete")
    impl_of = {cid: (impl, ev) for impl, cid, ev in calls}
    early, late, over, empty, names_hit, unmarked = [], [], [], [], set(), 0
    lat = latency_ms or 0.0
    for t in traces:
        if t.call_id not in impl_of:
            continue
        impl, event_ms = impl_of[t.call_id]
        if t.markers != 3:
            unmarked += 1
            continue
        if t.early_us > EARLY_US:
            early.append(f"{impl}: {t.early_us:.1f} us before its start event")
        if t.late_us > LATE_US:
            late.append(f"{impl}: {t.late_us:.1f} us past its end event")
        if t.busy_us / 1e3 > event_ms + lat + KERNEL_SLACK_MS + KERNEL_SLACK_REL * event_ms:
            over.append(f"{impl}: kernels {t.busy_us / 1e3:.4f} ms in a {event_ms:.4f} ms event window")
        if impl == submission:
            if t.activities == 0:
                empty.append(impl)
            names_hit |= {kernel_base(n) for n in t.names} & {kernel_base(n) for n in forbidden}
    if early:
        f.problems.append(f"device work started during the stream hold, before the start event, on {len(early)} call(s): {_first(early)}")
    if late:
        f.problems.append(f"device work ran past the end event on {len(late)} call(s): {_first(late)}")
    if over:
        f.problems.append(f"kernel time exceeds the event time plus the launch latency on {len(over)} call(s): {_first(over)}")
    if empty:
        f.problems.append(f"no device activity was recorded for {len(empty)} of the submission's timed calls")
    if names_hit:
        f.problems.append("the submission ran the forbidden library op's kernels: " + ", ".join(sorted(names_hit)[:4]))
    if unmarked:
        f.notes.append(f"{unmarked} traced calls lacked their hold or end marker: no escape check for them")
    return f


def clean_findings(in_sandbox: dict[str, Timing], clean: dict[str, Timing]) -> Findings:
    """Reference and expert inside the sandbox against their clean-process times."""
    f = Findings([], [])
    for impl in ("reference", "expert"):
        a, b = in_sandbox.get(impl), clean.get(impl)
        if a is None or b is None or not b.median_ms:
            continue
        ratio = a.median_ms / b.median_ms
        tol = max(CLEAN_TOLERANCE, CLEAN_SIGMAS * math.hypot(a.rse, b.rse))
        if ratio > 1 + tol:
            f.problems.append(f"the {impl} took {a.median_ms:.4f} ms inside the submission's sandbox but {b.median_ms:.4f} ms in a clean "
                              f"process (+{(ratio - 1) * 100:.1f} %, tolerance {tol * 100:.1f} %): something slowed it down")
        elif ratio < 1 - tol:
            f.notes.append(f"the {impl} was {(1 - ratio) * 100:.1f} % faster inside the sandbox than in the clean process")
    return f


def roofline_findings(median_ms: float, floor_ms: float, peaks_name: str) -> Findings:
    if metrics.below_roofline(median_ms, floor_ms):
        return Findings([f"{median_ms:.4f} ms is below the roofline floor {floor_ms:.4f} ms ({peaks_name} peaks)"], [])
    return Findings([], [])
