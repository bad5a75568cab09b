"""docs/properties.md agrees with the catalogue: every property with its level, and the fixed-meaning
(core) ones exactly as the catalogue flags them."""

from __future__ import annotations

import re
from pathlib import Path

from d2k_spec.catalogue import load_catalogue

DOC = (Path(__file__).resolve().parents[2] / "docs" / "properties.md").read_text()


def table_rows(section_title: str) -> dict[str, str]:
    """``id -> level`` of the first table after a heading."""
    section = DOC.split(section_title, 1)[1]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `([a-z_0-9]+)` \| (L[123]) \|", line)
        if m:
            rows[m.group(1)] = m.group(2)
        elif rows and not line.startswith("|"):
            break
    return rows


def test_every_property_is_on_the_page_with_its_level():
    catalogue = load_catalogue()
    core = table_rows("## The 21 properties with a fixed meaning")
    others = table_rows("## The catalogue's other properties")
    assert set(core) == set(catalogue.core_ids) and len(core) == 21
    assert set(others) == set(catalogue.ids) - set(catalogue.core_ids)
    for pid, level in {**core, **others}.items():
        assert catalogue[pid].level == level, pid
