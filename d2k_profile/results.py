"""Result records and the JSON Lines file they are appended to.

One line per (submission, workload) is written by the parent process *as soon as* that pair is
finished, with a flush and an fsync, so a run killed with SIGKILL loses at most the pair in flight.
``--resume`` reads the file back, drops a torn last line (the only damage a kill can do to an
append-only file) and skips every key already present; records are never rewritten, so nothing
finished can be lost or duplicated.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Iterable


class Status(str, Enum):
    """Outcome of one (submission, workload). ``str`` so that it serialises as its value."""

    OK = "ok"
    INCORRECT = "incorrect"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    CHEAT_SUSPECTED = "cheat_suspected"
    SKIPPED = "skipped"


@dataclass
class Timing:
    """Summary of one implementation's timed samples (milliseconds) on one workload."""

    median_ms: float
    iqr_ms: float
    min_ms: float
    mean_ms: float
    rse: float  # relative standard error of the mean: std / sqrt(n) / mean
    n: int
    samples_ms: list[float] = field(default_factory=list)
    # CUPTI kernel times of a few extra timed calls (d2k_profile.kernel_trace); None when not traced
    kernel_ms: float | None = None  # busy time of the kernels one call launched (median)
    traced_event_ms: float | None = None  # CUDA-event time of those same calls (median)
    kernels_per_call: float | None = None
    kernel_names: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """What the judge decided about one submission on one workload: every field of a record but
    its identity. This one schema is what the judge process sends and the parent stores
    (:mod:`d2k_profile.protocol` decodes it strictly: an unknown key is an error, not dropped)."""

    status: Status = Status.RUNTIME_ERROR
    reason: str = ""
    # what failed, for a status other than ok: import, compile, call, cuda, crash, timeout,
    # protocol (a message that broke the channel's rules), check (a verdict of the checks), harness
    error_kind: str = ""
    max_abs_err: float | None = None
    rel_l2_err: float | None = None
    seeds_checked: int = 0
    rechecked_calls: int = 0
    weak_workload: list[str] = field(default_factory=list)  # null kernels that passed this workload
    timing: Timing | None = None
    reference_timing: Timing | None = None
    expert_timing: Timing | None = None
    speedup_vs_reference: float | None = None
    speedup_vs_expert: float | None = None
    speedup_ci95: list[float] | None = None
    kernel_speedup_vs_reference: float | None = None  # from CUPTI kernel times (no launch latency)
    tflops: float | None = None
    gbps: float | None = None
    roofline_floor_ms: float | None = None
    roofline_fraction: float | None = None
    # reference and expert timed in the judge before the sandbox existed (no submission loaded)
    clean_reference_ms: float | None = None
    clean_expert_ms: float | None = None
    nvtx_range: str = ""
    launch_latency_ms: float | None = None  # events minus kernel time of a one-kernel probe call
    hold_us: float | None = None  # the device-side stream hold before each timed call
    notes: list[str] = field(default_factory=list)
    clocks: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0


# The error kind of a workload whose trusted judge process died under it (killed from outside,
# the node lost): an infrastructure failure, retried elsewhere and never stored as the unit's result.
JUDGE_LOST = "judge_lost"
# The error kind of a workload left unrun because every GPU of the pool failed its health checks.
NO_DEVICE = "no_device"

IDENTITY = ("task", "submission", "path", "role", "workload", "mode", "source_hash")


@dataclass(kw_only=True)
class Record(Outcome):
    """Everything known about one submission on one workload; one JSON line.

    ``key`` identifies the pair for ``--resume``: task, submission folder, workload, timing mode
    and the source hash (an edited submission is profiled again)."""

    task: str
    submission: str  # short display name (also the last part of the NVTX range)
    path: str  # submission folder (or reference.py for the noise-floor self-check)
    role: str  # "submission" | "expert" | "reference"
    workload: str
    mode: str  # "eager" | "graph" | "cpu"
    source_hash: str
    device: str = ""
    finished_at: float = 0.0

    @property
    def key(self) -> str:
        return record_key(self.task, self.path, self.workload, self.mode, self.source_hash)

    def to_json(self) -> str:
        data = asdict(self)
        data["status"] = self.status.value
        ordered = {k: data.pop(k) for k in IDENTITY}  # identity first, as in every earlier file
        return json.dumps({**ordered, **data, "key": self.key}, allow_nan=True, default=str)


def record_key(task: str, path: str, workload: str, mode: str, source_hash: str) -> str:
    return "|".join((task, path, workload, mode, source_hash))


def timing_from_dict(data: dict | None) -> Timing | None:
    return Timing(**data) if data else None


def record_from_dict(data: dict) -> Record:
    data = {k: v for k, v in data.items() if k != "key"}
    data["status"] = Status(data["status"])
    for name in ("timing", "reference_timing", "expert_timing"):
        data[name] = timing_from_dict(data.get(name))
    return Record(**data)


def _repair_torn_tail(path: Path) -> None:
    """Cut a partial last line (a write interrupted by SIGKILL) so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        data = fh.read()
        if data.endswith(b"\n"):
            return
        fh.truncate(data.rfind(b"\n") + 1)


class ResultStore:
    """Append-only JSON Lines store. Only the parent process writes to it (single writer)."""

    def __init__(self, path: Path, resume: bool):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume:
            _repair_torn_tail(self.path)
        elif self.path.exists() and self.path.stat().st_size:
            # Never silently mix two runs in one file.
            raise FileExistsError(f"{self.path} already holds results: pass --resume to continue it, or another --out")
        self.done: set[str] = {r["key"] for r in read_lines(self.path)} if resume else set()

    def append(self, record: Record) -> None:
        line = (record.to_json() + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)  # one write of one line: O_APPEND keeps it whole
            os.fsync(fd)
        finally:
            os.close(fd)
        self.done.add(record.key)


def read_lines(path: Path) -> list[dict]:
    """Every complete JSON line of ``path`` (a torn last line is ignored)."""
    if not Path(path).exists():
        return []
    out = []
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def load_records(path: Path) -> list[Record]:
    return [record_from_dict(d) for d in read_lines(path)]


def load_dataframe(path: Path):
    """The results as a pandas DataFrame (one row per record; nested timing fields flattened)."""
    import pandas as pd

    return pd.json_normalize(read_lines(path))


__all__: Iterable[str] = ["Outcome", "Record", "ResultStore", "Status", "Timing", "load_dataframe", "load_records", "read_lines", "record_key"]
