"""The judge's work: what the trusted process of one submission job does (entry point:
:mod:`.judge`). It never imports the submission.

It generates every input from secret seeds, computes the reference outputs, drives the sandbox
(:mod:`.sandbox`) call by call — first, before the submission is imported there, to time the
reference and the expert in a clean process (:mod:`.clean`), then to check and time the
submission — checks every escrowed output, decides every cross-check and the status, and sends
one :class:`~d2k_profile.results.Outcome` per workload to the parent.

Steps of one workload, each in its own module: inputs (:mod:`.inputs`), correctness and anti-cheat
verdicts per call (:mod:`.checks`), null kernels (:mod:`.nulls`), the sandbox's confessions
(recorded ops, patched names: :mod:`.anticheat`), the timing schedule (:mod:`.timing`) on the
sandbox's native loop (:class:`.device.SandboxDevice`), kernel times (:mod:`.kernel_trace`),
cross-checks (:mod:`.crosscheck`, with :mod:`.forbidden`), metrics (:mod:`.metrics`).
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import anticheat, clean, crosscheck, environment, forbidden, frames, kernel_trace, metrics, native, protocol
from .checks import CompileFailure, Verdict, check_call, clone_all, run_reference, tolerance_for
from .correctness import as_outputs
from .frames import CallFlag, Op
from .inputs import WorkloadInputs
from .loader import load_module, reference_entry
from .nulls import has_scalar_output, passing_nulls
from .results import Outcome, Status, Timing
from .device import SandboxDevice, escrow_sets
from .session import SandboxDied, SandboxTimeout, Session, first_shm, spawn_sandbox
from .shared import Arena
from .timing import CALIBRATION_CYCLES, RecheckFailed, TimingConfig, cycles_per_us, hold_for, measure, warmup

CPU_REPLAY_CALLS = 4
QUIESCE_MS = 2000.0
EXCEPTION_KINDS = ("call", "cuda")  # a failure inside the call: on a GPU, a fresh sandbox takes over
TRUSTED_MARK = ".expert-build"  # written by a judge, outside its sandbox's folder (which Landlock lets it write)


class ImportFailure(Exception):
    def __init__(self, outcome: Outcome):
        super().__init__(outcome.reason)
        self.outcome = outcome


@dataclass
class SessionState:
    """One sandbox and what belongs to it."""

    session: Session
    arenas: list[Arena] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    expert_error: str = ""
    cycles_per_us: float | None = None
    report: dict = field(default_factory=dict)
    clean_inputs: dict[str, WorkloadInputs] = field(default_factory=dict)  # the clean phase's buffers, timed again afterwards
    clean_escrows: dict[str, list] = field(default_factory=dict)  # and its escrow sets (the first of device.escrow_sets)


class Judge:
    def __init__(self, job: protocol.JudgeJob, chan, first: SessionState | None = None):
        from d2k_spec.task import load_task

        self.job, self.chan, self.first = job, chan, first
        self.task = load_task(Path(job.task_path))
        self.cuda = job.device == "cuda"
        self.rng = random.Random(secrets.randbits(64))  # every timed input's seed comes from here
        self.cfg = TimingConfig(**job.timing)
        self.ref_mod = load_module(self.task.reference_path, "d2k_reference")
        self.reference = reference_entry(self.ref_mod)
        if self.cuda:
            import torch  # (first: it loads the CUDA runtime the native module links against)

            torch.zeros(1, device="cuda")  # the judge's context: shared buffers, reference outputs
        self.native = native.load(job.native_path)
        self.build_dir = Path(job.build_dir)
        self.log = Path(job.log)
        self.deaths = 0
        self.state: SessionState | None = None
        self.clean: dict[str, dict[str, Timing]] = {}
        self.clean_host_bound: dict[str, set[str]] = {}
        self.forbidden: dict[str, tuple[set[str], str]] = {}
        self.run_notes: list[str] = []
        self.shm = first_shm(job) if not self.cuda else None
        self.t0 = time.monotonic()

    def mark(self, what: str) -> None:
        """A line in the judge's log with the seconds since the judge was ready: where a job's time goes."""
        print(f"[{time.monotonic() - self.t0:8.2f} s] {what}", flush=True)

    # --- sandboxes -------------------------------------------------------------------------------------
    def spawn(self) -> SessionState:
        return SessionState(spawn_sandbox(self.job, self.chan, str(self.task.reference_path), self.shm))

    def start(self, st: SessionState, deadline: float) -> None:
        """Confinement report; the trusted implementations; on a GPU, while the sandbox is still a
        clean process, the clean timing of the reference and the expert; then the submission."""
        st.report = st.session.reply((protocol.Confined,), deadline).report
        self.mark("sandbox confined")
        self.seed_triton_cache()
        loaded = st.session.request(protocol.Load(), (protocol.Loaded,), deadline)
        st.names, st.expert_error = loaded.impls, loaded.expert_error
        self.mark("reference and expert loaded")
        if self.cuda and not self.job.build_only and self.job.role == "submission" and not self.clean:
            self.clean_phase(st, deadline)
            self.mark("clean timing done")
        reply = st.session.request(protocol.Import(), (protocol.Imported, protocol.ImportFailed), deadline)
        self.mark("submission imported")
        if isinstance(reply, protocol.ImportFailed):
            st.session.kill()
            if reply.kind == "compile":
                raise ImportFailure(Outcome(status=Status.COMPILE_ERROR, reason=reply.reason, error_kind="compile"))
            raise ImportFailure(Outcome(status=Status.RUNTIME_ERROR, reason="exception at import: " + reply.reason, error_kind="import"))
        st.names = reply.impls

    def seed_triton_cache(self) -> None:
        """The sandbox starts from a copy of kernels compiled by trusted code only: the judges'
        shared cache and the caches of this task's expert jobs (whose sandboxes ran nothing but the
        expert and the reference). No recompilation of the expert per submission, and no cache
        shared with, or writable by, another submission's sandbox."""
        dst = self.build_dir / "sandbox" / "triton-cache"
        sources = [Path(os.environ["TRITON_CACHE_DIR"])] if os.environ.get("TRITON_CACHE_DIR") else []
        if self.job.role == "expert":  # marks this build folder as one that only ran trusted code
            self.build_dir.mkdir(parents=True, exist_ok=True)
            (self.build_dir / TRUSTED_MARK).touch()
        else:
            sources += [m.parent / "sandbox" / "triton-cache" for m in sorted(self.build_dir.parent.glob(f"*/{TRUSTED_MARK}"))]
        for src in sources:
            if src.is_dir() and src != dst:
                shutil.copytree(src, dst, dirs_exist_ok=True)

    def end_session(self) -> None:
        if self.state is None:
            return
        self.state.session.kill()
        for a in self.state.arenas:
            a.close()
        self.state = None

    def ensure_session(self, deadline: float) -> SessionState:
        if self.state is None:
            st = self.spawn()
            self.state = st
            self.start(st, deadline)
        return self.state

    # --- the job ----------------------------------------------------------------------------------------
    def run(self) -> None:
        info = environment.device_info() if self.cuda else {}
        self.chan.send(protocol.Hello({**environment.versions(), **info}))
        t0 = time.monotonic()
        self.state = self.first or self.spawn()  # it confines itself and imports torch while the judge gets ready
        if self.cuda and not self.job.build_only and self.job.role == "submission" and self.task.interface.forbidden_ops:
            for name in self.job.workloads:
                self.forbidden[name] = self.forbidden_kernels(self.task.workload_named(name))
            self.mark("forbidden-op kernels known")
        try:
            self.start(self.state, time.monotonic() + self.job.build_timeout_s)
        except ImportFailure as f:
            self.state = None
            self.chan.send(protocol.Failed(f.outcome))
            return
        except SandboxTimeout:
            self.end_session()
            self.chan.send(protocol.Failed(Outcome(status=Status.TIMEOUT, reason=f"build/import exceeded {self.job.build_timeout_s:g} s",
                                                   error_kind="timeout", wall_s=time.monotonic() - t0)))
            return
        except SandboxDied as d:
            self.end_session()
            self.chan.send(protocol.Failed(Outcome(status=Status.RUNTIME_ERROR, reason=f"crashed while importing/building: {d}", error_kind="crash")))
            return
        self.chan.send(protocol.Built(time.monotonic() - t0, self.state.report))
        if self.job.build_only:
            self.warm_call()
            return
        for i, name in enumerate(self.job.workloads):
            if self.deaths >= self.job.max_deaths:
                for rest in self.job.workloads[i:]:
                    self.chan.send(protocol.Result(rest, Outcome(status=Status.SKIPPED, reason=f"not run: this submission already killed {self.deaths} sandboxes",
                                                                 error_kind="crash")))
                break
            self.chan.send(protocol.Started(name))
            outcome = self.workload(name)
            if outcome is None:  # a compiler failure: every remaining workload fails alike
                return
            self.chan.send(protocol.Result(name, outcome))
            self.mark(f"{name}: {outcome.status.value} in {outcome.wall_s:.2f} s")
        self.end_session()

    def workload(self, name: str) -> Outcome | None:
        wl = self.task.workload_named(name)
        t1 = time.monotonic()
        deadline = t1 + self.job.workload_timeout_s
        out = Outcome(notes=list(self.run_notes))
        if self.cuda:
            out.clocks["before"] = environment.clocks(None)
        restart = False
        try:
            st = self.ensure_session(deadline)
            if st.expert_error:
                out.notes.append(st.expert_error)
            self.profile(wl, st, out, deadline)
            out.status = Status.OK
        except Verdict as v:
            out.status, out.reason, out.error_kind = v.status, v.reason, v.kind
            if v.kind in EXCEPTION_KINDS:
                self.confession_overrides(out, deadline)
                restart = self.cuda
        except RecheckFailed as exc:
            out.status, out.error_kind = Status.CHEAT_SUSPECTED, "check"
            out.reason = f"{exc} (correct when checked, wrong when timed: caching or less work)"
        except CompileFailure as c:
            self.end_session()
            self.chan.send(protocol.Failed(Outcome(status=Status.COMPILE_ERROR, reason=c.reason, error_kind="compile")))
            return None
        except ImportFailure as f:  # a fresh sandbox failed to import what imported before
            self.state = None
            out = f.outcome
            restart = True
        except SandboxTimeout:
            out.status, out.error_kind = Status.TIMEOUT, "timeout"
            out.reason = f"exceeded {self.job.workload_timeout_s:g} s on this workload; sandbox killed"
            restart, self.deaths = True, self.deaths + 1
        except SandboxDied as d:
            out.status, out.reason, out.error_kind = Status.RUNTIME_ERROR, str(d), "crash"
            restart, self.deaths = True, self.deaths + 1
        except (protocol.ProtocolError, frames.ChannelViolation) as exc:
            out.status, out.error_kind = Status.CHEAT_SUSPECTED, "protocol"
            out.reason = f"the sandbox broke the protocol: {exc}"
            restart = True
        except Exception as exc:  # noqa: BLE001  (a fault of the harness itself: recorded, never hidden)
            out.status, out.error_kind = Status.RUNTIME_ERROR, "harness"
            out.reason = f"harness error: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}"
            restart = True
        if restart or out.status != Status.OK:  # a fresh sandbox for the next workload (this one may be mid-serve or tampered with)
            if restart and out.error_kind in EXCEPTION_KINDS:
                self.deaths += 1
            self.end_session()
        if self.cuda:
            out.clocks["after"] = environment.clocks(None)
        out.wall_s = time.monotonic() - t1
        return out

    def confession_overrides(self, out: Outcome, deadline: float) -> None:
        """A call that failed after the submission patched torch or the harness is a cheat, not a
        runtime error: ask the sandbox (if it still answers) before recording the failure."""
        st = self.state
        if st is None or not st.session.alive:
            return
        try:
            names = st.session.request(protocol.CheckPatches(), (protocol.Patches,), min(deadline, time.monotonic() + 10)).names
        except Exception:  # noqa: BLE001  (the sandbox is past answering: the failure stands)
            return
        if names:
            out.status, out.error_kind = Status.CHEAT_SUSPECTED, "check"
            out.reason = f"replaced harness/torch callables ({', '.join(names[:5])}); then: {out.reason}"

    # --- one workload ---------------------------------------------------------------------------------------
    def profile(self, wl, st: SessionState, out: Outcome, deadline: float) -> None:
        s = st.session
        self.check_patches(st, deadline)
        tol, in_place = tolerance_for(self.task, wl), self.task.interface.in_place
        # The buffers the clean phase timed the reference on, where this sandbox had it: the same
        # allocations on both sides of the comparison (a strided reference such as transpose's
        # took 10.7-15.0 ms on the H200 depending on the allocation alone).
        inputs = st.clean_inputs.pop(wl.name, None)
        if inputs is None:
            arena = Arena(self.job.device, self.native, self.shm)
            st.arenas.append(arena)
            inputs = WorkloadInputs(self.ref_mod, wl, self.job.device, self.rng, arena)
        arena = inputs.arena
        plain0 = inputs.load_seed(0)
        ref0, after0 = run_reference(self.reference, plain0)
        refs = as_outputs(ref0)
        # one escrow set per implementation, in the order of st.names (device.escrow_sets); the
        # clean phase's sets serve the implementations it timed, which come first in that order
        escrows = st.clean_escrows.pop(wl.name, [])[:len(st.names)]
        escrows += [[arena.like(r) for r in refs] for _ in st.names[len(escrows):]]
        escrow_views = [tuple(b.tensor for b in e) for e in escrows]
        s.request(protocol.Bind([x.specs() for x in inputs.sets], [[b.spec for b in e] for e in escrows]), (protocol.Bound,), deadline)
        sub = st.names.index("submission")
        sub_escrow = escrow_sets(st.names)["submission"]
        out.weak_workload = passing_nulls(plain0, ref0, tol)
        scalar, seed_refs = has_scalar_output(ref0), []  # a one-element output's constant null needs every seed
        s.serve(deadline)
        for i, seed in enumerate(wl.seeds):
            plain = plain0 if i == 0 else inputs.load_seed(i)
            ref, after = (ref0, after0) if i == 0 else run_reference(self.reference, plain)
            if scalar and i:
                seed_refs.append(ref)
            frame = s.expect(s.op(frames.command(Op.CALL, sub, i, sub_escrow, CallFlag.ESCROW), deadline), frames.CallFrame)
            check_call(frame, escrow_views[sub_escrow], inputs.shared(i), plain, ref, tol, in_place, f"seed {seed}", out, after)
            out.seeds_checked = i + 1
        if seed_refs:
            out.weak_workload = passing_nulls(plain0, ref0, tol, tuple(seed_refs))
        s.stop(deadline)
        self.check_recorded_ops(st, deadline)
        if self.cuda:
            self.time_workload(wl, st, inputs, escrow_views, tol, in_place, out, deadline)
        else:
            self.cpu_replay(st, inputs, escrow_views, tol, in_place, out, deadline)
        self.check_patches(st, deadline)

    def wrong_wherever(self, st: SessionState, inputs: WorkloadInputs, escrow_views: list, tol, in_place: bool,
                       failed: tuple, deadline: float) -> str | None:
        """A repeated call's output failed its re-check: is the submission wrong on that input
        wherever and whenever it meets it, or did its output depend on the call's address or
        history? More untimed calls tell. The failed input goes to the spare set, an address the
        submission has never been given (a cache keyed on addresses has nothing there); then every
        listed seed, right at the correctness check, is called again in its own set. Wrong on the
        first and right on every seed: the submission is wrong on this input (rounding that the
        listed seeds happened not to expose, say), and the reason for ``incorrect`` is returned.
        Right on the first (the output depended on where or when it was asked), or now wrong on a
        seed (it changed after the correctness check): None, and the caller keeps
        ``cheat_suspected``. Every seed, not one: a submission that leaves part of its output
        unwritten can hand back a stale right answer for one input it met before."""
        if not failed:
            return None
        s, sub = st.session, st.names.index("submission")
        sub_escrow = escrow_sets(st.names)["submission"]
        inputs.load_spare(failed)
        calls = [(inputs.spare_index, failed, "the failed input at a new address")]
        calls += [(i, None, f"seed {seed} again") for i, seed in enumerate(inputs.wl.seeds)]
        for k, (index, plain, what) in enumerate(calls):
            plain = plain if plain is not None else inputs.load_seed(index)
            ref, after = run_reference(self.reference, plain)
            frame = s.expect(s.op(frames.command(Op.CALL, sub, index, sub_escrow, CallFlag.ESCROW), deadline), frames.CallFrame)
            try:
                check_call(frame, escrow_views[sub_escrow], inputs.shared(index), plain, ref, tol, in_place, what, after=after)
            except Verdict as v:
                if v.status != Status.INCORRECT:
                    raise
                if k:  # a listed seed, right before, is wrong now
                    return None
                continue
            if not k:  # right on the failed input at a new address
                return None
        return ("wrong again on that input written to buffers it had never been given, while every listed seed stays right: "
                "the submission is wrong on this input, not different when timed")

    def check_patches(self, st: SessionState, deadline: float) -> None:
        names = st.session.request(protocol.CheckPatches(), (protocol.Patches,), deadline).names
        if names:
            raise Verdict(Status.CHEAT_SUSPECTED, "replaced harness/torch callables: " + ", ".join(names[:5]))

    def check_recorded_ops(self, st: SessionState, deadline: float) -> None:
        """The sandbox's op recorder (Python API and ATen dispatcher) over one extra call."""
        ops = self.task.interface.forbidden_ops
        if not ops or self.job.role != "submission":
            return
        rec = st.session.request(protocol.RecordOps(0), (protocol.Recorded,), deadline)
        if found := anticheat.forbidden_calls(rec.ops, ops):
            raise Verdict(Status.CHEAT_SUSPECTED, f"calls {', '.join(found)}, which the task forbids")

    def cpu_replay(self, st: SessionState, inputs: WorkloadInputs, escrow_views: list, tol, in_place: bool, out: Outcome, deadline: float) -> None:
        """No GPU: still call the submission on fresh inputs in the same buffers and re-check every
        call, which catches caching and doing less work on later calls."""
        s, sub = st.session, st.names.index("submission")
        sub_escrow = escrow_sets(st.names)["submission"]
        s.serve(deadline)
        for k in range(CPU_REPLAY_CALLS):
            plain = inputs.refresh_timed()
            frame = s.expect(s.op(frames.command(Op.CALL, sub, inputs.timed_index, sub_escrow, CallFlag.ESCROW), deadline), frames.CallFrame)
            ref, after = run_reference(self.reference, plain)
            try:
                check_call(frame, escrow_views[sub_escrow], inputs.shared(inputs.timed_index), plain, ref, tol, in_place,
                           f"repeat call {k + 1}", after=after)
            except Verdict as v:
                if v.status != Status.INCORRECT:
                    raise
                why = self.wrong_wherever(st, inputs, escrow_views, tol, in_place, plain, deadline)
                if why is not None:
                    raise Verdict(Status.INCORRECT, f"{v.reason}; {why}") from None
                raise Verdict(Status.CHEAT_SUSPECTED, f"{v.reason} (correct at first: caching or less work on later calls)") from None
        s.stop(deadline)
        out.rechecked_calls = CPU_REPLAY_CALLS
        out.notes.append("correctness only: timing needs a GPU")

    # --- timing (GPU) -----------------------------------------------------------------------------------------
    def time_workload(self, wl, st: SessionState, inputs: WorkloadInputs, escrow_views: list, tol, in_place: bool, out: Outcome, deadline: float) -> None:
        s = st.session
        names = list(st.names)
        index = {n: i for i, n in enumerate(names)}
        escrow_of = escrow_sets(names)
        if self.job.mode == "graph":
            cap = s.request(protocol.Capture(inputs.timed_index), (protocol.Captured,), deadline)
            if cap.error:
                out.notes.append(f"graph capture failed ({cap.error}): timed eagerly")
        s.serve(deadline)
        # the submission and the expert are re-checked; the reference is the yardstick itself
        device = SandboxDevice(s, inputs, index, escrow_of, escrow_views, self.reference, tol, in_place, deadline, out,
                               checked=frozenset(escrow_of) - {"reference"})
        findings = crosscheck.Findings([], [])
        self.quiesce(s, deadline, "before the timed calls", findings)
        # The hold kernel is calibrated before the trace starts: its calibration launches belong
        # to no call, and the trace counts every activity outside a call against the sandbox.
        cycles_per_us = self.calibrate(st, deadline)
        # The trace starts before the warmup: CUPTI's per-API-call overhead lengthens the host's
        # enqueue time, and the stream hold is sized from the warmup's enqueue times.
        trace_why = self.begin_trace(s, deadline)
        host_ms = warmup(names, device, self.cfg)
        hold = hold_for(host_ms, cycles_per_us)
        out.hold_us = hold.us
        try:
            m = measure(names, device, self.cfg, self.rng, hold)
        except RecheckFailed as failed:
            why = None
            if failed.impl == "submission":  # only the submission's own calls are confirmed
                why = self.wrong_wherever(st, inputs, escrow_views, tol, in_place, failed.inputs, deadline)
            if why is not None:
                raise Verdict(Status.INCORRECT, f"{failed}; {why}") from None
            raise
        calls = list(m.calls)
        for _ in range(kernel_trace.PROBE_CALLS if trace_why is None else 0):
            f = s.expect(s.op(frames.command(Op.CALL, frames.PROBE_IMPL, inputs.timed_index, 0, CallFlag.TIMED, hold.cycles), deadline), frames.CallFrame)
            calls.append((kernel_trace.PROBE, f.call_id, f.event_ms))
        self.quiesce(s, deadline, "after the timed calls", findings)
        traced: dict[str, kernel_trace.Traced] = {}
        if trace_why is None:
            traces, summary = self.end_trace(s, deadline)
            traced = kernel_trace.by_impl(traces, calls)
            out.launch_latency_ms = kernel_trace.launch_latency_ms(traced)
            fb, note = self.forbidden.get(wl.name, (set(), ""))
            if note:
                out.notes.append(note)
            sub_findings = crosscheck.trace_findings(traces, summary, calls, out.launch_latency_ms,
                                                     fb if self.job.role == "submission" else set(), "submission")
            findings.problems += sub_findings.problems
            findings.notes += sub_findings.notes
        else:
            out.notes.append(f"no kernel times and no device-activity checks: {trace_why}")
        s.stop(deadline)
        marked = s.request(protocol.Mark(f"d2k/{self.task.id}/{wl.name}", inputs.timed_index), (protocol.Marked,), deadline)
        out.nvtx_range = marked.ranges.get("submission", "").replace("/submission", f"/{self.job.name}")
        out.rechecked_calls = m.rechecked["submission"]
        for name in sorted(m.host_bound_impls()):
            out.notes.append(f"{name}: on {m.host_bound[name]} of {len(m.samples[name])} timed calls the host took longer to enqueue the call "
                             f"than the {hold.us:.0f} us stream hold: those event times include host time")
        self.fill_metrics(wl, m, traced, out, findings)
        out.notes += findings.notes
        if findings.problems:
            raise Verdict(Status.CHEAT_SUSPECTED, "; ".join(findings.problems))

    def quiesce(self, s: Session, deadline: float, when: str, findings: crosscheck.Findings) -> None:
        q = s.expect(s.op(frames.command(Op.QUIESCE, arg=int(QUIESCE_MS)), deadline), frames.QuiesceFrame)
        if not q.idle:
            raise Verdict(Status.CHEAT_SUSPECTED, f"device work of the sandbox was still running {q.waited_ms:.0f} ms {when} had returned "
                                                  "(a kernel that outlives its call)")

    def begin_trace(self, s: Session, deadline: float) -> str | None:
        why = kernel_trace.unavailable_reason(self.cfg.kernel_trace)
        if why:
            return why
        f = s.expect(s.op(frames.command(Op.TRACE_BEGIN), deadline), frames.TraceSummaryFrame)
        if f.status != 0:
            mine = self.native.cupti_check(native.cupti_library()) if hasattr(self.native, "cupti_check") else "no CUPTI in this build"
            if mine is None:  # CUPTI works for the judge on this machine: the sandbox stopped it
                raise Verdict(Status.CHEAT_SUSPECTED, f"the kernel trace could not start in the sandbox ({f.text}) although CUPTI works here")
            return f"CUPTI unavailable: {f.text}"
        return None

    def end_trace(self, s: Session, deadline: float) -> tuple[list[frames.TraceCallFrame], frames.TraceSummaryFrame]:
        traces = []
        frame = s.op(frames.command(Op.TRACE_END), deadline)
        while isinstance(frame, frames.TraceCallFrame):
            traces.append(frame)
            frame = s.frames.read(deadline)
        return traces, s.expect(frame, frames.TraceSummaryFrame)

    def fill_metrics(self, wl, m, traced: dict, out: Outcome, findings: crosscheck.Findings) -> None:
        def summary(name: str) -> Timing | None:
            xs = m.samples.get(name)
            if not xs:
                return None
            kt = traced.get(name)
            kernel = {"kernel_ms": kt.kernel_ms, "traced_event_ms": kt.event_ms, "kernels_per_call": kt.kernels_per_call,
                      "kernel_names": kt.kernel_names} if kt else {}
            return Timing(**metrics.summarize_samples(xs), samples_ms=[round(x, 6) for x in xs], **kernel)

        out.timing, out.reference_timing, out.expert_timing = summary("submission"), summary("reference"), summary("expert")
        t, ref_t = out.timing.median_ms, out.reference_timing.median_ms
        out.speedup_vs_reference = metrics.speedup(ref_t, t)
        if out.timing.kernel_ms and out.reference_timing.kernel_ms:
            out.kernel_speedup_vs_reference = metrics.speedup(out.reference_timing.kernel_ms, out.timing.kernel_ms)
        if out.expert_timing:
            out.speedup_vs_expert = metrics.speedup(out.expert_timing.median_ms, t)
        ci = metrics.bootstrap_speedup_ci(m.samples["reference"], m.samples["submission"])
        out.speedup_ci95 = list(ci) if ci else None
        clean_t = self.clean.get(wl.name, {})
        out.clean_reference_ms = clean_t["reference"].median_ms if "reference" in clean_t else None
        out.clean_expert_ms = clean_t["expert"].median_ms if "expert" in clean_t else None
        cf = crosscheck.clean_findings({"reference": out.reference_timing, **({"expert": out.expert_timing} if out.expert_timing else {})}, clean_t,
                                       m.host_bound_impls() | self.clean_host_bound.get(wl.name, set()))
        findings.problems += cf.problems
        findings.notes += cf.notes
        flop = float(getattr(self.ref_mod, "flops", lambda p: 0.0)(wl.params))
        nbytes = float(getattr(self.ref_mod, "bytes_moved", lambda p: 0.0)(wl.params))
        out.tflops, out.gbps = metrics.tflops(flop, t), metrics.gbps(nbytes, t)
        import torch

        peaks = metrics.peaks_for(torch.cuda.get_device_name())
        if peaks is None:
            out.notes.append("unknown GPU model: no peak table entry, no roofline floor")
            return
        dtype = str(wl.params.get("dtype", "bfloat16"))
        floor = metrics.roofline_floor_ms(flop, nbytes, metrics.compute_peak_tflops(peaks, dtype), peaks.bandwidth_gbps)
        out.roofline_floor_ms = floor
        out.roofline_fraction = floor / t if t else None
        findings.problems += crosscheck.roofline_findings(t, floor, peaks.name).problems

    # --- clean phase and the warm-up call ----------------------------------------------------------------------
    def calibrate(self, st: SessionState, deadline: float) -> float:
        """SM cycles per microsecond, from the sandbox's own hold kernel (once per sandbox)."""
        if st.cycles_per_us is None:
            cal = st.session.expect(st.session.op(frames.command(Op.CALIBRATE, 5, hold_cycles=CALIBRATION_CYCLES), deadline), frames.CalibrationFrame)
            st.cycles_per_us = cycles_per_us(CALIBRATION_CYCLES, list(cal.ms))
        return st.cycles_per_us

    def clean_phase(self, st: SessionState, deadline: float) -> None:
        """Reference and expert of every workload timed in the sandbox before the submission is
        imported (:mod:`.clean`)."""
        s = st.session
        names = list(st.names)
        for name in self.job.workloads:
            wl = self.task.workload_named(name)
            arena = Arena(self.job.device, self.native, self.shm)
            st.arenas.append(arena)
            inputs = WorkloadInputs(self.ref_mod, wl, self.job.device, self.rng, arena)
            # escrowed as after the import (device.escrow_sets), never re-checked: this phase
            # only times; the buffers are sized by one reference call in the judge
            refs = as_outputs(run_reference(self.reference, inputs.load_seed(0))[0])
            escrows = [[arena.like(r) for r in refs] for _ in names]
            s.request(protocol.Bind([x.specs() for x in inputs.sets], [[b.spec for b in e] for e in escrows]), (protocol.Bound,), deadline)
            s.serve(deadline)
            try:
                cpu = self.calibrate(st, deadline)
                device = SandboxDevice(s, inputs, {n: i for i, n in enumerate(names)}, escrow_sets(names),
                                       [tuple(b.tensor for b in e) for e in escrows], self.reference, tolerance_for(self.task, wl),
                                       True, deadline, Outcome(), checked=frozenset())
                # traced as the timed phase is: CUPTI's per-call overhead is a few microseconds,
                # 5-10 % of a 20 us kernel, and the two times are compared within 5 %
                traced, traces = self.begin_trace(s, deadline) is None, []
                try:
                    timings, m = clean.time_clean(device, names, self.cfg, self.rng, cpu)
                finally:  # never leave the trace running into the timed phase, whose own trace would then fail to start
                    if traced:
                        traces, _ = self.end_trace(s, deadline)
                self.clean[name] = clean.with_kernel_times(timings, traces, m)
                self.clean_host_bound[name] = m.host_bound_impls()
                st.clean_inputs[name] = inputs
                st.clean_escrows[name] = escrows
            except (Verdict, RuntimeError, ValueError) as exc:  # no clean comparison for this workload; said in its record
                self.run_notes.append(f"clean timing of {name} failed: {type(exc).__name__}: {exc}")
            s.stop(deadline)

    def forbidden_kernels(self, wl) -> tuple[set[str], str]:
        """The forbidden op's kernels on ``wl``, traced once per run and task (a judges-only file)."""
        import torch

        cache = self.build_dir.parent / "forbidden-kernels" / f"{wl.name}.json"
        try:
            data = json.loads(cache.read_text())
            return set(data["kernels"]), data["note"]
        except (OSError, ValueError, KeyError):
            pass
        plain = tuple(self.ref_mod.make_inputs(wl, self.rng.randrange(1 << 31), "cuda"))
        try:
            kernels, note = forbidden.forbidden_kernels(lambda: self.reference(plain), list(self.task.interface.forbidden_ops), torch.cuda.synchronize)
        except Exception as exc:  # noqa: BLE001  (no kernel-name check for this workload; said in its record)
            return set(), f"forbidden-op kernels unknown: {type(exc).__name__}: {exc}"
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"kernels": sorted(kernels), "note": note}))
        os.replace(tmp, cache)
        return kernels, note

    def warm_call(self) -> None:
        """Build-only jobs: one call on the smoke workload compiles what is compiled lazily. Only a
        compiler failure counts here; any other failure is the timing job's to record."""
        st = self.state
        deadline = time.monotonic() + self.job.build_timeout_s
        try:
            arena = Arena(self.job.device, self.native, self.shm)
            st.arenas.append(arena)
            wl = self.task.smoke
            inputs = WorkloadInputs(self.ref_mod, wl, self.job.device, self.rng, arena)
            plain = inputs.load_seed(0)
            refs = as_outputs(self.reference(clone_all(plain)))
            esc = [arena.like(r) for r in refs]
            st.session.request(protocol.Bind([x.specs() for x in inputs.sets], [[b.spec for b in esc]]), (protocol.Bound,), deadline)
            st.session.serve(deadline)
            frame = st.session.op(frames.command(Op.CALL, st.names.index("submission"), 0, 0, 0), deadline)
            if isinstance(frame, frames.CallFrame) and frame.status == frames.CallStatus.BUILD_FAILURE:
                self.chan.send(protocol.Failed(Outcome(status=Status.COMPILE_ERROR, reason=frame.text, error_kind="compile")))
                return
        except Exception as exc:  # noqa: BLE001  (left to the timing job, workload by workload)
            print(f"build warm-up call failed (left to the timing job): {type(exc).__name__}: {exc}", flush=True)
        finally:
            self.end_session()

