"""``d2k-report``: the paired comparison of runs, from the command line.

User mistakes (a path that is not a run, a bad run.toml, an unknown run in --pair, an output
folder that cannot be written, or files in it the tool did not write) print clear lines and exit
2, never a traceback. Incomplete runs are not mistakes: the report says what is missing and applies
the stated rule. Inputs that could not be handled in full (unreadable result lines, an unusable
task spec) are listed and make the exit status 1 (:mod:`d2k_spec.exit_codes`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterable

from d2k_spec import exit_codes
from d2k_spec.locations import ENV_SUITE, LocationError, catalogue_path, tasks_root
from d2k_spec.outputs import OutputRefused, check_folder
from d2k_spec.schema import SpecError

from .bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED, BootstrapConfig
from .report import ReportError, build_report, output_names, write_outputs
from .runs import RUN_FILE, expand_run_paths

EPILOG = f"""\
examples:
  d2k-report runs/r1-guided runs/r1-unguided --out report/
        one model, guided and unguided: paired automatically (same model, one run per condition)
  d2k-report runs/ --pair r1-guided r1-unguided --pair r2-guided r2-unguided --out report/
        every run under runs/, two explicit pairs (GUIDED first)
  d2k-report examples/runs/demo_optimized examples/runs/demo_naive --out /tmp/demo-report
        the shipped DEMONSTRATION (corpus kernels, real H200 timings; not agent results)

a run is a folder with {RUN_FILE} (model, condition = "guided" | "unguided", budget, notes), one
submission folder per task (<run>/<task_id>/, or [tasks] entries pointing at folders), and its
results: analyze.jsonl (d2k-analyze --format jsonl) and profile.jsonl (d2k-profile).

writes to --out (created if missing): report.html (self-contained, plots inline), report.md,
report.json, and coverage.csv, headline.csv, per_task.csv, design_items.csv, properties.csv.
Files there that d2k did not write are not overwritten without --force.

the suite (task specs, and the number of tasks the run metrics average over): --tasks-root /
--catalogue, else ${ENV_SUITE} (a folder with tasks/ and optionally rubrics/properties.toml), else the
bundled suite. Incomplete runs are not errors: the report says what is missing (missing = 0).

{exit_codes.HELP}
"""


class UsageError(Exception):
    """A mistake in the command line or its inputs: reported in one line, exit 2."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="d2k-report",
        description="Paired comparison of benchmark runs (the same agent with and without expert guidance): "
        "correctness, Performance Score, speedups, fast_p, implementation scores and the design properties that "
        "remain unimplemented, with bootstrap 95 % confidence intervals over tasks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help=f"run folders (holding {RUN_FILE}), run.toml files, or folders of runs")
    p.add_argument("--pair", nargs=2, action="append", metavar=("GUIDED", "UNGUIDED"),
                   help="compare two runs by name (folder name); repeatable. Default: pair per model")
    p.add_argument("--out", metavar="DIR", default="report", help="output folder, created if missing (default: %(default)s)")
    p.add_argument("--force", action="store_true", help="overwrite files in --out that d2k did not write")
    p.add_argument("--mixed-devices", action="store_true",
                   help="compare a pair whose runs were timed on different GPU models (refused by default: their speedups "
                        "are not comparable); the report then says so")
    p.add_argument("--suite-size", type=int, default=None, metavar="N",
                   help="tasks in the suite; missing tasks count 0 (default: the number of task folders under the tasks root)")
    p.add_argument("--bootstrap", type=int, default=DEFAULT_N_BOOT, metavar="B", help="bootstrap resamples (default: %(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (default: %(default)s)")
    p.add_argument("--tasks-root", metavar="DIR", help=f"folder of task folders (default: ${ENV_SUITE}/tasks, else the bundled tasks)")
    p.add_argument("--catalogue", metavar="FILE",
                   help=f"property catalogue (default: ${ENV_SUITE}/rubrics/properties.toml if present, else the bundled one)")
    p.add_argument("--tasks-dir", dest="tasks_root", help=argparse.SUPPRESS)  # the old name, kept for scripts
    return p


def check_args(args: argparse.Namespace) -> list[Path]:
    paths = expand_run_paths([Path(r) for r in args.runs])
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    not_runs = [str(p) for p in paths if p.is_dir() and not (p / RUN_FILE).is_file()]
    if not_runs:
        raise UsageError(f"not a run (no {RUN_FILE}): {', '.join(not_runs)}")
    if args.suite_size is not None and args.suite_size < 1:
        raise UsageError("--suite-size must be at least 1")
    if args.bootstrap < 0:
        raise UsageError("--bootstrap must be 0 (no intervals) or more")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a folder")
    return paths


def main(argv: Iterable[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)  # exits 2 on a bad option
    err = lambda msg: print(f"d2k-report: error: {msg}", file=sys.stderr)  # noqa: E731
    exit_codes.install_sigterm_handler()
    try:
        paths = check_args(args)
        report = build_report(paths, [tuple(p) for p in args.pair or []], suite_size=args.suite_size,
                              config=BootstrapConfig(n_boot=args.bootstrap, seed=args.seed),
                              tasks_root=tasks_root(args.tasks_root), catalogue_file=catalogue_path(args.catalogue),
                              mixed_devices=args.mixed_devices)
        out = Path(args.out)
        input_files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
        check_folder(out, output_names(report), force=args.force, inputs=input_files)
        written = write_outputs(report, out)
    except SpecError as exc:
        err("invalid run description:")
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return exit_codes.USAGE
    except (UsageError, ReportError, LocationError, OutputRefused) as exc:
        err(str(exc))
        return exit_codes.USAGE
    except OSError as exc:
        err(f"cannot write the report to {args.out}: {exc.strerror or exc}")
        return exit_codes.USAGE
    except KeyboardInterrupt:
        print("d2k-report: interrupted", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except exit_codes.Terminated:
        print("d2k-report: terminated", file=sys.stderr)
        return exit_codes.TERMINATED
    for note in report.notes:
        print(f"d2k-report: {note}", file=sys.stderr)
    print(f"d2k-report: wrote {len(written)} file{'s' if len(written) != 1 else ''} to {args.out} "
          f"(open {Path(args.out) / 'report.html'})", file=sys.stderr)
    if report.problems:
        print(f"d2k-report: {len(report.problems)} input problem{'s' if len(report.problems) != 1 else ''} "
              "(listed above): the report is incomplete", file=sys.stderr)
    return exit_codes.status(len(report.problems))


if __name__ == "__main__":
    sys.exit(main())
