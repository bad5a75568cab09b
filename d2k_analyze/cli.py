"""``d2k-analyze``: the command-line shell over :mod:`d2k_analyze.pipeline`.

Arguments in, one report format out (plus the label evaluation with ``--eval-labels``). The work
itself (static layers, compiled layer, scoring, judge pass) is the pipeline's. User mistakes
(missing path, unknown task, bad option, an output that would overwrite an input or a file the tool
did not write) print one clear line and exit 2, never a traceback; a run that could not analyse
everything exits 1 and lists what (:mod:`d2k_spec.exit_codes`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Iterable

from d2k_spec import exit_codes, outputs
from d2k_spec.catalogue import Catalogue, load_catalogue
from d2k_spec.layout import UnknownTask, resolve_task_arg
from d2k_spec.locations import ENV_SUITE, LocationError, catalogue_path, tasks_root
from d2k_spec.schema import SpecError
from d2k_spec.task import check_task

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE = exit_codes.OK, exit_codes.INCOMPLETE, exit_codes.USAGE
PROGRESS_MIN = 20  # show a progress bar from this many submissions on
MAX_LISTED = 50  # problems listed one per line on stderr; the rest are counted

EPILOG = f"""\
examples:
  d2k-analyze corpus/                          terminal summary of every submission under corpus/
  d2k-analyze runs/r1/softmax --task softmax   score a folder against the softmax design items
  d2k-analyze corpus/ --format jsonl --out results.jsonl
        then in Python: t = d2k_analyze.load_results("results.jsonl"); t.submissions, t.items,
        t.units, t.findings (pandas DataFrames, one per table; docs/results.md)
  d2k-analyze corpus/ --format sarif --out d2k.sarif   missing design items for code review tools
  d2k-analyze corpus/ --format html --out report.html  self-contained page (no network)
  d2k-analyze corpus/ --eval-labels            detector precision/recall/F1 against labels.toml

LLM judge (docs/judge.md): with ANTHROPIC_API_KEY set the judge grades every design item
(default model: see --judge-model), verdicts are cached; without a key the score is static-only.
  d2k-analyze corpus/ --judge anthropic --format jsonl --out judged.jsonl
  d2k-analyze corpus/ --judge anthropic --batch        Message Batches API (half price, slower)
  d2k-analyze corpus/ --judge replay --eval-labels     cached verdicts only; static vs judge vs combined

PATH is a submission folder, one source file (.py/.cu/.cuh), or a folder of submissions.
The task of a submission is --task (an id or a task folder), else the enclosing task folder
(tasks/<task>/expert), else the nearest enclosing folder named like a task (corpus/<task>/<variant>,
runs/<run>/<task>/, anywhere/<task>/<variant>); without one only kernel properties are reported.
The tasks and the property catalogue: --tasks-root / --catalogue, else ${ENV_SUITE} (a folder with
tasks/ and optionally rubrics/properties.toml), else the bundled suite.
--out creates missing folders, writes atomically, never overwrites an analysed input, and
overwrites an existing file only if d2k wrote it (or with --force).
The compiled layer runs nvcc (sm_90: PTX, SASS where cuobjdump exists, -Xptxas -v) when nvcc is
on PATH, caching by content under $XDG_CACHE_HOME/d2k-bench/compiled; without nvcc it is skipped.
For launched Triton kernels of a known task it runs triton.compile for sm_90 and sm_100 (no GPU
needed) in a sandboxed subprocess and reads TTGIR/PTX; without triton installed it is skipped.

{exit_codes.HELP}
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
    p.add_argument("--task", metavar="ID|DIR", help="task id, or task folder, to score every submission against (default: from the folder layout)")
    p.add_argument("--format", default="table", choices=list(FORMATS), help="output format (default: table, a terminal summary)")
    p.add_argument("--out", metavar="FILE", help="write the report to FILE instead of standard output (missing folders are created)")
    p.add_argument("--force", action="store_true", help="let --out overwrite an existing file that d2k did not write")
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
    p.add_argument("--tasks-root", metavar="DIR", help=f"folder of task folders (default: ${ENV_SUITE}/tasks, else the bundled tasks)")
    p.add_argument("--catalogue", metavar="FILE",
                   help=f"property catalogue (default: ${ENV_SUITE}/rubrics/properties.toml if present, else the bundled one)")
    p.add_argument("--tasks-dir", dest="tasks_root", help=argparse.SUPPRESS)  # the old name, kept for scripts
    return p


# --- loading the benchmark's data -------------------------------------------------------------


def load_catalogue_or_fail(path: str | None) -> Catalogue:
    try:
        file = catalogue_path(path)
        return load_catalogue(file)
    except LocationError as exc:
        raise UsageError(str(exc)) from None
    except SpecError as exc:
        raise UsageError(f"cannot load the property catalogue {file}:\n{exc}") from None


def tasks_root_or_fail(flag: str | None) -> Path:
    try:
        return tasks_root(flag)
    except LocationError as exc:
        raise UsageError(str(exc)) from None


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


