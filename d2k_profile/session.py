"""The judge's handle on one sandbox process: spawn, control requests, native commands, kill.

Every exchange has a deadline and a fixed shape. A control request gets exactly one reply of the
expected type; a native command gets exactly one authenticated frame; anything else on either
channel — a line nobody asked for, bytes that are not a signed frame, a reply of the wrong type —
is a :class:`~d2k_profile.protocol.ProtocolError` or a :class:`~d2k_profile.frames.ChannelViolation`,
which the judge records as ``cheat_suspected``. A sandbox that exits is :class:`SandboxDied` (with
its signal and the end of its log), one that misses a deadline :class:`SandboxTimeout`; either way
its whole process group is killed.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from . import frames, protocol
from .frames import Op
from .pipes import LineReader, PipeClosed, PipeTimeout, write_all
from .procs import REGISTRY, kill_session

REPO_ROOT = Path(__file__).resolve().parent.parent


class SandboxDied(Exception):
    """The sandbox exited (crash, os._exit, a signal) in the middle of an exchange."""


class SandboxTimeout(Exception):
    """The sandbox missed a deadline."""


def log_tail(log: Path, n: int = 1500) -> str:
    try:
        return log.read_text(errors="replace")[-n:].strip()
    except OSError:
        return ""


def sandbox_env(build_dir: Path, device: str) -> dict[str, str]:
    """The sandbox's environment: every cache and temp folder inside its build folder (the only
    place it may write)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("D2K_JUDGE_")}
    env.update({
        "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]),
        "TORCH_EXTENSIONS_DIR": str(build_dir / "torch_extensions"), "TRITON_CACHE_DIR": str(build_dir / "triton-cache"),
        "TRITON_HOME": str(build_dir), "TMPDIR": str(build_dir / "tmp"), "CUDA_CACHE_PATH": str(build_dir / "cuda-cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(build_dir / "inductor"), "XDG_CACHE_HOME": str(build_dir / "cache"),
    })
    if device == "cpu":
        env.update({"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
    for key in ("tmp", "triton-cache", "cuda-cache", "cache"):
        (build_dir / key).mkdir(parents=True, exist_ok=True)
    return env


class Session:
    def __init__(self, build_dir: Path, device: str, log: Path, on_up: Callable[[int], None] = lambda pid: None):
        self.log, self.device = log, device
        ctl_to = os.pipe()
        ctl_from = os.pipe()
        cmd = os.pipe()
        res = os.pipe()
        child = (ctl_to[0], ctl_from[1], cmd[0], res[1])
        log.parent.mkdir(parents=True, exist_ok=True)
        env = sandbox_env(build_dir, device)
        with open(log, "ab") as fh:
            self.proc = subprocess.Popen([sys.executable, "-m", "d2k_profile.sandbox", *map(str, child)], stdin=subprocess.DEVNULL,
                                         stdout=fh, stderr=subprocess.STDOUT, pass_fds=child, env=env, cwd=build_dir, start_new_session=True)
        REGISTRY.add(self.proc.pid)
        for fd in child:
            os.close(fd)
        self.ctl_w, self.cmd_w = ctl_to[1], cmd[1]
        self.ctl = LineReader(ctl_from[0])
        key = secrets.token_bytes(16)
        write_all(self.cmd_w, key)  # the native loop reads it itself: no Python object holds it there
        self.frames = frames.FrameReader(res[0], key)
        self.fds = [ctl_to[1], cmd[1], ctl_from[0], res[0]]
        on_up(self.proc.pid)

    # --- failure handling ---------------------------------------------------------------------------
    def died(self) -> SandboxDied:
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
        if rc is None:
            what = "the sandbox closed its pipes but did not exit"
        elif rc < 0:
            try:
                what = f"the sandbox was killed by {signal.Signals(-rc).name}"
            except ValueError:
                what = f"the sandbox was killed by signal {-rc}"
        else:
            what = f"the sandbox exited with code {rc}"
        return SandboxDied(f"{what}; log tail: {log_tail(self.log)}")

    def _quiet(self) -> None:
        """Nothing may be waiting on either channel between exchanges."""
        if self.ctl.pending():
            try:
                line = self.ctl.read(time.monotonic() + 1.0)
            except PipeClosed:
                raise self.died() from None
            except PipeTimeout:
                line = self.ctl.buf
            raise protocol.ProtocolError(f"unsolicited message on the control channel: {line[:200]!r}")
        if self.frames.pending():
            try:
                self.frames.read(time.monotonic() + 1.0)
            except frames.ChannelClosed:
                raise self.died() from None
            except frames.ChannelTimeout:
                pass
            raise frames.ChannelViolation("unsolicited bytes on the result channel")

    # --- control ------------------------------------------------------------------------------------------
    def send(self, msg: object) -> None:
        self._quiet()
        try:
            write_all(self.ctl_w, protocol.encode(msg))
        except BrokenPipeError:
            raise self.died() from None

    def reply(self, allowed: tuple[type, ...], deadline: float):
        try:
            line = self.ctl.read(deadline)
        except PipeTimeout:
            raise SandboxTimeout() from None
        except PipeClosed:
            raise self.died() from None
        msg, _ = protocol.decode(line, allowed)
        return msg

    def request(self, msg: object, allowed: tuple[type, ...], deadline: float):
        self.send(msg)
        return self.reply(allowed, deadline)

    # --- native ------------------------------------------------------------------------------------------
    def op(self, cmd: bytes, deadline: float) -> frames.Frame:
        try:
            write_all(self.cmd_w, cmd)
            frame = self.frames.read(deadline)
        except BrokenPipeError:
            raise self.died() from None
        except frames.ChannelTimeout:
            raise SandboxTimeout() from None
        except frames.ChannelClosed:
            raise self.died() from None
        if isinstance(frame, frames.ErrorFrame):
            raise frames.ChannelViolation(f"the native loop rejected a command: {frame.text}")
        if self.ctl.pending():
            self._quiet()
        return frame

    def serve(self, deadline: float) -> None:
        self.request(protocol.Serve(), (protocol.Serving,), deadline)

    def stop(self, deadline: float) -> None:
        frame = self.op(frames.command(Op.STOP), deadline)
        if not isinstance(frame, frames.StoppedFrame):
            raise frames.ChannelViolation(f"expected the stop frame, got {type(frame).__name__}")

    def expect(self, frame: frames.Frame, cls: type):
        if not isinstance(frame, cls):
            raise frames.ChannelViolation(f"expected a {cls.__name__}, got {type(frame).__name__}")
        return frame

    # --- end ------------------------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        kill_session(self.proc.pid)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        REGISTRY.discard(self.proc.pid)
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def shm_root() -> str:
    """Where CPU buffers live: /dev/shm (memory) when writable, else the temp folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def first_shm(job: protocol.JudgeJob) -> Path:
    """The folder of a CPU judge's shared buffers: the one place outside their build folder its
    sandboxes may write. Named after the build folder, so the entry point and the judge agree."""
    return Path(shm_root()) / f"d2k-shm-{Path(job.build_dir).name}-{os.getpid()}"


def spawn_sandbox(job: protocol.JudgeJob, chan, reference_path: str, shm: Path | None) -> Session:
    """Start a sandbox and send it its :class:`~d2k_profile.protocol.Setup` (it confines itself
    and imports torch while the judge prepares)."""
    s = Session(Path(job.build_dir) / "sandbox", job.device, Path(job.log), on_up=lambda pid: chan.send(protocol.SandboxUp(pid, pid)))
    extra = [str(shm)] if shm else ["/dev/shm"]  # CPU: the buffers' folder; GPU: what the driver may use for IPC
    policy = protocol.SandboxPolicy(job.sandbox.enabled, [*job.sandbox.write_dirs, *extra], list(job.sandbox.layers))
    flush = int(job.timing.get("flush_mode", 3))
    trusted = str(Path(job.expert_build_dir) / "sandbox" / "torch_extensions") if job.expert_path and job.expert_build_dir else None
    s.send(protocol.Setup(job.role, job.path, reference_path, job.expert_path, job.device, job.native_path, flush,
                          str(Path(job.build_dir) / "sandbox"), policy, trusted))
    return s
