"""``d2k-profile``: the command line.

Parses arguments, discovers submissions, plans the (submission, workload) pairs, runs them in
judges (each starting the sandbox that imports the submission) with a progress display, and prints
the summary. User mistakes (a missing path, a broken task.toml, an unknown task or workload, a
non-positive limit, an existing results file without ``--resume``, an output folder another run
holds) end with one clear line and exit code 2, never a traceback. Ctrl-C kills every process of
the run, keeps every record already written, and exits with 130.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from d2k_spec.catalogue import load_catalogue
from d2k_spec.locations import ENV_SUITE, LocationError, catalogue_path, tasks_root as locate_tasks_root
from d2k_spec import exit_codes, outputs
from d2k_spec.schema import SpecError
from d2k_spec.task import load_task

from . import summary
from .discovery import DiscoveryError, discover
from .isolation import Limits
from .lock import LockHeld, OutLock
from .native import NativeBuildError
from .procs import REGISTRY
from .results import Record, ResultStore, load_records
from .runner import RunOptions, Runner, UsageError, plan
from .backends import BACKENDS
from .store import UnitStore
from .units import UnitKeys

EPILOG = """examples:
  d2k-profile tasks/softmax                      profile the softmax expert (with the reference)
  d2k-profile corpus/ --out results/corpus       every corpus kernel, all workloads
  d2k-profile runs/claude-guided/ --resume --out results/claude-guided
  d2k-profile my_kernel/ --task softmax --workloads m8192_n1024 --mode graph
  d2k-profile tasks/softmax --self-check         reference timed against itself (noise floor)
  d2k-profile corpus/softmax --smoke             quick check on the tiny smoke workload

Without a GPU the same commands check correctness on the smoke workloads only (Triton through
TRITON_INTERPRET=1, the reference on the CPU); CUDA C++ submissions are marked skipped.
Results: OUT/results.jsonl (one JSON line per submission x workload, pandas.read_json(lines=True)),
OUT/summary.csv, OUT/environment.json, OUT/logs/. OUT is created if missing; a summary.csv or
environment.json there that d2k did not write is not overwritten without --force.

PATH is a submission folder, its module file (submission.py or another .py), a task folder, or a
folder of submissions (corpus/, runs/<run>/). The task is --task (an id or a task folder), else the
enclosing task folder, else the nearest enclosing folder named like a task (corpus/<task>/<variant>,
runs/<run>/<task>, anywhere/<task>/<variant>); the tasks come from --tasks-root, else $D2K_SUITE,
else the bundled suite.