def is_analysed_input(paths: list[Path]):
    """Whether a file is one the analyzer reads under ``paths``: a PATH itself, or a source file
    (or labels.toml) below a PATH folder. Answers without walking the tree."""
    from .sources import SOURCE_SUFFIXES

    roots = [p.resolve() for p in paths]

    def check(target: Path) -> bool:
        t = target.resolve()
        if any(t == r for r in roots):
            return True
        readable = t.suffix.lower() in SOURCE_SUFFIXES or t.name == "labels.toml"
        return readable and t.exists() and any(r.is_dir() and t.is_relative_to(r) for r in roots)

    return check


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
        try:
            outputs.check_target(Path(args.out), force=args.force, is_input=is_analysed_input(paths))
        except outputs.OutputRefused as exc:
            raise UsageError(f"--out: {exc}") from None
    return paths


def resolve_task(arg: str, root: Path, tasks: dict, catalogue: Catalogue) -> str:
    """``--task`` as an id or a task folder; a folder outside the tasks root is loaded and added."""
    try:
        folder = resolve_task_arg(arg, root)
    except UnknownTask as exc:
        known = ", ".join(sorted(tasks)) or "none found"
        raise UsageError(f"{exc}; usable tasks: {known}") from None
    if folder.name in tasks and tasks[folder.name].path.resolve() == folder:
        return folder.name
    task, problems = check_task(folder, catalogue)
    if task is None or problems:
        raise UsageError(f"--task {arg}: the task spec is not usable:\n" + "\n".join(map(str, problems)))
    tasks[task.id] = task
    return task.id


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def main(argv: Iterable[str] | None = None) -> int:
    from rich.console import Console

    stderr = Console(stderr=True, highlight=False, soft_wrap=True)  # one problem, one line (greppable)
    warn = lambda msg: stderr.print(f"d2k-analyze: warning: {msg}", markup=False)  # noqa: E731
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)  # exits 2 on a bad option
    exit_codes.install_sigterm_handler()
    try:
        return run(args, stderr, warn)
    except UsageError as exc:
        stderr.print(f"d2k-analyze: error: {exc}", markup=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        stderr.print("d2k-analyze: interrupted", markup=False)
        return exit_codes.INTERRUPTED
    except exit_codes.Terminated:
        stderr.print("d2k-analyze: terminated", markup=False)
        return exit_codes.TERMINATED


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
    root = tasks_root_or_fail(args.tasks_root)
    task_problems: list[str] = []

    def task_warning(msg: str) -> None:  # an unusable task spec makes the run incomplete
        task_problems.append(msg)
        warn(msg)

    tasks = pipeline.load_task_index(root, catalogue, task_warning)
    task = resolve_task(args.task, root, tasks, catalogue) if args.task else None

    jobs = pipeline.jobs_for(paths, task, root)
    if not jobs:
        raise UsageError(f"no submissions (.py/.cu/.cuh sources) found under {', '.join(map(str, paths))}")
    no_task = [j for j in jobs if j.task is None and not _vendored(Path(j.path))]
    if no_task:
        warn(f"{plural(len(no_task), 'submission')} with no task (e.g. {no_task[0].path}): kernel properties only, "
             "no implementation score; put it under a folder named like its task or pass --task")
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
    problems = task_problems + [f"{r.analysis.name}: {p}" for r in results for p in r.problems]
    for line in problems[:MAX_LISTED]:
        stderr.print(f"d2k-analyze: incomplete: {line}", markup=False)
    if len(problems) > MAX_LISTED:
        stderr.print(f"d2k-analyze: ... and {len(problems) - MAX_LISTED} more", markup=False)
    incomplete = [r for r in results if r.problems]
    if incomplete:
        stderr.print(f"d2k-analyze: {len(incomplete)} of {plural(len(results), 'submission')} could not be analysed in full", markup=False)
    return exit_codes.status(len(problems))


# --- the LLM judge ----------------------------------------------------------------------------


def _vendored(path: Path) -> bool:
    """Public code vendored with its provenance record (``corpus/wild``): it has no task by
    nature, so the no-task warning would only be noise."""
    from d2k_spec.upstream import UPSTREAM_FILE

    return any((parent / UPSTREAM_FILE).is_file() for parent in [path, *path.resolve().parents][:6])


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
            outputs.write_text(Path(args.out), text)
        except OSError as exc:
            raise UsageError(f"--out: cannot write {args.out} ({exc.strerror or exc})") from None
        stderr.print(f"d2k-analyze: wrote {plural(len(report.results), 'submission')} ({args.format}) to {args.out}", markup=False)
    else:
        sys.stdout.write(text)
    if report.evaluation is not None and args.format != "table":
        # The evaluation table always reaches the terminal too; stdout may be the machine format.
        console = Console(highlight=False) if args.out else stderr
        terminal.print_blocks(evaluation_blocks(report), console)
