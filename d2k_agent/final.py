"""The final record of a (run, task): the only thing that makes a task count as finished.

``<task>/final.json`` is written atomically after the submission was exported and evaluated. It
carries a digest over its own content and the digest of every exported file; :func:`validate`
recomputes both, so a half-written record, an edited record or a submission changed after the
fact does not count as finished.
"""

from __future__ import annotations

import hashlib
import json
import time

from .layout import TaskDir, atomic_write
from .workspace import sha256_file

SCHEMA = "d2k-agent/final/1"


def _digest(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def write(td: TaskDir, record: dict) -> dict:
    record = {**record, "schema": SCHEMA, "written_at": time.time()}
    record["digest"] = _digest(record)
    atomic_write(td.final, json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")
    return record


def load(td: TaskDir) -> dict | None:
    try:
        return json.loads(td.final.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def validate(td: TaskDir) -> tuple[dict | None, str]:
    """(record, '') when the task is finished, else (record or None, why not)."""
    rec = load(td)
    if rec is None:
        return None, "no final record" if not td.final.exists() else "final record unreadable"
    if rec.get("schema") != SCHEMA:
        return rec, f"final record has schema {rec.get('schema')!r}, expected {SCHEMA!r}"
    if rec.get("digest") != _digest(rec):
        return rec, "final record digest does not match its content"
    for rel, sha in (rec.get("files") or {}).items():
        p = td.root / rel
        if not p.is_file() or sha256_file(p) != sha:
            return rec, f"exported file {rel} is missing or changed since the final record"
    return rec, ""


def update_evaluation(td: TaskDir, evaluation: dict) -> dict:
    """Replace the evaluation part of a valid record (``d2k-agent evaluate``) and re-sign it."""
    rec, why = validate(td)
    if why:
        raise ValueError(f"{td.root}: {why}")
    rec = {**rec, "evaluation": {**rec.get("evaluation", {}), **evaluation}}
    return write(td, {k: v for k, v in rec.items() if k not in ("digest", "schema", "written_at")})
