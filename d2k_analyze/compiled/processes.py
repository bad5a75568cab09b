"""Running the CUDA tools (nvcc, cuobjdump) so that nothing they start outlives the analysis.

``nvcc`` is a driver: the work happens in children it starts (``cicc``, ``ptxas``), which can run
for minutes with gigabytes of memory on a large generated file. ``subprocess.run(timeout=...)``
kills only the driver and leaves those children orphaned. So every tool runs as the leader of its
own process group (a new session), and on a timeout, an interrupt or a SIGTERM the whole group is
killed, not just its leader.

:func:`stop_all` kills every running group and makes further :func:`run` calls fail at once: the
compile threads then unwind through their ``with TemporaryDirectory`` blocks, so no ``d2k-nvcc-*``
folder is left behind either (the CLI turns SIGTERM into an exception for this,
:mod:`d2k_spec.exit_codes`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

_lock = threading.Lock()
_running: set[subprocess.Popen] = set()
_stopping = threading.Event()


class Stopped(subprocess.SubprocessError):
    """The analysis is being stopped (interrupt, SIGTERM): no new tool is started."""


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group led by ``proc`` (its children and theirs included)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # already gone


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def run(cmd: list[str], *, timeout: float, cwd: Path | str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` in its own process group and capture its output, like ``subprocess.run``.

    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds, with the group killed; any
    other exception while waiting (KeyboardInterrupt, SIGTERM's) also kills the group first.
    """
    proc: subprocess.Popen | None = None
    # Ctrl-C and SIGTERM are held back while the tool starts: raised inside ``Popen`` (on a busy
    # machine the tool can be running before ``Popen`` returns) they would leave a started group
    # that nothing knows to kill. Checking the stop flag, starting and registering happen under
    # the lock :func:`stop_all` takes, so a stop either sees the tool or prevents it.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        with _lock:
            if _stopping.is_set():
                raise Stopped("the analysis is stopping")
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
                                    start_new_session=True)
            _running.add(proc)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a signal that came meanwhile is raised now, below
        held = None
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        raise subprocess.TimeoutExpired(cmd, timeout) from None
    except BaseException:
        if proc is not None:
            kill_group(proc)
            proc.wait()
        raise
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        with _lock:
            _running.discard(proc)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def stop_all() -> None:
    """Kill every running tool's process group and refuse to start new ones (until :func:`resume`)."""
    with _lock:
        _stopping.set()
        procs = list(_running)
    for proc in procs:
        kill_group(proc)


def resume() -> None:
    """Allow tools to start again (after a stop has been handled)."""
    _stopping.clear()
