"""The spawned worker: everything that touches untrusted code runs here, never in the parent.

Started by :mod:`d2k_profile.isolation` as ``python -m d2k_profile.worker`` with its own
environment (build directories, ``TRITON_INTERPRET`` on CPU, the GPU it may use). It reads one job
(JSON) from stdin and writes JSON-line messages to a pipe file descriptor the parent passed it. The
timing primitives are bound (by importing :mod:`.timing`) before the submission is imported.

Order of work per workload: correctness on every seed (inputs kept alive so each call sees new
addresses) with the anti-cheat checks; null kernels; forbidden library ops; then on a GPU the
stream-escape probe, warmup and interleaved timing with re-checked outputs, the NVTX marker pass
and the metrics; on a CPU a short replay with fresh inputs written into the same buffers instead.
"""

from __future__ import annotations

from . import timing  # noqa: I001  (first: binds the timing primitives before anything else runs)

import json
import os
import random
import secrets
import statistics
import sys
import traceback
from pathlib import Path

import torch

from d2k_spec.task import Task, Tolerance, Workload, load_task

from . import anticheat, environment, kernel_trace, metrics
from .correctness import as_outputs, compare_all
from .loader import entry_point, load_module, reference_entry
from .nulls import passing_nulls

EXACT = Tolerance(atol=0.0, rtol=0.0, max_rel_l2=0.0)
CPU_REPLAY_CALLS = 4


class Channel:
    """JSON lines to the parent's pipe; every message carries the job's token and a sequence
    number, so the parent can tell a forged or replayed message from ours."""

    def __init__(self, fd: int, token: str):
        self.fd, self.token, self.seq = fd, token, 0

    def send(self, kind: str, **fields) -> None:
        self.seq += 1
        msg = json.dumps({"token": self.token, "seq": self.seq, "type": kind, **fields}, default=str)
        os.write(self.fd, (msg + "\n").encode())


