"""The catalogue and the detector registry name the same properties, both ways."""

from __future__ import annotations

from d2k_analyze.detectors import registry


def test_catalogue_ids_match_registered_detectors(catalogue):
    assert set(catalogue.ids) == set(registry())


def test_every_detector_covers_the_languages_its_property_applies_to(catalogue):
    gaps = [f"{p.id}: {lang}" for p in catalogue for lang in p.languages if lang not in registry()[p.id].languages]
    assert not gaps, gaps


def test_every_detector_module_has_the_fixed_doc_block():
    import importlib

    for prop in registry():
        doc = importlib.import_module(f"d2k_analyze.detectors.{prop}").__doc__ or ""
        for section in ("## What it means", "## How it is detected", "## Not to be confused with"):
            assert section in doc, f"{prop}: missing '{section}'"
