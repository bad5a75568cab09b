"""``d2k-analyze``: the command-line shell over :mod:`d2k_analyze.pipeline`.

Arguments in, one report format out (plus the label evaluation with ``--eval-labels``). The work
itself (static layers, compiled layer, scoring, judge pass) is the pipeline's. User mistakes
(missing path, unknown task, bad option) print one clear line and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Iterable

from d2k_spec.catalogue import Catalogue, default_catalogue_path, load_catalogue
from d2k_spec.schema import SpecError

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE = 0, 1, 2
PROGRESS_MIN = 20  # show a progress bar from this many submissions on

EPILOG = """\
examples:
  d2k-analyze corpus/                          terminal summary of every submission under corpus/
  d2k-analyze runs/r1/softmax --task softmax   score a folder against the softmax design items
  d2k-analyze corpus/ --format jsonl --out results.jsonl
        then in Python: d2k_analyze.load_results("results.jsonl")  (one row per submission,
        per submission x design item, per kernel unit, per unit x property; column row_type)
  d2k-analyze corpus/ --format sarif --out d2k.sarif   missing design items for code review tools
  d2k-analyze corpus/ --format html --out report.html  self-contained page (no network)
  d2k-analyze corpus/ --eval-labels            detector precision/recall/F1 against labels.toml

LLM judge (docs/judge.md): with ANTHROPIC_API_KEY set the judge grades every design item
(default model: see --judge-model), verdicts are cached; without a key the score is static-only.
  d2k-analyze corpus/ --judge anthropic --format jsonl --out judged.jsonl
  d2k-analyze corpus/ --judge anthropic --batch        Message Batches API (half price, slower)
  d2k-analyze corpus/ --judge replay --eval-labels     cached verdicts only; static vs judge vs combined

the task of a submission comes from the layout (corpus/<task>/..., runs/<run>/<task>/...,
tasks/<task>/expert) or --task; without a known task only kernel properties are reported.
The compiled layer runs nvcc (sm_90: PTX, SASS where cuobjdump exists, -Xptxas -v) when nvcc is
on PATH, caching by content under $XDG_CACHE_HOME/d2k-bench/compiled; without nvcc it is skipped.