class Verdict(Exception):
    """Ends a workload early with a status (``incorrect``, ``cheat_suspected`` ...) and a reason."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


# --- small helpers -----------------------------------------------------------------------------

def sync(device: str) -> None:
    if device == "cuda":
        timing._synchronize()


def clone_all(inputs: tuple) -> tuple:
    return tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)


def tolerance_for(task: Task, wl: Workload) -> Tolerance:
    """The task's tolerance for the workload's output dtype; exact for integer outputs."""
    for spec in task.interface.outputs:
        dtype = str(wl.params.get(spec.dtype, spec.dtype))
        if dtype in task.tolerance:
            return task.tolerance[dtype]
        if dtype.startswith(("int", "uint", "bool")):
            return EXACT
    return next(iter(task.tolerance.values()), EXACT)


def check_output(out: object, ref_out: object, inputs: tuple, originals: tuple, tol: Tolerance, in_place: bool, what: str) -> None:
    """Raise a :class:`Verdict` if ``out`` is not an honest, correct answer for ``inputs``."""
    outs, refs = as_outputs(out), as_outputs(ref_out)
    for o in outs:
        if isinstance(o, torch.Tensor) and not anticheat.is_plain_tensor(o):
            raise Verdict("cheat_suspected", f"{what}: returned a {type(o).__name__} (a torch.Tensor subclass: lazy/deferred result)")
    for o, r in zip(outs, refs):
        if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor) and o.device != r.device:
            raise Verdict("incorrect", f"{what}: output on {o.device}, expected {r.device}")
    cmp = compare_all(out, ref_out, tol)
    if not cmp.ok:
        raise Verdict("incorrect", f"{what}: {cmp.reason}")
    if not in_place:
        if pairs := anticheat.aliased(outs, inputs):
            raise Verdict("cheat_suspected", f"{what}: output {pairs[0][0]} aliases input {pairs[0][1]}")
        if changed := anticheat.modified_inputs(originals, inputs):
            raise Verdict("cheat_suspected", f"{what}: modified input(s) {changed} (the task is not in-place)")
    return None


class InputSource:
    """Fresh inputs for timed calls, from secret seeds, written into fixed buffers outside the timed
    window (so a cache keyed on addresses returns stale data, and graph replays see new data).
    Tasks whose input shapes vary with the seed get new tensors each time instead."""

    def __init__(self, ref_mod, wl: Workload, device: str, rng: random.Random):
        self.ref_mod, self.wl, self.device, self.rng = ref_mod, wl, device, rng
        self.buffers = self._fresh()
        probe = self._fresh()
        self.refill_in_place = all(
            (not isinstance(a, torch.Tensor)) or (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype)
            for a, b in zip(self.buffers, probe)
        )
        self.originals = self.buffers

    def _fresh(self) -> tuple:
        return tuple(self.ref_mod.make_inputs(self.wl, self.rng.randrange(1 << 31), self.device))

    def next(self) -> tuple:
        fresh = self._fresh()
        if not self.refill_in_place:
            self.buffers = fresh
            self.originals = clone_all(fresh)
            return fresh
        for dst, src in zip(self.buffers, fresh):
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
        self.originals = fresh  # an untouched copy of what the call is given
        return self.buffers


# --- one workload ------------------------------------------------------------------------------

class Worker:
    def __init__(self, job: dict, chan: Channel):
        self.job, self.chan = job, chan
        self.device = job["device"]
        self.mode = job["mode"]
        self.task = load_task(Path(job["task_path"]))
        self.rng = random.Random(secrets.randbits(64))  # secret seeds for timed inputs
        self.cfg = timing.TimingConfig(**job.get("timing", {}))
        self.role = job["role"]
        self.flusher = None
        self.cycles_per_us: float | None = None  # SM clock, for the stream hold (timing.calibrate_hold)

    # Loading ---------------------------------------------------------------------------------
    def load_trusted(self) -> None:
        """Reference and expert are imported before the submission and before the snapshot."""
        self.ref_mod = load_module(self.task.reference_path, "d2k_reference")
        self.reference = reference_entry(self.ref_mod)
        self.expert = None
        expert = self.job.get("expert_path")
        if expert and self.role == "submission":
            try:
                self.expert = entry_point(load_module(Path(expert), "d2k_expert"), self._init_inputs(), self.device)
            except Exception as exc:  # the run goes on without expert timings
                self.expert_error = f"expert failed to load: {type(exc).__name__}: {exc}"
        try:
            import triton  # noqa: F401  (imported now so its import cannot look like a patch later)
        except ImportError:
            pass
        self.watch_extra = [("reference", self.ref_mod), ("timing", timing), ("anticheat", anticheat)]
        self.snapshot = anticheat.snapshot(self.watch_extra)

    def _init_inputs(self) -> tuple:
        fn = getattr(getattr(self, "ref_mod", None), "get_init_inputs", None)
        return tuple(fn()) if callable(fn) else ()

    def load_submission(self) -> None:
        path = Path(self.job["path"])
        if self.role == "reference":  # noise floor: a second, independent import of the reference
            self.sub = reference_entry(load_module(path, "d2k_reference_self"))
        else:
            self.sub = entry_point(load_module(path, "d2k_submission"), self._init_inputs(), self.device)

    def warm_call(self) -> None:
        """Call the submission once on the smoke workload (fills the build caches)."""
        inputs = tuple(self.ref_mod.make_inputs(self.task.smoke, self.task.smoke.seeds[0], self.device))
        with torch.no_grad():
            self.sub(inputs)
        sync(self.device)

    def patched_now(self) -> list[str]:
        return anticheat.patched(self.snapshot, self.watch_extra)

    # Correctness -----------------------------------------------------------------------------
    def correctness(self, wl: Workload, tol: Tolerance, res: dict) -> tuple:
        """Every seed; returns the first seed's inputs (for the profiler pass)."""
        in_place = self.task.interface.in_place
        kept = []
        for i, seed in enumerate(wl.seeds):
            inputs = tuple(self.ref_mod.make_inputs(wl, seed, self.device))
            originals = clone_all(inputs)
            ref_out = self.reference(clone_all(inputs))
            if i == 0:  # depends on the workload only; computed before the submission can fail
                res["weak_workload"] = passing_nulls(originals, ref_out, tol)
            out = self.sub(inputs)
            sync(self.device)
            check_output(out, ref_out, inputs, originals, tol, in_place, f"seed {seed}")
            cmp = compare_all(out, ref_out, tol)
            res["max_abs_err"] = max(res.get("max_abs_err") or 0.0, cmp.max_abs_err)
            res["rel_l2_err"] = max(res.get("rel_l2_err") or 0.0, cmp.rel_l2_err)
            res["seeds_checked"] = i + 1
            kept.append((inputs, out))  # alive until the end: every seed gets fresh addresses
        return kept[0][0]

    def forbidden_ops(self, inputs: tuple) -> list[str]:
        """Library ops the task forbids, called by the submission (one extra, untimed call)."""
        forbidden = self.task.interface.forbidden_ops
        if not forbidden or self.role != "submission":
            return []
        with anticheat.CallRecorder() as rec:
            self.sub(clone_all(inputs))
            sync(self.device)
        return anticheat.forbidden_calls(rec.names, forbidden)

    def recheck_fn(self, tol: Tolerance, source: InputSource):
        in_place = self.task.interface.in_place

        def recheck(impl: timing.Impl, inputs: tuple, out: object) -> None:
            if impl.role == "reference":
                return
            ref_out = self.reference(clone_all(source.originals))
            try:
                check_output(out, ref_out, inputs, source.originals, tol, in_place, f"{impl.name}, timed call")
            except Verdict as v:
                raise timing.RecheckFailed(v.reason) from None

        return recheck

    # Timing ----------------------------------------------------------------------------------
    def impls(self) -> list[timing.Impl]:
        sub_role = self.role if self.role != "reference" else "submission"
        out = [timing.Impl("reference", "reference", self.reference)]
        if self.expert is not None:
            out.append(timing.Impl("expert", "expert", self.expert))
        out.append(timing.Impl(self.job["name"], sub_role, self.sub))
        return out

    def time_workload(self, wl: Workload, tol: Tolerance, res: dict) -> None:
        if self.flusher is None:
            self.flusher = timing.Flusher()
        source = InputSource(self.ref_mod, wl, self.device, self.rng)
        impls = self.impls()
        sub = impls[-1]
        if self.mode == "eager" or not source.refill_in_place:
            if self.mode == "graph":
                res["notes"].append("graph mode needs fixed input shapes: timed eagerly")
            ev, drain = timing.probe_stream_escape(sub, source.next, budget_s=self.cfg.budget_s)
            if anticheat.escaped_stream(ev, drain):
                raise Verdict("cheat_suspected", f"work escaped the timed stream: events {ev:.4f} ms, but a device-wide sync after the call returned took {drain:.4f} ms")
        else:
            try:
                for impl in impls:
                    timing.capture_graph(impl, source.buffers)
            except Exception as exc:
                torch.cuda.synchronize()
                for impl in impls:
                    impl.graph = impl.graph_out = None
                res["notes"].append(f"graph capture failed ({type(exc).__name__}: {str(exc)[:200]}): timed eagerly")
        host_ms = timing.warmup(impls, source.next, self.cfg)
        if self.cycles_per_us is None:  # after a warmup: the clock has ramped up
            self.cycles_per_us = timing.calibrate_hold()
        hold = timing.hold_for(host_ms, self.cycles_per_us)
        res["hold_us"] = hold.us
        try:
            m = timing.measure(impls, source.next, self.recheck_fn(tol, source), self.cfg, self.flusher, self.rng, hold)
        except timing.RecheckFailed as exc:
            raise Verdict("cheat_suspected", f"{exc} (correct when checked, wrong when timed: caching or less work)") from None
        for name, n in m.host_bound.items():
            if n > 0.05 * len(m.samples[name]):
                res["notes"].append(f"{name}: on {n} of {len(m.samples[name])} timed calls the host took longer to enqueue the call "
                                    f"than the {hold.us:.0f} us stream hold: those event times include host time")
        traced = self.trace_kernels(impls, source, m, hold, res)
        prefix = f"d2k/{self.task.id}/{wl.name}"
        ranges = timing.mark_nvtx(impls, source.next, prefix, lambda i: i.name)
        res["nvtx_range"] = ranges[sub.name]
        res["rechecked_calls"] = m.rechecked[sub.name]
        self.fill_metrics(wl, m, impls, traced, res)

    def trace_kernels(self, impls: list[timing.Impl], source: InputSource, m: timing.Measurement, hold: timing.Hold, res: dict) -> dict:
        """CUPTI kernel times of a few more timed calls (diagnostic: see :mod:`.kernel_trace`)."""
        why = "turned off (--no-kernel-trace)" if not self.cfg.kernel_trace else kernel_trace.unavailable_reason()
        if why:
            res["notes"].append(f"no kernel times: {why}")
            return {}
        n_calls = {i.name: kernel_trace.calls_for(statistics.median(m.samples[i.name])) for i in impls}
        try:
            traced = kernel_trace.trace(impls, source.next(), n_calls, self.flusher, hold.cycles)
        except Exception as exc:  # noqa: BLE001  (a diagnostic: the timed results stand without it)
            res["notes"].append(f"no kernel times: trace failed: {type(exc).__name__}: {str(exc)[:200]}")
            return {}
        if probe := traced.get(kernel_trace.PROBE):
            res["launch_latency_ms"] = probe.event_ms - probe.kernel_ms
        return traced

    def fill_metrics(self, wl: Workload, m: timing.Measurement, impls: list[timing.Impl], traced: dict, res: dict) -> None:
        def summary(name: str) -> dict | None:
            xs = m.samples.get(name)
            if not xs:
                return None
            kt = traced.get(name)
            if kt and statistics.median(xs) > 1.2 * kt.event_ms + 0.005:
                res["notes"].append(f"{name}: timed median {statistics.median(xs):.4f} ms but {kt.event_ms:.4f} ms for the same calls "
                                    "made again under the kernel trace: the timed loop was disturbed")
            kernel_fields = {"kernel_ms": kt.kernel_ms, "traced_event_ms": kt.event_ms, "kernels_per_call": kt.kernels_per_call, "kernel_names": kt.kernel_names} if kt else {}
            return {**metrics.summarize_samples(xs), "samples_ms": [round(x, 6) for x in xs], **kernel_fields}

        sub = impls[-1].name
        res["timing"], res["reference_timing"] = summary(sub), summary("reference")
        res["expert_timing"] = summary("expert")
        t = res["timing"]["median_ms"]
        ref_t = res["reference_timing"]["median_ms"]
        res["speedup_vs_reference"] = metrics.speedup(ref_t, t)
        if res["timing"].get("kernel_ms") and res["reference_timing"].get("kernel_ms"):  # the device-time regime
            res["kernel_speedup_vs_reference"] = metrics.speedup(res["reference_timing"]["kernel_ms"], res["timing"]["kernel_ms"])
        if res["expert_timing"]:
            res["speedup_vs_expert"] = metrics.speedup(res["expert_timing"]["median_ms"], t)
        ci = metrics.bootstrap_speedup_ci(m.samples["reference"], m.samples[sub])
        res["speedup_ci95"] = list(ci) if ci else None
        flop = float(getattr(self.ref_mod, "flops", lambda p: 0.0)(wl.params))
        nbytes = float(getattr(self.ref_mod, "bytes_moved", lambda p: 0.0)(wl.params))
        res["tflops"], res["gbps"] = metrics.tflops(flop, t), metrics.gbps(nbytes, t)
        peaks = metrics.peaks_for(torch.cuda.get_device_name())
        if peaks is None:
            res["notes"].append("unknown GPU model: no peak table entry, no roofline floor")
            return
        dtype = str(wl.params.get("dtype", "bfloat16"))
        floor = metrics.roofline_floor_ms(flop, nbytes, metrics.compute_peak_tflops(peaks, dtype), peaks.bandwidth_gbps)
        res["roofline_floor_ms"] = floor
        res["roofline_fraction"] = floor / t if t else None
        if metrics.below_roofline(t, floor):
            raise Verdict("cheat_suspected", f"{t:.4f} ms is below the roofline floor {floor:.4f} ms ({peaks.name} peaks)")

    def cpu_replay(self, wl: Workload, tol: Tolerance, res: dict) -> None:
        """No GPU: still call the submission on fresh inputs in the same buffers and re-check,
        which is what catches caching and doing less work on later calls."""
        source = InputSource(self.ref_mod, wl, self.device, self.rng)
        recheck = self.recheck_fn(tol, source)
        impl = timing.Impl(self.job["name"], "submission", self.sub)
        for k in range(CPU_REPLAY_CALLS):
            inputs = source.next()
            out = self.sub(inputs)
            try:
                recheck(impl, inputs, out)
            except timing.RecheckFailed as exc:
                raise Verdict("cheat_suspected", f"{exc} on repeat call {k + 1} (correct at first: caching or less work on later calls)") from None
        res["rechecked_calls"] = CPU_REPLAY_CALLS

    def profile(self, wl: Workload) -> dict:
        """All checks and (on a GPU) the timing of one workload; returns the record's fields."""
        res: dict = {"notes": [], "clocks": {}}
        self.partial = res  # what is known so far survives a Verdict or an exception
        if self.device == "cuda":
            res["clocks"]["before"] = environment.clocks(self.job.get("gpu_uuid"))
        tol = tolerance_for(self.task, wl)
        if getattr(self, "expert_error", None):
            res["notes"].append(self.expert_error)
        with torch.no_grad():
            first = self.correctness(wl, tol, res)
            if found := self.forbidden_ops(first):
                raise Verdict("cheat_suspected", f"calls {', '.join(found)}, which the task forbids")
            if self.device == "cuda":
                self.time_workload(wl, tol, res)
            else:
                self.cpu_replay(wl, tol, res)
                res["notes"].append("correctness only: timing needs a GPU")
        if found := self.patched_now():
            raise Verdict("cheat_suspected", "replaced harness/torch callables: " + ", ".join(found[:5]))
        if self.device == "cuda":
            res["clocks"]["after"] = environment.clocks(self.job.get("gpu_uuid"))
        return res


