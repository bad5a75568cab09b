"""Cross-checks the judge decides, each turning a disagreement into ``cheat_suspected``.

* **Device activity** (CUPTI, every timed call, every stream): a call's activity may not start
  before its start marker (the end of the stream hold, right before the start event) nor end after
  its end event (the event's own device timestamp; where CUPTI gives none, the start of a kernel
  enqueued right after the end event), its busy time may not exceed its event time by more than
  the launch latency plus noise, no activity may be launched outside every call, and a
  submission's call must launch something. Every timed call is traced, so no subset can be dodged;
  a timed call without its trace is itself a problem.
* **Stream joins**: device work a call puts on any stream other than the timed one must be ordered
  before the end event, by an event recorded after it and waited for by the timed stream (directly
  or through other streams: ``wait_stream``), or by a host sync that returned before the call did.
  Work that is not is hidden from the events whatever its timing, so it is a problem even when it
  happened to end in time (a sleep on the timed stream sized to outlast it is still a cheat).
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
from .kernel_trace import PROBE
from .frames import OpKind, TraceCallFrame, TraceFlag, TraceOp, TraceSummaryFrame
from .results import Timing

EARLY_US = 1.0  # activity allowed to start this long before the start marker (timestamp jitter)
LATE_US = 1.0  # activity allowed to end this long after the end event (or the end marker)
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


def unjoined(ops: tuple[TraceOp, ...] | list[TraceOp], timed_stream: int) -> list[TraceOp]:
    """The device activity of one call (``ops`` in launch order) that is not ordered before the
    timed stream's end event: not on the timed stream, not behind an event record the timed stream
    waited for (transitively, through other streams' waits), and not completed by a host sync
    inside the call. Nodes of a CUDA graph launch are left out (the launch completes as a whole
    on its stream; their timing is still checked against the end event)."""
    before: dict[int, set[int]] = {}  # stream -> activities ordered before that stream's next operation
    records: dict[int, frozenset[int]] = {}  # event record id -> what it covers
    done: set[int] = set()
    acts: list[int] = []
    for i, op in enumerate(ops):
        k = op.kind
        if k < OpKind.RECORD:
            acts.append(i)
            before.setdefault(op.stream, set()).add(i)
        elif k == OpKind.RECORD:
            records[op.sync] = frozenset(before.get(op.stream, ()))
        elif k == OpKind.WAIT:
            before.setdefault(op.stream, set()).update(records.get(op.sync, ()))
        elif k == OpKind.SYNC_STREAM:
            done |= before.get(op.stream, set())
        elif k == OpKind.SYNC_EVENT:
            done |= records.get(op.sync, frozenset())
        elif k == OpKind.SYNC_CONTEXT:
            done.update(acts)
    joined = before.get(timed_stream, set()) | done
    return [ops[i] for i in acts if i not in joined and ops[i].kind != OpKind.GRAPH]


def late_us(t: TraceCallFrame) -> tuple[float | None, str]:
    """How far past the end event the call's device activity ran (negative: it ended before), and
    against what: the end event's device timestamp, else the end marker; (None, "") without either."""
    acts = [o.end_us for o in t.ops if o.kind < OpKind.RECORD and o.end_us]
    if t.flags & TraceFlag.EVENT_TS and acts:
        return max(acts), "end event"
    if t.markers & 2 and t.activities:
        return t.late_us, "end marker"
    return None, ""


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
        f.problems.append(f"CUPTI dropped {summary.dropped} records: the device activity of the timed calls cannot be vouched for")
    impl_of = {cid: (impl, ev) for impl, cid, ev in calls}
    # The launch probe's one kernel runs on the timed stream right before the end event, so how far
    # its end lies past the end event's timestamp is the two clocks' skew, not escaped work.
    skew = max([0.0] + [late_us(t)[0] or 0.0 for t in traces
                        if impl_of.get(t.call_id, ("",))[0] == PROBE and t.flags & TraceFlag.EVENT_TS])
    if skew > 0.5:
        f.notes.append(f"kernel ends on the timed stream lie up to {skew:.1f} us past the end event's timestamp (launch probe): tolerated")
    early, late, over, empty, names_hit, unmarked = [], [], [], [], set(), 0
    hidden, no_joins, no_event_ts, truncated = [], 0, 0, 0
    traced_ids = {t.call_id for t in traces}
    untraced = [impl for impl, cid, _ in calls if cid not in traced_ids]
    lat = latency_ms or 0.0
    for t in traces:
        if t.call_id not in impl_of:
            continue
        impl, event_ms = impl_of[t.call_id]
        if t.flags & TraceFlag.TRUNCATED:
            truncated += 1
        if t.flags & TraceFlag.JOINS:
            for op in unjoined(t.ops, t.timed_stream)[:1]:
                when = f", ending {op.end_us:+.1f} us from its end event" if t.flags & TraceFlag.EVENT_TS and op.end_us else ""
                hidden.append(f"{impl}: {OpKind(op.kind).name.lower()} on stream {op.stream}{when}")
        else:
            no_joins += 1
        if t.activities and not t.flags & TraceFlag.EVENT_TS:
            no_event_ts += 1
        past, against = late_us(t)
        if past is not None and past > LATE_US + (skew if against == "end event" else 0.0):
            late.append(f"{impl}: {past:.1f} us past its {against}")
        if t.markers != 3:
            unmarked += 1
            continue
        if t.early_us > EARLY_US:
            early.append(f"{impl}: {t.early_us:.1f} us before its start event")
        if t.busy_us / 1e3 > event_ms + lat + KERNEL_SLACK_MS + KERNEL_SLACK_REL * event_ms:
            over.append(f"{impl}: kernels {t.busy_us / 1e3:.4f} ms in a {event_ms:.4f} ms event window")
        if impl == submission:
            if t.activities == 0:
                empty.append(impl)
            names_hit |= {kernel_base(n) for n in t.names} & {kernel_base(n) for n in forbidden}
    if untraced:
        f.problems.append(f"{len(untraced)} timed calls have no device-activity trace (first: {untraced[0]})")
    if truncated:
        f.problems.append(f"{truncated} timed calls launched more operations than the trace keeps: their stream joins cannot be checked")
    if hidden:
        f.problems.append(f"device work on a stream that was never joined back to the timed stream before the end event, on {len(hidden)} "
                          f"call(s) (the events do not time it): {_first(hidden)}")
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
        f.notes.append(f"{unmarked} traced calls lacked their hold or end marker: no check of work before the start event for them")
    if no_joins:
        f.notes.append(f"no event-record or stream-wait records on {no_joins} traced calls: side-stream work checked by its timing only")
    if no_event_ts:
        f.notes.append(f"no usable end-event timestamp on {no_event_ts} traced calls: late work checked against the end marker")
    return f


def clean_findings(in_sandbox: dict[str, Timing], clean: dict[str, Timing], host_bound: set[str] = frozenset()) -> Findings:
    """Reference and expert inside the sandbox against their clean-process times.

    Something that slows the reference down on the device (a kernel left running on a side
    stream, a load on the memory system) lengthens its kernels: the CUPTI kernel times of the two
    phases are compared whenever both have them. The event times are compared too, except for an
    implementation in ``host_bound`` (host-bound in either phase): its event times hold host time,
    which varies with the machine's CPU load between the phases (the bincount reference of
    histogram: +6-13 % event time at identical kernel times on the H200), so there a difference
    of event times alone is a note."""
    f = Findings([], [])
    for impl in ("reference", "expert"):
        a, b = in_sandbox.get(impl), clean.get(impl)
        if a is None or b is None or not b.median_ms:
            continue
        if a.kernel_ms and b.kernel_ms:
            k = a.kernel_ms / b.kernel_ms
            if k > 1 + CLEAN_TOLERANCE:
                f.problems.append(f"the {impl}'s kernels took {a.kernel_ms:.4f} ms inside the submission's sandbox but {b.kernel_ms:.4f} ms "
                                  f"in a clean process (+{(k - 1) * 100:.1f} %, tolerance {CLEAN_TOLERANCE * 100:.1f} %): something slowed it down")
        ratio = a.median_ms / b.median_ms
        tol = max(CLEAN_TOLERANCE, CLEAN_SIGMAS * math.hypot(a.rse, b.rse))
        if ratio > 1 + tol:
            what = (f"the {impl} took {a.median_ms:.4f} ms inside the submission's sandbox but {b.median_ms:.4f} ms in a clean "
                    f"process (+{(ratio - 1) * 100:.1f} %, tolerance {tol * 100:.1f} %)")
            if impl in host_bound:
                f.notes.append(f"{what}; its calls are host-bound, so their event times hold host time: not decided on them")
            else:
                f.problems.append(f"{what}: something slowed it down")
        elif ratio < 1 - tol:
            f.notes.append(f"the {impl} was {(1 - ratio) * 100:.1f} % faster inside the sandbox than in the clean process")
    return f


def roofline_findings(median_ms: float, floor_ms: float, peaks_name: str) -> Findings:
    if metrics.below_roofline(median_ms, floor_ms):
        return Findings([f"{median_ms:.4f} ms is below the roofline floor {floor_ms:.4f} ms ({peaks_name} peaks)"], [])
    return Findings([], [])
