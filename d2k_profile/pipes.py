"""JSON-line pipes with deadlines: how the parent, the judge and the sandbox talk (the native
loop's binary frames are :mod:`.frames`)."""

from __future__ import annotations

import os
import select
import time


class PipeClosed(Exception):
    """The other end closed its side (it exited or crashed)."""


class PipeTimeout(Exception):
    """No complete line before the deadline."""


class LineReader:
    """Complete lines from a pipe, each within a deadline (``time.monotonic()`` seconds)."""

    def __init__(self, fd: int, max_line: int = 64 << 20):
        self.fd, self.buf, self.eof, self.max_line = fd, b"", False, max_line

    def pending(self) -> bool:
        """Whether any bytes are waiting (without blocking)."""
        return bool(self.buf) or (not self.eof and bool(select.select([self.fd], [], [], 0)[0]))

    def read(self, deadline: float | None = None) -> bytes:
        while b"\n" not in self.buf:
            if self.eof:
                raise PipeClosed()
            if len(self.buf) > self.max_line:
                return self._take(len(self.buf))
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                raise PipeTimeout()
            ready, _, _ = select.select([self.fd], [], [], None if timeout is None else min(timeout, 1.0))
            if ready:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.eof = True
                self.buf += chunk
        return self._take(self.buf.index(b"\n") + 1)

    def _take(self, n: int) -> bytes:
        line, self.buf = self.buf[:n], self.buf[n:]
        return line.rstrip(b"\n")


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