def is_build_failure(exc: BaseException) -> bool:
    """A compiler failure, also when it surfaces at the first call: Triton compiles on first
    launch and submissions often call ``load_inline`` lazily, so "import worked" is not "built"."""
    import subprocess

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if "CompilationError" in type(exc).__name__ or isinstance(exc, subprocess.CalledProcessError):
            return True
        if isinstance(exc, RuntimeError) and str(exc).startswith("Error building extension"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _tail(text: str, n: int = 4000) -> str:
    return text if len(text) <= n else "..." + text[-n:]


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this worker when the parent dies, so a killed run leaves no orphan
    holding the GPU while it is resumed."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main() -> int:
    ppid = os.getppid()
    _die_with_parent()
    if os.getppid() != ppid:  # the parent died before the request took effect
        return 1
    job = json.loads(sys.stdin.read())
    chan = Channel(int(job["fd"]), job["token"])
    if job["device"] == "cpu":
        from . import interpreter

        interpreter.apply()
    w = Worker(job, chan)
    info = environment.device_info()
    job["gpu_uuid"] = info.get("uuid") or None
    chan.send("hello", env={**environment.versions(), **info})
    w.load_trusted()
    t0 = timing.wall_clock()
    try:
        w.load_submission()
    except BaseException as exc:  # noqa: BLE001  (anything at import time is a build failure)
        chan.send("compile_error", reason=_tail(traceback.format_exc()), exc_type=type(exc).__name__)
        return 0
    if job.get("build_only"):
        # One call on the smoke workload compiles what is compiled lazily. Only a compiler failure
        # counts here: any other failure is the timing worker's to record, workload by workload.
        chan.send("imported")
        try:
            w.warm_call()
        except Exception as exc:  # noqa: BLE001
            if is_build_failure(exc):
                chan.send("compile_error", reason=_tail(traceback.format_exc()), exc_type=type(exc).__name__)
                return 0
            print(f"build warm-up call failed (left to the timing worker): {type(exc).__name__}: {exc}", flush=True)
        chan.send("built", build_s=timing.wall_clock() - t0)
        chan.send("done")
        return 0
    chan.send("built", build_s=timing.wall_clock() - t0)
    for name in job["workloads"]:
        wl = w.task.workload_named(name)
        chan.send("started", workload=name)
        t1 = timing.wall_clock()
        w.partial = {}
        try:
            fields = w.profile(wl)
            fields["status"] = "ok"
        except Verdict as v:
            fields = {**w.partial, "status": v.status, "reason": v.reason}
        except Exception as exc:  # noqa: BLE001
            if is_build_failure(exc):  # compiled at the first call: every workload would fail alike
                chan.send("compile_error", reason=_tail(traceback.format_exc()), exc_type=type(exc).__name__)
                return 0
            fields = {**w.partial, "status": "runtime_error", "reason": _tail(traceback.format_exc())}
            fields["wall_s"] = timing.wall_clock() - t1
            chan.send("result", workload=name, fields=fields)
            if w.device == "cuda":  # the CUDA context may be poisoned: a fresh worker continues
                chan.send("restart", reason=type(exc).__name__)
                return 3
            continue
        fields["wall_s"] = timing.wall_clock() - t1
        chan.send("result", workload=name, fields=fields)
    chan.send("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
