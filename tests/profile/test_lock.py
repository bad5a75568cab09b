"""One run per output folder: the second says who holds it; a killed holder frees it."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from d2k_profile.lock import LockHeld, OutLock

REPO = Path(__file__).resolve().parents[2]


def test_second_holder_is_refused_with_the_first_ones_identity(tmp_path):
    first = OutLock(tmp_path).acquire()
    with pytest.raises(LockHeld, match=rf"pid {os.getpid()} on .*, started "):
        OutLock(tmp_path).acquire()
    first.release()
    OutLock(tmp_path).acquire().release()


def test_a_killed_holder_frees_the_folder(tmp_path):
    code = f"from d2k_profile.lock import OutLock; import time; OutLock({str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(60)"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.stdout.readline().strip() == "held"
    with pytest.raises(LockHeld, match=f"pid {p.pid} "):
        OutLock(tmp_path).acquire()
    p.kill()
    p.wait()
    time.sleep(0.1)
    OutLock(tmp_path).acquire().release()  # the kernel released it: a stale file blocks nothing
