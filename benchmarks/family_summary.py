"""Summarise a d2k-profile run of a task family: achieved bandwidth and throughput per workload.

    python3 benchmarks/family_summary.py RESULTS.jsonl [--peak-gbps 4300] [--peak-tflops bf16=790,fp8=1411]

For every record (task x submission x workload) it prints the status, the median time, the
speedups against the reference and the expert, the achieved bandwidth from the task's own
minimum-traffic model (``reference.py: bytes_moved``) as GB/s and as a fraction of the H200's
measured copy bandwidth (~4.3 TB/s, ``--peak-gbps``), and the achieved TFLOP/s from
``reference.py: flops`` as a fraction of the measured dense tensor-core peak of the task's
operand type (``--peak-tflops``: bf16/fp16 ~790, fp8 e4m3 ~1411 on the H200, measured by
``benchmarks/gemm_peaks.py``). The roofline fraction is the larger of the two: the resource a
kernel is bound by is the one it uses the larger share of. The reference's figures on the same
workload come from the record's interleaved reference timing. Self-check rows
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


def _models(task_ids, tasks_root: Path):
    """task id -> (task, bytes_moved, flops) from each task's reference.py."""
    from d2k_spec.inputs_check import load_reference
    from d2k_spec.task import load_tasks

    tasks = load_tasks(tasks_root)
    models = {}
    for tid in task_ids:
        if tid in tasks:
            ref = load_reference(tasks[tid])
            models[tid] = (tasks[tid], ref.bytes_moved, ref.flops)
    return models


def _operand_kind(task, params: dict) -> str:
    """The tensor-core peak a task's FLOPs are measured against: fp8 when an input is 8-bit
    float, else bf16/fp16 (one peak on Hopper); a dtype given by a parameter is looked up."""
    names = [str(params.get(t.dtype, t.dtype)) for t in task.interface.inputs]
    return "fp8" if any(n.startswith("float8") for n in names) else "bf16"


def parse_peaks(text: str) -> dict[str, float]:
    """``bf16=790,fp8=1411`` -> {"bf16": 790.0, "fp8": 1411.0}."""
    return {k.strip(): float(v) for k, v in (item.split("=") for item in text.split(",") if item.strip())}


class Roofline:
    """Achieved GB/s and TFLOP/s of one (task, workload) at a given time, and their fractions."""

    def __init__(self, model, params: dict, peak_gbps: float, peak_tflops: dict[str, float]):
        task, bytes_moved, flops = model
        self.nbytes = bytes_moved(params)
        self.nflops = flops(params)
        self.peak_gbps = peak_gbps
        self.kind = _operand_kind(task, params)
        self.peak_tflops = peak_tflops.get(self.kind)

    def at(self, ms: float | None) -> tuple[float | None, float | None, float | None, float | None]:
        """(GB/s, fraction of peak GB/s, TFLOP/s, fraction of the operand type's peak TFLOP/s)."""
        if not ms:
            return None, None, None, None
        gbps = self.nbytes / (ms * 1e-3) / 1e9 if self.nbytes else None
        tflops = self.nflops / (ms * 1e-3) / 1e12 if self.nflops else None
        tfrac = tflops / self.peak_tflops if tflops and self.peak_tflops else None
        return gbps, (gbps / self.peak_gbps if gbps else None), tflops, tfrac


def _fmt(v, spec):
    width = int(spec.split(".")[0] or 0)
    return "-".rjust(width) if v is None else format(v, spec)


PEAK_TFLOPS = "bf16=790,fp8=1411"


