"""The trajectory of an agent run: when each design item was first implemented, and whether it stayed.

``d2k-agent`` commits the workspace after every turn that changed it (``runs/<run>/<task>/.agent/
snapshots.git``, one branch per attempt, commit messages ``turn <n>``). This module analyses every
snapshot of one attempt with the analyzer's public API (:func:`d2k_analyze.analysis.analyze_submission`
and :func:`d2k_analyze.scoring.score_submission`: the static layers, no judge) and reports, per
design item, the first turn at which it was *implemented* and whether it stayed implemented in
every later snapshot. The workspace's harness files (the reference copy, TASK.md, AGENTS.md) are
removed from each snapshot first, so that a snapshot is scored as the final evaluation scores the
exported submission.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from d2k_agent import snapshots
from d2k_agent.workspace import HARNESS_NAMES
from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task

from .analysis import analyze_submission
from .model import Verdict
from .scoring import score_submission


class TrajectoryError(Exception):
    """The folder is not a d2k-agent task folder with snapshots (a user mistake: one line, exit 2)."""


@dataclass(frozen=True)
class SnapshotScore:
    turn: int
    commit: str
    score: float | None
    items: dict[str, str]  # design item -> final verdict (Verdict value) in this snapshot


@dataclass(frozen=True)
class ItemTrajectory:
    item: str
    level: str
    first_implemented: int | None  # turn; None if never implemented
    stayed: bool | None  # implemented in every snapshot from then on; None if never implemented
    final: str  # verdict in the last snapshot
    changes: tuple[tuple[int, str], ...]  # (turn, verdict) each time the verdict changed


@dataclass(frozen=True)
class Trajectory:
    task: str
    branch: str
    snapshots: tuple[SnapshotScore, ...]
    items: tuple[ItemTrajectory, ...]


def pick_branch(task_dir: Path, repo: Path, branch: str | None) -> str:
    """The attempt asked for, else the attempt of the final record, else the last attempt."""
    found = snapshots.branches(repo)
    if branch:
        if branch not in found:
            raise TrajectoryError(f"{task_dir}: no snapshots of {branch} (found: {', '.join(found) or 'none'})")
        return branch
    try:
        attempt = json.loads((task_dir / "final.json").read_text()).get("attempt")
        if f"attempt-{attempt}" in found:
            return f"attempt-{attempt}"
    except (OSError, json.JSONDecodeError):
        pass
    if not found:
        raise TrajectoryError(f"{task_dir}: the snapshot repository has no attempts")
    return found[-1]


def score_tree(folder: Path, task: Task, catalogue: Catalogue) -> tuple[float | None, dict[str, str]]:
    for name in HARNESS_NAMES:
        (folder / name).unlink(missing_ok=True)
    analysis = analyze_submission(str(folder), folder, task.id, catalogue)
    sc = score_submission(analysis, task, catalogue)
    return sc.overall, {v.item: v.final.value for v in sc.items}


def item_trajectories(task: Task, snaps: list[SnapshotScore]) -> tuple[ItemTrajectory, ...]:
    """Pure: from per-snapshot verdicts to first-implemented turns and stability."""
    out = []
    for d in task.design:
        seq = [(s.turn, s.items.get(d.id, Verdict.NOT_ASSESSED.value)) for s in snaps]
        first = next((i for i, (_, v) in enumerate(seq) if v == Verdict.IMPLEMENTED.value), None)
        changes = tuple((t, v) for i, (t, v) in enumerate(seq) if i == 0 or seq[i - 1][1] != v)
        stayed = None if first is None else all(v == Verdict.IMPLEMENTED.value for _, v in seq[first:])
        out.append(ItemTrajectory(d.id, d.level, seq[first][0] if first is not None else None, stayed,
                                  seq[-1][1] if seq else Verdict.NOT_ASSESSED.value, changes))
    return tuple(out)


def snapshot_repo(task_dir: Path) -> Path:
    repo = Path(task_dir) / ".agent" / "snapshots.git"
    if not (repo / "HEAD").is_file():
        raise TrajectoryError(f"{task_dir}: no snapshots (expected a d2k-agent task folder runs/<run>/<task> with .agent/snapshots.git)")
    return repo


def trajectory(task_dir: Path, task: Task, catalogue: Catalogue, branch: str | None = None) -> Trajectory:
    """Analyse every snapshot of one attempt of ``runs/<run>/<task>``."""
    task_dir = Path(task_dir)
    repo = snapshot_repo(task_dir)
    branch = pick_branch(task_dir, repo, branch)
    scored = []
    with tempfile.TemporaryDirectory(prefix="d2k-trajectory-") as tmp:
        for snap in snapshots.history(repo, branch):
            folder = snapshots.extract(repo, snap.commit, Path(tmp) / f"turn-{snap.turn}" / task.id)
            overall, items = score_tree(folder, task, catalogue)
            scored.append(SnapshotScore(snap.turn, snap.commit, overall, items))
    return Trajectory(task.id, branch, tuple(scored), item_trajectories(task, scored))


def format_table(tr: Trajectory) -> str:
    lines = [f"trajectory of {tr.task} ({tr.branch}, {len(tr.snapshots)} snapshots, turns "
             f"{', '.join(str(s.turn) for s in tr.snapshots)})", "",
             f"{'item':28s} {'level':5s} {'first implemented':>18s} {'stayed':>7s}  {'final':12s} changes (turn: verdict)"]
    for it in tr.items:
        first = f"turn {it.first_implemented}" if it.first_implemented is not None else "never"
        stayed = "-" if it.stayed is None else ("yes" if it.stayed else "no")
        changes = ", ".join(f"{t}: {v}" for t, v in it.changes)
        lines.append(f"{it.item:28s} {it.level:5s} {first:>18s} {stayed:>7s}  {it.final:12s} {changes}")
    scores = ", ".join(f"{s.turn}: {'-' if s.score is None else f'{s.score:.1f}'}" for s in tr.snapshots)
    lines += ["", f"implementation score per snapshot (turn: score): {scores}"]
    return "\n".join(lines)


def to_rows(tr: Trajectory) -> list[dict]:
    """JSON Lines rows: one per snapshot (row_type snapshot) and one per design item (row_type item)."""
    rows = [{"row_type": "snapshot", "task": tr.task, "branch": tr.branch, **asdict(s)} for s in tr.snapshots]
    rows += [{"row_type": "item", "task": tr.task, "branch": tr.branch, **asdict(i)} for i in tr.items]
    return rows


def run_cli(args, catalogue: Catalogue, usage_error: type[Exception]) -> int:
    """``d2k-analyze --trajectory PATH...``: each PATH is ``runs/<run>/<task>``; table or jsonl."""
    from d2k_spec.schema import SpecError
    from d2k_spec.task import default_tasks_root, load_task

    if args.format not in ("table", "jsonl"):
        raise usage_error("--trajectory writes --format table or jsonl")
    root_flag = getattr(args, "tasks_root", None) or getattr(args, "tasks_dir", None)
    root = Path(root_flag) if root_flag else default_tasks_root()
    texts, rows = [], []
    for raw in args.paths:
        folder = Path(raw)
        try:
            snapshot_repo(folder)
        except TrajectoryError as exc:
            raise usage_error(str(exc)) from None
        task_id = args.task or folder.resolve().name
        try:
            task = load_task(root / task_id)
        except SpecError as exc:
            raise usage_error(f"{raw}: task '{task_id}' is not usable from {root} (pass --task): {str(exc).splitlines()[0]}") from None
        try:
            tr = trajectory(folder, task, catalogue)
        except TrajectoryError as exc:
            raise usage_error(str(exc)) from None
        texts.append(format_table(tr))
        rows += to_rows(tr)
    text = "\n\n".join(texts) + "\n" if args.format == "table" else "".join(json.dumps(r) + "\n" for r in rows)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    else:
        print(text, end="")
    return 0
