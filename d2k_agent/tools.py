"""The agent's tools, identical in both arms: bash, editor, test, bench, profile, submit.

:data:`TOOL_SPECS` is what the model is shown (the adapters translate it to their wire format);
:class:`ToolBox` executes a call and returns the text the model reads. The same ToolBox serves the
native loop and, through the accounting proxy's tool endpoint, the scripts a CLI agent calls.

``bash`` runs inside the sandbox; the editor only touches paths inside the workspace; ``test``,
``bench`` and ``profile`` run d2k-profile outside the sandbox on the workspace (the profiler
isolates the submission in its own workers), taking a GPU from the queue.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from d2k_spec.task import Task

from . import harness
from .gpu import GpuPool
from .sandbox import Sandbox

MAX_OUTPUT = 16_000  # characters of tool output the model sees; the middle of longer output is cut
BASH_TIMEOUT, BASH_MAX_TIMEOUT = 120, 900
PROFILE_TIMEOUT = 1800

TOOL_SPECS: list[dict] = [
    {"name": "bash", "description": "Run a shell command in the workspace (your working directory). Output is cut in the middle "
     "beyond 16000 characters. Default timeout 120 s, at most 900 s.",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "integer", "description": "seconds"}},
                      "required": ["command"]}},
    {"name": "editor", "description": "View and edit files in the workspace. command: view (a file with line numbers, or a folder), "
     "create (write file_text), str_replace (replace old_str, which must occur once, by new_str), insert (new_str after line insert_line).",
     "input_schema": {"type": "object", "properties": {
         "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"]}, "path": {"type": "string"},
         "file_text": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"},
         "insert_line": {"type": "integer"}, "view_range": {"type": "array", "items": {"type": "integer"}}},
         "required": ["command", "path"]}},
    {"name": "test", "description": "Compile submission.py and check correctness against the reference with the benchmark's profiler, "
     "on the smoke workload (default) or the named workloads.",
     "input_schema": {"type": "object", "properties": {"workloads": {"type": "array", "items": {"type": "string"}}}}},
    {"name": "bench", "description": "Time submission.py against the reference (and the expert) on the GPU with the same harness as the "
     "final evaluation: all timed workloads, or the named ones.",
     "input_schema": {"type": "object", "properties": {"workloads": {"type": "array", "items": {"type": "string"}}}}},
    {"name": "profile", "description": "An Nsight Compute (ncu) summary of your kernels on one workload: duration, compute and memory "
     "throughput per kernel. Only where ncu is installed.",
     "input_schema": {"type": "object", "properties": {"workload": {"type": "string"}}, "required": ["workload"]}},
    {"name": "submit", "description": "Submit the workspace as your final answer. This ends your work on the task.",
     "input_schema": {"type": "object", "properties": {}}},
]
TOOL_NAMES = [t["name"] for t in TOOL_SPECS]


@dataclass
class ToolResult:
    text: str
    is_error: bool = False
    submitted: bool = False
    seconds: float = 0.0


def bound(text: str, limit: int = MAX_OUTPUT) -> str:
    """Keep the head and the tail of long output, with a note saying how much of the middle was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n\n[... {cut} characters cut from the middle of the output ...]\n\n{text[-half:]}"


