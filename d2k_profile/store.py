"""The content-addressed result store: one file per work unit, written atomically.

``<store>/<key[:2]>/<key>.json`` holds the unit's fields and its outcome. A file is written to a
temporary name in the same folder, flushed to disk and renamed over the final name, so a reader
(a resumed run, another node sharing the folder) sees either no file or a whole one; a run killed
mid-write leaves at most a stray ``*.tmp``, which is ignored. A file counts only when it
validates: it parses, its unit equals the unit asked for (so a file copied under the wrong name
or edited by hand is not trusted) and its outcome decodes into the record schema.

The run's ``results.jsonl`` (:mod:`.results`) stays what users read; the store is what resume and
deduplication trust. A unit found in the store but missing from ``results.jsonl`` (a kill between
the two writes, or the same code in another folder) is written to ``results.jsonl`` from the
store without running it again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from .results import Outcome, Status, timing_from_dict
from .units import WorkUnit

TIMINGS = ("timing", "reference_timing", "expert_timing")


def _outcome_to_dict(outcome: Outcome) -> dict:
    data = asdict(outcome)
    data["status"] = outcome.status.value
    return data


def _outcome_from_dict(data: dict) -> Outcome:
    data = dict(data)
    data["status"] = Status(data["status"])
    for name in TIMINGS:
        data[name] = timing_from_dict(data.get(name))
    return Outcome(**data)  # an unknown key is a TypeError: the file does not validate


class UnitStore:
    """Outcomes of finished work units, by unit key."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, unit: WorkUnit) -> Outcome | None:
        """The unit's stored outcome, or None when there is none or it does not validate."""
        try:
            data = json.loads(self.path(unit.key).read_text())
            if data.get("unit") != asdict(unit):
                return None
            return _outcome_from_dict(data["outcome"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, unit: WorkUnit, outcome: Outcome) -> Path:
        """Write the unit's outcome atomically (temporary file, fsync, rename, fsync of the folder)."""
        final = self.path(unit.key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")
        body = json.dumps({"unit": asdict(unit), "outcome": _outcome_to_dict(outcome)}, allow_nan=True, default=str)
        with open(tmp, "w") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        fd = os.open(final.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return final
