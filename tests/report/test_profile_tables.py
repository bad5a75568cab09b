"""d2k-profile's nested JSON Lines as flat pandas tables (d2k_report.load_profile)."""

from __future__ import annotations

import json
from pathlib import Path

from d2k_report import load_profile

ROOT = Path(__file__).resolve().parents[2]
RECORD = {
    "task": "softmax", "submission": "mine", "path": "/r/softmax", "workload": "w1", "mode": "eager", "source_hash": "h",
    "status": "ok", "weak_workload": ["zeros", "constant"], "notes": ["timing needs a GPU", "second note"],
    "timing": {"median_ms": 2.0, "samples_ms": [2.0, 2.1, 1.9], "kernel_names": ["k1", "k2"]},
    "reference_timing": {"median_ms": 4.0, "samples_ms": [4.0, 4.2]}, "expert_timing": None,
    "speedup_ci95": [1.8, 2.2], "clocks": {"before": {"clocks.sm": "1980", "clocks_throttle_reasons.active": "0x0"}, "after": {}},
    "key": "softmax|/r/softmax|w1|eager|h",
}


def test_nested_fields_become_columns_and_samples_a_long_table(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(RECORD) + "\n" + '{"task": "torn')  # a torn last line is skipped
    t = load_profile(path)
    [row] = t.records.to_dict("records")
    assert row["weak_workload"] == "zeros; constant" and row["notes"] == "timing needs a GPU; second note"
    assert row["timing_median_ms"] == 2.0 and row["timing_kernel_names"] == "k1; k2" and row["reference_timing_median_ms"] == 4.0
    assert (row["speedup_ci95_lo"], row["speedup_ci95_hi"]) == (1.8, 2.2)
    assert row["clocks_before_sm"] == "1980" and row["clocks_before_throttle_reasons_active"] == "0x0"
    assert not any(isinstance(v, (list, dict)) for v in row.values())
    assert "expert_timing" not in row and "timing_samples_ms" not in row
    assert t.samples.groupby("implementation")["ms"].apply(list).to_dict() == {"reference": [4.0, 4.2], "submission": [2.0, 2.1, 1.9]}
    assert set(t.samples["key"]) == {RECORD["key"]} and list(t.samples["call"][:3]) == [0, 1, 2]


def test_the_shipped_h200_pilot_run_loads():
    t = load_profile(ROOT / "examples" / "h200" / "pilot_results.jsonl")
    assert len(t.records) == 92 and (t.records["status"] == "ok").all()
    assert t.records["timing_median_ms"].notna().all() and len(t.samples) > 1000
