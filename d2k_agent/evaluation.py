"""The final evaluation: d2k-profile and d2k-analyze on the exported submission, outside the
workspace, in fresh processes that generate their own inputs. The agent's own test output is
never used. Results go to ``<run>/.eval/<task>/`` and are assembled into the run's
``profile.jsonl`` / ``analyze.jsonl`` (:func:`collect`), each task's records exactly once.

The final timings have a pool of their own (:class:`EvalPool`), so the agents' load (their
tool calls' benches, compiles and tests) cannot disturb them: GPUs reserved for evaluations
(``--eval-gpus``), or, where the evaluations would share GPUs with the agents, the evaluations
wait until every agent loop of the invocation has ended (``deferred``), or d2k-profile's Ray
backend times them on a cluster (``--eval-backend ray``).
"""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import dataclass

from d2k_spec.task import Task

from . import final, harness
from .gpu import GpuPool
from .layout import RunDir, atomic_write
from .sandbox import agent_env, prepare_home

PROFILE_TIMEOUT = 4 * 3600
QUEUED = {"status": "queued", "why": "waits until every agent loop of the invocation has ended (its GPUs are the agents')"}
_collect_lock = threading.Lock()


@dataclass
class EvalPool:
    """Where the final timings run. ``pool`` hands out the local GPUs they time on (for Ray: slots
    that bound how many d2k-profile processes talk to the cluster at once). ``deferred``: those
    GPUs are also the agents', so evaluations wait for the agent loops to end (see the module
    docstring). ``has_gpu`` is whether the timings run on a GPU (a Ray cluster has them even
    where this machine has none)."""

    pool: GpuPool
    has_gpu: bool
    deferred: bool = False
    backend: str = "local"
    ray_address: str = "auto"

    def profiler_flags(self) -> list[str]:
        if self.backend == "ray":
            return ["--backend", "ray", "--ray-address", self.ray_address]
        return ["--gpus", "0"]  # the GPU handed out is the only one visible (CUDA_VISIBLE_DEVICES)


def eval_pool(agent_gpus: list[str], eval_gpus: list[str] | None, has_gpu: bool, jobs: int,
              backend: str = "local", ray_address: str = "auto") -> EvalPool:
    """The evaluations' pool: their own GPUs where ``eval_gpus`` names GPUs no agent uses, else the
    agents' GPUs after the agents are done."""
    if backend == "ray":
        return EvalPool(GpuPool([], False, cpu_slots=jobs), True, deferred=False, backend="ray", ray_address=ray_address)
    own = bool(eval_gpus) and not set(eval_gpus or []) & set(agent_gpus)
    gpus = list(eval_gpus) if own else list(agent_gpus)
    return EvalPool(GpuPool(gpus, has_gpu, cpu_slots=jobs), has_gpu, deferred=not own)


def profile(run: RunDir, task: Task, evals: EvalPool, budget_s: float | None = None) -> dict:
    ev = run.eval_dir(task.id)
    out = ev / "profile"
    home = ev / "home"
    prepare_home(home)
    with evals.pool.acquire() as gpu:  # a local GPU, or (CPU runs, Ray) a slot: None
        argv = harness.profile_argv(run.task(task.id).root, task.path, out, cpu=not evals.has_gpu,
                                    extra=[*evals.profiler_flags(), *(["--budget", str(budget_s)] if budget_s else [])])
        env = agent_env(home, {"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else None)
        res = harness.run_profile(argv, out, env, PROFILE_TIMEOUT)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(out / "build", ignore_errors=True)  # the profiler's compile cache: megabytes, not a result
    (ev / "profile.log").write_text(res.output)
    mine = [r for r in res.records if r.get("role") == "submission"]
    if not mine:
        return {"status": "failed", "why": f"d2k-profile exit {res.returncode}: " + harness.last_lines(res.output, 5)}
    return {"status": "done", "gpu": evals.has_gpu, "backend": evals.backend, "records": len(mine), "ok": sum(r["status"] == "ok" for r in mine),
            "statuses": sorted({r["status"] for r in mine})}


def analyze(run: RunDir, task: Task) -> dict:
    why = harness.analyze_available()
    if why:
        return {"status": "unavailable", "why": why + "; run `d2k-agent evaluate RUN --only analyze` where it can"}
    ev = run.eval_dir(task.id)
    ev.mkdir(parents=True, exist_ok=True)
    out = ev / "analyze.jsonl"
    proc = harness.run_analyze(run.task(task.id).root, task.id, out, tasks_dir=task.path.parent)
    (ev / "analyze.log").write_text(proc.stdout + proc.stderr)
    if not out.is_file() or proc.returncode not in (0, 1):
        return {"status": "failed", "why": f"d2k-analyze exit {proc.returncode}: " + harness.last_lines(proc.stderr, 5)}
    score = None
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if row.get("row_type") == "submission":
            score = row.get("score", row.get("overall"))
    return {"status": "done", "score": score}


def refused(why: str) -> dict:
    return {"profile": {"status": "refused", "why": why}, "analyze": {"status": "refused", "why": why}}


def collect(run: RunDir) -> dict[str, int]:
    """Rewrite profile.jsonl and analyze.jsonl from the per-task outputs of finished tasks (so a
    re-run task never appears twice)."""
    with _collect_lock:
        counts = {"profile": 0, "analyze": 0}
        prof, ana = [], []
        for td in sorted(p for p in run.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            task_dir = run.task(td.name)
            rec, why = final.validate(task_dir)
            if why:
                continue
            ev = run.eval_dir(td.name)
            p = ev / "profile" / "results.jsonl"
            if rec.get("evaluation", {}).get("profile", {}).get("status") == "done" and p.is_file():
                lines = [ln for ln in p.read_text().splitlines() if ln.strip()]
                prof += lines
                counts["profile"] += len(lines)
            a = ev / "analyze.jsonl"
            if rec.get("evaluation", {}).get("analyze", {}).get("status") == "done" and a.is_file():
                lines = [ln for ln in a.read_text().splitlines() if ln.strip()]
                ana += lines
                counts["analyze"] += len(lines)
        atomic_write(run.profile, "".join(ln + "\n" for ln in prof))
        atomic_write(run.analyze, "".join(ln + "\n" for ln in ana))
        return counts
