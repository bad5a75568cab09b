"""The library API behind ``d2k-agent``: run, resume, status, clean, evaluate.

A run is one (run name, arm) folder; ``run`` over both arms makes two. The (arm, task) units run
in parallel up to ``jobs`` threads; the agents' tool calls that need a GPU share the GPUs
through :class:`~d2k_agent.gpu.GpuPool`, and the final evaluations have a pool of their own
(:class:`~d2k_agent.evaluation.EvalPool`: reserved GPUs, or the agents' GPUs once every agent
loop has ended, or a Ray cluster). Preflight checks (key, model, prices, CLI, sandbox) run
before any unit starts, so a configuration mistake fails loudly and nothing is half-done.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from d2k_spec.schema import SpecError
from d2k_spec.task import Task, default_tasks_root, load_task, task_folders

from . import evaluation, final
from .adapters import ADAPTERS, NATIVE, make_client
from .attempts import TaskResult, Unit, attempt_summary, run_task
from .budget import Ledger
from .errors import ConfigError
from .gpu import GpuPool, detect_gpu
from .layout import RunConfig, RunDir, read_config, same_settings, write_run_files
from .pricing import add_costs, load_prices
from .prompts import ARMS
from .sandbox import choose_mode

Event = Callable[[str, dict], None]


@dataclass
class Machine:
    """What this machine offers the runs (shared by every unit of one invocation)."""

    has_gpu: bool
    gpus: list[str]
    jobs: int
    work_root: Path
    keep_workspace: bool = False
    eval_gpus: list[str] | None = None  # GPUs reserved for the final evaluations (none: the agents' GPUs, after them)
    eval_backend: str = "local"  # or "ray": d2k-profile's Ray backend times the final evaluations
    ray_address: str = "auto"

    def eval_pool(self) -> evaluation.EvalPool:
        return evaluation.eval_pool(self.gpus, self.eval_gpus, self.has_gpu, self.jobs, self.eval_backend, self.ray_address)


def default_work_root() -> Path:
    return Path(tempfile.gettempdir()) / "d2k-agent-work"


def resolve_tasks(spec: str, tasks_root: Path) -> list[str]:
    known = [p.name for p in task_folders(tasks_root)]
    if spec == "all":
        return known
    wanted = [t.strip() for t in spec.split(",") if t.strip()]
    if unknown := [t for t in wanted if t not in known]:
        raise ConfigError(f"unknown task(s) {', '.join(unknown)} (known in {tasks_root}: {', '.join(known) or 'none'})")
    if not wanted:
        raise ConfigError("--tasks: no task named")
    return wanted


def arms_of(spec: str) -> list[str]:
    if spec == "both":
        return list(ARMS)
    if spec not in ARMS:
        raise ConfigError(f"unknown --arm {spec!r} (guided, unguided or both)")
    return [spec]


def _load_task(cfg: RunConfig, task_id: str) -> Task:
    root = Path(cfg.tasks_root) if cfg.tasks_root else default_tasks_root()
    try:
        return load_task(root / task_id)
    except SpecError as exc:
        raise ConfigError(f"task {task_id}: {exc}") from exc


def preflight(cfg: RunConfig):
    """(client, price, sandbox mode) or a ConfigError: key, model, prices, CLI, sandbox."""
    if cfg.adapter not in ADAPTERS:
        raise ConfigError(f"unknown --agent {cfg.adapter!r} (one of: {', '.join(ADAPTERS)})")
    if cfg.turns < 1:
        raise ConfigError("--turns must be at least 1")
    prices = load_prices(Path(cfg.prices) if cfg.prices else None)
    price = prices.get(cfg.model)
    if price is None and cfg.adapter != "replay" and (cfg.max_cost is not None or cfg.max_total_cost is not None):
        raise ConfigError(f"no price for model {cfg.model!r} in the price table: --max-cost cannot be enforced (add it to rubrics/agent/prices.toml)")
    client = None
    if cfg.adapter in NATIVE:
        client = make_client(cfg.adapter, cfg.model, cfg.base_url or None, cfg.replay or None, cfg.api_key_env or None, cfg.max_retries)
        client.check()
    else:
        from .adapters.command import preflight as command_preflight

        command_preflight(cfg)
    return client, price, choose_mode(cfg.sandbox)


def _already_spent(runs: list[RunDir]) -> float:
    """Dollars already spent by earlier attempts of these runs (for --max-total-cost on resume)."""
    total = 0.0
    for run in runs:
        for td in (p for p in run.root.iterdir() if p.is_dir() and not p.name.startswith(".")) if run.root.is_dir() else []:
            for n in run.task(td.name).attempts():
                total = add_costs(total, attempt_summary(run.task(td.name), n)["cost_usd"]) or total
    return total


def prepare(configs: list[RunConfig], fresh: bool) -> list[tuple]:
    """Preflight every config and write its run files; a ConfigError leaves nothing started."""
    prepared = []
    for cfg in configs:
        client, price, mode = preflight(cfg)
        run = RunDir(Path(cfg.name))
        if fresh and run.agent_toml.is_file():
            if diff := same_settings(read_config(run), cfg):
                raise ConfigError(f"{run.root} exists with other settings ({', '.join(diff)}): use `d2k-agent resume` or another --out")
        write_run_files(run, cfg, mode)
        prepared.append((cfg, run, client, price, mode))
    return prepared


def execute(configs: list[RunConfig], machine: Machine, on_event: Event = lambda k, d: None, fresh: bool = True,
            prepared: list[tuple] | None = None) -> list[TaskResult]:
    """Run (or resume) every (arm, task) of ``configs``; returns one result per unit."""
    if not configs:
        return []
    prepared = prepared if prepared is not None else prepare(configs, fresh)
    ledger = Ledger(_already_spent([p[1] for p in prepared]))
    pool = GpuPool(machine.gpus, machine.has_gpu, cpu_slots=machine.jobs)
    evals = machine.eval_pool()
    units = [Unit(cfg, run, _load_task(cfg, t), client, pool, evals, ledger, price, mode, machine.work_root, machine.keep_workspace, on_event)
             for cfg, run, client, price, mode in prepared for t in cfg.tasks]
    with ThreadPoolExecutor(max_workers=max(1, machine.jobs)) as ex:
        results = list(ex.map(run_task, units))
    # every agent loop has ended: the queued evaluations now have the GPUs to themselves
    updated = run_queued([(cfg, run) for cfg, run, *_ in prepared], evals, on_event)
    for r in results:
        r.record = updated.get((r.arm, r.task), r.record)
    for _, run, *_ in prepared:
        evaluation.collect(run)
    return results


def run_queued(runs: list[tuple[RunConfig, RunDir]], evals: evaluation.EvalPool, on_event: Event = lambda k, d: None) -> dict[tuple[str, str], dict]:
    """Time every finished task whose profile is ``queued`` (this invocation's, or one a killed
    invocation left queued), up to one per evaluation slot at a time. Returns the re-signed
    final records by (arm, task)."""
    todo = []
    for cfg, run in runs:
        for task_id in cfg.tasks:
            rec, why = final.validate(run.task(task_id))
            if not why and rec.get("evaluation", {}).get("profile", {}).get("status") == "queued":
                todo.append((cfg, run, task_id))

    def one(item) -> tuple[tuple[str, str], dict]:
        cfg, run, task_id = item
        on_event("evaluate", {"task": task_id, "arm": cfg.arm})
        ev = evaluation.profile(run, _load_task(cfg, task_id), evals, cfg.profile_budget)
        return (cfg.arm, task_id), final.update_evaluation(run.task(task_id), {"profile": ev})

    with ThreadPoolExecutor(max_workers=max(1, evals.pool.size)) as ex:
        return dict(ex.map(one, todo))


def run_configs(name: str, arms: list[str], base: RunConfig) -> list[RunConfig]:
    """One config per arm: ``runs/<name>`` + ``-guided`` / ``-unguided``."""
    return [replace(base, name=f"{name}-{arm}", arm=arm) for arm in arms]


def expand_runs(paths: list[str]) -> list[RunDir]:
    """Each PATH is a run folder, or ``runs/<name>`` standing for its ``-guided``/``-unguided`` folders."""
    out = []
    for raw in paths:
        p = Path(raw)
        if (p / "agent.toml").is_file():
            out.append(RunDir(p))
            continue
        found = [Path(f"{p}-{arm}") for arm in ARMS if (Path(f"{p}-{arm}") / "agent.toml").is_file()]
        if not found:
            raise ConfigError(f"{raw}: not a d2k-agent run (no agent.toml there, nor in {raw}-guided / {raw}-unguided)")
        out += [RunDir(f) for f in found]
    return out


def resume_configs(paths: list[str], max_attempts: int | None = None) -> list[RunConfig]:
    configs = []
    for run in expand_runs(paths):
        cfg = read_config(run)
        cfg = replace(cfg, name=str(run.root))
        if max_attempts is not None:
            cfg = replace(cfg, max_attempts=max_attempts)
        configs.append(cfg)
    return configs


def resume(paths: list[str], machine: Machine, on_event: Event = lambda k, d: None, max_attempts: int | None = None) -> list[TaskResult]:
    return execute(resume_configs(paths, max_attempts), machine, on_event, fresh=False)


@dataclass
class TaskStatus:
    run: str
    task: str
    state: str  # finished | unfinished | not started | failed
    attempts: int
    turns: int | None
    cost_usd: float | None
    end_reason: str
    profile: str
    analyze: str
    note: str = ""


def status(paths: list[str]) -> list[TaskStatus]:
    rows = []
    for run in expand_runs(paths):
        cfg = read_config(run)
        for task in cfg.tasks:
            td = run.task(task)
            rec, why = final.validate(td)
            n = td.attempts()
            if not why:
                ev = rec.get("evaluation", {})
                rows.append(TaskStatus(run.name, task, "finished", len(n), rec["turns"], rec["all_attempts"]["cost_usd"], rec["end_reason"],
                                       ev.get("profile", {}).get("status", "?"), ev.get("analyze", {}).get("status", "?")))
                continue
            spent = [attempt_summary(td, k) for k in n]
            cost = 0.0
            for a in spent:
                cost = add_costs(cost, a["cost_usd"])
            state = "not started" if not n else ("failed" if len(n) >= cfg.max_attempts else "unfinished")
            last = spent[-1]["outcome"] if spent else ""
            rows.append(TaskStatus(run.name, task, state, len(n), sum(a["turns"] for a in spent) if spent else None, cost if spent else None,
                                   last, "-", "-", why if n else ""))
    return rows


def clean(paths: list[str], work_root: Path, unfinished: bool = False, everything: bool = False) -> list[str]:
    """Remove scratch (workspaces left by killed runs, evaluation homes); with ``unfinished``
    also the folders of unfinished tasks (their attempts start again from 1); with
    ``everything`` the whole run folders. Returns what was removed."""
    removed = []
    for run in expand_runs(paths):
        scratch = work_root / run.name
        if scratch.exists():
            shutil.rmtree(scratch)
            removed.append(str(scratch))
        if everything:
            shutil.rmtree(run.root)
            removed.append(str(run.root))
            continue
        for home in sorted((run.root / ".eval").glob("*/home")):
            shutil.rmtree(home)
            removed.append(str(home))
        if unfinished:
            for task in read_config(run).tasks:
                td = run.task(task)
                if td.root.exists() and final.validate(td)[1]:
                    shutil.rmtree(td.root)
                    shutil.rmtree(run.eval_dir(task), ignore_errors=True)
                    removed.append(str(td.root))
    return removed


def evaluate(paths: list[str], machine: Machine, only: str | None = None) -> list[tuple[str, str, dict]]:
    """Re-run the final evaluation (both parts, or ``only`` one) of every finished task, e.g. the
    analyze part on a machine with tree-sitter after a GPU machine did the profile part."""
    out = []
    evals = machine.eval_pool()
    for run in expand_runs(paths):
        cfg = read_config(run)
        for task_id in cfg.tasks:
            td = run.task(task_id)
            rec, why = final.validate(td)
            if why:
                out.append((run.name, task_id, {"skipped": why}))
                continue
            if not rec.get("integrity", {}).get("scorable", True):
                out.append((run.name, task_id, {"skipped": "not scorable (digest check failed)"}))
                continue
            task = _load_task(cfg, task_id)
            ev = {}
            if only in (None, "profile"):
                ev["profile"] = evaluation.profile(run, task, evals, cfg.profile_budget)
            if only in (None, "analyze"):
                ev["analyze"] = evaluation.analyze(run, task)
            final.update_evaluation(td, ev)
            out.append((run.name, task_id, ev))
        evaluation.collect(run)
    return out


def machine_for(cpu: bool, gpus: str, jobs: int, work_root: str | None, keep: bool, eval_gpus: str = "",
                eval_backend: str = "local", ray_address: str = "auto") -> Machine:
    has_gpu = False if cpu else detect_gpu()
    return Machine(has_gpu, _gpu_list(gpus) or ["0"], max(1, jobs), Path(work_root) if work_root else default_work_root(), keep,
                   _gpu_list(eval_gpus) or None, eval_backend, ray_address)


def _gpu_list(text: str) -> list[str]:
    return [g.strip() for g in text.split(",") if g.strip()]

