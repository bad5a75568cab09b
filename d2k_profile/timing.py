"""GPU timing: CUDA events, cold L2, warmup, adaptive interleaved repetitions, CUDA-graph mode.

The timing primitives are bound at import time, before any submission is imported, so a
submission that patches ``torch.cuda.Event.elapsed_time`` or ``time.perf_counter`` changes nothing
here (and :mod:`d2k_profile.anticheat` reports the patch).

Per timed call, outside the event window: fresh inputs are written into the input buffers, then a
buffer of at least twice the L2 size is written (cold L2), then the stream is held by a
device-side sleep so that the GPU is still busy while the host enqueues the start event, the call
and the end event: microsecond kernels are then not timed as host launch overhead (without the
hold, a 40 us LayerNorm measured up to 65 % slower by events than by its kernel time on the H200).
The hold is at least ~50 us and three times the host's own enqueue time of the slowest
implementation (measured in the warmup), so a slow Python launcher or a busy host is covered too;
timed calls whose enqueue still outlasted the hold are counted (``host_bound``). Inside the
window: only the call. Reference, expert and submission are interleaved round by round (with a
rotating order) so clock and thermal drift hit them equally.
"""

from __future__ import annotations

import contextlib
import random
import time
from dataclasses import dataclass
from typing import Callable

import torch

# --- bound before any submission import -------------------------------------------------------
_perf_counter = time.perf_counter
_EventBase = torch.cuda.Event.__mro__[1]
_Event = torch.cuda.Event
_event_record = getattr(_EventBase, "record", None)  # CPU-only torch builds have a stub class
_event_elapsed = getattr(_EventBase, "elapsed_time", None)
_event_synchronize = getattr(_EventBase, "synchronize", None)
_current_stream = torch.cuda.current_stream
_synchronize = torch.cuda.synchronize
_CUDAGraph = getattr(torch.cuda, "CUDAGraph", None)
_graph_ctx = getattr(torch.cuda, "graph", None)
_sleep = getattr(torch.cuda, "_sleep", None)

HOLD_CYCLES = 100_000  # ~50 us at the H200's 1.98 GHz: the shortest hold
MAX_HOLD_US = 5_000.0
HOLD_PER_HOST = 3.0  # hold = this many times the slowest implementation's median enqueue time


@dataclass(frozen=True)
class TimingConfig:
    """Stopping rule: at least ``min_reps`` samples each, then stop when every implementation's
    relative standard error is under ``target_rse``, or the workload's ``budget_s`` is spent, or
    ``max_reps`` is reached."""

    warmup_ms: float = 25.0
    min_warmup_calls: int = 3
    min_reps: int = 10
    max_reps: int = 2000
    target_rse: float = 0.002
    budget_s: float = 1.0
    recheck_prob: float = 0.02  # share of timed calls whose output is re-checked (plus the first and last)
    kernel_trace: bool = True  # CUPTI kernel times of a few extra calls (d2k_profile.kernel_trace)


@dataclass
class Impl:
    """One implementation being timed: ``call(inputs) -> output``; ``role`` says which it is."""

    name: str
    role: str
    call: Callable[[tuple], object]
    graph: object = None  # the captured CUDA graph in graph mode
    graph_out: object = None


@dataclass
class Measurement:
    samples: dict[str, list[float]]
    rechecked: dict[str, int]
    host_bound: dict[str, int]  # samples whose host enqueue time outlasted the stream hold


@dataclass(frozen=True)
class Hold:
    """The device-side sleep before each timed call: ``cycles`` of the SM clock, ``us`` long."""

    cycles: int = HOLD_CYCLES
    cycles_per_us: float = 1980.0

    @property
    def us(self) -> float:
        return self.cycles / self.cycles_per_us


@dataclass
class TimedCall:
    out: object
    start: object
    end: object
    host_ms: float  # host time from recording the start event to recording the end event


class RecheckFailed(Exception):
    """A timed call's output failed the re-check (caching, or doing less work when timed)."""


def l2_flush_bytes(device: int | None = None) -> int:
    """Twice the device's L2 size (read from its properties), at least 64 MiB."""
    props = torch.cuda.get_device_properties(device if device is not None else torch.cuda.current_device())
    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    return max(2 * l2, 64 << 20) if l2 else 256 << 20


