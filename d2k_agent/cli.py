"""``d2k-agent``: the command line over :mod:`d2k_agent.runner`.

User mistakes and missing prerequisites (no key, unknown model, bad option) print one line and
exit 2, never a traceback; nothing falls back to another model or adapter.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from d2k_spec.schema import SpecError
from d2k_spec.task import default_tasks_root, load_task

from . import runner
from .adapters import ADAPTERS
from .errors import ConfigError
from .layout import RunConfig
from .prompts import DEFAULT_VERSION, render

EPILOG = """examples:
  d2k-agent run --tasks softmax,layernorm --arm both --model claude-sonnet-4-5 --out runs/sonnet
        (ANTHROPIC_API_KEY set; needs network access to the model API) writes runs/sonnet-guided/ and runs/sonnet-unguided/
  d2k-agent run --tasks all --arm both --agent openai-compatible --base-url http://localhost:8000/v1 --model Qwen/Qwen3-32B --out runs/qwen
  d2k-agent run --tasks softmax --arm guided --agent command --command claude --model claude-sonnet-4-5 --out runs/cc
  d2k-agent run --tasks softmax,layernorm --arm both --agent replay --replay examples/agent/replay --out runs/replay
  d2k-agent status runs/sonnet          d2k-agent resume runs/sonnet          d2k-agent clean runs/sonnet
  d2k-agent prompt --task softmax --arm guided
  d2k-report runs/sonnet-guided runs/sonnet-unguided --out report/
"""


def duration(text: str) -> float:
    """Seconds from '90', '90s', '30m' or '2h'."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 90s, 30m, 2h)")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def _machine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=int, default=1, help="(arm, task) runs in parallel (default: %(default)s)")
    p.add_argument("--gpus", default="0", help="GPU indices shared by the tool calls, comma-separated (default: %(default)s)")
    p.add_argument("--eval-gpus", default="", metavar="LIST",
                   help="GPU indices reserved for the final evaluations; without them (or where they overlap --gpus) the final "
                        "evaluations wait until every agent loop has ended, so agent load never disturbs their timings")
    p.add_argument("--eval-backend", choices=["local", "ray"], default="local",
                   help="local: time final evaluations on this machine's GPUs; ray: through d2k-profile's Ray backend (default: %(default)s)")
    p.add_argument("--ray-address", default="auto", help="the Ray cluster for --eval-backend ray (default: %(default)s)")
    p.add_argument("--cpu", action="store_true", help="behave as on a machine without a GPU")
    p.add_argument("--work-root", help="where workspaces live while an agent runs (default: $TMPDIR/d2k-agent-work)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="d2k-agent", description="Run kernel-writing agents on D2K-Bench tasks, with and without guidance.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="run an agent on tasks in one or both arms")
    r.add_argument("--tasks", required=True, help="comma-separated task ids, or all")
    r.add_argument("--arm", default="both", help="guided, unguided or both (default: %(default)s)")
    r.add_argument("--agent", default="anthropic", choices=ADAPTERS, help="adapter (default: %(default)s)")
    r.add_argument("--model", required=True, help="model id (an unknown model fails; never falls back)")
    r.add_argument("--turns", type=int, default=350, help="turn budget per task: model responses (default: %(default)s)")
    r.add_argument("--out", required=True, help="runs/<name>: writes runs/<name>-guided and/or runs/<name>-unguided")
    r.add_argument("--base-url", default="", help="API base URL (openai-compatible: the server; command: the upstream of the proxy)")
    r.add_argument("--api-key-env", default="", help="variable holding the API key (default: ANTHROPIC_API_KEY / OPENAI_API_KEY)")
    r.add_argument("--replay", default="", help="replay adapter: a recorded transcript, or a folder of <task>[.<arm>].jsonl")
    r.add_argument("--command", default="", help="command adapter: a preset (claude) or a command line with {user} {system} {prompt_file} {turns} {model}")
    r.add_argument("--max-cost", type=float, default=None, help="USD per task run; checked before each model call")
    r.add_argument("--max-total-cost", type=float, default=None, help="USD over every run of this invocation")
    r.add_argument("--wall-time", type=duration, default=None, help="wall time per task run (e.g. 2h)")
    r.add_argument("--profile-budget", type=float, default=None,
                   help="timing seconds per workload for bench and the final evaluation (d2k-profile --budget; default: its own)")
    r.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "none"), help="bubblewrap sandbox (default: where it works)")
    r.add_argument("--max-attempts", type=int, default=2, help="attempts per task after infrastructure failures (default: %(default)s)")
    r.add_argument("--prompt-version", default=DEFAULT_VERSION, help="prompt templates (rubrics/agent/prompt_<v>.toml)")
    r.add_argument("--prices", default="", help="price table (default: rubrics/agent/prices.toml)")
    r.add_argument("--tasks-root", default="", help=argparse.SUPPRESS)
    r.add_argument("--no-eval", action="store_true", help="skip the final evaluation (run `d2k-agent evaluate` later)")
    r.add_argument("--keep-workspace", action="store_true", help="keep the workspace after the final record")
    _machine_args(r)

    for name, text in (("status", "what is finished, unfinished or failed"), ("resume", "re-run unfinished tasks from scratch as their next attempt")):
        s = sub.add_parser(name, help=text)
        s.add_argument("runs", nargs="+", metavar="RUN", help="run folder, or runs/<name> for both arms")
        if name == "resume":
            s.add_argument("--max-attempts", type=int, default=None, help="raise the attempt limit")
            s.add_argument("--keep-workspace", action="store_true")
            _machine_args(s)

    c = sub.add_parser("clean", help="remove scratch workspaces (and with options, unfinished tasks or whole runs)")
    c.add_argument("runs", nargs="+", metavar="RUN")
    c.add_argument("--unfinished", action="store_true", help="also delete unfinished tasks (attempts restart at 1)")
    c.add_argument("--all", action="store_true", help="delete the run folders")
    c.add_argument("--work-root")

    e = sub.add_parser("evaluate", help="re-run the final evaluation of finished tasks")
    e.add_argument("runs", nargs="+", metavar="RUN")
    e.add_argument("--only", choices=("profile", "analyze"))
    _machine_args(e)

    pr = sub.add_parser("prompt", help="print the prompt of a task and arm verbatim")
    pr.add_argument("--task", required=True)
    pr.add_argument("--arm", required=True, choices=("guided", "unguided"))
    pr.add_argument("--turns", type=int, default=350)
    pr.add_argument("--prompt-version", default=DEFAULT_VERSION)
    pr.add_argument("--tasks-root", default="", help=argparse.SUPPRESS)
    return p


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:.4f}"


