"""Summarise a d2k-profile run of memory-bound tasks: achieved bandwidth per workload.

    python3 benchmarks/family1_summary.py RESULTS.jsonl [--peak-gbps 4300]

For every record (task x submission x workload) it prints the status, the median time, the
speedups against the reference and the expert, and the achieved bandwidth computed from the
task's own minimum-traffic model (``reference.py: bytes_moved``) as GB/s and as a fraction of
the H200's measured copy bandwidth (~4.3 TB/s, ``--peak-gbps``). The reference's bandwidth on
the same workload comes from the record's interleaved reference timing. Self-check rows
(``reference-self``: the reference timed against itself) give the noise floor: their speedup
should be 1.00 within a few tenths of a percent. Records without timing (a CPU smoke run) print
their status only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _bytes_models(task_ids, tasks_root: Path):
    from d2k_spec.inputs_check import load_reference
    from d2k_spec.task import load_tasks

    tasks = load_tasks(tasks_root)
    models = {}
    for tid in task_ids:
        if tid in tasks:
            ref = load_reference(tasks[tid])
            models[tid] = (tasks[tid], ref.bytes_moved)
    return models


def _fmt(v, spec):
    width = int(spec.split(".")[0] or 0)
    return "-".rjust(width) if v is None else format(v, spec)


def summarise(records: list[dict], peak_gbps: float, tasks_root: Path) -> list[str]:
    models = _bytes_models({r["task"] for r in records}, tasks_root)
    lines = []
    head = f"{'task':18s} {'workload':20s} {'submission':22s} {'status':16s} {'ms':>9s} {'x ref':>7s} {'x exp':>7s} {'GB/s':>7s} {'of peak':>7s}"
    by_task = defaultdict(list)
    for r in records:
        by_task[r["task"]].append(r)
    floor = []
    for tid in sorted(by_task):
        task, bytes_moved = models.get(tid, (None, None))
        params = {w.name: w.params for w in task.workload} if task else {}
        lines += ["", head, "-" * len(head)]
        ref_seen = set()
        for r in sorted(by_task[tid], key=lambda r: (r["workload"], r["role"] != "expert", r["submission"])):
            wl, t = r["workload"], r.get("timing") or {}
            nbytes = bytes_moved(params[wl]) if bytes_moved and wl in params else None
            ms = t.get("median_ms")
            gbps = nbytes / (ms * 1e-3) / 1e9 if nbytes and ms else None
            frac = gbps / peak_gbps if gbps else None
            lines.append(f"{tid:18s} {wl:20s} {r['submission'][:22]:22s} {r['status'][:16]:16s} {_fmt(ms, '9.4f')} "
                         f"{_fmt(r.get('speedup_vs_reference'), '7.2f')} {_fmt(r.get('speedup_vs_expert'), '7.2f')} "
                         f"{_fmt(gbps, '7.0f')} {_fmt(frac, '7.3f')}")
            if r["status"] != "ok" and r.get("reason"):
                lines.append(f"    {r['reason'][:200]}")
            rt = r.get("reference_timing") or {}
            if wl not in ref_seen and rt.get("median_ms") and nbytes:
                ref_seen.add(wl)
                g = nbytes / (rt["median_ms"] * 1e-3) / 1e9
                lines.append(f"{tid:18s} {wl:20s} {'(reference, interleaved)':22s} {'':16s} {rt['median_ms']:9.4f} {'':7s} {'':7s} {g:7.0f} {g / peak_gbps:7.3f}")
            if r["role"] == "reference" and r.get("speedup_vs_reference"):
                floor.append((tid, wl, r["speedup_vs_reference"]))
    counts = defaultdict(int)
    for r in records:
        counts[r["status"]] += 1
    lines += ["", "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" ({len(records)} records)"]
    if floor:
        worst = max(floor, key=lambda f: abs(f[2] - 1))
        lines.append(f"noise floor (reference vs itself): {len(floor)} workloads, worst {100 * (worst[2] - 1):+.2f} % on {worst[0]}/{worst[1]}")
    experts = [r for r in records if r["role"] == "expert" and (r.get("timing") or {}).get("median_ms")]
    for r in experts:
        task, bytes_moved = models.get(r["task"], (None, None))
        if task:
            p = {w.name: w.params for w in task.workload}[r["workload"]]
            frac = bytes_moved(p) / (r["timing"]["median_ms"] * 1e-3) / 1e9 / peak_gbps
            flag = "" if frac >= 0.80 else "   <-- below 0.80"
            lines.append(f"expert {r['task']}/{r['workload']}: {frac:.3f} of {peak_gbps:.0f} GB/s, "
                         f"{r.get('speedup_vs_reference') or 0:.2f}x the reference{flag}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--peak-gbps", type=float, default=4300.0, help="measured HBM copy bandwidth (H200: ~4300)")
    ap.add_argument("--tasks-root", type=Path, default=REPO / "tasks")
    args = ap.parse_args(argv)
    records = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    print("\n".join(summarise(records, args.peak_gbps, args.tasks_root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
