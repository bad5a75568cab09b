"""Worker lifecycle: spawn, feed, watch, kill.

Each submission runs in a fresh ``python -m d2k_profile.worker`` process in its own session (so a
kill takes its compiler children too), with its own build directory. The parent only reads the
worker's messages from a pipe, with deadlines: a build timeout until the submission is imported
and compiled, then a timeout per workload. A worker that crashes (segfault, illegal memory access,
``os._exit``) or hangs is killed and its current workload recorded; a fresh worker takes the
remaining workloads, until a submission has killed ``max_deaths`` workers.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Limits:
    build_timeout_s: float = 600.0
    workload_timeout_s: float = 300.0
    max_deaths: int = 2


OnResult = Callable[[str, dict], None]


class _Reader:
    """Line reader over a pipe fd with a deadline."""

    def __init__(self, fd: int):
        self.fd, self.buf, self.eof = fd, b"", False

    def next(self, deadline: float) -> dict | None | str:
        """A message dict, ``"eof"``, or None when the deadline passes."""
        while b"\n" not in self.buf:
            if self.eof:
                return "eof"
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.eof = True
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            return {"type": "garbled", "line": line[:200].decode(errors="replace")}


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _death_reason(rc: int, log: Path) -> str:
    if rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
        what = f"worker killed by {sig}"
    else:
        what = f"worker exited with code {rc} before reporting"
    return f"{what}; log tail: {log_tail(log)}"


def log_tail(log: Path, n: int = 1500) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    return text[-n:].strip()


def spawn(job: dict, env_overrides: dict[str, str], log: Path) -> tuple[subprocess.Popen, _Reader, str]:
    """Start a worker on ``job``; returns the process, the reader of its result pipe and the token."""
    read_fd, write_fd = os.pipe()
    token = secrets.token_hex(16)
    env = {**os.environ, **env_overrides, "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as log_fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "d2k_profile.worker"],
            stdin=subprocess.PIPE, stdout=log_fh, stderr=subprocess.STDOUT,
            pass_fds=(write_fd,), env=env, start_new_session=True,
        )
    os.close(write_fd)
    proc.stdin.write(json.dumps({**job, "fd": write_fd, "token": token}).encode())
    proc.stdin.close()
    return proc, _Reader(read_fd), token


def run_worker(job: dict, workloads: list[str], env_overrides: dict[str, str], log: Path, limits: Limits, on_result: OnResult) -> dict:
    """Profile ``workloads`` of one submission, respawning after crashes; calls ``on_result(name,
    fields)`` once per workload as soon as it is known. Returns the worker's environment info."""
    remaining = list(workloads)
    deaths, info = 0, {}

    def finish_all(status: str, reason: str) -> None:
        for name in list(remaining):
            on_result(name, {"status": status, "reason": reason})
            remaining.remove(name)

    while remaining:
        if deaths >= limits.max_deaths:
            finish_all("skipped", f"not run: this submission already killed {deaths} workers")
            break
        proc, reader, token = spawn({**job, "workloads": remaining}, env_overrides, log)
        seq, built, current = 0, False, None
        deadline = time.monotonic() + limits.build_timeout_s
        try:
            while True:
                msg = reader.next(deadline)
                if msg is None:  # deadline passed
                    _kill(proc)
                    if not built:
                        finish_all("timeout", f"build/import exceeded {limits.build_timeout_s:g} s")
                        break
                    name = current or remaining[0]
                    on_result(name, {"status": "timeout", "reason": f"exceeded {limits.workload_timeout_s:g} s on this workload; worker killed"})
                    remaining.remove(name)
                    deaths += 1
                    break
                if msg == "eof":
                    rc = proc.wait()
                    if not remaining:
                        break
                    reason = _death_reason(rc, log)
                    if not built:
                        finish_all("runtime_error", "crashed while importing/building: " + reason)
                        break
                    name = current or remaining[0]
                    on_result(name, {"status": "runtime_error", "reason": reason})
                    remaining.remove(name)
                    deaths += 1
                    break
                seq += 1
                if msg.get("token") != token or msg.get("seq") != seq:
                    _kill(proc)
                    finish_all("cheat_suspected", f"forged or out-of-order message on the result channel: {str(msg)[:200]}")
                    break
                kind = msg["type"]
                if kind == "hello":
                    info = msg.get("env", {})
                elif kind == "imported":  # build-only jobs: imported, now the warm-up call
                    info["imported"] = True
                elif kind == "built":
                    built = True
                    info["build_s"] = msg.get("build_s")
                    deadline = time.monotonic() + limits.workload_timeout_s
                elif kind == "compile_error":
                    finish_all("compile_error", msg.get("reason", ""))
                elif kind == "started":
                    current = msg["workload"]
                    deadline = time.monotonic() + limits.workload_timeout_s
                elif kind == "result":
                    name = msg["workload"]
                    if name in remaining:
                        on_result(name, msg["fields"])
                        remaining.remove(name)
                    current = None
                elif kind == "restart":  # the worker hit a CUDA error and exits on its own
                    deaths += 1
                    proc.wait(timeout=60)
                    break
                elif kind == "done":
                    if job.get("build_only"):
                        remaining.clear()
        finally:
            if proc.poll() is None:
                proc.wait(timeout=30) if not remaining else _kill(proc)
            os.close(reader.fd)
    return info


def build_only(job: dict, env_overrides: dict[str, str], log: Path, limits: Limits) -> tuple[str, str]:
    """Import a submission and call it once on the smoke workload, to compile it (also what it
    compiles lazily): ("ok" | status, reason). Only failures to import or to compile count; a
    crash, hang or error of the warm-up call itself is left to the timing worker."""
    outcome: dict = {}
    info = run_worker({**job, "build_only": True}, ["<build>"], env_overrides, log, limits, lambda _n, f: outcome.update(f))
    status = outcome.get("status", "ok")
    if status != "compile_error" and info.get("imported"):
        return "ok", ""
    return status, outcome.get("reason", "")
