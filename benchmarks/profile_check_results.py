"""Checks on results files for benchmarks/profile_h200.sh.

  resume BEFORE.jsonl AFTER.jsonl   every record of the killed run is in the resumed file,
                                    byte-identical, and no key appears twice
  adversarial RESULTS.jsonl         each adversarial case against the ``gpu`` column of
                                    tests/adversarial/expected.toml (table; exit 1 on a mismatch)
  noise RESULTS.jsonl               reference-self speedups (noise floor) per workload, hold, notes
  devices RESULTS.jsonl...          the device label of the records, per file
  kernels RESULTS.jsonl             event medians against CUPTI kernel times (the kernel trace)
                                    for every timed implementation of every ok record: raw, after
                                    the recorded launch latency, and for the same traced calls
  compare A.jsonl B.jsonl           event medians of the same (task, workload, implementation)
                                    in two runs: ratio B/A per pair
  walltime RESULTS.jsonl            records, statuses, summed per-record wall time, first to last
  statuses RESULTS.jsonl            one line per record: submission, workload, status, speedup, reason
  clean RESULTS.jsonl               reference (and expert) median inside each sandbox against the
                                    clean-process median of the same judge: ratio per record
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path


def lines(path: str) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line.strip()]


def resume(before: str, after: str) -> int:
    b, a = lines(before), lines(after)
    complete_b = []
    for line in b:
        try:
            json.loads(line)
            complete_b.append(line)
        except json.JSONDecodeError:
            pass
    keys = [json.loads(line)["key"] for line in a]
    lost = [line for line in complete_b if line not in a]
    dups = len(keys) - len(set(keys))
    print(f"records before kill: {len(complete_b)} (torn lines: {len(b) - len(complete_b)}); after resume: {len(a)}; lost: {len(lost)}; duplicated keys: {dups}")
    return 0 if not lost and not dups else 1


def adversarial(results: str) -> int:
    expected = tomllib.loads((Path(__file__).resolve().parents[1] / "tests/adversarial/expected.toml").read_text())
    got: dict[str, list[dict]] = {}
    for line in lines(results):
        d = json.loads(line)
        got.setdefault(d["submission"], []).append(d)
    bad = 0
    print(f"{'case':24s} {'expected':16s} {'got':30s} reason")
    for name, exp in expected.items():
        recs = got.get(name, [])
        statuses = sorted({r["status"] for r in recs})
        ok = statuses == [exp["gpu"]]
        bad += not ok
        reason = (recs[0].get("reason") or "").strip().splitlines()[-1][:90 if ok else 400] if recs and recs[0].get("reason") else ""
        print(f"{name:24s} {exp['gpu']:16s} {','.join(statuses) or 'missing':30s} {'' if ok else 'MISMATCH '}{reason}")
    print(f"{len(expected) - bad}/{len(expected)} cases got their expected status")
    return 1 if bad else 0


def noise(results: str, target: float = 0.005) -> int:
    """Reference against itself per workload (target: within ``target`` of 1), with the stream hold
    and the record's notes (a host-bound note means the hold was too short for some calls)."""
    print(f"{'task/workload':40s} {'ref ms':>9s} {'self ms':>9s} {'ratio':>7s} {'hold us':>8s}  notes")
    worst = 0.0
    for line in lines(results):
        d = json.loads(line)
        if d["role"] == "reference" and d.get("timing"):
            r = d["speedup_vs_reference"]
            worst = max(worst, abs(r - 1))
            print(f"{d['task'] + '/' + d['workload']:40s} {d['reference_timing']['median_ms']:9.4f} {d['timing']['median_ms']:9.4f} {r:7.4f} "
                  f"{d.get('hold_us') or 0:8.0f}  {' | '.join(n[:120] for n in d.get('notes') or [])}")
    print(f"noise floor: worst |ratio - 1| = {worst * 100:.2f} % (target {float(target) * 100:.1f} %): {'PASS' if worst <= float(target) else 'FAIL'}")
    return 0


def devices(*results: str) -> int:
    """The device label of every record, per file (a GPU run's records must name the GPU)."""
    for path in results:
        count: dict[str, int] = {}
        for line in lines(path):
            dev = json.loads(line).get("device", "?")
            count[dev] = count.get(dev, 0) + 1
        print(f"devices in {Path(path).parent.name}/{Path(path).name}: {count}")
    return 0


def timed(record: dict) -> list[tuple[str, dict]]:
    """(implementation, timing) for each implementation timed in an ok record."""
    if record["status"] != "ok":
        return []
    fields = (("timing", record["submission"]), ("reference_timing", "reference"), ("expert_timing", "expert"))
    return [(who, record[f]) for f, who in fields if record.get(f)]


