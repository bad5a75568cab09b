"""Packaging metadata that breaks silently: a code package missing from the wheel, extras whose
constraints on one dependency disagree (pip then downloads it twice), README outputs not ignored."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_code_package_is_listed_for_the_wheel():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    # every folder of Python modules is a package: one without __init__.py would be left out of
    # the wheel silently (an implicit namespace package), so it is found by its modules
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in ROOT.glob("d2k_*/**/*.py")
             if "__pycache__" not in p.parts and "native" not in p.parts}
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
    data = PYPROJECT["tool"]["setuptools"]["package-dir"]
    assert data == {"d2k_spec._data.rubrics": "rubrics", "d2k_spec._data.tasks": "tasks"}


def test_extras_agree_on_each_dependency():
    """The highest version each extra allows must be the same, so the first candidate pip picks for
    one extra satisfies the others (README: `pip install -e '.[profile,test]'` downloads triton once)."""
    by_name: dict[str, list[tuple[str, Requirement]]] = {}
    for extra, reqs in PYPROJECT["project"]["optional-dependencies"].items():
        for raw in reqs:
            req = Requirement(raw)
            by_name.setdefault(req.name, []).append((extra, req))
    shared = {n: rs for n, rs in by_name.items() if len(rs) > 1}
    assert "triton" in shared, "triton is constrained by both the profile and the test extra"
    for name, reqs in shared.items():
        tops = [Version(s.version) for _, r in reqs for s in r.specifier if s.operator in ("==", "<=")]
        if not tops:
            continue  # every extra takes the newest release: they agree
        top = min(tops)
        for extra, req in reqs:
            assert top in req.specifier, f"{name}: [{extra}] {req} excludes {top}"
            above = [Version(f"{top.major}.{top.minor}.{top.micro + 1}"), Version(f"{top.major}.{top.minor + 1}.0")]
            assert not any(v in req.specifier for v in above), f"{name}: [{extra}] {req} lets pip pick a newer {name} first"


def test_readme_outputs_are_ignored_by_git():
    readme = (ROOT / "README.md").read_text()
    outputs = set(re.findall(r"--out\s+([\w./-]+)", readme)) | set(re.findall(r'load_results\("([^"]+)"\)', readme))
    outputs = {o.rstrip("/") for o in outputs if not o.startswith(("examples/", "/", "<")) and "<" not in o}
    assert outputs, "the README names no output file"
    probe = [str(Path(o) / "x") if "." not in Path(o).name else o for o in outputs]
    result = subprocess.run(["git", "check-ignore", "--no-index", *probe], cwd=ROOT, capture_output=True, text=True)
    ignored = set(result.stdout.split())
    assert ignored == set(probe), f"not in .gitignore: {sorted(set(probe) - ignored)}"
