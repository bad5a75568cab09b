"""One (run, task): its attempts under the crash policy, and what one attempt does.

Crash policy:
* an attempt that dies from an infrastructure failure (:class:`InfraError`: API errors after the
  SDK's retries, a lost worker; or any unexpected exception in the runner) is abandoned and the
  task is re-run *from scratch* as the next attempt, up to ``max_attempts``. Its partial
  transcript and snapshots stay in ``.agent/attempt-<n>/`` and on branch ``attempt-<n>``;
* a process killed outright leaves an attempt without a final record: ``resume`` re-runs the
  task from scratch as the next attempt. Resuming mid-conversation would change what the agent
  saw, so it is never done;
* a task is finished only when :func:`d2k_agent.final.validate` accepts its final record.

Accounting: the scored attempt's own turns, tokens and cost are the task's result; the money spent
by every attempt (each transcript read once) is reported beside it as ``all_attempts``.
"""

from __future__ import annotations

import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from d2k_spec.task import Task

from . import evaluation, final, transcript as tr
from .adapters import NATIVE
from .adapters.base import ModelClient
from .budget import Ledger, Limits
from .errors import ConfigError, InfraError
from .evaluation import EvalPool
from .gpu import GpuPool
from .layout import RunConfig, RunDir, TaskDir
from .loop import LoopOutcome, run_loop
from .pricing import Price, Usage, add_costs
from .prompts import nudge, render
from .sandbox import Sandbox, prepare_home
from .snapshots import Snapshots
from .tools import TOOL_SPECS, ToolBox
from .workspace import check_integrity, export, seed


@dataclass
class Unit:
    """Everything one (run, task) needs, shared objects included."""

    cfg: RunConfig
    run: RunDir
    task: Task
    client: ModelClient | None  # None for the command adapter
    pool: GpuPool  # the agents' tool calls
    evals: EvalPool  # the final evaluations (kept apart from the agents: see evaluation.EvalPool)
    ledger: Ledger
    price: Price | None
    sandbox_mode: str
    work_root: Path
    keep_workspace: bool = False
    on_event: Callable[[str, dict], None] = lambda kind, data: None

    @property
    def limits(self) -> Limits:
        c = self.cfg
        return Limits(c.turns, c.max_cost, c.wall_time_s, c.max_total_cost)

    @property
    def td(self) -> TaskDir:
        return self.run.task(self.task.id)


@dataclass
class TaskResult:
    task: str
    arm: str
    status: str  # finished | already_finished | failed
    attempt: int = 0
    record: dict | None = None
    errors: list[str] = field(default_factory=list)


def attempt_summary(td: TaskDir, n: int) -> dict:
    """Turns, tokens, cost and outcome of attempt ``n``, from its transcript (counted once)."""
    records = tr.read(td.attempt(n) / tr.TRANSCRIPT)
    turns, usage, cost = tr.totals(records)
    end = tr.ended(records)
    outcome = (end.get("reason") if end else "died (no end record: killed or crashed)")
    if end and end.get("kind") == "infra":
        outcome = f"infra: {end.get('error_kind')}: {end.get('error', '')[:300]}"
    return {"attempt": n, "outcome": outcome, "turns": turns, "usage": usage.to_dict(), "cost_usd": cost}


def run_task(unit: Unit) -> TaskResult:
    td = unit.td
    rec, why = final.validate(td)
    if not why:
        return TaskResult(unit.task.id, unit.cfg.arm, "already_finished", rec.get("attempt", 0), rec)
    errors = []
    attempt = max(td.attempts(), default=0) + 1
    while attempt <= unit.cfg.max_attempts:
        unit.on_event("attempt", {"task": unit.task.id, "arm": unit.cfg.arm, "attempt": attempt})
        try:
            record = run_attempt(unit, attempt)
            return TaskResult(unit.task.id, unit.cfg.arm, "finished", attempt, record)
        except ConfigError:
            raise
        except InfraError as exc:
            errors.append(f"attempt {attempt}: {exc.kind}: {exc}")
        except Exception as exc:  # the runner's own failure is infrastructure too: record it with its kind, re-run
            errors.append(f"attempt {attempt}: internal_error: {type(exc).__name__}: {exc}")
            (td.attempt(attempt) / "error.txt").write_text(traceback.format_exc())
            tr.Transcript(td.attempt(attempt) / tr.TRANSCRIPT).write("end", kind="infra", error_kind="internal_error",
                                                                  error=f"{type(exc).__name__}: {exc}")
        attempt += 1
    return TaskResult(unit.task.id, unit.cfg.arm, "failed", attempt - 1, None, errors)


