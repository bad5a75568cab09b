"""Task specs: ``tasks/<task_id>/task.toml`` as typed records, with a validator.

The format is documented in ``docs/task-format.md``; the dataclasses below are its schema. Loading
never imports torch or the task's ``reference.py``: checks that need to build inputs live in
:mod:`d2k_spec.inputs_check`, so the analyzer can load tasks on a laptop with no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .catalogue import Catalogue
from .schema import Problem, SpecError, build, derived, read_toml

Level = Literal["L1", "L2", "L3"]
DTYPES = ("float32", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "float8_e4m3fn")
# An interface input of dtype "int" is a Python int passed by value (shape []), not a tensor: a
# size the kernel cannot read off its tensors (the number of bins of a histogram). Its value is
# the workload parameter of the same name.
VALUE_DTYPE = "int"
DistKind = Literal["normal", "uniform", "randint", "powerlaw"]


@dataclass(frozen=True)
class TensorSpec:
    """A tensor of the interface. ``shape`` entries are workload parameter names or ints;
    ``dtype`` is a dtype name or the name of a workload parameter that holds one. An input of
    dtype ``"int"`` (:data:`VALUE_DTYPE`) is a Python int, the workload parameter ``name``."""

    name: str
    shape: list[str | int]
    dtype: str
    description: str = ""


@dataclass(frozen=True)
class Interface:
    """How a submission is called: ``run(*inputs) -> outputs`` (one tensor, or a tuple in order)."""

    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    in_place: bool = False
    # Library calls that would make the submission a wrapper around the baseline (anti-cheat).
    forbidden_ops: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Tolerance:
    """Elementwise |out - ref| <= atol + rtol*|ref| must hold for every element, and the relative
    L2 error ||out - ref|| / ||ref|| must not exceed ``max_rel_l2`` (catches all-zero outputs that an
    absolute tolerance lets through when outputs are tiny)."""

    atol: float
    rtol: float
    max_rel_l2: float


@dataclass(frozen=True)
class Distribution:
    """How float inputs are drawn. ``normal``: mean/std; ``uniform``: low/high; ``randint``:
    integers in [low, high); ``powerlaw``: magnitudes ~ Pareto(alpha), random sign (heavy tails)."""

    kind: DistKind = "normal"
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 1.0
    alpha: float = 1.5


@dataclass(frozen=True)
class Workload:
    name: str
    params: dict[str, int | float | str | bool]
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    distribution: Distribution = field(default_factory=Distribution)
    smoke: bool = False
    description: str = ""


@dataclass(frozen=True)
class DesignItem:
    """One piece of expert guidance. It is evidenced by catalogue ``properties``: by all of them
    (``require = "all"``; the first one listed defines the item, and without it the item is
    absent, not partial) or by any one (``"any"``). An item whose ``depends_on`` prerequisites are
    absent is capped when scoring."""

    id: str
    level: Level
    title: str
    guidance: str
    properties: list[str]
    judge_hint: str
    weight: float = 1.0
    depends_on: list[str] = field(default_factory=list)
    require: Literal["all", "any"] = "all"


@dataclass(frozen=True)
class Baseline:
    """What speedups are measured against. ``reference_is_expert`` marks tasks whose reference is
    already the best library (cuBLAS for ``gemm_bf16``): then the expert-speed bonus of the
    Performance Score is judged against the reference too."""

    reference: str
    expert: str = "expert"
    expert_library: str = ""
    reference_is_expert: bool = False


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    category: str
    statement: str
    interface: Interface
    tolerance: dict[str, Tolerance]
    baseline: Baseline
    workload: list[Workload]
    design: list[DesignItem]
    path: Path = derived()

    @property
    def workloads(self) -> list[Workload]:
        """The timed workloads (the smoke workload is not counted)."""
        return [w for w in self.workload if not w.smoke]

    @property
    def smoke(self) -> Workload:
        return next(w for w in self.workload if w.smoke)

    def workload_named(self, name: str) -> Workload:
        for w in self.workload:
            if w.name == name:
                return w
        raise KeyError(f"task {self.id} has no workload '{name}'")

    def design_item(self, item_id: str) -> DesignItem:
        for d in self.design:
            if d.id == item_id:
                return d
        raise KeyError(f"task {self.id} has no design item '{item_id}'")

    @property
    def reference_path(self) -> Path:
        return self.path / "reference.py"

    @property
    def expert_path(self) -> Path:
        return self.path / self.baseline.expert


def _dependency_cycle(items: list[DesignItem]) -> list[str] | None:
    """Return one cycle of ``depends_on`` edges as ``[a, b, ..., a]``, or None.

    Self-edges and unknown ids are reported elsewhere, so they are ignored here."""
    graph = {d.id: [x for x in d.depends_on if x != d.id] for d in items}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        for nxt in graph.get(node, []):
            if nxt in path:
                return path[path.index(nxt):] + [nxt]
            if nxt in graph and nxt not in done:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        done.add(node)
        return None

    for start in graph:
        if start not in done and (cycle := visit(start, [start])):
            return cycle
    return None


def _check_semantics(task: Task, catalogue: Catalogue | None, file: str) -> list[Problem]:
    """Cross-field checks that a schema cannot express."""
    problems: list[Problem] = []
    add = lambda key, msg: problems.append(Problem(file, key, msg))  # noqa: E731
    if task.id != task.path.name:
        add("id", f"task id '{task.id}' does not match its folder '{task.path.name}'")

    params_needed = {d for t in task.interface.inputs + task.interface.outputs for d in t.shape if isinstance(d, str)}
    dtype_params = {t.dtype for t in task.interface.inputs + task.interface.outputs if t.dtype not in DTYPES + (VALUE_DTYPE,)}
    values = [t for t in task.interface.inputs if t.dtype == VALUE_DTYPE]
    for t in values:
        if t.shape:
            add("interface.inputs", f"'{t.name}' is an int passed by value: its shape must be []")
        params_needed.add(t.name)
    for t in task.interface.outputs:
        if t.dtype == VALUE_DTYPE:
            add("interface.outputs", f"'{t.name}': outputs are tensors (dtype 'int' is for inputs passed by value)")
    names = [w.name for w in task.workload]
    for i, w in enumerate(task.workload):
        key = f"workload[{i}]"
        if w.name in names[:i]:
            add(f"{key}.name", f"duplicate workload name '{w.name}'")
        for p in sorted((params_needed | dtype_params) - set(w.params)):
            add(f"{key}.params", f"missing parameter '{p}' used by the interface")
        for p in sorted(params_needed & set(w.params)):
            v = w.params[p]
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                add(f"{key}.params.{p}", f"shape parameter must be a positive integer, got {v!r}")
        for p in sorted(dtype_params & set(w.params)):
            if w.params[p] not in DTYPES:
                add(f"{key}.params.{p}", f"unknown dtype {w.params[p]!r} (known: {', '.join(DTYPES)})")
        if not w.seeds:
            add(f"{key}.seeds", "needs at least one seed")
    smoke = [w for w in task.workload if w.smoke]
    if len(smoke) != 1:
        add("workload", f"needs exactly one workload with smoke = true, found {len(smoke)}")
    if not task.workloads:
        add("workload", "no timed (non-smoke) workloads")

    used_dtypes = {w.params.get(p) for w in task.workload for p in dtype_params} | (
        {t.dtype for t in task.interface.inputs + task.interface.outputs} & set(DTYPES)
    )
    for dt in sorted(x for x in used_dtypes if x in DTYPES and x.startswith(("float", "bfloat"))):
        if dt not in task.tolerance:
            add("tolerance", f"no tolerance for dtype '{dt}' used by a workload")
    for dt in task.tolerance:
        if dt not in DTYPES:
            add(f"tolerance.{dt}", "unknown dtype")

    ids = [d.id for d in task.design]
    for i, d in enumerate(task.design):
        key = f"design[{i}]"
        if d.id in ids[:i]:
            add(f"{key}.id", f"duplicate design item id '{d.id}'")
        if d.weight <= 0:
            add(f"{key}.weight", "must be positive")
        if not d.properties:
            add(f"{key}.properties", "names no catalogue property")
        for p in d.properties:
            if catalogue is not None and p not in catalogue:
                add(f"{key}.properties", f"unknown property '{p}' (not in the catalogue)")
        for dep in d.depends_on:
            if dep not in ids:
                add(f"{key}.depends_on", f"unknown design item '{dep}'")
            elif dep == d.id:
                add(f"{key}.depends_on", "an item cannot depend on itself")
    cycle = _dependency_cycle(task.design)
    if cycle:
        add("design", "dependency cycle: " + " -> ".join(cycle))
    if not 5 <= len(task.design) <= 9:
        add("design", f"expected 5-9 design items, found {len(task.design)}")

    if not task.reference_path.is_file():
        add("", f"missing {task.reference_path.name} beside task.toml")
    if not task.expert_path.exists():
        add("baseline.expert", f"expert '{task.baseline.expert}' not found in {task.path}")
    return problems


def check_task(folder: Path, catalogue: Catalogue | None) -> tuple[Task | None, list[Problem]]:
    """Load ``folder/task.toml``; return the task (None if unusable) and every problem found."""
    file = folder / "task.toml"
    problems: list[Problem] = []
    data = read_toml(file, problems)
    if data is None:
        return None, problems
    task = build(Task, data, str(file), "", problems)
    if task is None:
        return None, problems
    object.__setattr__(task, "path", folder)
    problems += _check_semantics(task, catalogue, str(file))
    return task, problems


def load_task(folder: Path, catalogue: Catalogue | None = None) -> Task:
    task, problems = check_task(Path(folder), catalogue)
    if problems or task is None:
        raise SpecError(problems)
    return task


def default_tasks_root() -> Path:
    """The task folders in effect without ``--tasks-root``: ``$D2K_SUITE/tasks``, else the bundled
    ones (:mod:`d2k_spec.locations`; raises its ``LocationError`` for a bad ``$D2K_SUITE``)."""
    from .locations import tasks_root

    return tasks_root()


def task_folders(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).iterdir() if (p / "task.toml").is_file())


def load_tasks(root: Path | None = None, catalogue: Catalogue | None = None) -> dict[str, Task]:
    """Every task under ``root`` (default: the checkout's ``tasks/``), by id."""
    return {t.id: t for t in (load_task(f, catalogue) for f in task_folders(root or default_tasks_root()))}
