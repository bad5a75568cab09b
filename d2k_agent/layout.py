"""Where everything of a run lives, and the two files that describe it.

```
runs/<name>-<arm>/
  run.toml              what d2k-report reads (d2k_report.runs.RunSpec: model, condition, budget, notes)
  agent.toml            d2k-agent's full settings: adapter, model, arm, limits, sandbox, versions (resume reads it)
  profile.jsonl         final evaluation, every finished task (d2k-profile records)
  analyze.jsonl         final evaluation, every finished task (d2k-analyze --format jsonl)
  .eval/<task>/         per-task evaluation outputs the two files above are assembled from
  <task>/               the exported submission (submission.py, .cu files, design.md) + final.json
    .agent/attempt-<n>/ transcript.jsonl (+ events.jsonl, proxy.jsonl, stderr.log for a CLI agent)
    .agent/snapshots.git  one commit per changed turn, branch attempt-<n>
```

``run.toml`` only holds RunSpec's keys, because d2k-report rejects unknown keys; the structured
record (adapter, versions, ...) is ``agent.toml``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from . import __version__
from .errors import ConfigError

ARM_SUFFIXES = ("-guided", "-unguided")


@dataclass
class RunConfig:
    """Everything that defines a run; stored in agent.toml so that ``resume`` repeats it exactly."""

    name: str
    arm: str
    tasks: list[str]
    adapter: str
    model: str
    turns: int = 350
    base_url: str = ""
    api_key_env: str = ""
    replay: str = ""
    command: str = ""
    max_cost: float | None = None
    max_total_cost: float | None = None
    wall_time_s: float | None = None
    sandbox: str = "auto"
    max_attempts: int = 2
    max_retries: int = 4  # the SDK's retries of one model call before it counts as an infrastructure failure
    prompt_version: str = "agent_v1"
    prices: str = ""
    tasks_root: str = ""
    gpus: list[str] = field(default_factory=lambda: ["0"])
    evaluate: bool = True
    profile_budget: float | None = None  # d2k-profile --budget (timing seconds per workload) for bench and the final evaluation

    def to_toml(self) -> str:
        lines = []
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                lines.append(f"# {f.name} = (not set)")
            else:
                lines.append(f"{f.name} = {toml_value(v)}")
        return "\n".join(lines) + "\n"


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(str(v))


def versions() -> dict[str, str]:
    out = {"d2k_agent": __version__, "python": platform.python_version()}
    for mod in ("anthropic", "openai", "d2k_profile", "triton", "torch"):
        try:
            from importlib.metadata import version

            out[mod] = version({"d2k_profile": "d2k-bench"}.get(mod, mod))
        except Exception:  # not installed: recorded as absent
            continue
    return out


@dataclass(frozen=True)
class TaskDir:
    root: Path

    @property
    def final(self) -> Path:
        return self.root / "final.json"

    @property
    def agent(self) -> Path:
        return self.root / ".agent"

    @property
    def snapshots(self) -> Path:
        return self.agent / "snapshots.git"

    def attempt(self, n: int) -> Path:
        return self.agent / f"attempt-{n}"

    def attempts(self) -> list[int]:
        if not self.agent.is_dir():
            return []
        return sorted(int(m.group(1)) for p in self.agent.iterdir() if (m := re.fullmatch(r"attempt-(\d+)", p.name)))


@dataclass(frozen=True)
class RunDir:
    root: Path

    @property
    def name(self) -> str:
        return self.root.name

    run_toml = property(lambda self: self.root / "run.toml")
    agent_toml = property(lambda self: self.root / "agent.toml")
    profile = property(lambda self: self.root / "profile.jsonl")
    analyze = property(lambda self: self.root / "analyze.jsonl")

    def eval_dir(self, task: str) -> Path:
        return self.root / ".eval" / task

    def task(self, task: str) -> TaskDir:
        return TaskDir(self.root / task)


def arm_dir(out: Path, arm: str) -> Path:
    return Path(f"{out}-{arm}")


def write_run_files(run: RunDir, cfg: RunConfig, sandbox_mode: str) -> None:
    """run.toml (d2k-report's schema) and agent.toml (everything)."""
    run.root.mkdir(parents=True, exist_ok=True)
    demo = cfg.adapter == "replay"
    budget = f"{cfg.turns} turns per task"
    if cfg.max_cost is not None:
        budget += f", max ${cfg.max_cost:g} per task"
    if cfg.wall_time_s is not None:
        budget += f", wall time {cfg.wall_time_s:g} s per task"
    notes = (f"d2k-agent {__version__}: adapter {cfg.adapter}, prompt {cfg.prompt_version}, sandbox {sandbox_mode}; see agent.toml"
             + ("; a REPLAYED scripted agent (no LLM), not agent results" if demo else ""))
    run_toml = (f"# Written by d2k-agent; read by d2k-report. The full settings are in agent.toml.\n"
                f"model = {toml_value(cfg.model)}\ncondition = {toml_value(cfg.arm)}\nbudget = {toml_value(budget)}\n"
                f"notes = {toml_value(notes)}\ndemonstration = {toml_value(demo)}\n")
    atomic_write(run.run_toml, run_toml)
    meta = {"sandbox_mode": sandbox_mode, "versions": versions()}
    atomic_write(run.agent_toml, "# d2k-agent run settings (resume repeats them)\n" + cfg.to_toml()
                 + "\n[recorded]\n" + "\n".join(f"{k} = {toml_value(v)}" for k, v in meta.items()) + "\n")


def read_config(run: RunDir) -> RunConfig:
    try:
        data = tomllib.loads(run.agent_toml.read_text())
    except FileNotFoundError as exc:
        raise ConfigError(f"{run.root}: not a d2k-agent run (no agent.toml)") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{run.agent_toml}: {exc}") from exc
    data.pop("recorded", None)
    known = {f.name for f in fields(RunConfig)}
    if unknown := sorted(set(data) - known):
        raise ConfigError(f"{run.agent_toml}: unknown key(s) {', '.join(unknown)}")
    return RunConfig(**data)


def atomic_write(path: Path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def same_settings(a: RunConfig, b: RunConfig) -> list[str]:
    """Keys that must agree between an existing run folder and a new ``run`` into it."""
    keys = ("arm", "adapter", "model", "turns", "prompt_version", "base_url", "replay", "command", "max_cost", "wall_time_s", "profile_budget")
    da, db = asdict(a), asdict(b)
    return [k for k in keys if da[k] != db[k]]
