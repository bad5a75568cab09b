"""d2k-report needs only the standard library and the pure parts of d2k_spec / d2k_profile: it runs
where neither torch nor the analyzer's parsers (nor pandas) are installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'torch', 'triton', 'numpy', 'pandas', 'tree_sitter', 'libcst', 'rich', 'd2k_analyze'}:
            raise ImportError('blocked by the test: ' + name)
sys.meta_path.insert(0, _Block())
from d2k_report.cli import main
print('RC', main(['examples/runs/demo_optimized', 'examples/runs/demo_naive', '--out', sys.argv[1], '--bootstrap', '50']))
"""


def test_report_runs_without_torch_pandas_or_parsers(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "RC 0" in proc.stdout, proc.stderr[-2000:]
    assert (tmp_path / "report.html").is_file()
