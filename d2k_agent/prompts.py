"""The agent's prompt: versioned templates under ``rubrics/agent/`` rendered for a task and an arm.

Both arms render the same templates with the same values; the only difference is the guidance
block, which is empty in the unguided arm. ``d2k-agent prompt`` prints :func:`render` verbatim.
"""

from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass
from pathlib import Path

from d2k_spec.task import Task

from .errors import ConfigError
from .locations import AGENT_DIR

TEMPLATES_DIR = AGENT_DIR
DEFAULT_VERSION = "agent_v1"
ARMS = ("guided", "unguided")


@dataclass(frozen=True)
class Templates:
    version: str
    system: str
    task: str
    guidance_block: str
    guidance_item: str
    nudge: str


@dataclass(frozen=True)
class Prompt:
    """What the agent is told: the system prompt and the first user message."""

    version: str
    arm: str
    system: str
    user: str
    guidance: str  # the rendered guidance block ('' in the unguided arm)

    def verbatim(self) -> str:
        return f"=== system ({self.version}, {self.arm}) ===\n{self.system}\n=== user ===\n{self.user}"


def load_templates(version: str = DEFAULT_VERSION, folder: Path = TEMPLATES_DIR) -> Templates:
    """``rubrics/agent/prompt_v<N>.toml`` for ``version = "agent_v<N>"``."""
    path = folder / f"prompt_{version.removeprefix('agent_')}.toml"
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"prompt templates {path}: {exc}") from exc
    try:
        t = Templates(**data)
    except TypeError as exc:
        raise ConfigError(f"prompt templates {path}: {exc}") from exc
    if t.version != version:
        raise ConfigError(f"prompt templates {path}: version is {t.version!r}, expected {version!r}")
    return t


def _fill(template: str, **values: object) -> str:
    return string.Template(template.strip("\n")).substitute({k: str(v) for k, v in values.items()})


def interface_text(task: Task) -> str:
    def row(t) -> str:
        dims = ", ".join(map(str, t.shape))
        return f"- `{t.name}`: [{dims}] {t.dtype}" + (f" — {t.description}" if t.description else "")

    inp = [row(t) for t in task.interface.inputs]
    out = [row(t) for t in task.interface.outputs]
    sig = ", ".join(t.name for t in task.interface.inputs)
    lines = ["## Interface", "", f"`run({sig})` returns " + ("a tuple" if len(out) > 1 else "one tensor"), "", "Inputs:", *inp, "", "Outputs:", *out]
    if task.interface.forbidden_ops:
        lines += ["", "Not allowed: " + ", ".join(f"`{op}`" for op in task.interface.forbidden_ops)]
    return "\n".join(lines) + "\n"


def workloads_text(task: Task) -> str:
    lines = ["## Workloads (timed; the geometric mean of the speedups counts)", ""]
    for w in task.workloads:
        params = ", ".join(f"{k}={v}" for k, v in w.params.items())
        lines.append(f"- `{w.name}`: {params}")  # descriptions are left out: some carry design hints
    s = task.smoke
    lines += ["", f"Smoke workload (tiny, for quick checks; not timed): `{s.name}`: " + ", ".join(f"{k}={v}" for k, v in s.params.items())]
    return "\n".join(lines) + "\n"


def guidance_text(task: Task, t: Templates) -> str:
    items = []
    for d in task.design:
        deps = f", depends on {', '.join(d.depends_on)}" if d.depends_on else ""
        items.append(_fill(t.guidance_item, item_id=d.id, level=d.level, weight=f"{d.weight:g}", depends=deps,
                           item_title=d.title, guidance=d.guidance.strip()))
    return _fill(t.guidance_block, items="\n\n".join(items)) + "\n"


def render(task: Task, arm: str, turns: int, version: str = DEFAULT_VERSION) -> Prompt:
    """The prompt of ``task`` in ``arm`` under a budget of ``turns``."""
    if arm not in ARMS:
        raise ConfigError(f"unknown arm {arm!r} (guided or unguided)")
    t = load_templates(version)
    guidance = guidance_text(task, t) if arm == "guided" else ""
    system = _fill(t.system, turns=turns)
    user = _fill(t.task, task_id=task.id, title=task.title, statement=task.statement.strip() + "\n",
                 interface=interface_text(task), workloads=workloads_text(task), guidance_block=guidance)
    return Prompt(t.version, arm, system, user, guidance)


def nudge(version: str = DEFAULT_VERSION) -> str:
    return load_templates(version).nudge
