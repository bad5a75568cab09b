"""Design discovery: which design items an agent's own notes (``<run>/<task>/design.md``) propose.

For runs with design notes the benchmark asks (docs/report.md) which design items the agent
proposed on its own, beside what it implemented. Without an LLM judge this is a documented keyword match, not a
judgment: an item counts as *proposed* when the notes mention one of its key phrases:

* the item id with ``_`` read as a space (``online_softmax`` -> "online softmax");
* each evidencing catalogue property, as its id read the same way and as its catalogue name.

Text is compared lower-case with every run of non-alphanumeric characters collapsed to one space,
so "Online-Softmax" and "online_softmax" both match "online softmax"; a plural ending ("warp
shuffle reductions") matches too. A keyword match can miss a
paraphrase ("single pass with a running maximum") and can credit a mention that rejects the idea
("no online softmax needed"); the report labels the column as keyword-based for that reason.
"""

from __future__ import annotations

import re

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import DesignItem, Task


def normalize(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


def key_phrases(item: DesignItem, catalogue: Catalogue | None) -> list[str]:
    """The phrases whose mention counts as proposing ``item``."""
    phrases = [item.id, *item.properties]
    if catalogue is not None:
        phrases += [catalogue[p].name for p in item.properties if p in catalogue]
    return sorted({normalize(p).strip() for p in phrases if normalize(p).strip()})


def proposed_items(notes: str, task: Task, catalogue: Catalogue | None) -> dict[str, bool]:
    """Design item id -> whether the notes mention one of its key phrases (whole words)."""
    text = normalize(notes)
    mentions = lambda phrase: re.search(rf" {re.escape(phrase)}(?:e?s)? ", text) is not None  # noqa: E731
    return {d.id: any(mentions(p) for p in key_phrases(d, catalogue)) for d in task.design}
