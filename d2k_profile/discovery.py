"""From the PATHs on the command line to the submissions to profile.

A PATH may be a submission folder (holding ``submission.py``), a task folder (its expert is
profiled), ``corpus/`` or a run folder (``runs/<run>/``): every folder below it holding a
``submission.py`` is a submission. Each submission's task is ``--task`` if given, else the nearest
enclosing task folder (``tasks/<id>/expert``), else the nearest enclosing folder named like a task
(``corpus/<task>/<variant>``, ``runs/<run>/<task>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ENTRY = "submission.py"


@dataclass(frozen=True)
class Submission:
    task_id: str
    task_path: Path
    path: Path  # the submission folder; reference.py itself for the noise-floor self-check
    name: str  # short, unique within the task; the last part of the NVTX range name
    role: str  # "submission" | "expert" | "reference"
    language: str  # "cuda" | "cpp" | "triton" | "python"


class DiscoveryError(Exception):
    """A user mistake on the command line, with a message that says how to fix it."""


def language_of(folder: Path) -> str:
    """``cuda`` when the submission compiles CUDA C++ (needs a GPU), ``cpp`` when it compiles only
    host C++ (a torch extension without CUDA sources: it runs on a CPU too), ``triton``, or
    ``python``."""
    if folder.is_file():  # a standalone module: what it compiles or imports
        text = folder.read_text(errors="replace")
        if re.search(r"cuda_sources|CUDAExtension|\.cu\b|__global__", text):
            return "cuda"
        return "triton" if re.search(r"^\s*(import triton|from triton)", text, re.M) else "python"
    if any(folder.glob("*.cu")) or any(folder.glob("*.cuh")):
        return "cuda"
    text = "\n".join(p.read_text(errors="replace") for p in folder.glob("*.py"))
    if re.search(r"cuda_sources|CUDAExtension|\.cu\b|\.cuh\b|__global__", text):
        return "cuda"
    if re.search(r"cpp_extension|load_inline", text):
        return "cpp"
    if re.search(r"^\s*(import triton|from triton)", text, re.M):
        return "triton"
    return "python"


def resolve_task(ref: str, tasks_root: Path) -> Path:
    """``--task`` as a task id under ``tasks_root`` or as a path to a task folder."""
    for cand in (Path(ref), tasks_root / ref):
        if (cand / "task.toml").is_file():
            return cand.resolve()
    known = sorted(p.name for p in tasks_root.iterdir() if (p / "task.toml").is_file()) if tasks_root.is_dir() else []
    raise DiscoveryError(f"unknown task '{ref}' (known in {tasks_root}: {', '.join(known) or 'none'})")


def _enclosing_task(folder: Path, tasks_root: Path) -> Path | None:
    """The convention every command follows (:func:`d2k_spec.layout.enclosing_task`)."""
    from d2k_spec.layout import enclosing_task

    return enclosing_task(folder, tasks_root)


def _expert_folder(task_path: Path) -> Path:
    import tomllib

    file = task_path / "task.toml"
    try:
        data = tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise DiscoveryError(f"{file}: TOML syntax error: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DiscoveryError(f"{file}: cannot read: {exc}") from None
    baseline = data.get("baseline", {})
    return (task_path / (baseline.get("expert", "expert") if isinstance(baseline, dict) else "expert")).resolve()


def _submission_folders(path: Path) -> list[tuple[Path, bool]]:
    """(folder, is_expert) for every submission a PATH names."""
    if path.is_file():
        if path.name == ENTRY:
            return [(path.parent, False)]
        if path.suffix != ".py":
            raise DiscoveryError(f"{path}: a submission is a folder with {ENTRY}, or one .py module defining run()")
        return [(path, False)]  # a standalone module (the convention d2k-analyze follows too)
    if (path / "task.toml").is_file():
        expert = _expert_folder(path)
        folder = expert if expert.is_dir() else expert.parent
        return [(folder, True)]
    if (path / ENTRY).is_file():
        return [(path, False)]
    found = sorted(p.parent for p in path.rglob(ENTRY) if "__pycache__" not in p.parts)
    if not found:
        raise DiscoveryError(f"{path}: no {ENTRY} found (PATH is a submission folder, a task folder, corpus/ or runs/<run>/)")
    return [(f, False) for f in found]


def discover(paths: list[str], tasks_root: Path, task: str | None = None, self_check: bool = False) -> list[Submission]:
    """Every submission named by ``paths``, deduplicated, in a stable order."""
    forced = resolve_task(task, tasks_root) if task else None
    subs: dict[Path, Submission] = {}
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise DiscoveryError(f"{raw}: no such file or folder")
        for folder, is_expert in _submission_folders(path.resolve()):
            task_path = forced or _enclosing_task(folder, tasks_root)
            if task_path is None:
                raise DiscoveryError(f"{folder}: cannot tell which task it implements; pass --task ID")
            is_expert = is_expert or folder == _expert_folder(task_path)
            name = "expert" if is_expert else (folder.parent.name if folder.name == task_path.name else folder.name)
            subs.setdefault(folder, Submission(task_path.name, task_path, folder, name, "expert" if is_expert else "submission", language_of(folder)))
    if self_check:
        for task_path in sorted({s.task_path for s in subs.values()}):
            ref = task_path / "reference.py"
            subs.setdefault(ref, Submission(task_path.name, task_path, ref, "reference-self", "reference", "python"))
    return _unique_names(list(subs.values()))


def _unique_names(subs: list[Submission]) -> list[Submission]:
    """Disambiguate equal names within a task by prefixing the parent folder's name."""
    out = []
    for s in subs:
        clash = [t for t in subs if t.task_id == s.task_id and t.name == s.name]
        if len(clash) > 1:
            s = Submission(s.task_id, s.task_path, s.path, f"{s.path.parent.name}.{s.name}", s.role, s.language)
        out.append(s)
    return out
