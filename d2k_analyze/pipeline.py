"""The analyzer's pipeline as a library: what ``d2k-analyze``, the benchmarks and the tests call.

    find submissions -> static layers (parallel processes) -> compiled layer (nvcc, cached)
        -> score against the task's design items -> optional LLM judge pass (re-scored)

Nothing here parses a command line or prints: progress goes through callbacks and problems a
user should see through ``warn``. A failure inside one submission's analysis becomes an error
record of that submission (kind and message), never an exception that ends the run.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task, check_task, default_tasks_root, task_folders

from .model import SubmissionAnalysis
from .reports.result import SubmissionResult
from .submissions import find_submissions

Warn = Callable[[str], None]
Tick = Callable[[], None]


@dataclass(frozen=True)
class Job:
    """One submission to analyse: display name, folder or file, task id (None: unknown)."""

    name: str
    path: Path
    task: str | None


@dataclass
class Options:
    """How to run the pipeline. ``judge`` is a :class:`~.judge.JudgeSettings` or None (static only)."""

    task: str | None = None
    jobs: int = 1
    compiled: bool = True
    judge: object | None = None


@dataclass
class Outcome:
    results: list[SubmissionResult]
    judge_totals: object | None = None
    judge_errors: list[str] = field(default_factory=list)


# --- the benchmark's data ---------------------------------------------------------------------


def load_task_index(root: Path | None, catalogue: Catalogue, warn: Warn) -> dict[str, Task]:
    """Every valid task under ``root``; a broken task is a warning (the other tasks still score)."""
    root = root or default_tasks_root()
    if not root.is_dir():
        return {}
    tasks = {}
    for folder in task_folders(root):
        task, problems = check_task(folder, catalogue)
        if task is None or problems:
            warn(f"task {folder.name} not usable for scoring: {problems[0] if problems else 'invalid'}")
            continue
        tasks[task.id] = task
    return tasks


def jobs_for(paths: list[Path], task: str | None = None, tasks_root: Path | None = None) -> list[Job]:
    """One job per submission under ``paths``; the task is ``task``, else from the layout
    (:mod:`d2k_spec.layout`, against ``tasks_root``)."""
    return [Job(name, path, t) for name, path, t in find_submissions(paths, task, tasks_root)]


# --- static layers, in parallel processes -----------------------------------------------------

_WORKER_CATALOGUE: Catalogue | None = None


def _init_worker(catalogue: Catalogue) -> None:
    global _WORKER_CATALOGUE
    _WORKER_CATALOGUE = catalogue
    import gc

    from .analysis import RARE_COLLECTIONS

    gc.set_threshold(*RARE_COLLECTIONS)  # for the worker's life: it only analyses (see analysis.few_collections)


def analyze_one(job: Job, catalogue: Catalogue | None = None) -> SubmissionAnalysis:
    """Analyse one submission; an unexpected failure becomes an error record, never an exception.
    Parser handles (tree-sitter nodes) are dropped: they cannot cross process boundaries."""
    from .analysis import analyze_submission

    try:
        analysis = analyze_submission(job.name, job.path, job.task, catalogue or _WORKER_CATALOGUE)
    except Exception as exc:  # noqa: BLE001 - the process boundary of one submission
        return SubmissionAnalysis(job.name, Path(job.path), job.task, [], [], [f"{job.path}: analysis failed ({type(exc).__name__}: {exc})"])
    for ua in analysis.units:
        ua.unit.ast = None
    return analysis


def analyze_all(jobs: list[Job], catalogue: Catalogue, n_jobs: int, on_done: Tick = lambda: None) -> list[SubmissionAnalysis]:
    """Analyse submissions with ``n_jobs`` processes (in-process for 1); results in input order."""
    if n_jobs <= 1 or len(jobs) <= 1:
        from .analysis import few_collections

        out = []
        with few_collections():  # once for the run: restoring the thresholds per submission set off a collection each time
            for j in jobs:
                out.append(analyze_one(j, catalogue))
                on_done()
        return out
    results: dict[int, SubmissionAnalysis] = {}
    with ProcessPoolExecutor(max_workers=min(n_jobs, len(jobs)), initializer=_init_worker, initargs=(catalogue,)) as pool:
        futures = {pool.submit(analyze_one, j): i for i, j in enumerate(jobs)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker killed by the OS
                j = jobs[i]
                results[i] = SubmissionAnalysis(j.name, j.path, j.task, [], [], [f"{j.path}: analysis failed ({type(exc).__name__}: {exc})"])
            on_done()
    return [results[i] for i in range(len(jobs))]


# --- the compiled layer and scoring -----------------------------------------------------------


def run_compiled(analyses: list[SubmissionAnalysis], catalogue: Catalogue, n_jobs: int, enabled: bool,
                 tasks: dict[str, Task] | None = None):
    """Compile every submission's CUDA translation units once (in parallel) and its launched Triton
    kernels (for a known task: the workloads size the launches), and fold the evidence into the
    findings. Returns (analyses, status line per submission, compiled kernels per submission)."""
    from .compiled import apply_compiled, compile_all, compiled_status, find_toolchain, translation_units
    from .compiled.combine import kernels_for

    if not enabled:
        status = compiled_status([], enabled=False)
        return analyses, [status] * len(analyses), [{} for _ in analyses]
    toolchain = find_toolchain()
    per_sub = []
    for a in analyses:
        files = sorted({Path(ua.unit.file) for ua in a.units if ua.unit.language == "cuda"})
        units, notes = translation_units(files)
        per_sub.append((units, notes))
    flat = [tu for units, _ in per_sub for tu in units]
    compiled = iter(compile_all(flat, toolchain, n_jobs))
    out, statuses, kernels = [], [], []
    for a, (units, notes) in zip(analyses, per_sub):
        results = [next(compiled) for _ in units]
        out.append(apply_compiled(a, results, catalogue))
        statuses.append(compiled_status(results, notes))
        kernels.append({ua.unit.name: kernels_for(ua.unit.name, results) for ua in a.units if ua.unit.language == "cuda"})
    return run_triton(out, statuses, kernels, catalogue, n_jobs, tasks or {})


def run_triton(analyses, statuses, kernels, catalogue: Catalogue, n_jobs: int, tasks: dict[str, Task]):
    """The Triton half of the compiled layer: one sandboxed compile run per submission with launched
    Triton kernels (``n_jobs`` at a time), its readings folded into the findings."""
    from concurrent.futures import ThreadPoolExecutor

    from .compiled import processes
    from .compiled.triton import compile_submission, status_line
    from .compiled.triton_combine import apply_triton

    def one(a):
        return compile_submission(a, tasks.get(a.task) if a.task else None)

    with ThreadPoolExecutor(max_workers=max(1, n_jobs)) as pool:
        try:
            results = list(pool.map(one, analyses))
        except BaseException:
            processes.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            processes.resume()
            raise
    out, lines, arts = [], [], []
    for a, status, ks, tr in zip(analyses, statuses, kernels, results):
        out.append(apply_triton(a, tr, catalogue))
        extra = status_line(tr)
        lines.append(f"{status}; {extra}" if extra else status)
        arts.append({**ks, **{u: [o.artifact for o in vs if o.artifact is not None] for u, vs in tr.kernels.items()}})
    return out, lines, arts


def score_all(analyses, statuses, kernels, tasks: dict[str, Task], catalogue: Catalogue, warn: Warn) -> list[SubmissionResult]:
    """One result per submission, scored where its task is known (an unknown task is warned once)."""
    from .scoring import score_submission

    warned: set[str] = set()
    results = []
    for a, status, ks in zip(analyses, statuses, kernels):
        task = None
        if a.task and a.task in tasks:
            task = tasks[a.task]
        elif a.task and a.task not in warned:
            warned.add(a.task)
            warn(f"task '{a.task}' (from the folder layout) is not a known task: reporting properties only")
        score = score_submission(a, task, catalogue) if task is not None else None
        results.append(SubmissionResult(a, score, status, ks))
    return results


def judge_pass(results: list[SubmissionResult], tasks: dict[str, Task], catalogue: Catalogue, settings, progress=None):
    """Judge every scored submission, then re-score it with the judge's verdicts (one scoring path:
    :func:`scoring.score_submission` with ``judge=``). Returns (totals, per-submission error lines).
    Raises :class:`~.judge.JudgeUnavailable` when the judge cannot be reached at all."""
    from .judge import judge_results, judge_verdicts
    from .judge.runner import display_names
    from .scoring import score_submission

    judgements, totals = judge_results(results, tasks, catalogue, settings, progress or (lambda done, total: None))
    errors = []
    for i, judgement in judgements.items():
        r = results[i]
        r.judge = judgement
        r.static_score = r.score
        task = tasks[r.analysis.task]
        verdicts = judge_verdicts(judgement, display_names(r.analysis))
        r.score = score_submission(r.analysis, task, catalogue, judge=verdicts)
        if judgement.grade.error:
            errors.append(f"judge error for {r.analysis.name}: {judgement.grade.error}")
    return totals, errors


def run(jobs: list[Job], catalogue: Catalogue, tasks: dict[str, Task], options: Options,
        warn: Warn = lambda msg: None, tick: Tick = lambda: None, judge_progress=None) -> Outcome:
    """The whole pipeline over ``jobs``: static layers, compiled layer, scores, judge pass."""
    analyses = analyze_all(jobs, catalogue, options.jobs, tick)
    analyses, statuses, kernels = run_compiled(analyses, catalogue, options.jobs, options.compiled, tasks)
    results = score_all(analyses, statuses, kernels, tasks, catalogue, warn)
    outcome = Outcome(results)
    if options.judge is not None:
        outcome.judge_totals, outcome.judge_errors = judge_pass(results, tasks, catalogue, options.judge, judge_progress)
    return outcome
