"""Static-analysis throughput of d2k-analyze: files/s and MB/s, beside tree-sitter's parse-only rate.

Default: every distinct bundled source file once (``corpus/`` including ``corpus/wild``'s real
public kernels, and the tasks' expert folders), analysed with the static layers (sources,
parsing, liveness, the fact layer, detectors: no compiled layer, no scoring or report) on 1 job
and on all cores, then the same files parsed by tree-sitter alone, so the cost of the fact layer
is visible as a multiple of parsing. ``--copies N`` instead times N renamed copies of the corpus
(the parallel runner on a bigger input; copies repeat content, so caches keyed by content help).

    python benchmarks/analyze_throughput.py
    python benchmarks/analyze_throughput.py --jobs 1 4 --copies 10
    python benchmarks/analyze_throughput.py --scaling 5000 10000 20000 50000

A scaling table comes first: one long generated kernel analysed at growing lengths, with the
time ratio per doubling of the length (2.0 is linear). Last, the Triton compiled layer: the time it
adds per launched Triton kernel of the pilot corpus and experts, cold (an empty cache: every
variant compiled for sm_90 and sm_100) and cached (``--no-triton`` skips it).

Targets: >= 100 files/s per core on distinct files; <= 2x time per doubling of a kernel's length.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from d2k_analyze.pipeline import Job, analyze_all  # noqa: E402
from d2k_analyze.sources import PYTHON_SUFFIXES, SOURCE_SUFFIXES  # noqa: E402
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


def warm_up_jobs(work: list[Job]) -> list[Job]:
    """One CUDA and one Triton submission: each language imports its own modules (the Python
    lowering, Triton's config reader) on first use, a one-time cost of the process."""
    def language(job: Job) -> set[str]:
        return {"python" if p.suffix.lower() in PYTHON_SUFFIXES else "cuda" for p in source_files(Path(job.path))}
    cuda = next((j for j in work if "cuda" in language(j)), None)
    python = next((j for j in work if "python" in language(j)), None)
    return [j for j in (cuda, python) if j is not None] or work[:1]


# Caches that hold the process's setup, not anything read from a submission: the grammars'
# parsers, compiled tree-sitter queries, the detector registry and compiled-layer signatures.
SETUP_CACHES = {"d2k_analyze.parsing.treesitter._parser", "d2k_analyze.parsing.treesitter._query",
                "d2k_analyze.detectors.registry", "d2k_analyze.compiled.signatures"}


def clear_data_caches() -> int:
    """Empty every memo of the analyzer that is keyed by what it read (type spellings, literals,
    expressions, macro bodies): a repeated run over the same files would otherwise find the first
    run's answers and time less work than a first sight of them. Returns how many were emptied."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("d2k_analyze") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            qual = f"{name}.{attr}"
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == name:
                if not any(qual.startswith(k) for k in SETUP_CACHES):
                    value.cache_clear()
                    cleared += 1
    from d2k_analyze.facts.expr import forget_nodes

    forget_nodes()
    return cleared


def measure(root: Path, jobs: int, catalogue, repeat: int = 1) -> list[float]:
    """Seconds of each of ``repeat`` runs over every submission under ``root``; before each run
    the analyzer's data caches are emptied (:func:`clear_data_caches`), so every run sees the
    files for the first time, as a single run does."""
    found = find_submissions([root])
    work = [Job(name, path, task) for name, path, task in found]
    if jobs <= 1 and work:  # one-time costs (imports, grammars, the detector registry) are not throughput
        analyze_all(warm_up_jobs(work), catalogue, 1)
    times = []
    for _ in range(repeat):
        clear_data_caches()
        start = time.perf_counter()
        analyses = analyze_all(work, catalogue, jobs)
        times.append(time.perf_counter() - start)
        failed = sum(1 for a in analyses if a.errors)
        if failed:
            print(f"  ({failed} submissions reported errors)")
    return times


def parse_only(files: list[Path]) -> float:
    """Seconds tree-sitter alone takes to parse ``files`` (the floor any analysis starts from)."""
    from d2k_analyze.parsing.treesitter import parse

    texts = [(("python" if f.suffix == ".py" else "cuda"), f.read_text(errors="replace")) for f in files]
    start = time.perf_counter()
    for language, text in texts:
        parse(language, text)
    return time.perf_counter() - start


def distinct_files() -> tuple[Path, list[Path]]:
    """A temporary tree holding every bundled submission once (corpus/ and the task experts)."""
    tmp = Path(tempfile.mkdtemp(prefix="d2k-bench-throughput-"))
    for task, folder in bundled_submissions():
        # one folder per submission, named by its whole path: same-named folders of different
        # repositories (three are called ``softmax``) must not merge into one submission
        name = "__".join(folder.relative_to(ROOT).parts)
        shutil.copytree(folder, tmp / "corpus" / task / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp, [f for f in (tmp / "corpus").rglob("*") if f.is_file() and f.suffix.lower() in SOURCE_SUFFIXES]


def long_kernel(lines: int) -> str:
    """A CUDA kernel of about ``lines`` lines: straight-line accumulations with branches, the
    shape of unrolled or generated code, where analysis time used to grow with the square."""
    body = []
    i = 0
    while len(body) < lines:
        body.append(f"    acc{i % 8} += x[(size_t)row * n + (c + {i % 97})] * w[{i % 61}];")
        body.append(f"    if (acc{i % 8} > {i}.0f) acc{(i + 1) % 8} -= 0.5f * acc{i % 8};")
        i += 1
    accs = ", ".join(f"acc{k} = 0.f" for k in range(8))
    return ("__global__ void long_kernel(const float* __restrict__ x, const float* __restrict__ w, float* y, int n) {\n"
            f"    int row = blockIdx.x; int c = threadIdx.x;\n    float {accs};\n" + "\n".join(body) +
            "\n    y[row * blockDim.x + c] = acc0 + acc1 + acc2 + acc3 + acc4 + acc5 + acc6 + acc7;\n}\n")


def scaling(sizes: list[int], catalogue) -> None:
    """Seconds per kernel length; the ratio per doubling should stay near 2 (linear)."""
    from d2k_analyze.analysis import analyze_submission

    print(f"{'lines':>7} {'seconds':>9} {'ratio':>7}")
    previous = None
    for n in sizes:
        tmp = Path(tempfile.mkdtemp(prefix="d2k-bench-scaling-"))
        try:
            (tmp / "kernel.cu").write_text(long_kernel(n))
            start = time.perf_counter()
            analyze_submission("long", tmp, None, catalogue)
            seconds = time.perf_counter() - start
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ratio = f"{seconds / previous[1] * previous[0] / n * 2:.2f}" if previous else "-"
        print(f"{n:>7} {seconds:>9.2f} {ratio:>7}")
        previous = (n, seconds)


PILOT_TRITON = ["corpus/softmax/naive_triton", "corpus/softmax/online_triton", "corpus/layernorm/naive_triton",
                "corpus/layernorm/welford_triton", "corpus/gemm_bf16/naive_triton", "corpus/gemm_bf16/tiled_triton",
                "tasks/softmax/expert", "tasks/layernorm/expert", "tasks/gemm_bf16/expert"]


def triton_layer(catalogue) -> None:
    """Milliseconds the Triton compiled layer adds per launched kernel, cold and cached."""
    from d2k_analyze.analysis import analyze_submission
    from d2k_analyze.compiled import triton as layer
    from d2k_spec.task import load_task

    if layer.triton_version() is None:
        print("triton compiled layer: skipped (triton is not installed)")
        return
    subs = []
    for rel in PILOT_TRITON:
        task_id = Path(rel).parts[1]
        subs.append((analyze_submission(rel, ROOT / rel, task_id, catalogue), load_task(ROOT / "tasks" / task_id)))
    old = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="d2k-bench-triton-cache-") as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            rows = []
            for label in ("cold", "cached"):
                results = [layer.compile_submission(a, t) for a, t in subs]
                kernels = sum(len(r.kernels) for r in results)
                variants = sum(len(v) for r in results for v in r.kernels.values())
                seconds = sum(r.seconds for r in results)
                rows.append((label, kernels, variants, seconds))
        finally:
            if old is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = old
    print(f"triton compiled layer (triton {layer.triton_version()}, sm_90 + sm_100), {len(subs)} pilot submissions:")
    print(f"{'':>7} {'kernels':>8} {'variants':>9} {'seconds':>9} {'ms/kernel':>10} {'ms/variant':>11}")
    for label, kernels, variants, seconds in rows:
        print(f"{label:>7} {kernels:>8} {variants:>9} {seconds:>9.2f} {1e3 * seconds / max(kernels, 1):>10.1f} "
              f"{1e3 * seconds / max(variants, 1):>11.1f}")


def main() -> None:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=0, help="time N renamed copies of the bundled corpus instead")
    parser.add_argument("--jobs", type=int, nargs="+", default=sorted({1, cores}))
    parser.add_argument("--scaling", type=int, nargs="*", default=[5000, 10000, 20000],
                        help="kernel lengths for the scaling table (ratio = time growth per doubling; none to skip)")
    parser.add_argument("--no-triton", action="store_true", help="skip the Triton compiled layer's timing")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per row (median reported): one run on a shared machine varies by 10 %% and more")
    args = parser.parse_args()
    catalogue = load_catalogue()
    if args.scaling:
        print("one long kernel, analysis time by length (ratio per doubling of the length; 2.0 is linear):")
        scaling(args.scaling, catalogue)
    if args.copies:
        tmp = Path(tempfile.mkdtemp(prefix="d2k-bench-throughput-"))
        files_n, size = build_corpus(tmp, args.copies * len(distinct_files()[1]))
        files = [f for f in tmp.rglob("*") if f.is_file() and f.suffix.lower() in SOURCE_SUFFIXES]
    else:
        tmp, files = distinct_files()
        size = sum(f.stat().st_size for f in files)
    try:
        n_subs = len(find_submissions([tmp]))
        print(f"corpus: {len(files)} {'distinct ' if not args.copies else ''}source files, {size / 1e6:.2f} MB, "
              f"{n_subs} submissions ({cores} cores here)")
        print(f"{args.repeat} run(s) per row, data caches emptied before each; the row is the median run "
              f"(the range: fastest and slowest run's files/s per core)")
        print(f"{'jobs':>5} {'seconds':>9} {'files/s':>9} {'MB/s':>8} {'files/s/core':>13} {'range':>13}")
        per_core = []
        for jobs in args.jobs:
            times = measure(tmp, jobs, catalogue, args.repeat)
            seconds = statistics.median(times)
            rate = len(files) / seconds
            per_core.append(rate / jobs)
            span = f"{len(files) / max(times) / jobs:.1f}-{len(files) / min(times) / jobs:.1f}"
            print(f"{jobs:>5} {seconds:>9.2f} {rate:>9.1f} {size / 1e6 / seconds:>8.2f} {rate / jobs:>13.1f} {span:>13}")
        seconds = parse_only(files)
        parse_rate = len(files) / seconds
        print(f"tree-sitter parse only, 1 core: {seconds:.2f} s, {parse_rate:.1f} files/s, {size / 1e6 / seconds:.2f} MB/s")
        if per_core:  # the cost of the analysis in units of parsing: comparable across machines, unlike files/s
            best = max(per_core)
            print(f"parse-only rate / analysis rate per core: {parse_rate / best:.1f}x "
                  f"({best:.1f} vs {parse_rate:.1f} files/s; the 100 files/s target is {parse_rate / 100:.1f}x here)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.no_triton:
        triton_layer(catalogue)


if __name__ == "__main__":
    main()
