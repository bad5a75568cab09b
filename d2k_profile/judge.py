"""The judge process: the trusted process of one submission job (it never imports the submission).

Started by the parent (:mod:`.isolation`) as ``python -m d2k_profile.judge`` with a
:class:`~d2k_profile.protocol.JudgeJob` on stdin and a pipe back. This module is its entry point
and its channel to the parent; it starts the first sandbox before it imports torch, so that the
sandbox's own start-up (confinement, imports) overlaps the judge's, then hands over to
:mod:`.judging`, which does the work.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from . import protocol
from .pipes import write_all


class ParentChannel:
    """Typed messages to the parent, each with the job's token and a sequence number."""

    def __init__(self, fd: int, token: str):
        self.fd, self.token, self.seq = fd, token, 0

    def send(self, msg: object) -> None:
        self.seq += 1
        write_all(self.fd, protocol.encode(msg, token=self.token, seq=self.seq))


def _die_with_parent() -> None:
    """SIGKILL this judge when the parent dies (no orphan holds the GPU while a run is resumed), and
    make it non-dumpable: no process of the same user (a sandbox) can read its memory."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        libc.prctl(4, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


def main() -> int:
    ppid = os.getppid()
    _die_with_parent()
    if os.getppid() != ppid:
        return 1
    job = protocol.build(protocol.JudgeJob, json.loads(sys.stdin.buffer.read() or b"{}"), "JudgeJob")
    chan = ParentChannel(job.fd, job.token)
    from d2k_spec.task import load_task

    from .session import first_shm, spawn_sandbox

    shm = None
    if job.device == "cpu":
        shm = first_shm(job)
        shm.mkdir(parents=True, exist_ok=True)
    first = spawn_sandbox(job, chan, str(load_task(Path(job.task_path)).reference_path), shm)
    from .judging import Judge, SessionState  # noqa: I001  (imports torch: only now, while the sandbox starts)

    if job.device == "cpu":
        from . import interpreter

        interpreter.apply()
    judge = Judge(job, chan, SessionState(first))
    try:
        judge.run()
    finally:
        judge.end_session()
        if judge.shm is not None:
            shutil.rmtree(judge.shm, ignore_errors=True)
    chan.send(protocol.Done())
    return 0


if __name__ == "__main__":
    sys.exit(main())
