"""The command-line shell shared by the checked sweeps (softmax_smem_rows.py, layernorm_smem_rows.py,
w4a16_decode.py): correctness cases first, then the timed settings, one JSON line per record.

A sweep module supplies ``check(emit) -> failures``, ``sweep(emit, reps)`` and
``summary(records)``; this runs them, writes every record to ``--out`` as it is made (a crash
loses nothing already measured), and exits non-zero when any correctness case failed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable

Emit = Callable[[dict], None]


def run_checked_sweep(description: str, check: Callable[[Emit], int], sweep: Callable[[Emit, int], None],
                      summary: Callable[[list[dict]], None], argv=None) -> int:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--reps", type=int, default=40, help="timed calls per setting (median reported)")
    ap.add_argument("--out", type=Path, help="JSON lines file for every check and timing record")
    ap.add_argument("--check-only", action="store_true", help="run the correctness cases alone")
    args = ap.parse_args(argv)
    records: list[dict] = []
    sink = args.out.open("w") if args.out else None

    def emit(rec: dict) -> None:
        records.append(rec)
        if sink:
            sink.write(json.dumps(rec) + "\n")
            sink.flush()

    failures = check(emit)
    passed = sum(1 for r in records if r.get("kind") == "check" and r.get("ok"))
    print(f"correctness: {passed} ok, {failures} mismatches", flush=True)
    if not args.check_only:
        sweep(emit, args.reps)
        summary(records)
    return 1 if failures else 0


def check_then_time(emit: Emit, base: dict, mismatch: Callable, bench: Callable, reps: int, nbytes: float,
                    bandwidth: float) -> Callable:
    """A timer for one workload's implementations: ``timed(kind, fn, extra, check=True)`` runs
    ``fn()`` once and checks its output with ``mismatch`` (a reason, or None when it is right);
    a wrong or failing implementation gets a ``skipped`` record and is not timed, a right one a
    record with its median ms and its fraction of ``bandwidth`` for ``nbytes``."""

    def timed(kind: str, fn, extra: dict, check: bool = True) -> None:
        try:
            why = mismatch(fn()) if check else None
        except RuntimeError as err:
            why = f"error: {err}"
        if why is not None:
            emit({**base, "kind": kind, **extra, "skipped": why})
            return
        ms = bench(fn, reps)
        emit({**base, "kind": kind, **extra, "ms": ms, "fraction": nbytes / (ms * 1e-3) / bandwidth})

    return timed


def print_best(records: list[dict], kinds: list[str], candidate: str, cell: Callable[[dict], str]) -> None:
    """One line per workload: the fastest record of each kind (``cell`` formats it) and the
    setting of the fastest ``candidate`` record."""
    print("\nworkload             " + "  ".join(f"{k:>16}" for k in kinds) + "  best setting")
    for name in dict.fromkeys(r["workload"] for r in records if "workload" in r):
        rows = [r for r in records if r.get("workload") == name and "ms" in r]
        best = {k: min((r for r in rows if r["kind"] == k), key=lambda r: r["ms"], default=None) for k in kinds}
        cells = "  ".join(f"{cell(best[k]) if best[k] else '-':>16}" for k in kinds)
        print(f"{name:<20} {cells}  {best[candidate]['setting'] if best[candidate] else '-'}")
