"""Build the DEMONSTRATION runs' result files and report, reproducibly, from recorded inputs.

The demo runs (``examples/runs/demo_naive``: unguided, ``examples/runs/demo_optimized``: guided)
are corpus kernels, not agent results; their ``run.toml`` files point each task at a corpus
folder. This script writes, for each run:

* ``profile.jsonl``: the d2k-profile records of the run's submissions, *selected unchanged* from
  ``examples/h200/pilot_results.jsonl`` (a full d2k-profile pilot run on an NVIDIA H200: every
  corpus variant and expert of softmax, layernorm and gemm_bf16 over their 4 workloads), by task
  and submission folder, plus the expert's records of the same tasks (the expert's speedup is shown
  beside the submission's). A submission with no record there is reported and left unprofiled
  (the report then counts it as incorrect);
* ``analyze.jsonl``: ``d2k-analyze --format jsonl`` on the run's submission folders (static layers,
  plus the compiled layer where ``nvcc`` is installed);

and then ``examples/report/`` with ``d2k-report`` (CSV, Markdown, JSON, HTML).

Run from anywhere: ``python examples/build_demo.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PILOT = ROOT / "examples" / "h200" / "pilot_results.jsonl"
RUNS = ("demo_optimized", "demo_naive")  # guided first, as in --pair GUIDED UNGUIDED
REPORT = ROOT / "examples" / "report"

sys.path.insert(0, str(ROOT))
from d2k_report.runs import load_run  # noqa: E402


def tail(path: str | Path) -> tuple[str, ...]:
    """``<task>/<variant>``: how a pilot record's absolute path is matched to a corpus folder."""
    return Path(str(path)).parts[-2:]


def select_records(lines: list[str], submissions: dict[str, Path]) -> tuple[list[str], list[str]]:
    """The pilot lines of these submissions and of their tasks' experts; and what had none."""
    picked, found = [], set()
    for line in lines:
        rec = json.loads(line)
        sub = submissions.get(rec["task"])
        if sub is None:
            continue
        if rec["role"] == "expert" or (rec["role"] == "submission" and tail(rec["path"]) == tail(sub)):
            picked.append(line)
            if rec["role"] == "submission":
                found.add(rec["task"])
    missing = [f"{t}: {'/'.join(tail(p))}" for t, p in submissions.items() if t not in found]
    return picked, missing


def main() -> int:
    os.chdir(ROOT)  # analyze paths are recorded relative to the repository root
    lines = [ln for ln in PILOT.read_text().splitlines() if ln.strip()]
    for name in RUNS:
        run = load_run(ROOT / "examples" / "runs" / name, known_tasks=set())
        picked, missing = select_records(lines, run.submissions)
        (run.folder / "profile.jsonl").write_text("".join(ln + "\n" for ln in picked))
        print(f"{name}: {len(picked)} profile records selected from {PILOT.relative_to(ROOT)}")
        for m in missing:
            print(f"{name}: no pilot record for {m}: left unprofiled")
        folders = [os.path.relpath(p, ROOT) for p in run.submissions.values()]
        subprocess.run([sys.executable, "-m", "d2k_analyze", *folders, "--format", "jsonl", "--force",
                        "--out", str(run.folder / "analyze.jsonl")], check=True)  # --force: rebuilt on purpose
    pairs = ["--pair", RUNS[0], RUNS[1]]
    runs = [str(ROOT / "examples" / "runs" / n) for n in RUNS]
    subprocess.run([sys.executable, "-m", "d2k_report", *runs, *pairs, "--out", str(REPORT), "--force"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
