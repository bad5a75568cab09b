"""The compiled layer for Triton: what ``triton.compile`` emits for sm_90 and sm_100, without a GPU.

    live @triton.jit units of a submission with a task
      -> import gate over every module the entry imports         triton_gate.py
      -> kernel-only copies of those modules, kernel gate          triton_module.py
      -> launches per workload and target, from the host code     triton_host.py
      -> variants: signature, constexprs, options, per config     triton_plan.py
      -> cache by content hash; misses compiled in one sandboxed,
         time-limited subprocess (process group killed on timeout) triton_worker.py
      -> TTGIR / PTX read by the detectors' declared readers       ttgir.py (+ detectors)
      -> registers and spills from ``ptxas -v`` on the PTX, where Triton's ptxas exists

The analyzer process never imports analysed code: it reads text, and the subprocess hands back
text. Every verdict is made here, from that text. The layer never raises: a missing Triton, a
refused import, a failed or timed-out compile is a :class:`TritonResult` status with a reason.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from . import cache, processes
from .artifacts import KernelArtifact, parse_ptxas
from .signatures import scan
from .triton_gate import Refusal, import_refusal
from .triton_host import launch_bindings, python_files, workload_inputs
from .triton_module import KernelModule, sanitize
from .triton_plan import MAX_ELEMENTS_PER_THREAD, MAX_VARIANTS, Variant, elements_per_thread, merge, too_slow_to_compile, variant
from .triton_worker import PACKAGE
from .ttgir import Reading, TritonIR

ARCHS = (90, 100)
TIMEOUT_BASE_S = 60
TIMEOUT_PER_VARIANT_S = 30
TIMEOUT_MAX_S = 600
PTXAS_TIMEOUT_S = 60
LAYER = "triton-1"


@dataclass(frozen=True)
class VariantOutcome:
    """One compile of one kernel for one target: its readings per property, or why it failed."""

    label: str
    arch: int
    workloads: tuple[str, ...]
    status: Literal["ok", "failed"]
    message: str = ""
    readings: dict[str, Reading] = field(default_factory=dict)
    artifact: KernelArtifact | None = None
    cached: bool = False

    @property
    def where(self) -> str:
        return f"sm_{self.arch} [{self.label}]"


@dataclass
class TritonResult:
    """The layer's outcome for one submission. ``status``: ok / refused / skipped / failed /
    nothing (no live Triton kernel); ``kernels`` maps a unit name to its compiled variants."""

    status: Literal["ok", "refused", "skipped", "failed", "nothing"]
    message: str = ""
    kernels: dict[str, list[VariantOutcome]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    compiled: int = 0  # variants compiled now (cache misses)
    cached: int = 0  # variants read from the cache


# --- where Triton is -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def triton_version() -> str | None:
    """Triton's version from its package metadata (never imported here), None when not installed."""
    if importlib.util.find_spec("triton") is None:
        return None
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:  # noqa: BLE001 - an installation without metadata
        return "unknown"


@lru_cache(maxsize=1)
def _triton_dir() -> Path | None:
    spec = importlib.util.find_spec("triton")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def ptxas_for(arch: int) -> str | None:
    """Triton's bundled ptxas (``ptxas-blackwell`` for sm_100 where shipped), else one on PATH."""
    import shutil

    folder = _triton_dir()
    names = (["ptxas-blackwell"] if arch >= 100 else []) + ["ptxas"]
    for name in names:
        if folder is not None and (folder / "backends" / "nvidia" / "bin" / name).is_file():
            return str(folder / "backends" / "nvidia" / "bin" / name)
    return shutil.which("ptxas")


# --- readings -----------------------------------------------------------------------------------


def readers() -> dict:
    """Property -> the Triton reader its detector declares (in its Signature)."""
    from ..detectors import signatures

    return {prop: s.triton for prop, s in signatures().items() if s.triton is not None}


def read_all(ir: TritonIR) -> dict[str, Reading]:
    out = {}
    for prop, reader in readers().items():
        try:
            out[prop] = reader(ir)
        except Exception as exc:  # noqa: BLE001 - a reader bug must not take the layer down
            out[prop] = Reading(None, (), f"reader failed: {type(exc).__name__}: {exc}")
    return out


def ptxas_resources(ptx: str, arch: int, kernel: str) -> dict[str, int]:
    """Registers, spills, stack from ``ptxas -v`` on the PTX (empty where ptxas is missing or fails)."""
    tool = ptxas_for(arch)
    if tool is None or not ptx:
        return {}
    with tempfile.TemporaryDirectory(prefix="d2k-ptxas-") as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        target = f"sm_{arch}a"
        try:
            proc = processes.run([tool, "-v", f"-arch={target}", str(src), "-o", str(Path(tmp) / "kernel.cubin")],
                                 timeout=PTXAS_TIMEOUT_S, cwd=tmp)
        except (OSError, subprocess.SubprocessError):
            return {}
    info = parse_ptxas(proc.stdout + proc.stderr)
    return info.get(kernel) or next(iter(info.values()), {})


