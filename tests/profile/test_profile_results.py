"""The JSON Lines store: append, torn-tail repair, resume without loss or duplication."""

import pytest

from d2k_profile.results import Record, ResultStore, Status, Timing, load_dataframe, load_records, read_lines
from d2k_profile.summary import summarize


def rec(workload, status=Status.OK, **kw):
    return Record(task="t", submission="sub", path="/x/sub", role="submission", workload=workload, mode="eager", source_hash="h1", status=status, **kw)


def test_append_and_resume(tmp_path):
    path = tmp_path / "results.jsonl"
    store = ResultStore(path, resume=False)
    store.append(rec("w1", timing=Timing(1.0, 0.1, 0.9, 1.0, 0.01, 3, [1.0, 0.9, 1.1])))
    store.append(rec("w2"))
    with open(path, "ab") as fh:  # a SIGKILL in the middle of a write
        fh.write(b'{"task": "t", "submis')
    with pytest.raises(FileExistsError):
        ResultStore(path, resume=False)
    resumed = ResultStore(path, resume=True)
    assert resumed.done == {rec("w1").key, rec("w2").key}
    resumed.append(rec("w3"))
    lines = read_lines(path)
    assert [d["workload"] for d in lines] == ["w1", "w2", "w3"]
    assert path.read_text().count("\n") == 3
    records = load_records(path)
    assert records[0].timing.samples_ms == [1.0, 0.9, 1.1]
    df = load_dataframe(path)
    assert list(df["workload"]) == ["w1", "w2", "w3"] and "timing.median_ms" in df.columns


def test_key_changes_with_source():
    a, b = rec("w1"), rec("w1")
    b.source_hash = "h2"
    assert a.key != b.key


def test_summary_geomean_and_score():
    rows = summarize([
        rec("w1", speedup_vs_reference=2.0, speedup_vs_expert=1.0),
        rec("w2", speedup_vs_reference=0.5, speedup_vs_expert=0.9),
    ])
    (row,) = rows
    assert row.correct and row.speedup_vs_reference == pytest.approx(1.0)
    assert row.speed_vs_expert == pytest.approx(0.9**0.5)
    assert row.performance_score == 1 + 0 + 0  # speedup exactly 1 is not > 1; 0.949 < 0.95
    bad = summarize([rec("w1", speedup_vs_reference=3.0), rec("w2", Status.INCORRECT, reason="x")])[0]
    assert not bad.correct and bad.performance_score == 0 and bad.speedup_vs_reference is None


def test_record_json_keeps_identity_first_and_loads_older_lines(tmp_path):
    """The judge's Outcome and the record's identity are one schema; old lines (without the new
    fields) still load, and a line's first keys are still its identity."""
    import json

    line = rec("w1", error_kind="check", clean_reference_ms=0.5).to_json()
    data = json.loads(line)
    assert list(data)[:7] == ["task", "submission", "path", "role", "workload", "mode", "source_hash"]
    assert data["error_kind"] == "check" and data["clean_reference_ms"] == 0.5
    old = {k: v for k, v in data.items() if k not in ("error_kind", "clean_reference_ms", "clean_expert_ms")}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n")
    (loaded,) = load_records(path)
    assert loaded.error_kind == "" and loaded.clean_reference_ms is None and loaded.status is Status.OK
