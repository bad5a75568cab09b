"""The GPU queue: tool calls and evaluations that need a GPU take one from here and give it back.

Agents on different tasks run in parallel (``--jobs``), but timing never shares a GPU: a
``bench`` waits until a GPU is free. Without a GPU the same queue hands out CPU slots, so that
parallel interpreter runs do not oversubscribe the cores.
"""

from __future__ import annotations

import queue
from contextlib import contextmanager
from typing import Iterator


class GpuPool:
    def __init__(self, gpus: list[str], has_gpu: bool, cpu_slots: int = 1):
        self.has_gpu = has_gpu
        self._free: queue.Queue[str] = queue.Queue()
        slots = gpus if has_gpu else [f"cpu{i}" for i in range(max(1, cpu_slots))]
        self.size = len(slots)
        for slot in slots:
            self._free.put(slot)

    @contextmanager
    def acquire(self) -> Iterator[str | None]:
        """Yields the GPU index to put in CUDA_VISIBLE_DEVICES (None without a GPU)."""
        slot = self._free.get()
        try:
            yield slot if self.has_gpu else None
        finally:
            self._free.put(slot)


def detect_gpu() -> bool:
    """Whether torch sees a CUDA device, asked in a subprocess (the runner never imports torch)."""
    import subprocess
    import sys

    try:
        out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.stdout.strip().endswith("True")