exit status: 0 all analysed, 1 some files could not be analysed, 2 usage error.
"""


def _default_model() -> str:
    from .judge.runner import DEFAULT_MODEL

    return DEFAULT_MODEL


class UsageError(Exception):
    """A mistake in the command line or its inputs: reported in one line, exit 2."""


def build_parser() -> argparse.ArgumentParser:
    from .reports import FORMATS

    p = argparse.ArgumentParser(
        prog="d2k-analyze",
        description="Find the expert design properties that CUDA and Triton kernels implement, with "
        "file/line evidence, and score submissions against their task's design items (0-100, and per "
        "level L1/L2/L3). Reads sources only: never imports or runs the analysed code.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="submission folders, source files, or folders of them (e.g. corpus/)")
    p.add_argument("--task", metavar="ID", help="task id to score every submission against (default: from the folder layout)")
    p.add_argument("--format", default="table", choices=list(FORMATS), help="output format (default: table, a terminal summary)")
    p.add_argument("--out", metavar="FILE", help="write the report to FILE instead of standard output")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="parallel analysis processes and compile threads (default: all cores, %(default)s here)")
    p.add_argument("--no-compiled", action="store_true", help="skip the compiled-artifact layer (no nvcc)")
    p.add_argument("--trajectory", action="store_true",
                   help="each PATH is runs/<run>/<task> of a d2k-agent run: analyse every workspace snapshot and report the "
                   "turn each design item was first implemented and whether it stayed (table or jsonl)")
    p.add_argument("--eval-labels", action="store_true",
                   help="also evaluate the detectors against every labels.toml under PATH: per-property precision, "
                   "recall, F1 and support, macro-F1, and the misclassified kernel units")
    g = p.add_argument_group("LLM judge (layer 3: grades every design item; see docs/judge.md)")
    g.add_argument("--judge", choices=["none", "anthropic", "replay"], default=None,
                   help="none: static layers only; anthropic: ask the Anthropic API (ANTHROPIC_API_KEY), reusing "
                   "cached verdicts; replay: cached verdicts only, fail on a miss (default: anthropic when "
                   "ANTHROPIC_API_KEY is set, else none)")
    g.add_argument("--judge-model", metavar="MODEL", default=None, help="judge model id (default: %s)" % _default_model())
    g.add_argument("--judge-base-url", metavar="URL", default=None,
                   help="Anthropic-compatible endpoint (default: $ANTHROPIC_BASE_URL, else the SDK's)")
    g.add_argument("--batch", action="store_true", help="send judge requests through the Message Batches API (half price, slower)")
    g.add_argument("--judge-cache", metavar="FILE", default=None, help="SQLite cache of verdicts (default: $XDG_CACHE_HOME/d2k-bench/judge.sqlite)")
    g.add_argument("--no-judge-cache", action="store_true", help="neither read nor write the verdict cache")
    g.add_argument("--judge-concurrency", type=int, default=4, metavar="N", help="judge requests in flight (default: %(default)s)")
    g.add_argument("--judge-timeout", type=float, default=120.0, metavar="S", help="seconds per judge request (default: %(default)s)")
    p.add_argument("--tasks-dir", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--catalogue", metavar="FILE", help=argparse.SUPPRESS)
    return p


# --- loading the benchmark's data -------------------------------------------------------------


def load_catalogue_or_fail(path: str | None) -> Catalogue:
    file = Path(path) if path else default_catalogue_path()
    try:
        return load_catalogue(file)
    except SpecError as exc:
        raise UsageError(f"cannot load the property catalogue {file}:\n{exc}") from None


# --- main -------------------------------------------------------------------------------------


def _progress(total: int, stderr_console):
    """A rich progress bar on stderr for large inputs on a terminal; a no-op otherwise."""
    from contextlib import nullcontext

    if total < PROGRESS_MIN or not stderr_console.is_terminal:
        return nullcontext(lambda: None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    class _Bar:
        def __enter__(self):
            self.progress = Progress(TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                     console=stderr_console, transient=True)
            self.progress.__enter__()
            task = self.progress.add_task("analyse", total=total)
            return lambda: self.progress.advance(task)

        def __exit__(self, *exc):
            return self.progress.__exit__(*exc)

    return _Bar()


def check_inputs(args: argparse.Namespace) -> list[Path]:
    paths = [Path(p) for p in args.paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.judge_concurrency < 1:
        raise UsageError("--judge-concurrency must be at least 1")
    if args.judge_timeout <= 0:
        raise UsageError("--judge-timeout must be positive")
    if args.out:
        parent = Path(args.out).resolve().parent
        if not parent.is_dir():
            raise UsageError(f"--out: folder {parent} does not exist")
        if Path(args.out).is_dir():
            raise UsageError(f"--out: {args.out} is a folder; give a file name")
    return paths


def main(argv: Iterable[str] | None = None) -> int:
    from rich.console import Console

    stderr = Console(stderr=True, highlight=False)
    warn = lambda msg: stderr.print(f"d2k-analyze: warning: {msg}", markup=False)  # noqa: E731
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)  # exits 2 on a bad option
    try:
        return run(args, stderr, warn)
    except UsageError as exc:
        stderr.print(f"d2k-analyze: error: {exc}", markup=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        stderr.print("d2k-analyze: interrupted", markup=False)
        return 130


def run(args: argparse.Namespace, stderr, warn) -> int:
    from . import pipeline
    from .judge import JudgeUnavailable
    from .eval_labels import evaluate, evaluate_layers
    from .reports import Report

    if args.trajectory:  # d2k-agent runs: every workspace snapshot (d2k_analyze/trajectory.py)
        from .trajectory import run_cli

        return run_cli(args, load_catalogue_or_fail(args.catalogue), UsageError)
    paths = check_inputs(args)
    catalogue = load_catalogue_or_fail(args.catalogue)
    tasks = pipeline.load_task_index(Path(args.tasks_dir) if args.tasks_dir else None, catalogue, warn)
    if args.task and args.task not in tasks:
        known = ", ".join(sorted(tasks)) or "none found"
        raise UsageError(f"unknown task '{args.task}' (known tasks: {known})")

    jobs = pipeline.jobs_for(paths, args.task)
    if not jobs:
        raise UsageError(f"no submissions (.py/.cu/.cuh sources) found under {', '.join(map(str, paths))}")
    mode = judge_mode(args)
    options = pipeline.Options(args.task, args.jobs, not args.no_compiled, judge_settings(args, mode) if mode != "none" else None)
    with _progress(len(jobs), stderr) as tick:
        update, stop = _judge_progress(stderr, "judging (batch)" if options.judge is not None and options.judge.batch else "judging")
        try:
            outcome = pipeline.run(jobs, catalogue, tasks, options, warn, tick, update)
        except JudgeUnavailable as exc:
            raise UsageError(str(exc)) from None
        finally:
            stop()
    results = outcome.results
    for line in outcome.judge_errors:
        stderr.print(f"d2k-analyze: {line}", markup=False)
    if outcome.judge_totals is not None:
        stderr.print(f"d2k-analyze: {outcome.judge_totals.line()} ({options.judge.client.model})", markup=False)

    evaluation = None
    if args.eval_labels:
        from d2k_spec.labels import labelled_folders

        if not labelled_folders(*paths):
            raise UsageError("--eval-labels: no labels.toml under the given paths")
        evaluation = evaluate([r.analysis for r in results], paths, catalogue)
        if mode != "none":  # static-only runs keep their report as it was
            evaluation.layers = evaluate_layers(results, paths, catalogue, tasks, judged=True)
    report = Report(results, catalogue, tasks, evaluation, outcome.judge_totals)
    write_report(report, args, stderr)
    failed = [r for r in results if r.failed]
    if failed:
        stderr.print(f"d2k-analyze: {len(failed)} of {len(results)} submissions had files that could not be analysed", markup=False)
    return EXIT_SOME_FAILED if failed else EXIT_OK


# --- the LLM judge ----------------------------------------------------------------------------


def judge_mode(args: argparse.Namespace) -> str:
    """--judge as given; by default the judge runs exactly when an API key is configured."""
    if args.judge is not None:
        return args.judge
    return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "none"


def judge_settings(args: argparse.Namespace, mode: str):
    from .judge import DEFAULT_MODEL, JudgeSettings
    from .judge.client import ClientSettings

    key = os.environ.get("ANTHROPIC_API_KEY") or None
    if mode == "anthropic" and not key:
        raise UsageError("--judge anthropic needs ANTHROPIC_API_KEY in the environment (or use --judge replay / none)")
    client = ClientSettings(
        model=args.judge_model or DEFAULT_MODEL, api_key=key,
        base_url=args.judge_base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
        timeout=args.judge_timeout, concurrency=args.judge_concurrency,
    )
    cache = Path(args.judge_cache) if args.judge_cache else None
    return JudgeSettings(mode, client, args.batch, cache, not args.no_judge_cache)


def _judge_progress(stderr_console, label: str):
    """(done, total) callback drawing a rich bar on a terminal; a no-op otherwise."""
    if not stderr_console.is_terminal:
        return lambda done, total: None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=stderr_console, transient=True)
    state: dict = {}

    def update(done: int, total: int) -> None:
        if "task" not in state:
            progress.start()
            state["task"] = progress.add_task(label, total=total)
        progress.update(state["task"], completed=done, total=total)

    return update, progress.stop


def write_report(report, args: argparse.Namespace, stderr) -> None:
    from rich.console import Console

    from .reports import FORMATS, terminal
    from .reports.document import evaluation_blocks

    if args.format == "table" and not args.out:
        # Piped output gets a wide fixed width instead of rich's 80 columns.
        terminal.render(report, Console(highlight=False, width=None if sys.stdout.isatty() else 160))
        return
    text = FORMATS[args.format](report)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--out: cannot write {args.out} ({exc.strerror or exc})") from None
        stderr.print(f"d2k-analyze: wrote {len(report.results)} submissions ({args.format}) to {args.out}", markup=False)
    else:
        sys.stdout.write(text)
    if report.evaluation is not None and args.format != "table":
        # The evaluation table always reaches the terminal too; stdout may be the machine format.
        console = Console(highlight=False) if args.out else stderr
        terminal.print_blocks(evaluation_blocks(report), console)
