"""Where d2k-agent's data lives: ``rubrics/agent/`` (prompt templates, prices).

The same rule as the rest of the toolkit: the copy inside an installed wheel
(``d2k_spec/_data/rubrics``) when there is one, else the repository checkout.
"""

from __future__ import annotations

from pathlib import Path


def rubrics_dir() -> Path:
    import d2k_spec

    packaged = Path(d2k_spec.__file__).resolve().parent / "_data" / "rubrics"
    if (packaged / "agent").is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rubrics"


AGENT_DIR = rubrics_dir() / "agent"
