"""The packages' dependency contracts (docs/architecture.md): the analyzer runs on a laptop with no torch, and
the profiler runs on a GPU machine without the analyzer's parsers. Each check runs in a fresh
interpreter in which the forbidden packages cannot be imported at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BLOCKER = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ImportError('blocked by the test: ' + name)
sys.meta_path.insert(0, _Block())
"""


def run_blocked(blocked: set[str], code: str) -> subprocess.CompletedProcess:
    script = BLOCKER.format(blocked=blocked) + code
    return subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_analyzer_works_without_torch_or_triton(tmp_path):
    out = tmp_path / "a.jsonl"
    proc = run_blocked({"torch", "triton"}, f"""
from d2k_analyze.cli import main
rc = main(["corpus/softmax", "--no-compiled", "--jobs", "1", "--format", "jsonl", "--out", {str(out)!r}])
print("RC", rc)
""")
    assert "RC 0" in proc.stdout, proc.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(r.get("row_type") == "submission" for r in rows)


def test_profiler_imports_without_the_analyzers_parsers():
    proc = run_blocked({"tree_sitter", "tree_sitter_cuda", "tree_sitter_python", "libcst", "d2k_analyze"}, """
import importlib, pkgutil, d2k_profile
for m in pkgutil.iter_modules(d2k_profile.__path__):
    importlib.import_module("d2k_profile." + m.name)
from d2k_spec.task import load_tasks
print("TASKS", len(load_tasks()))
""")
    assert "TASKS" in proc.stdout, proc.stderr[-2000:]
