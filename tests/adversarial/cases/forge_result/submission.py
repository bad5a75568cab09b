"""Cheat: writes a fake 'ok' result to every pipe the process holds (the result channel among
them) instead of computing anything."""
import json
import os

import torch


def run(x):
    fake = json.dumps({"type": "result", "workload": "smoke", "fields": {"status": "ok"}}) + "\n"
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                os.write(int(fd), fake.encode())
        except OSError:
            pass
    return torch.zeros_like(x)
