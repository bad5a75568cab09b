"""Child processes, each in its own process group, killed as a group.

Every process d2k-profile starts (judges, sandboxes, compilers, ``nvidia-smi``) is started with
``start_new_session=True``, so it leads its own process group, and is stopped with
``killpg(SIGKILL)``: a compiler's own children (``cicc``, ``ptxas``, ninja's jobs) die with it
instead of running on orphaned (``subprocess.run(timeout=...)`` kills only the direct child). The
:class:`GroupRegistry` remembers the groups alive right now, so that Ctrl-C or an error in the
parent can end all of them before it exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import Sequence


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group (gone already is fine)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def session_members(sid: int) -> list[int]:
    """Processes whose session id is ``sid`` (from /proc; empty where there is no /proc)."""
    out = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp session ...
        if len(fields) > 3 and fields[3] == str(sid):
            out.append(int(entry))
    return out


def kill_session(sid: int) -> None:
    """SIGKILL the group ``sid`` and every other process of session ``sid``: a sandbox cannot leave
    its session (seccomp denies setsid), so this reaches children that moved to a process group
    of their own (ninja puts its jobs in new groups)."""
    kill_group(sid)
    for pid in session_members(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@dataclass(frozen=True)
class Finished:
    returncode: int | None
    output: str
    timed_out: bool


def run_group(cmd: Sequence[str], timeout_s: float, cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None) -> Finished:
    """Run ``cmd`` in a new process group; on timeout the whole group is killed."""
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    REGISTRY.add(proc.pid)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return Finished(proc.returncode, out.decode(errors="replace"), False)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        out, _ = proc.communicate()
        return Finished(None, out.decode(errors="replace"), True)
    finally:
        kill_group(proc.pid)  # leftovers of a finished command (a daemonised child) go too
        REGISTRY.discard(proc.pid)


class GroupRegistry:
    """Process groups started by this process and not yet reaped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def alive(self) -> list[int]:
        with self._lock:
            return sorted(self._groups)

    def kill_all(self) -> int:
        """Kill every registered group; returns how many there were."""
        with self._lock:
            groups, self._groups = sorted(self._groups), set()
        for g in groups:
            kill_session(g)  # every process we start leads its own session
        return len(groups)


REGISTRY = GroupRegistry()
