"""Checks on results files for benchmarks/profile_h200.sh.

  resume BEFORE.jsonl AFTER.jsonl   every record of the killed run is in the resumed file,
                                    byte-identical, and no key appears twice
  adversarial RESULTS.jsonl         each adversarial case against the ``gpu`` column of
                                    tests/adversarial/expected.toml (table; exit 1 on a mismatch)
  noise RESULTS.jsonl               reference-self speedups (noise floor) per workload
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
        reason = (recs[0].get("reason") or "").strip().splitlines()[-1][:90] if recs and recs[0].get("reason") else ""
        print(f"{name:24s} {exp['gpu']:16s} {','.join(statuses) or 'missing':30s} {'' if ok else 'MISMATCH '}{reason}")
    print(f"{len(expected) - bad}/{len(expected)} cases got their expected status")
    return 1 if bad else 0


def noise(results: str) -> int:
    print(f"{'task/workload':40s} {'ref ms':>9s} {'self ms':>9s} {'ratio':>7s}")
    for line in lines(results):
        d = json.loads(line)
        if d["role"] == "reference" and d.get("timing"):
            print(f"{d['task'] + '/' + d['workload']:40s} {d['reference_timing']['median_ms']:9.4f} {d['timing']['median_ms']:9.4f} {d['speedup_vs_reference']:7.4f}")
    return 0


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    sys.exit({"resume": resume, "adversarial": adversarial, "noise": noise}[cmd](*args))
