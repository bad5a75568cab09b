"""Random edits and truncations of corpus files never crash the analyzer."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from d2k_analyze.analysis import analyze_paths

ROOT = Path(__file__).resolve().parents[2]
CORPUS_FILES = sorted(p for base in ("corpus", "tasks") for p in (ROOT / base).rglob("*") if p.suffix in (".py", ".cu", ".cuh") and p.is_file())
CORPUS_FILES = [p for p in CORPUS_FILES if p.name != "reference.py"] or [Path(__file__)]


@st.composite
def mutated(draw):
    """(file name, mutated bytes): line deletions/duplications, a cut, random bytes."""
    path = draw(st.sampled_from(CORPUS_FILES))
    data = path.read_bytes()
    lines = data.split(b"\n")
    for _ in range(draw(st.integers(0, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    data = b"\n".join(lines)
    if draw(st.booleans()) and data:
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    return path.name, data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_sources_never_crash(catalogue, sample):
    name, data = sample
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "corpus" / "softmax" / "fuzz"
        sub.mkdir(parents=True)
        (sub / name).write_bytes(data)
        results = analyze_paths([Path(tmp)], catalogue=catalogue)
    assert results
    for result in results:
        for unit in result.units:
            applicable = {p.id for p in catalogue if p.applies_to(unit.unit.language)}
            assert set(unit.findings) == applicable
            errors = [f"{unit.unit.name}/{f.property}: {f.reason}" for f in unit.findings.values() if f.error]
            assert not errors, errors  # a crash in the fact layer or a detector, recorded with its kind
