"""Content-addressed cache of compile results, so re-analysing a corpus costs no compiles.

Key = sha256 of (layer version, nvcc version, flags, source text, headers beside it). Values are
JSON files under ``$XDG_CACHE_HOME/d2k-bench/compiled/`` (default ``~/.cache``). A corrupt or
unwritable cache is ignored: the cache may only ever save time, never fail an analysis.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

LAYER_VERSION = "4"  # 4: tma and thread_block_cluster signatures (plain bulk copies); 3: extension-build flags; 2: a missing library header skips instead of failing; bump when parsing or signatures change, to invalidate old entries


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "d2k-bench" / "compiled"


def cache_key(*parts: str) -> str:
    digest = hashlib.sha256(LAYER_VERSION.encode())
    for part in parts:
        digest.update(b"\0" + part.encode("utf-8", errors="replace"))
    return digest.hexdigest()


def load(key: str) -> dict | None:
    try:
        return json.loads((cache_dir() / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None


def store(key: str, value: dict) -> None:
    """Write atomically (temp file + rename) so parallel compiles never read half a file."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(value, fh)
        os.replace(tmp, folder / f"{key}.json")
    except OSError:
        pass
