"""A profiling run: which (submission, workload) pairs to do, in which judges, into which file.

The parent process never imports a submission (nor, on a GPU, initialises CUDA). It plans the
pairs (skipping those already in the results file under ``--resume``, and taking those the unit
store already holds from it), builds the native call loop once for the machine, optionally
pre-builds submissions in parallel (compilation is the slow part of a corpus run and needs no GPU
time), compile-checks CUDA submissions with nvcc on a machine without a GPU, then hands each
submission to a judge on a free GPU (or CPU slot), one judge per GPU at a time, and stores each
result the moment it arrives: first in the unit store (:mod:`.store`), then as a line of
``results.jsonl``. A workload whose judge was lost (:func:`.units.is_infrastructure`) is not
stored: it goes back to the queue for another GPU, up to ``retries`` times.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from d2k_spec.task import Task, load_task

from . import compilecheck, environment, health, native, probe, protocol
from .discovery import Submission
from .isolation import Limits, build_only, run_judge
from .results import NO_DEVICE, Outcome, Record, ResultStore, Status, record_key
from .store import UnitStore
from .units import UnitKeys, is_infrastructure


@dataclass
class RunOptions:
    out: Path
    mode: str = "eager"  # eager | graph (cpu when there is no GPU)
    smoke: bool = False
    workloads: list[str] | None = None
    resume: bool = False
    gpus: list[str] = field(default_factory=lambda: ["0"])
    jobs: int = 1  # parallel judges without a GPU, parallel pre-builds and compile checks
    limits: Limits = field(default_factory=Limits)
    timing: dict = field(default_factory=dict)
    prebuild: bool = True
    sandbox: bool = True
    # the unit store: None is OUT/store, read only under --resume; a folder given explicitly is
    # read on every run (a store shared by runs and nodes: units finished anywhere are not re-run)
    store: Path | None = None
    retries: int = 1  # re-runs of a workload whose judge was lost (never of a task failure)
    backend: str = "local"  # local | ray (d2k_profile.backends)
    health_every: int = 10  # units between a GPU slot's health checks (0: no checks)
    ray_address: str | None = None  # ray: "auto", an address, or None for a local Ray instance

    @property
    def store_root(self) -> Path:
        return Path(self.store) if self.store is not None else Path(self.out) / "store"

    @property
    def store_readable(self) -> bool:
        return self.resume or self.store is not None

    def slots(self, has_gpu: bool) -> list[str | None]:
        """Where judges run: one per GPU of ``gpus``, or ``jobs`` CPU slots without a GPU."""
        return list(self.gpus) if has_gpu else [None] * max(1, self.jobs)

    def unit_keys(self, has_gpu: bool) -> UnitKeys:
        return UnitKeys(self.mode if has_gpu else "cpu", self.timing, dataclasses.asdict(self.limits), self.sandbox,
                        self.slots(has_gpu), has_gpu)


@dataclass
class Job:
    sub: Submission
    task: Task
    workloads: list[str]
    source_hash: str
    attempt: int = 0  # 0 on the first run; n after n judges were lost under these workloads
    avoid: frozenset = frozenset()  # GPU slots whose judge was lost under it


class UsageError(Exception):
    """A user mistake (unknown workload name, ...), reported without a traceback."""


def select_workloads(task: Task, opts: RunOptions, has_gpu: bool) -> list[str]:
    if not has_gpu or opts.smoke:
        return [task.smoke.name]
    names = [w.name for w in task.workloads]
    if opts.workloads:
        return [n for n in names if n in opts.workloads] + [task.smoke.name] * (task.smoke.name in opts.workloads)
    return names


def plan(subs: list[Submission], opts: RunOptions, has_gpu: bool, store: ResultStore,
         units: UnitStore | None = None, keys: UnitKeys | None = None) -> tuple[list[Job], int]:
    """Jobs still to do, and how many pairs were not run: already in ``store`` (``--resume``), or
    found in ``units`` (a unit store that may be read), whose records are then appended to
    ``store`` from it when missing there."""
    tasks: dict[Path, Task] = {}
    jobs, skipped = [], 0
    mode = opts.mode if has_gpu else "cpu"
    if opts.workloads:
        known = {w.name for s in subs for w in tasks.setdefault(s.task_path, load_task(s.task_path)).workload}
        if unknown := sorted(set(opts.workloads) - known):
            raise UsageError(f"unknown workload(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    for sub in subs:
        task = tasks.setdefault(sub.task_path, load_task(sub.task_path))
        h = environment.source_hash(sub.path)
        todo = []
        for name in select_workloads(task, opts, has_gpu):
            if record_key(task.id, str(sub.path), name, mode, h) in store.done:
                skipped += 1
            elif units is not None and keys is not None and (found := _stored(units, keys, task, sub, h, name)):
                unit, outcome = found
                store.append(make_record(Job(sub, task, [name], h), name, mode, outcome, unit.device_model))
                skipped += 1
            else:
                todo.append(name)
        if todo:
            jobs.append(Job(sub, task, todo, h))
    return jobs, skipped


def _stored(units: UnitStore, keys: UnitKeys, task: Task, sub: Submission, h: str, workload: str):
    """(unit, outcome) of the first device model of the run whose unit the store holds, or None."""
    for unit in keys.candidates(task, sub.role, h, workload):
        outcome = units.get(unit)
        if outcome is not None:
            return unit, outcome
    return None


def make_record(job: Job, workload: str, mode: str, outcome: Outcome, device: str) -> Record:
    s = job.sub
    fields = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(Outcome)}
    return Record(task=job.task.id, submission=s.name, path=str(s.path), role=s.role, workload=workload, mode=mode,
                  source_hash=job.source_hash, device=device, finished_at=time.time(), **fields)


def _expert_path(task: Task) -> str | None:
    p = task.expert_path
    return str(p) if (p / "submission.py").is_file() or p.suffix == ".py" else None


def build_dir(out: Path, task_id: str, name: str, h: str) -> Path:
    return out.resolve() / "build" / task_id / f"{name}-{h[:8]}"


class Runner:
    """Runs the planned jobs; ``on_record`` is called (under a lock) after each append."""

    def __init__(self, opts: RunOptions, store: ResultStore, has_gpu: bool, on_record: Callable[[Record], None],
                 units: UnitStore | None = None, keys: UnitKeys | None = None):
        self.opts, self.store, self.has_gpu, self.on_record = opts, store, has_gpu, on_record
        self.units = units if units is not None else UnitStore(opts.store_root)
        self.keys = keys if keys is not None else opts.unit_keys(has_gpu)
        self.retry: list[Job] = []  # lost-judge workloads waiting for another GPU (under the lock)
        self.health = health.SlotHealth(every=max(1, opts.health_every))
        self.health_check = health.check if (has_gpu and opts.health_every > 0) else None
        self.health_log: list[dict] = []  # every check made: slot, ok, ms, reason, time (environment.json)
        self.say = lambda text: print(text, file=sys.stderr, flush=True)
        self.mode = opts.mode if has_gpu else "cpu"
        self.lock = threading.Lock()
        self.env_info: dict = {}
        self.native = native.prepare(has_gpu)
        # which sandbox layers this machine's GPU stack tolerates (every layer on a CPU)
        self.sandbox_probe = probe.layers_for_gpu(str(self.native.path), opts.gpus[0]) if (has_gpu and opts.sandbox) else None
        self.layers = self.sandbox_probe["layers"] if self.sandbox_probe else list(probe.FULL)
        self.started_at = time.time()
        self.job_times: list[dict] = []

    def job_spec(self, job: Job, build_only_: bool = False) -> tuple[protocol.JudgeJob, dict[str, str]]:
        folder = build_dir(self.opts.out, job.task.id, job.sub.name, job.source_hash)
        expert = _expert_path(job.task) if (self.has_gpu and job.sub.role == "submission") else None
        logs = self.opts.out.resolve() / "logs" / job.task.id
        spec = protocol.JudgeJob(
            task_path=str(job.task.path), path=str(job.sub.path), name=job.sub.name, role=job.sub.role, language=job.sub.language,
            device="cuda" if self.has_gpu else "cpu", mode=self.mode, workloads=list(job.workloads), expert_path=expert,
            native_path=str(self.native.path) if self.native.path else None, build_dir=str(folder),
            log=str(logs / f"{job.sub.name}{'.build' if build_only_ else ''}.sandbox.log"), timing=dict(self.opts.timing),
            build_timeout_s=self.opts.limits.build_timeout_s, workload_timeout_s=self.opts.limits.workload_timeout_s,
            max_deaths=self.opts.limits.max_deaths, build_only=build_only_,
            sandbox=protocol.SandboxPolicy(enabled=self.opts.sandbox, layers=list(self.layers)),
            expert_build_dir=str(build_dir(self.opts.out, job.task.id, "expert", environment.source_hash(Path(expert)))) if expert else None,
        )
        # Judges (trusted: they run only the reference and the expert) share one Triton cache; each
        # sandbox starts from a copy of it in its own build folder (see Judge.seed_triton_cache).
        root = self.opts.out.resolve() / "build"
        env = {"TORCH_EXTENSIONS_DIR": str(root / "judges" / "torch_extensions"), "TRITON_CACHE_DIR": str(root / "judges" / "triton-cache")}
        if not self.has_gpu:
            env.update({"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
        return spec, env

    def device_label(self, judge_info: dict | None = None) -> str:
        """The device a record was made on: the name its own judge reported (a record is emitted
        before the judge's job ends, so not the run's environment info, which a first job fills
        only once it has finished), else any judge's, else "cuda"/"cpu"."""
        return (judge_info or {}).get("name") or self.env_info.get("name") or ("cuda" if self.has_gpu else "cpu")

    def emit(self, job: Job, workload: str, outcome: Outcome, judge_info: dict | None = None, slot: str | None = None) -> None:
        """Store one workload's outcome: in the unit store, then in results.jsonl. A lost judge's
        workload is held back for a retry on another GPU while ``retries`` allow."""
        with self.lock:
            if is_infrastructure(outcome):
                self.health.lost_judge(slot)
            if is_infrastructure(outcome) and outcome.error_kind != NO_DEVICE and job.attempt < self.opts.retries:
                avoid = job.avoid | {slot} if len(set(self.opts.slots(self.has_gpu))) > 1 else job.avoid
                self.retry.append(dataclasses.replace(job, workloads=[workload], attempt=job.attempt + 1, avoid=frozenset(avoid)))
                return
            rec = make_record(job, workload, self.mode, outcome, self.device_label(judge_info))
            if not is_infrastructure(outcome):  # a lost judge says nothing of the unit: never stored
                self.units.put(self.keys.unit(job.task, job.sub.role, job.source_hash, workload, slot), outcome)
            self.store.append(rec)
            self.on_record(rec)

    def cpu_cuda(self, jobs: list[Job]) -> list[Job]:
        """No GPU: CUDA C++ submissions are compile-checked with nvcc (when present), then recorded
        as skipped (they cannot run) or as compile errors; the rest go on."""
        if self.has_gpu:
            return jobs
        cuda = [j for j in jobs if j.sub.language == "cuda"]

        def check(job: Job) -> None:
            res = compilecheck.check(job.sub.path, build_dir(self.opts.out, job.task.id, job.sub.name, job.source_hash) / "compile-check",
                                     self.opts.limits.build_timeout_s)
            for name in job.workloads:
                if res.ok is False:
                    self.emit(job, name, Outcome(status=Status.COMPILE_ERROR, reason=res.text, error_kind="compile"))
                else:
                    self.emit(job, name, Outcome(status=Status.SKIPPED, reason=f"CUDA C++ submission: {res.summary}; running it needs a GPU, "
                                                                               "and this machine has none", error_kind=""))

        _map_interruptible(check, cuda, self.opts.jobs)
        return [j for j in jobs if j.sub.language != "cuda"]

    def run_job(self, job: Job, gpu: str | None) -> None:
        spec, env = self.job_spec(job)
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        log = self.opts.out / "logs" / job.task.id / f"{job.sub.name}.log"
        t0 = time.time()
        info: dict = {}
        run_judge(spec, env, log, self.opts.limits, lambda name, o: self.emit(job, name, o, info, gpu), info)
        with self.lock:
            self.job_times.append({"task": job.task.id, "submission": job.sub.name, "role": job.sub.role, "started_at": t0,
                                   "finished_at": time.time(), "wall_s": time.time() - t0, "workloads": len(job.workloads)})
            if info and not self.env_info.get("name") and info.get("name"):
                self.env_info.update(info)
            if info.get("sandbox") and "sandbox" not in self.env_info:
                self.env_info["sandbox"] = info["sandbox"]

    def prebuild(self, jobs: list[Job]) -> list[Job]:
        """Import every submission once, in parallel, to fill the build caches. Build failures
        are recorded here and their jobs dropped; experts are built first, one per task."""
        if not (self.opts.prebuild and self.has_gpu):
            return jobs
        failed: set[int] = set()

        def build(i: int, job: Job) -> None:
            spec, env = self.job_spec(job, build_only_=True)
            spec = dataclasses.replace(spec, expert_path=None)
            env["CUDA_VISIBLE_DEVICES"] = self.opts.gpus[0]
            outcome, info = build_only(spec, env, self.opts.out / "logs" / job.task.id / f"{job.sub.name}.build.log", self.opts.limits)
            with self.lock:
                if info.get("sandbox") and "sandbox" not in self.env_info:
                    self.env_info["sandbox"] = info["sandbox"]
            if outcome is not None:
                failed.add(i)
                for name in job.workloads:
                    self.emit(job, name, outcome)

        experts = [(i, j) for i, j in enumerate(jobs) if j.sub.role == "expert"]
        others = [(i, j) for i, j in enumerate(jobs) if j.sub.role != "expert" and j.sub.language in ("cuda", "cpp")]
        _map_interruptible(lambda ij: build(*ij), experts, self.opts.jobs)
        _map_interruptible(lambda ij: build(*ij), others, self.opts.jobs)
        return [j for i, j in enumerate(jobs) if i not in failed]

    def run(self, jobs: list[Job]) -> None:
        """Compile-check CUDA without a GPU, pre-build where the backend's judges share this
        machine's build folders, then hand the jobs to the backend."""
        from .backends import backend_named

        backend = backend_named(self.opts.backend, self.opts)
        todo = self.cpu_cuda(jobs)
        if backend.shares_build_folders:
            todo = self.prebuild(todo)
        backend.run(self, todo)

    def take_retries(self) -> list[Job]:
        """The jobs whose judge was lost since the last call (emit holds them back)."""
        with self.lock:
            out, self.retry = self.retry, []
        return out

    def write_environment(self) -> None:
        sandbox = dict(self.env_info.get("sandbox", {"enforced": {"sandbox": "no sandbox started in this run"}}))
        sandbox["layers_requested"] = list(self.layers) if self.opts.sandbox else []
        if self.sandbox_probe is not None:
            sandbox["gpu_probe"] = self.sandbox_probe
        data = {"parent": environment.versions(), "worker": {k: v for k, v in self.env_info.items() if k != "sandbox"},
                "sandbox": sandbox, "started_at": self.started_at, "jobs": self.job_times, "health_checks": self.health_log,
                "native": {"path": str(self.native.path) if self.native.path else None, "cuda": self.native.cuda, "note": self.native.note},
                "mode": self.mode, "timing": self.opts.timing, "limits": dataclasses.asdict(self.opts.limits), "written_at": time.time(),
                "pid": os.getpid()}
        tmp = self.opts.out / "environment.json.tmp"
        tmp.write_text(json.dumps(data, indent=2, default=str))
        os.replace(tmp, self.opts.out / "environment.json")


def _map_interruptible(fn, items, jobs: int) -> None:
    """``fn`` over ``items`` on ``jobs`` threads, errors raised in item order. The main thread
    waits in short timed waits: an untimed wait is not woken when Ctrl-C's signal lands on
    another thread, and the handler only runs once it returns. On Ctrl-C it does not wait for
    the calls under way (a compile check or build can run for minutes): queued calls are
    cancelled and the interrupt goes up at once, where the caller kills every process group."""
    pool = ThreadPoolExecutor(max(1, jobs))
    try:
        for future in [pool.submit(fn, item) for item in items]:
            while True:
                try:
                    future.result(timeout=0.25)
                    break
                except FutureTimeout:
                    continue
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
