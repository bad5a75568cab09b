"""Results back into pandas in one line: ``d2k_analyze.load_results("out.jsonl")``."""

from __future__ import annotations

from pathlib import Path


def load_results(path: str | Path):  # -> pandas.DataFrame (pandas imported lazily: the CLI never needs it)
    """Read a ``--format jsonl`` or ``--format csv`` output into one DataFrame.

    Filter by ``row_type`` ("submission", "item", "unit", "property", "eval_property",
    "eval_miss", "eval_layer", and with the judge "judge", "discovery"), e.g. ``df[df.row_type == "item"].pivot(index="submission", columns="item", values="value")``.
    """
    import pandas as pd

    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        return pd.read_json(path, lines=True, dtype=False)
    if path.suffix.lower() == ".csv":
        return pd.read_csv(path, keep_default_na=True, low_memory=False)
    raise ValueError(f"{path}: expected a .jsonl or .csv file written by d2k-analyze")