def _print_results(results) -> int:
    bad = 0
    for r in results:
        rec = r.record or {}
        if r.status == "failed":
            bad += 1
            print(f"{r.arm:9s} {r.task:14s} FAILED after {r.attempt} attempt(s): " + " | ".join(r.errors))
            continue
        ev = rec.get("evaluation", {})
        print(f"{r.arm:9s} {r.task:14s} {r.status}: attempt {rec.get('attempt')}, {rec.get('end_reason')}, {rec.get('turns')} turns, "
              f"{_money(rec.get('cost_usd'))}; profile {ev.get('profile', {}).get('status')}, analyze {ev.get('analyze', {}).get('status')}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return _dispatch(args)
    except ConfigError as exc:
        print(f"d2k-agent: error: {exc}", file=sys.stderr)
        return 2


def _dispatch(args) -> int:
    if args.cmd == "prompt":
        root = Path(args.tasks_root) if args.tasks_root else default_tasks_root()
        if not (root / args.task / "task.toml").is_file():
            raise ConfigError(f"unknown task {args.task!r}")
        try:
            task = load_task(root / args.task)
        except SpecError as exc:
            raise ConfigError(str(exc)) from exc
        print(render(task, args.arm, args.turns, args.prompt_version).verbatim())
        return 0
    if args.cmd == "status":
        rows = runner.status(args.runs)
        for s in rows:
            print(f"{s.run:28s} {s.task:14s} {s.state:11s} attempts {s.attempts}  turns {s.turns if s.turns is not None else '-':>4}  "
                  f"cost {_money(s.cost_usd) if s.turns is not None else '-':>10}  {s.end_reason}  profile {s.profile}, analyze {s.analyze}"
                  + (f"  ({s.note})" if s.note else ""))
        return 0
    if args.cmd == "clean":
        removed = runner.clean(args.runs, Path(args.work_root) if args.work_root else runner.default_work_root(), args.unfinished, args.all)
        print("\n".join(f"removed {r}" for r in removed) or "nothing to remove")
        return 0
    if args.cmd == "run":  # cheap checks first: a mistake costs no GPU probe
        runner.arms_of(args.arm)
    machine = runner.machine_for(args.cpu, args.gpus, args.jobs, args.work_root, getattr(args, "keep_workspace", False),
                                 args.eval_gpus, args.eval_backend, args.ray_address)
    if args.cmd == "evaluate":
        for run, task, ev in runner.evaluate(args.runs, machine, args.only):
            print(f"{run} {task}: " + ", ".join(f"{k} {v.get('status', v) if isinstance(v, dict) else v}" for k, v in ev.items()))
        return 0
    if not machine.has_gpu:
        print("d2k-agent: no GPU: test checks the smoke workload only (Triton interpreter), bench is skipped with a message", file=sys.stderr)
    if args.cmd == "resume":
        configs = runner.resume_configs(args.runs, args.max_attempts)
        prepared = runner.prepare(configs, fresh=False)
        return _with_progress(configs, lambda ev: runner.execute(configs, machine, ev, fresh=False, prepared=prepared))
    tasks_root = Path(args.tasks_root) if args.tasks_root else default_tasks_root()
    base = RunConfig(
        name=args.out, arm="guided", tasks=runner.resolve_tasks(args.tasks, tasks_root), adapter=args.agent, model=args.model,
        turns=args.turns, base_url=args.base_url, api_key_env=args.api_key_env, replay=args.replay, command=args.command,
        max_cost=args.max_cost, max_total_cost=args.max_total_cost, wall_time_s=args.wall_time, sandbox=args.sandbox,
        max_attempts=args.max_attempts, prompt_version=args.prompt_version, prices=args.prices,
        tasks_root=str(tasks_root) if args.tasks_root else "", gpus=machine.gpus, evaluate=not args.no_eval,
        profile_budget=args.profile_budget,
    )
    configs = runner.run_configs(args.out, runner.arms_of(args.arm), base)
    prepared = runner.prepare(configs, fresh=True)
    return _with_progress(configs, lambda ev: runner.execute(configs, machine, ev, prepared=prepared))


def _with_progress(configs: list[RunConfig], go) -> int:
    from .progress import RunProgress

    units = [(c.arm, t) for c in configs for t in c.tasks]
    with RunProgress(units, max(c.turns for c in configs)) as prog:
        results = go(prog.event)
    return _print_results(results)


if __name__ == "__main__":
    sys.exit(main())

