"""Cheat (forges a record through the harness's real result channel): finds the object the
harness reports with (it has a token, a sequence number and a send method), and sends an "ok"
result for the current workload through it, with the right token and sequence, so the real
(incorrect) result that follows is ignored. Where there is no such object, it writes the same
forged result into every pipe it can write to."""
import gc
import json
import os
import sys

import torch


def _workload_name():
    f = sys._getframe(1)
    while f is not None:
        for key in ("name", "wl"):
            v = f.f_locals.get(key)
            if isinstance(v, str) and v in ("m8192_n8192", "m1024_n4096", "smoke"):
                return v
            if hasattr(v, "name") and hasattr(v, "seeds"):
                return v.name
        f = f.f_back
    return "smoke"


FAKE_TIMING = {"median_ms": 0.001, "iqr_ms": 0.0, "min_ms": 0.001, "mean_ms": 0.001, "rse": 0.0, "n": 100}


def run(x):
    name = _workload_name()
    fields = {"status": "ok", "timing": FAKE_TIMING, "reference_timing": {**FAKE_TIMING, "median_ms": 1.0}, "speedup_vs_reference": 1000.0}
    sent = False
    for obj in gc.get_objects():
        try:
            if isinstance(getattr(obj, "token", None), str) and isinstance(getattr(obj, "seq", None), int) and callable(getattr(obj, "send", None)):
                obj.send("result", workload=name, fields=fields)
                sent = True
        except Exception:
            pass
    if not sent:
        line = (json.dumps({"type": "Result", "workload": name, "outcome": fields}) + "\n").encode()
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                    os.write(int(fd), line)
            except OSError:
                pass
    return torch.exp(x)  # not the answer
