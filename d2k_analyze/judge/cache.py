"""A SQLite cache of judge answers, keyed by the request hash (:func:`.prompt.request_key`).

Only validated answers are stored (never errors), with the tokens and cost of the request that
produced them, so a cached record still shows what it originally cost. Default location:
``$XDG_CACHE_HOME/d2k-bench/judge.sqlite`` (``~/.cache`` without the variable). Safe to share
between the judge's worker threads (one lock, short transactions).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    answer TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL,
    created REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "d2k-bench" / "judge.sqlite"


class CacheError(Exception):
    """The cache file cannot be opened (fatal only for ``--judge replay``)."""


class JudgeCache:
    def __init__(self, path: Path, create: bool = True):
        self.path = Path(path)
        self._lock = threading.Lock()
        if not create and not self.path.is_file():
            raise CacheError(f"no judge cache at {self.path}")
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute(SCHEMA)
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot open the judge cache {self.path}: {exc}") from None

    def get(self, key: str) -> dict | None:
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT answer, input_tokens, output_tokens, cost_usd FROM answers WHERE key = ?", (key,)
                ).fetchone()
            except sqlite3.Error:
                return None
        if row is None:
            return None
        try:
            answer = json.loads(row[0])
        except json.JSONDecodeError:
            return None
        return {"answer": answer, "input_tokens": row[1], "output_tokens": row[2], "cost_usd": row[3]}

    def put(self, key: str, kind: str, model: str, prompt_version: str, answer: dict,
            input_tokens: int, output_tokens: int, cost_usd: float | None) -> None:
        with self._lock:
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, kind, model, prompt_version, json.dumps(answer, sort_keys=True), input_tokens, output_tokens,
                     cost_usd, time.time()),
                )
                self._db.commit()
            except sqlite3.Error:
                pass  # the cache may only save time, never fail a run

    def close(self) -> None:
        with self._lock:
            self._db.close()
