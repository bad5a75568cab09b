"""Ctrl-C during the compile checks or the prebuild reaches the CLI at once: the main thread
does not wait for the calls under way (a build can run for minutes), and queued calls never start."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from d2k_profile.runner import _map_interruptible


def test_an_interrupt_does_not_wait_for_the_calls_under_way():
    started: list[int] = []
    release = threading.Event()

    def slow(i: int) -> None:
        started.append(i)
        release.wait(30)  # a long compile

    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()  # what Ctrl-C sends
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _map_interruptible(slow, range(6), 2)
    waited = time.monotonic() - t0
    release.set()
    assert waited < 5, f"the interrupt waited {waited:.1f} s for running calls"
    time.sleep(0.2)
    assert sorted(started) == [0, 1]  # the queued calls were cancelled, not run after the interrupt


def test_without_an_interrupt_every_call_runs_and_errors_propagate():
    done: list[int] = []
    _map_interruptible(done.append, range(10), 3)
    assert sorted(done) == list(range(10))

    def fails(i: int) -> None:
        if i == 4:
            raise ValueError("build failed")

    with pytest.raises(ValueError, match="build failed"):
        _map_interruptible(fails, range(8), 2)