""" + exit_codes.HELP + "\n"


FLUSH_MODES = {"write": 1, "write-read": 2, "read": 3}


def positive(kind: type):
    """An argparse type: a number greater than zero (a zero or negative limit is a mistake)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def nonnegative_int(text: str) -> int:
    """An argparse type: a whole number >= 0 (a count of retries)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="d2k-profile", description="Isolated, cheat-resistant GPU benchmarking of kernel submissions against the task reference.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="submission folder, task folder (its expert), corpus/ or runs/<run>/")
    p.add_argument("--task", help="task id (or task folder) for submissions outside tasks/, corpus/<task>/ and runs/<run>/<task>/")
    p.add_argument("--workloads", nargs="+", metavar="NAME", help="only these workloads (default: all timed workloads)")
    p.add_argument("--out", default="d2k-profile-out", type=Path, help="output folder (default: %(default)s)")
    p.add_argument("--resume", action="store_true", help="continue OUT/results.jsonl, skipping finished pairs (and taking those in the unit store from it)")
    p.add_argument("--gpus", default="0", help="comma-separated GPU indices to spread submissions over, one timing judge per GPU at a time (default: %(default)s)")
    p.add_argument("--store", type=Path, default=None, metavar="DIR",
                   help="content-addressed unit store shared by runs: a unit (same code, task, workload, settings, device model "
                        "and toolchain) already in it is not run again (default: OUT/store, read only under --resume)")
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="where judges run: local (one per GPU of --gpus on this machine) or ray (a Ray task per submission, "
                        "one whole GPU each; needs pip install 'd2k-bench[ray]') (default: %(default)s)")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="with --backend ray: 'auto' or a cluster address (default: start a Ray instance on this machine)")
    p.add_argument("--health-every", type=nonnegative_int, default=10, metavar="N",
                   help="run the GPU health check before a GPU's first submission, after a lost judge on it, and every N "
                        "submissions; a GPU failing it 3 times in a row leaves the pool (0: no checks) (default: %(default)s)")
    p.add_argument("--retries", type=nonnegative_int, default=1,
                   help="re-runs on another GPU of a workload whose judge process was lost; a failure of the submission is never retried (default: %(default)s)")
    p.add_argument("--mode", choices=("eager", "graph"), default="eager", help="eager per-call timing, or CUDA-graph replay for very short kernels")
    p.add_argument("--smoke", action="store_true", help="only the tiny smoke workload")
    p.add_argument("--self-check", action="store_true", help="also time each task's reference against itself (noise floor)")
    p.add_argument("--timeout", type=positive(float), default=300.0, help="seconds per workload before its sandbox is killed (default: %(default)s)")
    p.add_argument("--build-timeout", type=positive(float), default=600.0, help="seconds to import/compile a submission (default: %(default)s)")
    p.add_argument("--budget", type=positive(float), default=1.0, help="timing budget per workload in seconds, all implementations together (default: %(default)s)")
    p.add_argument("--target-rse", type=positive(float), default=0.0015, help="stop timing when every implementation's median has a relative standard error below this, estimated from the IQR (default: %(default)s)")
    p.add_argument("--jobs", type=positive(int), default=2, help="parallel pre-builds and compile checks, and parallel judges without a GPU (default: %(default)s)")
    p.add_argument("--tasks-root", type=Path, default=None, metavar="DIR",
                   help=f"folder of task folders (default: ${ENV_SUITE}/tasks, else the bundled tasks)")
    p.add_argument("--catalogue", type=Path, default=None, metavar="FILE",
                   help="also check the task specs' design properties against this property catalogue before "
                   "anything runs (default: not checked; d2k-profile does not use design properties)")
    p.add_argument("--cpu", action="store_true", help="behave as on a machine without a GPU")
    p.add_argument("--force", action="store_true", help="overwrite a summary.csv / environment.json in OUT that d2k did not write")
    p.add_argument("--no-prebuild", action="store_true", help="compile each submission in its timing worker only")
    p.add_argument("--no-sandbox", action="store_true", help="do not confine the process that imports the submission (debugging only)")
    p.add_argument("--flush", choices=tuple(FLUSH_MODES), default="read",
                   help="L2 flush before each timed call: a read sweep of 2x the L2 (default: evicts, leaves no dirty lines), "
                        "write then read, or the old write-only sweep (for comparisons)")
    p.add_argument("--no-kernel-trace", action="store_true",
                   help="skip the CUPTI trace of the timed calls (kernel times and the device-activity cross-checks); off by itself under ncu/nsys")
    return p


OUTPUT_FILES = ("summary.csv", "environment.json")  # rewritten by every run (results.jsonl is --resume's)


def submission_files(subs) -> list[Path]:
    """Every file of the submissions being profiled: an output must never overwrite one."""
    files = []
    for s in subs:
        path = Path(s.path)
        files += [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
    return files


def has_gpu(force_cpu: bool) -> bool:
    if force_cpu:
        return False
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


class Progress:
    """A rich progress bar when rich is installed, else one line per finished pair."""

    def __init__(self, total: int):
        self.total, self.done = total, 0
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

            self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            self.bar_task = self.bar.add_task("profiling", total=total)
        except ImportError:
            self.bar = None

    def __enter__(self):
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()

    def update(self, rec: Record) -> None:
        self.done += 1
        line = f"{rec.task}/{rec.workload}/{rec.submission}: {rec.status.value}"
        if rec.timing:
            line += f" {rec.timing.median_ms:.4f} ms"
            if rec.speedup_vs_reference:
                line += f" ({rec.speedup_vs_reference:.2f}x ref)"
        if self.bar is not None:
            self.bar.update(self.bar_task, advance=1, description=line[:80])
        else:
            print(f"[{self.done}/{self.total}] {line}", flush=True)


def _one_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[0] + (f" (and {plural(len(lines) - 1, 'more problem')})" if len(lines) > 1 else "") if lines else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    gpu = has_gpu(args.cpu)
    lock = OutLock(args.out)
    try:
        tasks_root = locate_tasks_root(args.tasks_root).resolve()
        subs = discover(args.paths, tasks_root, args.task, args.self_check)
        catalogue = load_catalogue(catalogue_path(args.catalogue)) if args.catalogue else None
        specs = {s.task_id: load_task(s.task_path, catalogue) for s in subs}
        opts = RunOptions(
            out=args.out, mode=args.mode, smoke=args.smoke, workloads=args.workloads, resume=args.resume,
            gpus=[g.strip() for g in args.gpus.split(",") if g.strip()], jobs=args.jobs,
            limits=Limits(build_timeout_s=args.build_timeout, workload_timeout_s=args.timeout),
            timing={"budget_s": args.budget, "target_rse": args.target_rse, "kernel_trace": not args.no_kernel_trace,
                    "flush_mode": FLUSH_MODES[args.flush]},
            prebuild=not args.no_prebuild, sandbox=not args.no_sandbox, store=args.store, retries=args.retries,
            backend=args.backend, ray_address=args.ray_address, health_every=args.health_every,
        )
        outputs.check_folder(args.out, OUTPUT_FILES, force=args.force, inputs=submission_files(subs))
        args.out.mkdir(parents=True, exist_ok=True)
        lock.acquire()
        store = ResultStore(args.out / "results.jsonl", resume=args.resume)
        units, keys = UnitStore(opts.store_root), opts.unit_keys(gpu)
        jobs, skipped = plan(subs, opts, gpu, store, units if opts.store_readable else None, keys)
    except (DiscoveryError, UsageError, FileExistsError, SpecError, LocationError, LockHeld, tomllib.TOMLDecodeError, OSError) as exc:
        lock.release()
        print(f"d2k-profile: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    try:
        return _run(args, opts, store, jobs, skipped, subs, specs, gpu, units, keys)
    except KeyboardInterrupt:
        killed = REGISTRY.kill_all()
        n = len(load_records(store.path))
        print(f"\nd2k-profile: interrupted: {plural(killed, 'process group')} killed; {plural(n, 'record')} kept in {store.path} "
              "(run again with --resume to finish)", file=sys.stderr)
        return 130
    except NativeBuildError as exc:
        REGISTRY.kill_all()
        print(f"d2k-profile: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    finally:
        REGISTRY.kill_all()
        lock.release()


def _run(args, opts: RunOptions, store: ResultStore, jobs, skipped: int, subs, specs, gpu: bool, units: UnitStore, keys: UnitKeys) -> int:
    if not gpu:
        print("d2k-profile: no GPU: checking correctness on the smoke workloads only; timing needs a GPU. "
              "CUDA C++ submissions are compile-checked when nvcc is present, then skipped.", flush=True)
    total = sum(len(j.workloads) for j in jobs)
    print(f"d2k-profile: {plural(len(subs), 'submission')}, {plural(total, 'pair')} to run" + (f", {skipped} already done (--resume / the unit store)" if skipped else ""),
          flush=True)
    with Progress(total) as progress:
        runner = Runner(opts, store, gpu, progress.update, units, keys)
        try:
            runner.run(jobs)
        finally:
            runner.write_environment()
    rows = summary.summarize(load_records(store.path), tasks=specs)
    summary.write_csv(rows, args.out / "summary.csv")
    for name in OUTPUT_FILES:  # the tool's own: a later run may overwrite them without --force
        if (args.out / name).is_file():
            outputs.record(args.out / name)
    summary.print_table(rows)
    weak = sorted({w for r in rows for w in r.weak_workloads})
    if weak:
        print("WARNING: workloads passed by a null kernel (too weak): " + ", ".join(weak))
    print(f"results: {store.path}  summary: {args.out / 'summary.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