def outcome_from_text(kernel: str, spec: Variant, ttgir: str, ptx: str, shared: int | None) -> VariantOutcome:
    """Readings and resources of one compiled variant (this is where its verdicts are made)."""
    ir = TritonIR(ttgir, ptx, spec.arch, spec.label)
    res = ptxas_resources(ptx, spec.arch, kernel)
    artifact = KernelArtifact(
        symbol=f"{kernel} sm_{spec.arch} [{spec.label}]", name=kernel, ptx_markers=scan(ptx, "ptx"),
        registers=res.get("registers"), spill_stores=res.get("spill_stores"), spill_loads=res.get("spill_loads"),
        smem_bytes=shared if isinstance(shared, int) else res.get("smem_bytes"), stack_bytes=res.get("stack_bytes"))
    return VariantOutcome(spec.label, spec.arch, spec.workloads, "ok", "", read_all(ir), artifact)


def _outcome_json(o: VariantOutcome) -> dict:
    import dataclasses

    return {"status": o.status, "message": o.message,
            "readings": {p: [r.decision, list(r.evidence), r.note] for p, r in o.readings.items()},
            "artifact": dataclasses.asdict(o.artifact) if o.artifact else None}


def _outcome_from_json(data: dict, spec: Variant) -> VariantOutcome:
    art = data.get("artifact")
    artifact = None
    if art:
        markers = {k: (v[0], tuple(v[1])) for k, v in art["ptx_markers"].items()}
        artifact = KernelArtifact(**{**art, "symbol": f"{spec.kernel} sm_{spec.arch} [{spec.label}]",
                                     "ptx_markers": markers, "sass_markers": {}})
    readings = {p: Reading(v[0], tuple(v[1]), v[2]) for p, v in data.get("readings", {}).items()}
    return VariantOutcome(spec.label, spec.arch, spec.workloads, data["status"], data.get("message", ""), readings, artifact, True)


# --- planning -----------------------------------------------------------------------------------


def main_module(files: dict[str, str], path: Path) -> str | None:
    """The module the harness imports: ``submission.py`` of a folder, the file itself, else the
    module that defines ``run`` or ``ModelNew``."""
    if path.is_file():
        return path.stem if path.stem in files else None
    if "submission" in files:
        return "submission"
    for name, text in files.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        if any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in ("run", "ModelNew") for n in tree.body):
            return name
    return None


def import_closure(files: dict[str, str], main: str) -> list[str]:
    """``main`` and every module of the submission it imports, directly or not."""
    seen, todo = [main], [main]
    while todo:
        try:
            tree = ast.parse(files[todo.pop()])
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [(node.module or "").split(".")[0]] + ([a.name for a in node.names] if node.level and not node.module else [])
            for n in names:
                if n in files and n not in seen:
                    seen.append(n)
                    todo.append(n)
    return seen


def gate(files: dict[str, str], modules: list[str], display: str) -> tuple[dict[str, KernelModule], Refusal | None]:
    """Both gates over the modules the entry imports: kernel-only copies, or the first refusal."""
    out: dict[str, KernelModule] = {}
    siblings = set(files)
    for name in modules:
        label = f"{display}/{name}.py" if not display.endswith(".py") else display
        try:
            tree = ast.parse(files[name])
        except SyntaxError as exc:
            return {}, Refusal(label, exc.lineno or 0, f"does not parse: {exc.msg}")
        refusal = import_refusal(tree, label)
        if refusal is not None:
            return {}, Refusal(label, refusal.line, f"importing it would run more than definitions: {refusal.what}")
        module, refusal = sanitize(name, files[name], siblings)
        if refusal is not None:
            return {}, Refusal(label, refusal.line, f"compiling it could run Python beyond Triton: {refusal.what}")
        out[name] = module
    return out, None


