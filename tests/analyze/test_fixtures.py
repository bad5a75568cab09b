"""Every detector against its own fixtures: ``tests/analyze/fixtures/<property>/<kind>_<n>.<cu|py>``.

``kind`` is the status the property must have in the fixture's kernel (the first kernel unit
of the file, in source order): ``pos`` present, ``neg`` absent, ``na`` not applicable. A fixture
is a small, complete source file (kernel, helpers and, where it matters, the launch), written in
its own style; several fixtures per property vary names, helpers, macros and templates so that
no detector can lean on how code is spelled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from d2k_analyze.detectors import detect, registry
from d2k_analyze.model import SourceFile, Status
from d2k_analyze.parsing import kernel_units

FIXTURES = Path(__file__).parent / "fixtures"
KINDS = {"pos": Status.PRESENT, "neg": Status.ABSENT, "na": Status.NOT_APPLICABLE}


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*.*") if p.suffix in (".cu", ".py"))


def first_unit(path: Path):
    kind = "python" if path.suffix == ".py" else "cuda"
    units, _ = kernel_units([SourceFile(path, kind, path.read_text())])
    assert units, f"{path}: no kernel unit"
    return units[0]


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path: Path):
    prop, kind = path.parent.name, path.name.split("_")[0]
    unit = first_unit(path)
    decision = detect(prop, unit.ast)
    assert decision.status == KINDS[kind], f"{path.parent.name}/{path.name}: {decision.status.value} ({decision.reason})"


def test_every_property_has_a_positive_and_a_negative_fixture():
    missing = []
    for prop in registry():
        kinds = {p.name.split("_")[0] for p in (FIXTURES / prop).glob("*.*")}
        if not {"pos", "neg"} <= kinds:
            missing.append(f"{prop}: {sorted(kinds)}")
    assert not missing, "\n".join(missing)
