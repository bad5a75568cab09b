"""The Ray backend: each job is a Ray task holding one whole GPU (``num_gpus=1``) while its judge
runs, so timing never shares a GPU, on every node of a cluster (``--ray-address auto`` or an
address) or on a Ray instance started here (no address; CPU slots without a GPU).

Ray's own task retries are off (``max_retries=0``): a task whose worker process or node was lost
comes back as a Ray error, and the runner treats it as an infrastructure failure like a lost
judge (:func:`d2k_profile.units.is_infrastructure`): not stored, queued again up to ``--retries``
times. A failure of the submission is a result and is never retried. Results come back job by
job as they finish, and are stored the moment they arrive.

Each Ray worker process builds into its own ``TORCH_EXTENSIONS_DIR`` and ``TRITON_CACHE_DIR``
(two workers on one node never write one cache). Ray is an optional dependency:
``pip install 'd2k-bench[ray]'``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from ..isolation import Limits, run_judge
from ..protocol import JudgeJob
from ..results import JUDGE_LOST, Outcome, Status
from ..units import device_model

if TYPE_CHECKING:
    from ..runner import Job, Runner

WORKERS_DIR = "ray-workers"  # under the run's build folder: one marker per worker that took a job


def judge_job(spec: JudgeJob, env: dict[str, str], log: str, limits: Limits, has_gpu: bool) -> dict:
    """Runs in a Ray worker: one job's judge on the GPU Ray gave this task. Returns the outcomes
    of its workloads, the judge's environment info, and the slot and device model that served it."""
    judges = Path(env["TORCH_EXTENSIONS_DIR"]).parent  # OUT/build/judges: the local judges' shared caches
    own = judges / f"ray-{socket.gethostname()}-{os.getpid()}"
    env = {**env, "TORCH_EXTENSIONS_DIR": str(own / "torch_extensions"), "TRITON_CACHE_DIR": str(own / "triton-cache")}
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "") if has_gpu else ""
    if has_gpu:
        env["CUDA_VISIBLE_DEVICES"] = visible
    marker = judges.parent / WORKERS_DIR / str(os.getpid())
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{spec.name}\n")  # which worker holds which job (a test kills one by it)
    outcomes: list[tuple[str, Outcome]] = []
    info: dict = {}
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    run_judge(spec, env, Path(log), limits, lambda name, o: outcomes.append((name, o)), info)
    marker.unlink(missing_ok=True)
    slot = f"{socket.gethostname()}:{visible or 'cpu'}"
    return {"outcomes": outcomes, "info": info, "slot": slot, "model": device_model(visible.split(",")[0] or None, has_gpu)}


class RayBackend:
    name = "ray"
    shares_build_folders = False  # workers build into their own caches, on whichever node

    def __init__(self, address: str | None):
        self.address = address

    def _connect(self, runner: "Runner"):
        try:
            import ray
        except ImportError as exc:
            raise RuntimeError("--backend ray needs Ray: pip install 'd2k-bench[ray]'") from exc
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(num_cpus=max(1, runner.opts.jobs), num_gpus=len(runner.opts.gpus) if runner.has_gpu else 0,
                         include_dashboard=False, log_to_driver=False)
        return ray

    def run(self, runner: "Runner", jobs: list["Job"]) -> None:
        ray = self._connect(runner)
        remote = ray.remote(num_gpus=1 if runner.has_gpu else 0, num_cpus=1, max_retries=0)(judge_job)
        inflight: dict = {}

        def submit(job: "Job") -> None:
            spec, env = runner.job_spec(job)
            log = runner.opts.out.resolve() / "logs" / job.task.id / f"{job.sub.name}.log"
            inflight[remote.remote(spec, env, str(log), runner.opts.limits, runner.has_gpu)] = job

        for job in jobs:
            submit(job)
        while inflight:
            done, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
            for ref in done:
                job = inflight.pop(ref)
                try:
                    res = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the worker or its node was lost: infrastructure
                    reason = f"Ray worker lost: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                    res = {"outcomes": [(w, Outcome(status=Status.RUNTIME_ERROR, reason=reason, error_kind=JUDGE_LOST)) for w in job.workloads],
                           "info": {}, "slot": "ray:lost", "model": runner.keys.models.get(None) or next(iter(runner.keys.models.values()))}
                runner.keys.models.setdefault(res["slot"], res["model"])
                for name, outcome in res["outcomes"]:
                    runner.emit(job, name, outcome, res["info"], res["slot"])
                with runner.lock:
                    if res["info"].get("name") and not runner.env_info.get("name"):
                        runner.env_info.update({k: v for k, v in res["info"].items() if k != "sandbox"})
                    if res["info"].get("sandbox") and "sandbox" not in runner.env_info:
                        runner.env_info["sandbox"] = res["info"]["sandbox"]
                    runner.job_times.append({"task": job.task.id, "submission": job.sub.name, "role": job.sub.role,
                                             "backend": "ray", "slot": res["slot"], "workloads": len(job.workloads)})
            for job in runner.take_retries():
                submit(job)