def plan(files: dict[str, str], main: str, task, units: dict[tuple[str, str], str]) -> tuple[dict[str, list[Variant]], list[str]]:
    """Variants per live unit (keyed by (module, kernel)), at most :data:`MAX_VARIANTS` per target,
    and notes on launches that could not be resolved or were left out."""
    found: dict[str, list[Variant]] = {u: [] for u in units.values()}
    notes: list[str] = []
    for arch in ARCHS:
        for w in task.workloads:
            inputs = workload_inputs(task, w.params)
            if not inputs:
                notes.append(f"workload {w.name}: inputs not modelled")
                continue
            for launch, binding in launch_bindings(files, main, inputs, arch):
                unit = units.get((launch.kernel.file, launch.kernel.name))
                if unit is None:
                    continue
                v = variant(launch.kernel, binding, arch, w.name)
                if isinstance(v, str):
                    notes.append(f"{unit} on {w.name}: not compiled ({v})")
                else:
                    found[unit].append(v)
    out = {}
    for unit, variants in found.items():
        kept = []
        for arch in ARCHS:
            merged = merge([v for v in variants if v.arch == arch])
            for v in [v for v in merged if too_slow_to_compile(v)]:
                notes.append(f"{unit}: sm_{arch}: not compiled on {', '.join(v.workloads)}: {elements_per_thread(v)} elements per thread "
                             f"along its widest block (over {MAX_ELEMENTS_PER_THREAD}: minutes of compile time)")
            merged = [v for v in merged if not too_slow_to_compile(v)]
            if len(merged) > MAX_VARIANTS:
                notes.append(f"{unit}: sm_{arch}: compiled the first {MAX_VARIANTS} of {len(merged)} variants (workload, then config order)")
            kept += merged[:MAX_VARIANTS]
        out[unit] = kept
    return out, list(dict.fromkeys(notes))


# --- compiling ----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _readers_digest() -> str:
    """The readers' own source is part of the key: a changed reader re-reads (recompiles)."""
    import inspect

    digest = hashlib.sha256()
    for prop, reader in sorted(readers().items()):
        try:
            digest.update(prop.encode() + inspect.getsource(reader).encode())
        except (OSError, TypeError):
            digest.update(prop.encode() + repr(reader).encode())
        for cell in getattr(reader, "__closure__", None) or ():
            digest.update(repr(cell.cell_contents).encode())
    return digest.hexdigest()


def _cache_key(v: Variant, modules: dict[str, KernelModule]) -> str:
    texts = [modules[m].text for m in sorted(modules)]
    return cache.cache_key(LAYER, triton_version() or "", _readers_digest(), v.key(), *texts)


def _worker_env(work: Path) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work / "tmp"),
        "TRITON_CACHE_DIR": str(work / "cache"), "TRITON_HOME": str(work), "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p),
        "CUDA_VISIBLE_DEVICES": "", "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    return env


def run_worker(modules: dict[str, KernelModule], variants: dict[str, Variant]) -> tuple[dict, str | None]:
    """Compile ``variants`` (id -> variant) in one sandboxed subprocess; (per-id results, error)."""
    timeout = min(TIMEOUT_MAX_S, TIMEOUT_BASE_S + TIMEOUT_PER_VARIANT_S * len(variants))
    with tempfile.TemporaryDirectory(prefix="d2k-triton-") as tmp:
        work = Path(tmp)
        (work / "tmp").mkdir()
        package = work / "src" / PACKAGE
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        for name, module in modules.items():
            (package / f"{name}.py").write_text(module.text)
        request = {"variants": {vid: v.to_json() for vid, v in variants.items()}}
        (work / "request.json").write_text(json.dumps(request))
        cmd = [sys.executable, "-m", "d2k_analyze.compiled.triton_worker", str(work)]
        try:
            proc = processes.run(cmd, timeout=timeout, cwd=work, env=_worker_env(work))
        except subprocess.TimeoutExpired:
            return {}, f"triton.compile timed out after {timeout} s (process group killed)"
        except processes.Stopped:
            return {}, "stopped before compiling"
        except OSError as exc:
            return {}, f"cannot start the compile subprocess: {exc}"
        try:
            result = json.loads((work / "result.json").read_text())
        except (OSError, ValueError):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            return {}, f"the compile subprocess gave no result: {tail[0][:300]}"
    if result.get("refused"):
        return {}, result["refused"]
    return result.get("variants", {}), None


def _verified(spec: Variant, raw: dict, modules: dict[str, KernelModule]) -> str | None:
    """The compiled function must be the one the analyzer vetted: its source, as Triton read it,
    is the jit function of that name in the kernel-only module the analyzer wrote."""
    expected = modules[spec.module].jit_sources.get(spec.kernel)
    src = raw.get("src", "")
    if expected is None or not src or src.strip() not in expected or not src.lstrip().startswith(f"def {spec.kernel}"):
        return "the compiled function is not the kernel the analyzer vetted"
    return None


