"""Every report format from one hand-built report; SARIF checked against the 2.1.0 required fields;
JSONL/CSV round-trip through ``load_results``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from d2k_analyze.eval_labels import Evaluation, Miss, PropertyScore
from d2k_analyze.model import Evidence, KernelUnit, PropertyFinding, Span, Status, SubmissionAnalysis, UnitAnalysis
from d2k_analyze.reports import FORMATS, Report, SubmissionResult, load_results
from d2k_analyze.reports.rows import COLUMNS, SCHEMAS, rows
from d2k_analyze.scoring import score_submission
from d2k_spec.catalogue import Catalogue, Property
from d2k_spec.task import Baseline, DesignItem, Interface, Task

CATALOGUE = Catalogue(1, [
    Property(p, lvl, p, "d", {"cuda": "high", "triton": "medium"}, [], "h")
    for p, lvl in [("online_softmax", "L1"), ("vectorized_access", "L3"), ("warp_shuffle_reduction", "L3")]
])


def _task() -> Task:
    items = [
        DesignItem("online_softmax", "L1", "Online softmax", "Keep a running max and a rescaled sum in one pass.", ["online_softmax"], "h", 2.0),
        DesignItem("vector_io", "L3", "128-bit loads", "Load 16 bytes per thread | with float4.", ["vectorized_access"], "h", 1.0),
        DesignItem("shuffles", "L3", "Warp shuffles", "Reduce with __shfl_xor_sync.", ["warp_shuffle_reduction"], "h", 1.0, ["online_softmax"]),
    ]
    t = Task("softmax", "Softmax", "norm", "s", Interface([], []), {}, Baseline("torch.softmax"), [], items)
    object.__setattr__(t, "path", Path("tasks/softmax"))
    return t


def _report(tmp_path: Path) -> Report:
    sub = tmp_path / "corpus" / "softmax" / "naive"
    sub.mkdir(parents=True)
    kfile = str(sub / "kernel.cu")
    live = KernelUnit("softmax_kernel", "cuda", kfile, Span(kfile, 10, 42), "src", launched=True)
    dead = KernelUnit("old_kernel", "cuda", kfile, Span(kfile, 50, 60), "src", launched=False)
    ev = Evidence(Span(kfile, 20, 24), "m = fmaxf(m, x)", "syntax", "high")
    scalar = tuple(Evidence(Span(kfile, n, n), "x[i]", "syntax", "high") for n in (30, 38, 31))
    findings = {
        "online_softmax": PropertyFinding("online_softmax", Status.PRESENT, "high", (ev,), "running max"),
        "vectorized_access": PropertyFinding("vectorized_access", Status.ABSENT, "high", scalar, "scalar loads"),
        "warp_shuffle_reduction": PropertyFinding("warp_shuffle_reduction", Status.ABSENT, "high", (), ""),
    }
    analysis = SubmissionAnalysis(str(sub), sub, "softmax", [UnitAnalysis(live, findings), UnitAnalysis(dead, dict(findings))],
                                  warnings=[f"{kfile}:3: odd macro"])
    task = _task()
    score = score_submission(analysis, task, CATALOGUE)
    no_task = SubmissionAnalysis("loose.cu", tmp_path / "loose.cu", None, [])
    evaluation = Evaluation(
        [PropertyScore("online_softmax", "L1", 3, 1, 0, 5)],
        [Miss(str(sub), "softmax_kernel", "kernel.cu", "online_softmax", 0, 1, (ev,), "running max")],
        folders=1, kernels=2,
    )
    return Report(
        [SubmissionResult(analysis, score, "compiled layer: skipped: nvcc not found"), SubmissionResult(no_task)],
        CATALOGUE, {"softmax": task}, evaluation,
    )


def test_rows_are_tidy_and_typed(tmp_path):
    table = rows(_report(tmp_path))
    for r in table:  # each row carries its own table's columns, nothing else
        assert list(r) == ["row_type", *SCHEMAS[r["row_type"]]]
    kinds = [r["row_type"] for r in table]
    assert kinds.count("submission") == 2 and kinds.count("item") == 3
    assert kinds.count("unit") == 2 and kinds.count("finding") == 6
    assert {"eval_property", "eval_miss"} <= set(kinds)
    sub = table[0]
    assert sub["score"] == pytest.approx(50.0) and sub["missing"] == "vector_io;shuffles"
    assert "item" not in sub and "property" not in sub
    vec = next(r for r in table if r["row_type"] == "item" and r["item"] == "vector_io")
    assert "scalar loads" in vec["why"] and "kernel.cu:30, 31, 38" in vec["why"] and vec["todo"] == "128-bit loads"


def test_jsonl_is_compact(tmp_path):
    """No column of another table on a line: far smaller than one wide table of nulls."""
    report = _report(tmp_path)
    lines = [json.loads(line) for line in FORMATS["jsonl"](report).splitlines()]
    assert all(set(d) == {"row_type", *SCHEMAS[d["row_type"]]} for d in lines)
    wide = sum(len(json.dumps({c: d.get(c) for c in COLUMNS})) for d in lines)
    assert len(FORMATS["jsonl"](report)) < 0.6 * wide


@pytest.mark.parametrize("fmt, suffix", [("jsonl", ".jsonl"), ("csv", ".csv")])
def test_load_results_named_tables(tmp_path, fmt, suffix):
    out = tmp_path / f"results{suffix}"
    out.write_text(FORMATS[fmt](_report(tmp_path)))
    t = load_results(out)
    assert t.names() == ["submissions", "items", "units", "findings", "judge", "discovery", "eval_properties",
                         "eval_layers", "eval_misses"]
    for name, frame in t:
        kind = {"submissions": "submission", "items": "item", "units": "unit", "findings": "finding", "judge": "judge",
                "discovery": "discovery", "eval_properties": "eval_property", "eval_layers": "eval_layer",
                "eval_misses": "eval_miss"}[name]
        assert list(frame.columns) == SCHEMAS[kind], name
    assert list(t.items["item"]) == ["online_softmax", "vector_io", "shuffles"]
    assert list(t.items["value"]) == [1.0, 0.0, 0.0]
    assert t.submissions["score"].iloc[0] == pytest.approx(50.0) and len(t.submissions) == 2
    assert bool(t.units["launched"].iloc[1]) is False
    assert len(t.findings) == 6 and set(t.findings["status"]) == {"present", "absent"}
    assert t.judge.empty and list(t.judge.columns) == SCHEMAS["judge"]
    assert len(t.eval_properties) == 1 and t["eval_misses"]["property"].tolist() == ["online_softmax"]
    pivot = t.items.pivot(index="submission", columns="item", values="value")
    assert pivot.shape == (1, 3)


def test_load_results_reads_files_from_before_the_tidy_tables(tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"row_type": "property", "submission": "s", "unit": "k", "property": "atomics",
                               "status": "absent", "item": None, "score": None}) + "\n")
    t = load_results(old)
    assert t.findings[["submission", "property", "status"]].values.tolist() == [["s", "atomics", "absent"]]


def test_terminal_markdown_html(tmp_path):
    report = _report(tmp_path)
    text = FORMATS["table"](report)
    assert "softmax_kernel" in text and "launched" in text and "dead" in text
    assert "implementation score: 50.0" in text and "compiled layer: skipped: nvcc not found" in text
    assert "1 kernel unit" not in text and "2 submissions, 2 kernel units" in text
    md = FORMATS["md"](report)
    assert "| vector_io | L3 | 1 | absent |" in md and "## " in md and "**Kernels**" in md
    html = FORMATS["html"](report)
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    assert not re.search(r"<script|<link|src=|href=|@import|url\(", html), "must be self-contained"
    assert '<td class="absent">absent</td>' in html
    # every evidence line, not just the first, and for a missing item: why (with lines) and what to do
    why = re.compile(r"vector_io \(absent\): vectorized_access in softmax_kernel: scalar loads \(\S*corpus/softmax/naive/"
                     r"kernel.cu:30, 31, 38\). To do: 128-bit loads")
    for out in (text.replace("\n", " "), md, html):
        assert "kernel.cu:30, 31, 38" in out
        assert "Missing design items: why, and what to do" in out
    assert why.search(md) and why.search(html)
    assert "shuffles (absent): warp_shuffle_reduction in softmax_kernel: not found. To do: Warp shuffles" in md


def test_sarif_structure(tmp_path):
    doc = json.loads(FORMATS["sarif"](_report(tmp_path)))
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    assert isinstance(doc["runs"], list) and doc["runs"]
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "d2k-analyze"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert rule_ids == ["online_softmax", "vector_io", "shuffles"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["vector_io", "shuffles"]  # one per missing item
    for r in results:
        assert r["ruleId"] in rule_ids and driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("none", "note", "warning", "error")
        assert "text" in r["message"] and r["message"]["text"]
        (loc,) = r["locations"]
        phys = loc["physicalLocation"]
        assert phys["artifactLocation"]["uri"].endswith("corpus/softmax/naive/kernel.cu")
    vec, shuffles = results
    region = lambda loc: (loc["physicalLocation"]["region"]["startLine"], loc["physicalLocation"]["region"]["endLine"])  # noqa: E731
    # the line that matters: the first scalar access the detector points at, the others related
    assert region(vec["locations"][0]) == (30, 30)
    assert [region(x) for x in vec["relatedLocations"]] == [(38, 38), (31, 31), (10, 10)]
    assert "scalar loads" in vec["message"]["text"] and "To do: 128-bit loads" in vec["message"]["text"]
    assert vec["properties"]["why"].startswith("vectorized_access in softmax_kernel: scalar loads")
    # no line to point at: the kernel's first line, not its whole body
    assert region(shuffles["locations"][0]) == (10, 10)
    assert "Load 16 bytes per thread" in driver["rules"][1]["help"]["text"]  # the item's full guidance


def test_sarif_without_tasks_is_still_valid(tmp_path):
    report = _report(tmp_path)
    report.results = report.results[1:]
    doc = json.loads(FORMATS["sarif"](report))
    assert doc["version"] == "2.1.0" and doc["runs"][0]["tool"]["driver"]["name"] == "d2k-analyze"
    assert doc["runs"][0]["results"] == []
