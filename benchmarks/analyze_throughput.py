"""Static-analysis throughput of d2k-analyze: files/s and MB/s, 1 job and all cores.

Builds a corpus of at least ``--min-files`` source files in a temporary folder by copying the
bundled corpus (``corpus/`` and the tasks' expert folders) several times over under renamed
submission folders, then times the static layers (sources, parsing, liveness, detectors: no
compiled layer, no scoring or report) through the same parallel runner the CLI uses.

    python benchmarks/analyze_throughput.py            # >= 2000 files, jobs 1 and all cores
    python benchmarks/analyze_throughput.py --min-files 500 --jobs 1 4

Target: >= 100 files/s per core.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from d2k_analyze.pipeline import Job, analyze_all  # noqa: E402
from d2k_analyze.sources import SOURCE_SUFFIXES  # noqa: E402
from d2k_analyze.submissions import find_submissions  # noqa: E402
from d2k_spec.catalogue import load_catalogue  # noqa: E402


def bundled_submissions() -> list[tuple[str, Path]]:
    """(task id, folder) of every bundled submission: corpus variants and task experts."""
    out = [(task, folder) for _, folder, task in find_submissions([ROOT / "corpus"]) if folder.is_dir()]
    for expert in sorted((ROOT / "tasks").glob("*/expert")):
        out.append((expert.parent.name, expert))
    return [(t or "unknown", f) for t, f in out]


def source_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SOURCE_SUFFIXES]


def build_corpus(dest: Path, min_files: int) -> tuple[int, int]:
    """Copy the bundled submissions into ``dest/corpus/<task>/<variant>_copyN`` until there are
    ``min_files`` source files. Returns (files, bytes)."""
    subs = bundled_submissions()
    if not subs:
        raise SystemExit("no bundled submissions found under corpus/ or tasks/*/expert")
    files = size = copy = 0
    while files < min_files:
        for task, folder in subs:
            target = dest / "corpus" / task / f"{folder.name}_copy{copy}"
            shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__"))
            for f in source_files(target):
                files += 1
                size += f.stat().st_size
        copy += 1
    return files, size


def measure(root: Path, jobs: int, catalogue) -> float:
    found = find_submissions([root])
    work = [Job(name, path, task) for name, path, task in found]
    start = time.perf_counter()
    analyses = analyze_all(work, catalogue, jobs)
    elapsed = time.perf_counter() - start
    failed = sum(1 for a in analyses if a.errors)
    if failed:
        print(f"  ({failed} submissions reported errors)")
    return elapsed


def main() -> None:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-files", type=int, default=2000)
    parser.add_argument("--jobs", type=int, nargs="+", default=sorted({1, cores}))
    args = parser.parse_args()
    catalogue = load_catalogue()
    with tempfile.TemporaryDirectory(prefix="d2k-bench-throughput-") as tmp:
        files, size = build_corpus(Path(tmp), args.min_files)
        n_subs = len(find_submissions([Path(tmp)]))
        print(f"corpus: {files} source files, {size / 1e6:.2f} MB, {n_subs} submissions ({cores} cores here)")
        print(f"{'jobs':>5} {'seconds':>9} {'files/s':>9} {'MB/s':>8} {'files/s/core':>13}")
        for jobs in args.jobs:
            seconds = measure(Path(tmp), jobs, catalogue)
            rate = files / seconds
            print(f"{jobs:>5} {seconds:>9.2f} {rate:>9.1f} {size / 1e6 / seconds:>8.2f} {rate / jobs:>13.1f}")


if __name__ == "__main__":
    main()