def compile_variants(modules: dict[str, KernelModule], variants: list[Variant]) -> tuple[list[VariantOutcome], str | None, int]:
    """Outcomes in input order (cache first); the worker's error, if it failed as a whole; misses."""
    keys = [_cache_key(v, modules) for v in variants]
    outcomes: dict[int, VariantOutcome] = {}
    for i, (v, key) in enumerate(zip(variants, keys)):
        hit = cache.load(key)
        if hit is not None:
            try:
                outcomes[i] = _outcome_from_json(hit, v)
            except (KeyError, TypeError, ValueError, IndexError):
                pass
    missing = {str(i): v for i, v in enumerate(variants) if i not in outcomes}
    error = None
    if missing:
        raw, error = run_worker(modules, missing)
        for vid, v in missing.items():
            i = int(vid)
            got = raw.get(vid)
            if got is None:
                continue
            if got.get("status") == "ok":
                problem = _verified(v, got, modules)
                outcome = (VariantOutcome(v.label, v.arch, v.workloads, "failed", problem) if problem else
                           outcome_from_text(v.kernel, v, got.get("ttgir", ""), got.get("ptx", ""), got.get("shared")))
            else:
                outcome = VariantOutcome(v.label, v.arch, v.workloads, "failed", str(got.get("error", "compile failed"))[:500])
            outcomes[i] = outcome
            if outcome.status == "ok" or not problem_is_transient(outcome.message):
                cache.store(keys[i], _outcome_json(outcome))
    ordered = [outcomes[i] for i in sorted(outcomes)]
    return ordered, error, len(missing)


def problem_is_transient(message: str) -> bool:
    return "not the kernel the analyzer vetted" in message


# --- one submission -----------------------------------------------------------------------------


def compile_submission(analysis, task) -> TritonResult:
    """The Triton layer for one submission. Never raises."""
    start = time.perf_counter()
    try:
        result = _compile_submission(analysis, task)
    except Exception as exc:  # noqa: BLE001 - the layer must never take the analysis down
        result = TritonResult("failed", f"internal error: {type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - start
    return result


def _compile_submission(analysis, task) -> TritonResult:
    live = [ua for ua in analysis.live_units if ua.unit.language == "triton"]
    if not live:
        return TritonResult("nothing", "no launched Triton kernel")
    if triton_version() is None:
        return TritonResult("skipped", "triton is not installed")
    if task is None:
        return TritonResult("skipped", "no task: the launch shapes and dtypes are unknown")
    path = Path(analysis.path)
    files = python_files(path)
    main = main_module(files, path)
    if main is None:
        return TritonResult("skipped", "no entry point (run or ModelNew) to size the launches")
    modules, refusal = gate(files, import_closure(files, main), str(path))
    if refusal is not None:
        return TritonResult("refused", f"not compiled: {refusal}")
    units = {(Path(ua.unit.file).stem, ua.unit.name): ua.unit.name for ua in live}
    planned, notes = plan(files, main, task, units)
    flat = [v for vs in planned.values() for v in vs]
    if not flat:
        return TritonResult("skipped", notes[0] if notes else "no launch of a live kernel was resolved", notes=notes)
    outcomes, error, misses = compile_variants(modules, flat)
    kernels: dict[str, list[VariantOutcome]] = {u: [] for u in planned}
    by_spec = iter(outcomes)
    for unit, vs in planned.items():
        for _ in vs:
            o = next(by_spec, None)
            if o is not None:
                kernels[unit].append(o)
    if error and not any(kernels.values()):
        return TritonResult("failed", error, notes=notes)
    ok = sum(o.status == "ok" for vs in kernels.values() for o in vs)
    if error:
        notes.append(error)
    cached = sum(o.cached for vs in kernels.values() for o in vs)
    result = TritonResult("ok" if ok else "failed", "", kernels, notes, 0.0, misses, cached)
    if not ok:
        first = next((o for vs in kernels.values() for o in vs if o.status == "failed"), None)
        result.message = f"{first.where}: {first.message}" if first else "nothing compiled"
    return result


def status_line(result: TritonResult) -> str:
    """One line for the report, after the CUDA layer's."""
    if result.status == "nothing":
        return ""
    if result.status in ("skipped", "refused", "failed"):
        return f"triton: {result.status}: {result.message}"
    n = sum(len(vs) for vs in result.kernels.values())
    ok = sum(o.status == "ok" for vs in result.kernels.values() for o in vs)
    archs = sorted({o.arch for vs in result.kernels.values() for o in vs})
    line = (f"triton: ok ({len(result.kernels)} kernels, {ok}/{n} variants compiled for "
            f"{', '.join(f'sm_{a}' for a in archs)}; {result.cached} from cache)")
    if result.notes:  # which launches were left out, and why
        line += "; " + "; ".join(result.notes[:3]) + (f"; and {len(result.notes) - 3} more" if len(result.notes) > 3 else "")
    return line
