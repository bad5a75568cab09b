"""Ctrl-C during the compile checks or the prebuild reaches the CLI at once: the main thread
does not wait for the calls under way (a build can run for minutes), and queued calls never start."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from d2k_profile.runner import _map_interruptible


@pytest.mark.parametrize("receiver", ["process", "worker thread"])
def test_an_interrupt_does_not_wait_for_the_calls_under_way(receiver):
    """Ctrl-C's SIGINT goes to the process; the kernel may hand it to any thread, and when a
    worker thread takes it the main thread must still notice."""
    started: list[int] = []
    workers: list[int] = []
    release = threading.Event()

    def slow(i: int) -> None:
        started.append(i)
        workers.append(threading.get_ident())
        release.wait(10)  # a long compile

    def interrupt() -> None:
        if receiver == "process":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            signal.pthread_kill(workers[0], signal.SIGINT)

    # Python's own handler, whatever this test run inherited (started in the background, SIGINT
    # arrives ignored and would never raise)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(0.3, interrupt).start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            _map_interruptible(slow, range(6), 2)
        waited = time.monotonic() - t0
    finally:
        signal.signal(signal.SIGINT, previous)
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
