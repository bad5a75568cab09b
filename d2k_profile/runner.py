"""A profiling run: which (submission, workload) pairs to do, in which workers, into which file.

The parent process never imports a submission. It plans the pairs (skipping those already in the
results file under ``--resume``), optionally pre-builds submissions in parallel (compilation is the
slow part of a corpus run and needs no GPU time), then hands each submission to a worker on a free
GPU (or CPU slot) and appends each record the moment it arrives.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from d2k_spec.task import Task, load_task

from . import environment
from .discovery import Submission
from .isolation import Limits, build_only, run_worker
from .results import Record, ResultStore, Status, Timing

RECORD_FIELDS = {f.name for f in dataclasses.fields(Record)}


@dataclass
class RunOptions:
    out: Path
    mode: str = "eager"  # eager | graph (cpu when there is no GPU)
    smoke: bool = False
    workloads: list[str] | None = None
    resume: bool = False
    gpus: list[str] = field(default_factory=lambda: ["0"])
    jobs: int = 1  # parallel workers without a GPU, and parallel pre-builds
    limits: Limits = field(default_factory=Limits)
    timing: dict = field(default_factory=dict)
    prebuild: bool = True


@dataclass
class Job:
    sub: Submission
    task: Task
    workloads: list[str]
    source_hash: str


class UsageError(Exception):
    """A user mistake (unknown workload name, ...), reported without a traceback."""


def select_workloads(task: Task, opts: RunOptions, has_gpu: bool) -> list[str]:
    if not has_gpu or opts.smoke:
        return [task.smoke.name]
    names = [w.name for w in task.workloads]
    if opts.workloads:
        return [n for n in names if n in opts.workloads] + [task.smoke.name] * (task.smoke.name in opts.workloads)
    return names


def plan(subs: list[Submission], opts: RunOptions, has_gpu: bool, store: ResultStore) -> tuple[list[Job], int]:
    """Jobs still to do, and how many pairs ``--resume`` skipped."""
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
            rec_key = Record(task.id, sub.name, str(sub.path), sub.role, name, mode, h, Status.SKIPPED).key
            if rec_key in store.done:
                skipped += 1
            else:
                todo.append(name)
        if todo:
            jobs.append(Job(sub, task, todo, h))
    return jobs, skipped


def make_record(job: Job, workload: str, mode: str, fields: dict, device: str) -> Record:
    data = {k: v for k, v in fields.items() if k in RECORD_FIELDS}
    for name in ("timing", "reference_timing", "expert_timing"):
        if data.get(name):
            data[name] = Timing(**data[name])
    data.setdefault("notes", [])
    s = job.sub
    return Record(
        task=job.task.id, submission=s.name, path=str(s.path), role=s.role, workload=workload, mode=mode,
        source_hash=job.source_hash, **{**data, "status": Status(data.get("status", "runtime_error"))},
        device=device, finished_at=time.time(),
    )


def _expert_path(task: Task) -> str | None:
    p = task.expert_path
    return str(p) if (p / "submission.py").is_file() or p.suffix == ".py" else None


def _build_dir(out: Path, sub: Submission, h: str) -> Path:
    return out / "build" / sub.task_id / f"{sub.name}-{h[:8]}"


class Runner:
    """Runs the planned jobs; ``on_record`` is called (under a lock) after each append."""

    def __init__(self, opts: RunOptions, store: ResultStore, has_gpu: bool, on_record: Callable[[Record], None]):
        self.opts, self.store, self.has_gpu, self.on_record = opts, store, has_gpu, on_record
        self.mode = opts.mode if has_gpu else "cpu"
        self.lock = threading.Lock()
        self.env_info: dict = {}

    def job_spec(self, job: Job) -> tuple[dict, dict[str, str]]:
        out = self.opts.out.resolve()
        expert = _expert_path(job.task) if (self.has_gpu and job.sub.role == "submission") else None
        spec = {
            "task_path": str(job.task.path), "path": str(job.sub.path), "name": job.sub.name, "role": job.sub.role,
            "expert_path": expert, "device": "cuda" if self.has_gpu else "cpu", "mode": self.mode, "timing": self.opts.timing,
        }
        env = {
            "TORCH_EXTENSIONS_DIR": str(_build_dir(out, job.sub, job.source_hash) / "torch_extensions"),
            "TRITON_CACHE_DIR": str(out / "build" / "triton-cache"),
        }
        if not self.has_gpu:
            env.update({"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
        return spec, env

    def emit(self, job: Job, workload: str, fields: dict) -> None:
        rec = make_record(job, workload, self.mode, fields, self.env_info.get("name", "cpu"))
        with self.lock:
            self.store.append(rec)
            self.on_record(rec)

    def skip_without_gpu(self, job: Job) -> bool:
        if self.has_gpu or job.sub.language != "cuda":
            return False
        for name in job.workloads:
            self.emit(job, name, {"status": "skipped", "reason": "CUDA C++ submission: compiling and running it needs a GPU, and this machine has none"})
        return True

    def run_job(self, job: Job, gpu: str | None) -> None:
        spec, env = self.job_spec(job)
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        log = self.opts.out / "logs" / job.task.id / f"{job.sub.name}.log"
        info = run_worker(spec, job.workloads, env, log, self.opts.limits, lambda name, f: self.emit(job, name, f))
        with self.lock:
            if info and not self.env_info.get("name") and info.get("name"):
                self.env_info.update(info)

    def prebuild(self, jobs: list[Job]) -> list[Job]:
        """Import every submission once, in parallel, to fill the build caches. Build failures
        are recorded here and their jobs dropped; experts are built first, one per task."""
        if not (self.opts.prebuild and self.has_gpu):
            return jobs
        failed: set[int] = set()

        def build(i: int, job: Job) -> None:
            spec, env = self.job_spec(job)
            spec["expert_path"] = None if job.sub.role == "submission" else spec["expert_path"]
            env["CUDA_VISIBLE_DEVICES"] = self.opts.gpus[0]
            status, reason = build_only(spec, env, self.opts.out / "logs" / job.task.id / f"{job.sub.name}.build.log", self.opts.limits)
            if status != "ok":
                failed.add(i)
                for name in job.workloads:
                    self.emit(job, name, {"status": status, "reason": reason})

        experts = [(i, j) for i, j in enumerate(jobs) if j.sub.role == "expert"]
        others = [(i, j) for i, j in enumerate(jobs) if j.sub.role != "expert" and j.sub.language == "cuda"]
        with ThreadPoolExecutor(max(1, self.opts.jobs)) as pool:
            list(pool.map(lambda ij: build(*ij), experts))
            list(pool.map(lambda ij: build(*ij), others))
        return [j for i, j in enumerate(jobs) if i not in failed]

    def run(self, jobs: list[Job]) -> None:
        todo = [j for j in jobs if not self.skip_without_gpu(j)]
        todo = self.prebuild(todo)
        slots = self.opts.gpus if self.has_gpu else [None] * max(1, self.opts.jobs)
        q: queue.Queue[Job] = queue.Queue()
        for j in todo:
            q.put(j)

        def drain(gpu: str | None) -> None:
            while True:
                try:
                    job = q.get_nowait()
                except queue.Empty:
                    return
                self.run_job(job, gpu)

        threads = [threading.Thread(target=drain, args=(g,), daemon=True) for g in slots]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def write_environment(self) -> None:
        data = {"parent": environment.versions(), "worker": self.env_info, "mode": self.mode, "timing": self.opts.timing,
                "limits": dataclasses.asdict(self.opts.limits), "written_at": time.time()}
        (self.opts.out / "environment.json").write_text(json.dumps(data, indent=2, default=str))