def run_attempt(unit: Unit, n: int) -> dict:
    cfg, td, task = unit.cfg, unit.td, unit.task
    adir = td.attempt(n)
    adir.mkdir(parents=True, exist_ok=True)
    work = unit.work_root / unit.run.name / task.id / f"attempt-{n}"
    shutil.rmtree(work, ignore_errors=True)
    started = time.monotonic()
    prompt = render(task, cfg.arm, cfg.turns, cfg.prompt_version)
    command = cfg.adapter == "command"
    extra = {}
    if command:
        from .adapters.command import agents_md

        extra["AGENTS.md"] = agents_md()
    ws = seed(task, work / "workspace", extra)
    home = work / "home"
    prepare_home(home)
    bin_dir = work / "bin"
    sandbox = Sandbox(ws.path, home, unit.sandbox_mode, readonly_extra=(bin_dir,) if command else ())
    log = tr.Transcript(adir / tr.TRANSCRIPT)
    log.write("start", attempt=n, arm=cfg.arm, task=task.id, adapter=cfg.adapter, model=cfg.model, prompt_version=prompt.version,
              system=prompt.system, user=prompt.user, tools=TOOL_SPECS, limits=unit.limits.__dict__, sandbox=unit.sandbox_mode,
              workspace=str(ws.path), harness_digests=ws.harness, trusted_digests=ws.trusted)
    snaps = Snapshots(td.snapshots, ws.path, n)
    deadline = started + cfg.wall_time_s if cfg.wall_time_s else None
    toolbox = ToolBox(task, sandbox, unit.pool, unit.pool.has_gpu, deadline, cfg.profile_budget)
    on_turn = lambda k: unit.on_event("turn", {"task": task.id, "arm": cfg.arm, "turn": k})  # noqa: E731
    try:
        if command:
            from .adapters.command import run_command_agent

            outcome = run_command_agent(unit, prompt, toolbox, snaps, log, adir, bin_dir, started, on_turn)
        else:
            client = unit.client.bind(task.id, cfg.arm) if hasattr(unit.client, "bind") else unit.client
            outcome = run_loop(client, prompt, nudge(cfg.prompt_version), toolbox, unit.limits, unit.ledger, unit.price, log, snaps,
                               on_turn, started)
    except InfraError as exc:
        log.write("end", kind="infra", error_kind=exc.kind, error=str(exc))
        raise
    log.write("end", kind="agent", reason=outcome.end_reason, turns=outcome.turns, usage=outcome.usage.to_dict(),
              cost_usd=outcome.cost_usd, submitted=outcome.submitted, detail=outcome.detail)
    record = finish(unit, n, ws, outcome)
    if not unit.keep_workspace:
        shutil.rmtree(work, ignore_errors=True)
    return record


def finish(unit: Unit, n: int, ws, outcome: LoopOutcome) -> dict:
    """Digest check, export, final evaluation, final record; in that order."""
    td = unit.td
    integrity = check_integrity(ws)
    files = export(ws, td.root)
    if not integrity.scorable:
        ev = evaluation.refused(f"the task's own files changed during the run: {', '.join(integrity.trusted_changed)}")
    elif not unit.cfg.evaluate:
        ev = {"profile": {"status": "pending"}, "analyze": {"status": "pending"}}
    else:
        if unit.evals.deferred:  # timed after every agent loop has ended (runner.run_queued)
            profiled = dict(evaluation.QUEUED)
        else:
            unit.on_event("evaluate", {"task": unit.task.id, "arm": unit.cfg.arm})
            profiled = evaluation.profile(unit.run, unit.task, unit.evals, unit.cfg.profile_budget)
        ev = {"profile": profiled, "analyze": evaluation.analyze(unit.run, unit.task)}
    attempts = [attempt_summary(td, k) for k in td.attempts()]
    all_usage = Usage()
    all_cost: float | None = 0.0
    for a in attempts:
        all_usage = all_usage + Usage.from_dict(a["usage"])
        all_cost = add_costs(all_cost, a["cost_usd"])
    record = final.write(td, {
        "task": unit.task.id, "arm": unit.cfg.arm, "run": unit.run.name, "adapter": unit.cfg.adapter, "model": unit.cfg.model,
        "attempt": n, "end_reason": outcome.end_reason, "submitted": outcome.submitted, "detail": outcome.detail,
        "turns": outcome.turns, "turn_budget": unit.cfg.turns, "usage": outcome.usage.to_dict(), "cost_usd": outcome.cost_usd,
        "attempts": attempts,
        "all_attempts": {"turns": sum(a["turns"] for a in attempts), "usage": all_usage.to_dict(), "cost_usd": all_cost},
        "files": files, "integrity": integrity.to_dict(), "evaluation": ev,
    })
    evaluation.collect(unit.run)
    unit.on_event("finished", {"task": unit.task.id, "arm": unit.cfg.arm, "record": record})
    return record


def native(adapter: str) -> bool:
    return adapter in NATIVE
