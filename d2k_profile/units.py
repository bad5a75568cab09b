"""Work units: what one measurement depends on, and the key it is stored under.

A unit is one submission on one workload, identified by *content*, not by where the files lie:
the submission's source hash and role, the task's spec (task.toml, reference.py and the expert's
source, since speedups are against both), the workload, the profiler settings that change a
measurement (mode, timing, limits, sandbox), the device model and the toolchain. Two runs that
agree on all of them measure the same thing, so the second can take the first's result from the
store (:mod:`.store`) instead of using GPU time again; change any of them (edit a kernel, the
tolerance, the timing budget, the driver's torch) and the key changes with it.

Failures split in two here. A task failure (wrong output, a crash or a hang of the submission, a
compile error) is the result of the unit: it is stored and never retried. An infrastructure
failure (the trusted judge process itself was lost: killed from outside, the node went away) says
nothing about the submission: it is not stored, and the unit is run again on another GPU.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from d2k_spec.task import Task

from . import environment
from .results import JUDGE_LOST, NO_DEVICE, Outcome


@dataclass(frozen=True)
class WorkUnit:
    """The fields a measurement depends on; :attr:`key` is their hash."""

    source_hash: str  # the submission's code files (environment.source_hash)
    role: str  # submission | expert | reference: judged differently
    task_hash: str  # task.toml, reference.py and the expert's code
    workload: str
    config_hash: str  # mode, timing settings, limits, sandbox
    device_model: str  # e.g. "NVIDIA H200", or "cpu"
    toolchain: str  # python / torch / cuda / triton versions of the judges

    @property
    def key(self) -> str:
        return _digest(asdict(self))


def _digest(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:32]


def task_hash(task: Task) -> str:
    """Hash of the task's spec and its expert's code (speedups are taken against the expert)."""
    h = hashlib.sha256()
    for name in ("task.toml", "reference.py"):
        p = Path(task.path) / name
        h.update(name.encode())
        h.update(p.read_bytes() if p.is_file() else b"")
    expert = task.expert_path
    h.update(environment.source_hash(expert).encode() if expert.exists() else b"-")
    return h.hexdigest()[:16]


def config_hash(mode: str, timing: dict, limits: dict, sandbox: bool) -> str:
    """Hash of the profiler settings that change what a unit measures or decides."""
    return _digest({"mode": mode, "timing": timing, "limits": limits, "sandbox": sandbox})[:16]


def toolchain(versions: dict[str, str]) -> str:
    """The versions a measurement depends on, as one string (the platform string is left out:
    a kernel update does not change a kernel's time, and it would split every store by host)."""
    return ";".join(f"{k}={versions[k]}" for k in ("python", "torch", "cuda", "triton") if k in versions)


def is_infrastructure(outcome: Outcome) -> bool:
    """True when the outcome says the judge or the device was lost, not that the submission failed."""
    return outcome.error_kind in (JUDGE_LOST, NO_DEVICE)


def device_model(gpu: str | None, has_gpu: bool) -> str:
    """The model name of GPU ``gpu`` (an index or UUID) from nvidia-smi, without initialising
    CUDA in this process; "cpu" without a GPU; "cuda" where nvidia-smi cannot tell."""
    if not has_gpu:
        return "cpu"
    name = environment.smi_value("name", gpu)
    return name or "cuda"


class UnitKeys:
    """Builds the work unit of (task, submission, workload) as served by one GPU slot."""

    def __init__(self, mode: str, timing: dict, limits: dict, sandbox: bool, slots: list[str | None], has_gpu: bool):
        self.config = config_hash(mode, timing, limits, sandbox)
        self.tools = toolchain(environment.versions())
        self.models = {slot: device_model(slot, has_gpu) for slot in dict.fromkeys(slots)}
        self._task_hashes: dict[str, str] = {}

    def unit(self, task: Task, role: str, source_hash: str, workload: str, slot: str | None) -> WorkUnit:
        if task.id not in self._task_hashes:
            self._task_hashes[task.id] = task_hash(task)
        # an outcome decided before any GPU was chosen (a build failure in the pre-build) belongs to
        # the run's first device model: the one a retry of it would most likely meet
        model = self.models[slot] if slot in self.models else next(iter(self.models.values()))
        return WorkUnit(source_hash=source_hash, role=role, task_hash=self._task_hashes[task.id], workload=workload,
                        config_hash=self.config, device_model=model, toolchain=self.tools)

    def candidates(self, task: Task, role: str, source_hash: str, workload: str) -> list[WorkUnit]:
        """The unit on each distinct device model of the run's slots (any of them may serve it)."""
        seen, out = set(), []
        for slot, model in self.models.items():
            if model not in seen:
                seen.add(model)
                out.append(self.unit(task, role, source_hash, workload, slot))
        return out