class Flusher:
    """Evicts the L2 by writing a buffer of :func:`l2_flush_bytes` (outside the timed window)."""

    def __init__(self, device: int | None = None):
        self.nbytes = l2_flush_bytes(device)
        self.buffer = torch.empty(self.nbytes // 4, dtype=torch.int32, device="cuda")
        self._value = 0

    def flush(self) -> None:
        self._value = (self._value + 1) & 0xFFFF
        self.buffer.fill_(self._value)


@contextlib.contextmanager
def nvtx_range(name: str):
    """An NVTX push/pop range (``nvtx`` package if installed, else ``torch.cuda.nvtx``)."""
    try:
        import nvtx  # type: ignore

        nvtx.push_range(name)
        pop = nvtx.pop_range
    except Exception:
        torch.cuda.nvtx.range_push(name)
        pop = torch.cuda.nvtx.range_pop
    try:
        yield
    finally:
        pop()


def timed_call(impl: Impl, inputs: tuple, flusher: Flusher | None, hold_cycles: int = HOLD_CYCLES) -> TimedCall:
    """One call between two CUDA events. With a ``flusher``, the L2 is flushed and the stream held
    for ``hold_cycles`` first (both outside the event window)."""
    if flusher is not None:
        flusher.flush()
        _sleep(hold_cycles)
    stream = _current_stream()
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    t0 = _perf_counter()
    _event_record(start, stream)
    if impl.graph is not None:
        impl.graph.replay()
        out = impl.graph_out
    else:
        out = impl.call(inputs)
    _event_record(end, stream)
    return TimedCall(out, start, end, (_perf_counter() - t0) * 1e3)


def calibrate_hold(cycles: int = 10 * HOLD_CYCLES, calls: int = 5) -> float:
    """SM clock cycles per microsecond, from CUDA events around the hold kernel itself (the sleep
    counts clock cycles, so its length in time follows the clock). ~0.5 ms sleeps, so that the
    ~3 us launch latency inside the events is under 1 % of what is measured."""
    ms = []
    for _ in range(calls):
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
        _event_record(start, _current_stream())
        _sleep(cycles)
        _event_record(end, _current_stream())
        _event_synchronize(end)
        ms.append(_event_elapsed(start, end))
    ms.sort()
    return cycles / (ms[len(ms) // 2] * 1e3)


def hold_for(host_ms: dict[str, float], cycles_per_us: float) -> Hold:
    """The hold for a workload: :data:`HOLD_PER_HOST` times the slowest implementation's median
    enqueue time, at least :data:`HOLD_CYCLES`, at most :data:`MAX_HOLD_US`."""
    want_us = min(MAX_HOLD_US, HOLD_PER_HOST * 1e3 * max(host_ms.values(), default=0.0))
    return Hold(max(HOLD_CYCLES, int(want_us * cycles_per_us)), cycles_per_us)


def hold_stream(cycles: int = HOLD_CYCLES) -> None:
    """Keep the current stream busy on the device for ``cycles`` clock cycles."""
    _sleep(cycles)


def synchronize() -> None:
    _synchronize()


def elapsed_ms(start, end) -> float:
    """Milliseconds between two recorded events (the bound, unpatchable method)."""
    return _event_elapsed(start, end)


def capture_graph(impl: Impl, inputs: tuple) -> None:
    """Capture ``impl`` on the (fixed) input buffers into a CUDA graph; replays reuse its output."""
    side = torch.cuda.Stream()
    side.wait_stream(_current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            impl.call(inputs)
    _current_stream().wait_stream(side)
    graph = _CUDAGraph()
    with _graph_ctx(graph):
        out = impl.call(inputs)
    impl.graph, impl.graph_out = graph, out


def warmup(impls: list[Impl], next_inputs: Callable[[], tuple], cfg: TimingConfig) -> dict[str, float]:
    """Run every implementation until ``warmup_ms`` of its calls and ``min_warmup_calls`` are done
    (clocks ramping up, caches); ``min_warmup_calls`` gives way once the calls have taken ten times
    ``warmup_ms``: a 2 s call is warm after two. The first call of each implementation counts for
    nothing: it may JIT-compile or autotune (the expert is first called here in a submission's
    worker). Returns each implementation's median host enqueue time (ms) over the counted calls."""
    host: dict[str, float] = {}
    for impl in impls:
        _event_synchronize(timed_call(impl, next_inputs(), None).end)
        spent, enqueue = 0.0, []
        while len(enqueue) < 200 and (spent < cfg.warmup_ms or (len(enqueue) < cfg.min_warmup_calls and spent < 10 * cfg.warmup_ms)):
            c = timed_call(impl, next_inputs(), None)
            _event_synchronize(c.end)
            spent += _event_elapsed(c.start, c.end)
            enqueue.append(c.host_ms)
        enqueue.sort()
        host[impl.name] = enqueue[len(enqueue) // 2]
    return host


def probe_stream_escape(impl: Impl, next_inputs: Callable[[], tuple], calls: int = 5, budget_s: float = 1.0) -> tuple[float, float]:
    """Median event time vs median *drain* time of up to ``calls`` calls (fewer once ``budget_s``
    is spent: a 2 s kernel is probed once). The drain is the host time from the call's return to
    the end of a device-wide synchronize: work a submission left on its own stream is invisible to
    events on the current stream but not to the drain. Measuring from the return, not from the
    start of the call, keeps a slow launcher or a busy host out of the comparison."""
    ev, drain = [], []
    deadline = _perf_counter() + budget_s
    while len(ev) < calls and (not ev or _perf_counter() < deadline):
        inputs = next_inputs()
        _synchronize()
        c = timed_call(impl, inputs, None)
        t_return = _perf_counter()
        _synchronize()
        drain.append((_perf_counter() - t_return) * 1e3)
        ev.append(_event_elapsed(c.start, c.end))
    ev.sort()
    drain.sort()
    return ev[len(ev) // 2], drain[len(drain) // 2]


def _rse(xs: list[float]) -> float:
    n = len(xs)
    if n < 2:
        return float("inf")
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return (var / n) ** 0.5 / mean if mean > 0 else float("inf")


def measure(
    impls: list[Impl],
    next_inputs: Callable[[], tuple],
    recheck: Callable[[Impl, tuple, object], None],
    cfg: TimingConfig,
    flusher: Flusher,
    rng: random.Random,
    hold: Hold = Hold(),
) -> Measurement:
    """Interleaved, adaptive timing of ``impls`` (one sample per implementation per round).

    ``next_inputs`` writes fresh inputs into the input buffers and returns them; ``recheck`` raises
    :class:`RecheckFailed` when an output is wrong. Sampled calls are re-checked right after they
    finish (before the next call overwrites the inputs); the first and last rounds always are."""
    samples: dict[str, list[float]] = {i.name: [] for i in impls}
    rechecked = {i.name: 0 for i in impls}
    host_bound = {i.name: 0 for i in impls}
    hold_ms = hold.us / 1e3
    deadline = _perf_counter() + cfg.budget_s
    rnd = 0
    while True:
        last = rnd + 1 >= cfg.max_reps or _perf_counter() >= deadline or (
            rnd + 1 >= cfg.min_reps and all(_rse(s) < cfg.target_rse for s in samples.values()) and rnd > 0
        )
        order = impls[rnd % len(impls):] + impls[: rnd % len(impls)]
        pending = []
        for impl in order:
            inputs = next_inputs()
            c = timed_call(impl, inputs, flusher, hold.cycles)
            host_bound[impl.name] += c.host_ms > hold_ms
            if rnd == 0 or last or rng.random() < cfg.recheck_prob:
                _event_synchronize(c.end)
                recheck(impl, inputs, c.out)
                rechecked[impl.name] += 1
            pending.append((impl, c.start, c.end))
            del c
        _event_synchronize(pending[-1][2])
        for impl, start, end in pending:
            samples[impl.name].append(_event_elapsed(start, end))
        rnd += 1
        if last:
            return Measurement(samples, rechecked, host_bound)


def mark_nvtx(impls: list[Impl], next_inputs: Callable[[], tuple], prefix: str, name_of: Callable[[Impl], str]) -> dict[str, str]:
    """One untimed call per implementation inside the NVTX range ``<prefix>/<name>``, so an
    ``ncu --nvtx-include`` pass profiles exactly that implementation's kernels on this workload.
    Kept out of the timed loop: a range costs ~10 us, and ncu would otherwise replay every sample."""
    ranges = {}
    for impl in impls:
        inputs = next_inputs()
        _synchronize()
        name = f"{prefix}/{name_of(impl)}"
        with nvtx_range(name):
            if impl.graph is not None:
                impl.graph.replay()
            else:
                impl.call(inputs)
            _synchronize()
        ranges[impl.name] = name
    return ranges


def wall_clock() -> float:
    return _perf_counter()