def kernels(results: str, target: float = 0.03) -> int:
    """Three comparisons per timed implementation, by kernel duration: the timed-loop event median
    against the CUPTI kernel time (raw), the same after subtracting the launch latency, and, for
    the very same traced calls, event minus launch latency against kernel time (the measurement
    model: events = kernel time + a fixed launch latency)."""
    rows = []
    for line in lines(results):
        d = json.loads(line)
        if d.get("launch_latency_ms") is None:
            continue
        for who, t in timed(d):
            if t.get("kernel_ms"):
                rows.append((f"{d['task']}/{d['workload']}", who, t["median_ms"], t["kernel_ms"], t["traced_event_ms"], d["launch_latency_ms"]))
    if not rows:
        print("no record has kernel times")
        return 1

    def ratios(ev: float, k: float, tev: float, lat: float) -> tuple[float, float, float]:
        return ev / k, (ev - lat) / k, (tev - lat) / k

    print(f"{'task/workload':38s} {'impl':16s} {'events ms':>10s} {'kernels ms':>10s} {'raw':>6s} {'latency us':>10s} {'-lat':>6s} {'same calls -lat':>15s}")
    for wl, who, ev, k, tev, lat in sorted(rows):
        raw, corr, same = ratios(ev, k, tev, lat)
        print(f"{wl:38s} {who[:16]:16s} {ev:10.4f} {k:10.4f} {raw:6.3f} {lat * 1e3:10.2f} {corr:6.3f} {same:15.3f}")
    print(f"\nwithin {target:.0%} of the CUPTI kernel time, by kernel duration:")
    print(f"{'kernel time':>14s} {'n':>4s} {'events':>14s} {'events - lat':>14s} {'same calls - lat':>17s}")
    for lo, hi in ((0, 30), (30, 50), (50, 100), (100, float("inf"))):
        b = [ratios(ev, k, tev, lat) for _, _, ev, k, tev, lat in rows if lo <= k * 1e3 < hi]
        if b:
            cells = [f"{sum(abs(x[i] - 1) <= target for x in b)} (worst {max(abs(x[i] - 1) for x in b):.1%})" for i in range(3)]
            print(f"{f'{lo}-{hi} us':>14s} {len(b):4d} {cells[0]:>14s} {cells[1]:>14s} {cells[2]:>17s}")
    lat = sorted(r[5] * 1e3 for r in rows)
    allr = [ratios(*r[2:]) for r in rows]
    print(f"{len(rows)} timed implementations; launch latency {lat[0]:.2f}-{lat[-1]:.2f} us (median {lat[len(lat) // 2]:.2f}); within {target:.0%}: "
          f"{sum(abs(x[0] - 1) <= target for x in allr)} raw, {sum(abs(x[2] - 1) <= target for x in allr)} same calls after the launch latency")
    return 0


def _medians(path: str) -> dict[tuple[str, str, str], float]:
    out = {}
    for line in lines(path):
        d = json.loads(line)
        for who, t in timed(d):
            out[(d["task"], d["workload"], f"{d['submission']}:{who}")] = t["median_ms"]
    return out


def compare(a: str, b: str) -> int:
    ma, mb = _medians(a), _medians(b)
    common = sorted(set(ma) & set(mb))
    print(f"{'task/workload':38s} {'record:impl':28s} {'A ms':>9s} {'B ms':>9s} {'B/A':>7s}")
    ratios = []
    for key in common:
        ratios.append(mb[key] / ma[key])
        print(f"{key[0] + '/' + key[1]:38s} {key[2][:28]:28s} {ma[key]:9.4f} {mb[key]:9.4f} {ratios[-1]:7.4f}")
    if not ratios:
        print("no common timed pairs")
        return 1
    ratios.sort()
    print(f"{len(ratios)} pairs: B/A median {ratios[len(ratios) // 2]:.4f}, range {ratios[0]:.4f}-{ratios[-1]:.4f}")
    return 0


def walltime(results: str) -> int:
    recs = [json.loads(line) for line in lines(results)]
    statuses: dict[str, int] = {}
    for d in recs:
        statuses[d["status"]] = statuses.get(d["status"], 0) + 1
    done = [d["finished_at"] for d in recs]
    print(f"{len(recs)} records {statuses}; summed per-record wall {sum(d.get('wall_s') or 0 for d in recs):.0f} s; "
          f"first to last record {max(done) - min(done):.0f} s")
    return 0


def statuses(results: str) -> int:
    for line in lines(results):
        d = json.loads(line)
        sp = d.get("speedup_vs_reference")
        reason = (d.get("reason") or "").strip().splitlines()[-1][:110] if d.get("reason") else ""
        print(f"{d['submission']:24s} {d['workload']:18s} {d['status']:16s} {'-' if sp is None else f'{sp:8.3f}x'} {reason}")
    return 0


def clean(results: str) -> int:
    """How far the reference (and expert) timed inside a sandbox sit from their clean-process time."""
    ratios = []
    print(f"{'record':50s} {'impl':9s} {'sandbox ms':>10s} {'clean ms':>10s} {'ratio':>7s}")
    for line in lines(results):
        d = json.loads(line)
        for impl, field, clean_field in (("reference", "reference_timing", "clean_reference_ms"), ("expert", "expert_timing", "clean_expert_ms")):
            t, c = d.get(field), d.get(clean_field)
            if t and c:
                ratios.append(t["median_ms"] / c)
                print(f"{d['task'] + '/' + d['workload'] + '/' + d['submission']:50s} {impl:9s} {t['median_ms']:10.4f} {c:10.4f} {ratios[-1]:7.4f}")
    if not ratios:
        print("no record has clean timings")
        return 1
    ratios.sort()
    print(f"{len(ratios)} pairs: sandbox/clean median {ratios[len(ratios) // 2]:.4f}, range {ratios[0]:.4f}-{ratios[-1]:.4f}")
    return 0


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    sys.exit({"resume": resume, "adversarial": adversarial, "noise": noise, "kernels": kernels, "compare": compare, "walltime": walltime,
              "statuses": statuses, "clean": clean, "devices": devices}[cmd](*args))
