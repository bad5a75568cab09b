"""d2k-profile's JSON Lines as tidy pandas tables: ``d2k_report.load_profile("prof/results.jsonl")``.

A profile record nests what one (submission, workload) measured: three timing summaries with their
raw samples, the GPU clocks before and after, lists of notes and of the null kernels that passed.
``pandas.read_json`` leaves those as Python objects in cells. This loader flattens them into one
row of scalars per record, and moves the raw samples to a long table of their own
(``docs/results.md`` lists every column):

* nested dicts become prefixed columns: ``timing.median_ms`` -> ``timing_median_ms``,
  ``clocks.before.clocks.sm`` -> ``clocks_before_sm`` (the ``clocks`` of nvidia-smi's field
  names dropped: ``clocks_before_throttle_reasons_active``);
* ``speedup_ci95`` becomes ``speedup_ci95_lo`` / ``speedup_ci95_hi``;
* other lists (``notes``, ``weak_workload``, ``kernel_names``) become one string joined by ``"; "``
  (empty: no entry);
* every ``samples_ms`` list goes to ``samples``: one row per timed call (``key``, ``implementation``
  = submission | reference | expert, ``call``, ``ms``).

It reads the JSON itself (no d2k_profile import), so it loads any version's records; unknown fields
are flattened by the same rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIMINGS = {"timing": "submission", "reference_timing": "reference", "expert_timing": "expert"}
LIST_SEPARATOR = "; "


@dataclass(frozen=True)
class ProfileTables:
    records: Any  # pandas.DataFrame, one row per (submission, workload) record
    samples: Any  # pandas.DataFrame, one row per timed call


NESTED = {*TIMINGS, "clocks"}  # dicts when present; None (no such timing) adds no column


def _name(prefix: str, key: str) -> str:
    if prefix.startswith("clocks"):
        key = key.removeprefix("clocks.").removeprefix("clocks_")
    return f"{prefix}_{key}".replace(".", "_") if prefix else key.replace(".", "_")


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """One record as flat scalar columns (samples excluded; see :func:`samples`)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = _name(prefix, key)
        if key == "samples_ms" or (value is None and key in NESTED and not prefix):
            continue
        if isinstance(value, dict):
            out.update(flatten(value, name))
        elif key == "speedup_ci95":
            lo, hi = (value or [None, None])[:2] if isinstance(value, list) and len(value) >= 2 else (None, None)
            out[f"{name}_lo"], out[f"{name}_hi"] = lo, hi
        elif isinstance(value, list):
            out[name] = LIST_SEPARATOR.join(str(v) for v in value)
        else:
            out[name] = value
    return out


def samples(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The raw timed calls of a record, one row each."""
    key = record.get("key") or "|".join(str(record.get(k, "")) for k in ("task", "path", "workload", "mode", "source_hash"))
    rows = []
    for field, implementation in TIMINGS.items():
        timing = record.get(field) or {}
        for i, ms in enumerate(timing.get("samples_ms") or []):
            rows.append({"key": key, "task": record.get("task"), "submission": record.get("submission"),
                         "workload": record.get("workload"), "mode": record.get("mode"),
                         "implementation": implementation, "call": i, "ms": ms})
    return rows


def load_profile(path: str | Path) -> ProfileTables:
    """Read a d2k-profile ``results.jsonl`` into :class:`ProfileTables` (a torn last line, which a
    killed run can leave, is skipped)."""
    import pandas as pd

    records, calls = [], []
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            records.append(flatten(rec))
            calls += samples(rec)
    sample_cols = ["key", "task", "submission", "workload", "mode", "implementation", "call", "ms"]
    return ProfileTables(pd.DataFrame(records), pd.DataFrame(calls, columns=sample_cols))
