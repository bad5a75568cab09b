"""The device health check between work units: a small known computation, checked for its value
and its time, in a fresh process on the GPU slot about to be used.

Why: on a node that runs for hours a GPU can go bad (a stuck context, ECC errors, a clock stuck
low after a thermal event). A bad GPU turns every unit it serves into a wrong verdict or a lost
judge, and retries would only move the damage around. So before a slot's first unit, after a
lost judge on it and every ``every`` units, the slot runs this check; a slot that fails it
``max_failures`` times in a row is taken out of the pool with a message, and the run goes on
with the others.

The computation: the product of two fixed integer matrices in fp32, whose every partial sum is an
integer below 2**24 and therefore exact, compared for equality with the product computed here in
exact integer arithmetic; timed as the median of 20 calls. The first passing time of a slot is its
baseline; a later check that is more than ``slow_factor`` times slower fails.

Run as ``python -m d2k_profile.health`` it prints one JSON line: ``{"ok", "ms", "reason"}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

N = 512  # 512 x 512 matrices of entries 0..7: every dot product is below 512 * 49 < 2**24


@dataclass
class Health:
    ok: bool
    ms: float | None
    reason: str = ""


def _probe() -> Health:
    """In the checking process: compute, compare, time (CUDA when visible, else the CPU)."""
    import torch

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    i = torch.arange(N, dtype=torch.int64)
    a64 = (i[:, None] * 3 + i[None, :] * 5) % 8
    b64 = (i[:, None] * 7 + i[None, :] * 2 + 1) % 8
    want = a64 @ b64  # exact, int64
    a, b = a64.to(dev, torch.float32), b64.to(dev, torch.float32)
    got = (a @ b).cpu()
    if not torch.equal(got.to(torch.int64), want):
        bad = int((got.to(torch.int64) != want).sum())
        return Health(False, None, f"wrong result on {dev}: {bad} of {N * N} entries differ from the exact product")
    times = []
    for _ in range(20):
        if dev == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        a @ b
        if dev == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return Health(True, times[len(times) // 2], "")


def check(slot: str | None, timeout_s: float = 120.0) -> Health:
    """Run the probe in a fresh process that sees only ``slot`` (None: whatever this machine has)."""
    env = dict(os.environ)
    if slot is not None:
        env["CUDA_VISIBLE_DEVICES"] = slot
    try:
        out = subprocess.run([sys.executable, "-m", "d2k_profile.health"], env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return Health(False, None, f"the check did not finish in {timeout_s:g} s")
    try:
        data = json.loads(out.stdout.strip().splitlines()[-1])
        return Health(bool(data["ok"]), data.get("ms"), str(data.get("reason", "")))
    except (IndexError, ValueError, KeyError):
        return Health(False, None, f"the check exited with code {out.returncode}: {(out.stderr or out.stdout).strip()[-300:]}")


@dataclass
class SlotHealth:
    """Per-slot state of the checks: when to check, consecutive failures, the baseline time."""

    every: int = 10  # units between routine checks
    max_failures: int = 3  # failed checks in a row that take a slot out of the pool
    slow_factor: float = 5.0
    retry_s: float = 1.0  # wait before a failed check is repeated
    baseline_ms: dict = field(default_factory=dict)
    failures: dict = field(default_factory=dict)
    since: dict = field(default_factory=dict)  # units served since the last check
    suspect: set = field(default_factory=set)  # slots that lost a judge since their last check

    def due(self, slot) -> bool:
        return slot not in self.baseline_ms or slot in self.suspect or self.since.get(slot, 0) >= self.every

    def served(self, slot) -> None:
        self.since[slot] = self.since.get(slot, 0) + 1

    def lost_judge(self, slot) -> None:
        self.suspect.add(slot)

    def record(self, slot, health: Health) -> Health:
        """Fold one check's result in (a passing check that is too slow fails); returns it."""
        if health.ok and health.ms is not None and slot in self.baseline_ms and health.ms > self.slow_factor * self.baseline_ms[slot]:
            health = Health(False, health.ms, f"{health.ms:.3f} ms, more than {self.slow_factor:g}x this GPU's first check "
                                              f"({self.baseline_ms[slot]:.3f} ms)")
        if health.ok:
            self.baseline_ms.setdefault(slot, health.ms)
            self.failures[slot] = 0
            self.since[slot] = 0
            self.suspect.discard(slot)
        else:
            self.failures[slot] = self.failures.get(slot, 0) + 1
        return health

    def retired(self, slot) -> bool:
        return self.failures.get(slot, 0) >= self.max_failures


def main() -> int:
    h = _probe()
    print(json.dumps({"ok": h.ok, "ms": h.ms, "reason": h.reason}))
    return 0 if h.ok else 1


if __name__ == "__main__":
    sys.exit(main())
