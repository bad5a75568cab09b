"""docs/h200-results.md says the records' roofline fractions use the data-sheet peaks of
d2k_profile/metrics.py, not measured ceilings: checked against the shipped H200 pilot records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from d2k_profile.metrics import peaks_for

ROOT = Path(__file__).resolve().parents[1]


def test_memory_bound_fractions_are_of_the_data_sheet_bandwidth():
    h200 = peaks_for("NVIDIA H200")
    records = [json.loads(line) for line in (ROOT / "examples" / "h200" / "pilot_results.jsonl").read_text().splitlines()]
    softmax = [r for r in records if r["task"] == "softmax" and r["status"] == "ok"]
    assert softmax
    for r in softmax:  # memory-bound: the floor is bytes / peak bandwidth
        assert r["roofline_fraction"] == pytest.approx(r["gbps"] / h200.bandwidth_gbps, rel=1e-6)
        assert r["roofline_fraction"] == pytest.approx(r["roofline_floor_ms"] / r["timing"]["median_ms"], rel=1e-6)
    assert h200.bandwidth_gbps == 4800.0
    doc = (ROOT / "docs" / "h200-results.md").read_text()
    assert "data-sheet peaks" in doc and "4.8 TB/s" in doc
