"""The parent's side of a judge: spawn it, read its typed messages with deadlines, kill it.

Each submission job runs in a fresh ``python -m d2k_profile.judge`` process in its own process
group; the judge starts the sandbox in another group and announces it (:class:`SandboxUp`), so the
parent can kill both. The judge enforces the precise limits on the sandbox (build timeout, then a
timeout per workload); the parent's deadlines are the same plus a margin, a backstop for a judge
that itself stops answering. A judge that dies mid-job is replaced by a fresh one for the
remaining workloads, until a submission has cost ``max_deaths`` of them.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from . import protocol
from .pipes import LineReader, PipeClosed, PipeTimeout
from .procs import REGISTRY, kill_group, kill_session
from .results import JUDGE_LOST, Outcome, Status

REPO_ROOT = Path(__file__).resolve().parent.parent
MARGIN_S = 60.0  # the parent waits this much longer than the judge's own limits
CLEAN_ALLOWANCE_S = 20.0  # per workload, on top of the clean timing budget, before "built"


@dataclass(frozen=True)
class Limits:
    build_timeout_s: float = 600.0
    workload_timeout_s: float = 300.0
    max_deaths: int = 2


OnResult = Callable[[str, Outcome], None]


def _log_tail(log: Path, n: int = 1500) -> str:
    try:
        return log.read_text(errors="replace")[-n:].strip()
    except OSError:
        return ""


def spawn(job: protocol.JudgeJob, env_overrides: dict[str, str], log: Path) -> tuple[subprocess.Popen, LineReader, str]:
    """Start a judge on ``job``; returns the process, the reader of its pipe and the token."""
    read_fd, write_fd = os.pipe()
    token = secrets.token_hex(16)
    env = {**os.environ, **env_overrides, "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as log_fh:
        proc = subprocess.Popen([sys.executable, "-m", "d2k_profile.judge"], stdin=subprocess.PIPE, stdout=log_fh, stderr=subprocess.STDOUT,
                                pass_fds=(write_fd,), env=env, start_new_session=True)
    REGISTRY.add(proc.pid)
    os.close(write_fd)
    payload = json.dumps(protocol.to_plain(replace(job, fd=write_fd, token=token))).encode()
    proc.stdin.write(payload)
    proc.stdin.close()
    return proc, LineReader(read_fd), token


def _kill(proc: subprocess.Popen, sandboxes: set[int]) -> None:
    kill_group(proc.pid)
    for sid in sandboxes:
        kill_session(sid)
        REGISTRY.discard(sid)
    REGISTRY.discard(proc.pid)
    proc.wait()


def _death_reason(rc: int, log: Path) -> str:
    import signal

    if rc < 0:
        try:
            what = f"judge killed by {signal.Signals(-rc).name}"
        except ValueError:
            what = f"judge killed by signal {-rc}"
    else:
        what = f"judge exited with code {rc} before reporting"
    return f"{what}; log tail: {_log_tail(log)}"


def run_judge(job: protocol.JudgeJob, env: dict[str, str], log: Path, limits: Limits, on_result: OnResult, info: dict | None = None) -> dict:
    """Profile ``job.workloads``, replacing a judge that dies; calls ``on_result(name, outcome)``
    once per workload as soon as it is known. Returns the judge's environment info, which fills
    ``info`` (when given) as it arrives: the device is known before the first result."""
    remaining = list(job.workloads)
    deaths, info = 0, ({} if info is None else info)

    def finish_all(outcome: Outcome) -> None:
        for name in list(remaining):
            on_result(name, replace(outcome))
            remaining.remove(name)

    clean_s = len(job.workloads) * (float(job.timing.get("clean_budget_s", 0.3)) + CLEAN_ALLOWANCE_S) if job.device == "cuda" else 0.0
    while remaining:
        if deaths >= limits.max_deaths:
            finish_all(Outcome(status=Status.SKIPPED, reason=f"not run: this submission already cost {deaths} judges", error_kind="harness"))
            break
        proc, reader, token = spawn(replace(job, workloads=list(remaining)), env, log)
        sandboxes: set[int] = set()
        seq, built, current, started = 0, False, None, time.monotonic()
        deadline = time.monotonic() + limits.build_timeout_s + clean_s + MARGIN_S
        try:
            while True:
                try:
                    line = reader.read(deadline)
                except PipeTimeout:
                    _kill(proc, sandboxes)
                    if not built:
                        finish_all(Outcome(status=Status.TIMEOUT, reason=f"build/import exceeded {limits.build_timeout_s:g} s", error_kind="timeout",
                                           wall_s=time.monotonic() - started))
                        break
                    name = current or remaining[0]
                    on_result(name, Outcome(status=Status.TIMEOUT, reason=f"exceeded {limits.workload_timeout_s:g} s on this workload; killed",
                                            error_kind="timeout", wall_s=time.monotonic() - started))
                    remaining.remove(name)
                    deaths += 1
                    break
                except PipeClosed:
                    rc = proc.wait()
                    if not remaining:
                        break
                    reason = _death_reason(rc, log)
                    if not built:
                        finish_all(Outcome(status=Status.RUNTIME_ERROR, reason="the judge died while the submission was being built: " + reason,
                                           error_kind=JUDGE_LOST))
                        break
                    name = current or remaining[0]
                    on_result(name, Outcome(status=Status.RUNTIME_ERROR, reason=reason, error_kind=JUDGE_LOST, wall_s=time.monotonic() - started))
                    remaining.remove(name)
                    deaths += 1
                    break
                try:
                    msg, env_ = protocol.decode(line, protocol.TO_PARENT, ("token", "seq"))
                except protocol.ProtocolError as exc:
                    _kill(proc, sandboxes)
                    finish_all(Outcome(status=Status.RUNTIME_ERROR, reason=f"bad message from the judge: {exc}", error_kind="protocol"))
                    break
                seq += 1
                if env_["token"] != token or env_["seq"] != seq:
                    _kill(proc, sandboxes)
                    finish_all(Outcome(status=Status.CHEAT_SUSPECTED, reason=f"forged or out-of-order message from the judge's pipe: {line[:200]!r}",
                                       error_kind="protocol"))
                    break
                if isinstance(msg, protocol.Hello):
                    info.update(msg.env)
                elif isinstance(msg, protocol.SandboxUp):
                    sandboxes.add(msg.pgid)
                    REGISTRY.add(msg.pgid)
                elif isinstance(msg, protocol.Built):
                    built = True
                    info["build_s"], info["sandbox"] = msg.build_s, msg.sandbox
                    deadline = time.monotonic() + limits.workload_timeout_s + MARGIN_S
                elif isinstance(msg, protocol.Started):
                    current, started = msg.workload, time.monotonic()
                    deadline = started + limits.workload_timeout_s + MARGIN_S
                elif isinstance(msg, protocol.Result):
                    if msg.workload in remaining:
                        on_result(msg.workload, msg.outcome)
                        remaining.remove(msg.workload)
                    current = None
                elif isinstance(msg, protocol.Failed):
                    finish_all(msg.outcome)
                elif isinstance(msg, protocol.Done):
                    if job.build_only:
                        remaining.clear()
                    _kill(proc, sandboxes)  # everything is reported: no need to wait for its CUDA teardown
                    break
        finally:
            if proc.poll() is None:
                try:
                    proc.wait(timeout=30) if not remaining else _kill(proc, sandboxes)
                except subprocess.TimeoutExpired:
                    _kill(proc, sandboxes)
            kill_group(proc.pid)
            REGISTRY.discard(proc.pid)
            for sid in sandboxes:
                kill_session(sid)  # a sandbox the judge did not reap (the judge was killed) goes too
                REGISTRY.discard(sid)
            os.close(reader.fd)
    return info


def build_only(job: protocol.JudgeJob, env: dict[str, str], log: Path, limits: Limits) -> tuple[Outcome | None, dict]:
    """Import a submission and call it once on the smoke workload, to compile it (also what it
    compiles lazily): (None, info) when it built, else the failure's outcome. Only failures to
    import or to compile count; a crash or error of the warm-up call is left to the timing job."""
    got: dict = {}
    info = run_judge(replace(job, build_only=True, workloads=["<build>"]), env, log, limits, lambda _n, o: got.setdefault("o", o))
    outcome = got.get("o")
    if outcome is not None and outcome.error_kind in ("compile", "import", "timeout", "crash"):
        return outcome, info
    return None, info
