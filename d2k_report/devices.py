"""Which GPU model timed a run, so that a pair of runs is never compared across models by accident.

A speedup measured on an H200 and one measured on an A100 are different quantities (the same
kernel moves from memory-bound to compute-bound between them), and a guided-minus-unguided delta
across two models measures the GPUs as much as the guidance. Every d2k-profile record names the
device it was timed on (``device``: ``torch.cuda.get_device_name()``); CPU smoke checks have none.
"""

from __future__ import annotations

from collections.abc import Iterable

from d2k_profile.results import Record


def timing_devices(records: Iterable[Record]) -> set[str]:
    """The GPU models that timed any of ``records``. Records without timing, and timings taken on
    the CPU (``mode = "cpu"`` or ``device = "cpu"``: smoke checks), name no GPU model."""
    return {r.device.strip() for r in records
            if r.timing is not None and r.mode != "cpu" and r.device.strip() and r.device.strip().lower() != "cpu"}


def mixed_pair_problem(guided: str, unguided: str, devices: dict[str, set[str]]) -> str | None:
    """Why the two runs' timings cannot be compared, or None when one model timed both (or
    neither was timed on a GPU)."""
    g, u = devices.get(guided, set()), devices.get(unguided, set())
    if len(g | u) <= 1:
        return None
    show = lambda ds: " + ".join(sorted(ds)) or "no GPU timing"  # noqa: E731
    return f"pair {guided} vs {unguided}: timed on different device models ({guided}: {show(g)}; {unguided}: {show(u)})"
