"""One d2k-profile run per output folder at a time.

Two runs appending to the same ``results.jsonl`` would interleave their records (and ``--resume``
could then count a pair twice). The run takes an exclusive ``flock`` on ``OUT/.d2k-profile.lock``
for its whole life and writes who holds it (pid, host, start time) into the file; a second run
finds the lock taken and says who has it. The kernel releases the lock when the holder exits, also
when it is killed, so a stale file never blocks a later run.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

LOCK_NAME = ".d2k-profile.lock"


class LockHeld(Exception):
    """Another run holds the output folder (the message says which)."""


class OutLock:
    def __init__(self, out: Path):
        self.path = Path(out) / LOCK_NAME
        self.fd: int | None = None

    def acquire(self) -> "OutLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder(fd)
            os.close(fd)
            raise LockHeld(f"{self.path.parent} is in use by another d2k-profile run ({holder}); wait for it, or use another --out") from None
        os.ftruncate(fd, 0)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "started_at": time.time()}
        os.write(fd, (json.dumps(info) + "\n").encode())
        os.fsync(fd)
        self.fd = fd
        return self

    @staticmethod
    def _holder(fd: int) -> str:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            info = json.loads(os.read(fd, 4096) or b"{}")
            return f"pid {info.get('pid', '?')} on {info.get('host', '?')}, started {info.get('started', '?')}"
        except (OSError, ValueError):
            return "holder unknown"

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "OutLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