def summarise(records: list[dict], peak_gbps: float, tasks_root: Path, peak_tflops: dict[str, float] | None = None) -> list[str]:
    peaks = parse_peaks(PEAK_TFLOPS) if peak_tflops is None else peak_tflops
    models = _models({r["task"] for r in records}, tasks_root)

    def roof(tid: str, wl: str) -> Roofline | None:
        if tid not in models:
            return None
        params = {w.name: w.params for w in models[tid][0].workload}
        return Roofline(models[tid], params[wl], peak_gbps, peaks) if wl in params else None

    lines = []
    head = (f"{'task':20s} {'workload':28s} {'submission':22s} {'status':16s} {'ms':>9s} {'x ref':>7s} {'x exp':>7s} "
            f"{'GB/s':>7s} {'of peak':>7s} {'TFLOP/s':>8s} {'of peak':>7s}")
    by_task = defaultdict(list)
    for r in records:
        by_task[r["task"]].append(r)
    floor = []

    def row(tid, wl, name, status, ms, xref, xexp, rl):
        gbps, gfrac, tflops, tfrac = rl.at(ms) if rl else (None,) * 4
        return (f"{tid:20s} {wl:28s} {name[:22]:22s} {status[:16]:16s} {_fmt(ms, '9.4f')} {_fmt(xref, '7.2f')} "
                f"{_fmt(xexp, '7.2f')} {_fmt(gbps, '7.0f')} {_fmt(gfrac, '7.3f')} {_fmt(tflops, '8.1f')} {_fmt(tfrac, '7.3f')}")

    for tid in sorted(by_task):
        lines += ["", head, "-" * len(head)]
        ref_seen = set()
        for r in sorted(by_task[tid], key=lambda r: (r["workload"], r["role"] != "expert", r["submission"])):
            wl, t = r["workload"], r.get("timing") or {}
            rl = roof(tid, wl)
            lines.append(row(tid, wl, r["submission"], r["status"], t.get("median_ms"),
                             r.get("speedup_vs_reference"), r.get("speedup_vs_expert"), rl))
            if r["status"] != "ok" and r.get("reason"):
                lines.append(f"    {r['reason'][:200]}")
            rt = r.get("reference_timing") or {}
            if wl not in ref_seen and rt.get("median_ms") and rl:
                ref_seen.add(wl)
                lines.append(row(tid, wl, "(reference)", "interleaved", rt["median_ms"], None, None, rl))
            if r["role"] == "reference" and r.get("speedup_vs_reference"):
                floor.append((tid, wl, r["speedup_vs_reference"]))
    counts = defaultdict(int)
    for r in records:
        counts[r["status"]] += 1
    lines += ["", "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" ({len(records)} records)"]
    if floor:
        worst = max(floor, key=lambda f: abs(f[2] - 1))
        lines.append(f"noise floor (reference vs itself): {len(floor)} workloads, worst {100 * (worst[2] - 1):+.2f} % on {worst[0]}/{worst[1]}")
    for r in (r for r in records if r["role"] == "expert" and (r.get("timing") or {}).get("median_ms")):
        rl = roof(r["task"], r["workload"])
        if rl is None:
            continue
        gbps, gfrac, tflops, tfrac = rl.at(r["timing"]["median_ms"])
        bound = max(gfrac or 0.0, tfrac or 0.0)
        flag = "" if bound >= 0.80 else "   <-- below 0.80"
        compute = f", {tflops:.1f} TFLOP/s = {tfrac:.3f} of {rl.peak_tflops:.0f} ({rl.kind})" if tfrac is not None else ""
        lines.append(f"expert {r['task']}/{r['workload']}: {gfrac:.3f} of {peak_gbps:.0f} GB/s{compute}, "
                     f"roofline {bound:.3f}, {r.get('speedup_vs_reference') or 0:.2f}x the reference{flag}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--peak-gbps", type=float, default=4300.0, help="measured HBM copy bandwidth (H200: ~4300)")
    ap.add_argument("--peak-tflops", default=PEAK_TFLOPS,
                    help=f"measured dense tensor-core TFLOP/s per operand type (H200: {PEAK_TFLOPS})")
    ap.add_argument("--tasks-root", type=Path, default=REPO / "tasks")
    args = ap.parse_args(argv)
    records = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    print("\n".join(summarise(records, args.peak_gbps, args.tasks_root, parse_peaks(args.peak_tflops))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
