"""Shared helpers for the analyzer tests: build kernel units from source snippets in memory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from d2k_analyze.detectors import detect
from d2k_analyze.model import SourceFile, Status
from d2k_analyze.parsing import kernel_units

ROOT = Path(__file__).resolve().parents[2]


def units_from(files: dict[str, str]):
    """Kernel units of an in-memory submission ``{file name: text}`` (texts are dedented)."""
    sources = []
    for name, text in files.items():
        kind = "python" if name.endswith(".py") else "cuda"
        sources.append(SourceFile(Path(name), kind, textwrap.dedent(text)))
    units, _warnings = kernel_units(sources)
    return units


def unit_named(files: dict[str, str], name: str | None = None):
    units = units_from(files)
    assert units, "no kernel unit found"
    if name is None:
        return units[0]
    matches = [u for u in units if u.name == name]
    assert matches, f"no unit {name}: {[u.name for u in units]}"
    return matches[0]


def status(prop: str, files: dict[str, str] | str, name: str | None = None) -> Status:
    """Status of ``prop`` for a snippet: a str is a standalone .cu (if it has __global__) or .py."""
    if isinstance(files, str):
        files = {"kernel.cu": files} if "__global__" in files and "triton" not in files else {"submission.py": files}
    return detect(prop, unit_named(files, name).ast).status


@pytest.fixture(scope="session")
def catalogue():
    from d2k_spec.catalogue import load_catalogue

    return load_catalogue()


@pytest.fixture(scope="session")
def prop_status():
    """``prop_status(prop, snippet_or_files, name=None) -> Status`` (see :func:`status`)."""
    return status


@pytest.fixture(scope="session")
def make_units():
    """``make_units({file: text}) -> list[KernelUnit]``."""
    return units_from