@dataclass
class ToolBox:
    """Executes tool calls for one workspace. ``has_gpu`` decides what bench and profile can do."""

    task: Task
    sandbox: Sandbox
    pool: GpuPool
    has_gpu: bool
    deadline: float | None = None  # time.monotonic() when the run's wall time ends
    profile_budget: float | None = None  # d2k-profile --budget for bench (the final evaluation uses the same)
    submitted: bool = field(default=False, init=False)

    @property
    def workspace(self) -> Path:
        return self.sandbox.workspace

    def run(self, name: str, args: dict) -> ToolResult:
        start = time.monotonic()
        handler = getattr(self, f"_tool_{name}", None)
        if handler is None or name not in TOOL_NAMES:
            res = ToolResult(f"unknown tool {name!r} (tools: {', '.join(TOOL_NAMES)})", is_error=True)
        elif not isinstance(args, dict):
            res = ToolResult(f"{name}: arguments must be a JSON object", is_error=True)
        else:
            try:
                res = handler(args)
            except (KeyError, TypeError, ValueError) as exc:  # malformed arguments from the model: a result, not a crash
                res = ToolResult(f"{name}: bad arguments: {exc}", is_error=True)
        res.text = bound(res.text)
        res.seconds = time.monotonic() - start
        return res

    def _timeout(self, wanted: float) -> float:
        if self.deadline is None:
            return wanted
        return max(1.0, min(wanted, self.deadline - time.monotonic()))

    # -- bash ------------------------------------------------------------------------------------
    def _tool_bash(self, args: dict) -> ToolResult:
        command = str(args["command"])
        timeout = self._timeout(min(float(args.get("timeout") or BASH_TIMEOUT), BASH_MAX_TIMEOUT))
        argv = self.sandbox.wrap(["bash", "-c", command])
        try:
            proc = subprocess.run(argv, cwd=self.workspace, env=self.sandbox.env(), capture_output=True, timeout=timeout,
                                  start_new_session=True, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(errors="replace")
            return ToolResult(f"{out}\n[timed out after {timeout:.0f} s]", is_error=True)
        out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
        return ToolResult(f"{out}\n[exit code {proc.returncode}]" if proc.returncode else (out or "[no output]"), is_error=proc.returncode != 0)

    # -- editor ----------------------------------------------------------------------------------
    def _path(self, raw: str) -> Path:
        ws = self.workspace.resolve()
        p = (ws / raw).resolve() if not Path(raw).is_absolute() else Path(raw).resolve()
        if p != ws and ws not in p.parents:
            raise ValueError(f"{raw}: outside the workspace")
        return p

    def _tool_editor(self, args: dict) -> ToolResult:
        cmd, p = args["command"], self._path(str(args["path"]))
        if cmd == "view":
            if p.is_dir():
                names = sorted(str(q.relative_to(p)) + ("/" if q.is_dir() else "") for q in p.iterdir() if q.name != "__pycache__")
                return ToolResult("\n".join(names) or "[empty folder]")
            if not p.is_file():
                return ToolResult(f"{args['path']}: no such file", is_error=True)
            lines = p.read_text(errors="replace").splitlines()
            lo, hi = (args.get("view_range") or [1, len(lines)])[:2]
            hi = len(lines) if hi in (-1, None) else hi
            return ToolResult("\n".join(f"{i:6d}\t{lines[i - 1]}" for i in range(max(1, lo), min(hi, len(lines)) + 1)) or "[empty file]")
        if cmd == "create":
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(str(args["file_text"]))
            return ToolResult(f"wrote {p.relative_to(self.workspace.resolve())} ({len(str(args['file_text']))} characters)")
        if not p.is_file():
            return ToolResult(f"{args['path']}: no such file", is_error=True)
        text = p.read_text()
        if cmd == "str_replace":
            old, new = str(args["old_str"]), str(args.get("new_str", ""))
            n = text.count(old)
            if n != 1:
                return ToolResult(f"old_str occurs {n} times in {args['path']}; it must occur exactly once", is_error=True)
            p.write_text(text.replace(old, new, 1))
            return ToolResult(f"replaced 1 occurrence in {args['path']}")
        if cmd == "insert":
            lines = text.splitlines(keepends=True)
            at = int(args["insert_line"])
            if not 0 <= at <= len(lines):
                return ToolResult(f"insert_line {at} is outside 0..{len(lines)}", is_error=True)
            new = str(args["new_str"])
            lines.insert(at, new if new.endswith("\n") else new + "\n")
            p.write_text("".join(lines))
            return ToolResult(f"inserted after line {at} of {args['path']}")
        return ToolResult(f"unknown editor command {cmd!r}", is_error=True)

    # -- test / bench / profile (d2k-profile) ---------------------------------------------------
    def _workloads(self, args: dict) -> list[str] | None:
        names = args.get("workloads") or None
        if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
            raise ValueError("workloads must be a list of workload names")
        known = {w.name for w in self.task.workload}
        if names and (unknown := sorted(set(names) - known)):
            raise ValueError(f"unknown workload(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return names

    def _profile(self, workloads: list[str] | None, smoke: bool, extra: list[str] | None = None, wrap: list[str] | None = None,
                 timeout: float = PROFILE_TIMEOUT) -> tuple[harness.ProfileRun, str]:
        with self.pool.acquire() as gpu, tempfile.TemporaryDirectory(prefix="d2k-tool-", dir=self.sandbox.home / "tmp") as tmp:
            out = Path(tmp) / "out"
            argv = harness.profile_argv(self.workspace, self.task.path, out, smoke=smoke, workloads=workloads, cpu=not self.has_gpu,
                                        extra=["--gpus", "0", *(extra or [])])
            env = self.sandbox.env({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else None)
            run = harness.run_profile((wrap or []) + argv, out, env, self._timeout(timeout))
            return run, tmp

    def _tool_test(self, args: dict) -> ToolResult:
        workloads = self._workloads(args)
        run, _ = self._profile(workloads, smoke=not workloads, extra=["--no-kernel-trace", "--budget", "0.05"])
        return self._profile_result(run, timing=False, what="test")

    def _tool_bench(self, args: dict) -> ToolResult:
        if not self.has_gpu:
            return ToolResult("bench skipped: timing needs a GPU and this machine has none (d2k-profile checks only the smoke "
                              "workload's correctness on a CPU). Use `test` for correctness.", is_error=True)
        extra = ["--budget", str(self.profile_budget)] if self.profile_budget else []
        run, _ = self._profile(self._workloads(args), smoke=False, extra=extra)
        return self._profile_result(run, timing=True, what="bench")

    def _profile_result(self, run: harness.ProfileRun, timing: bool, what: str) -> ToolResult:
        if run.timed_out:
            return ToolResult(f"{what}: timed out\n" + harness.last_lines(run.output), is_error=True)
        if not run.records:
            return ToolResult(f"{what}: d2k-profile produced no results (exit code {run.returncode}):\n" + harness.last_lines(run.output), is_error=True)
        mine = [r for r in run.records if r.get("role") == "submission"]
        text = harness.format_records(mine, timing)
        if not self.has_gpu:
            text += "\n(no GPU on this machine: only the smoke workload was checked, with the Triton interpreter)"
        bad = any(r["status"] != "ok" for r in mine)
        return ToolResult(text, is_error=bad)

    def _tool_profile(self, args: dict) -> ToolResult:
        ncu = harness.find_ncu()
        workload = str(args["workload"])
        self._workloads({"workloads": [workload]})
        if not self.has_gpu or ncu is None:
            return ToolResult("profile unavailable: " + ("no GPU on this machine" if not self.has_gpu else "ncu is not installed here"), is_error=True)
        rng = f"d2k/{self.task.id}/{workload}/{self.workspace.name}".replace("/", "\\/") + "/"
        wrap = [ncu, "--target-processes", "all", "--nvtx", "--nvtx-include", rng, "--clock-control", "none", "--csv",
                "--metrics", "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,"
                "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread"]
        run, _ = self._profile([workload], smoke=False, extra=["--budget", "0.05", "--no-prebuild", "--no-kernel-trace"], wrap=wrap)
        return ToolResult(summarize_ncu(run.output) or ("ncu found no kernel of yours:\n" + harness.last_lines(run.output)))

    def _tool_submit(self, args: dict) -> ToolResult:
        self.submitted = True
        return ToolResult("submitted: the workspace will be evaluated outside it on fresh inputs.", submitted=True)


def summarize_ncu(output: str) -> str:
    """Kernel name, metric and value from ncu's --csv lines (one line per kernel x metric)."""
    import csv
    import io

    rows = [r for r in csv.reader(io.StringIO("\n".join(ln for ln in output.splitlines() if ln.startswith('"'))))]
    if len(rows) < 2:
        return ""
    head = rows[0]
    idx = {k: head.index(k) for k in ("Kernel Name", "Metric Name", "Metric Unit", "Metric Value") if k in head}
    if len(idx) < 4:
        return ""
    lines = [f"{r[idx['Kernel Name']][:60]}: {r[idx['Metric Name']]} = {r[idx['Metric Value']]} {r[idx['Metric Unit']]}"
             for r in rows[1:] if len(r) == len(head)]
    return "\n".join(lines)
