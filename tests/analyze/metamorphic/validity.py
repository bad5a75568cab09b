"""Is a transformed submission still a working program? Compile what changed, run what runs.

* CUDA: the worker imports the submission and calls ``run`` with ``load_inline`` replaced by a
  recorder, which yields exactly the sources and options the build would get. Every CUDA source
  that differs from the original's is compiled with ``nvcc -arch=sm_90 -std=c++17 --cubin``
  (device optimisation off: the question is whether it compiles, and -O0 makes it several times
  faster), with the ``extra_include_paths`` the call passes. ``--cubin`` runs nvcc's C++ front
  end over the whole file, host code and its template instantiations included, and the device
  code through ptxas; it leaves out the host compiler's pass over the host half, which took two
  thirds of each compile (3.9 s against 1.2 s for a GEMM file) and finds nothing the front end
  has not. Every changed C++ wrapper (the ``cpp_sources``, which include torch) is checked by the
  host compiler with the pybind bindings ``load_inline`` would append for ``functions=[...]``
  (up to eight wrappers per translation unit, each in its own namespace: ``batch_source``; a
  failing batch is checked again one wrapper at a time, as ``load_inline`` itself builds it);
  and the module attributes ``run`` uses must be among those functions, and every
  ``extern "C"`` function the wrapper declares must be defined by the CUDA sources.
* Triton: the worker runs the smoke workload (first seed) on the CPU interpreter against the
  task's reference, plus the extra inputs of ``worker.EXTRA_PARAMS``.
* Python: every module still compiles and names nothing that is not defined.

Why the host compile has helpers: the CPU build of torch ships ATen/cuda headers that include
the CUDA math libraries' headers (cuSPARSE, cuBLAS, cuSOLVER) and a generated
``cuda_cmake_macros.h``, which a toolkit without those libraries lacks. The wrappers use none of
them, so tiny stand-ins declaring only the types those torch headers mention are put on the
include path, for missing headers only. torch headers take ~20 s to parse; they are compiled once
into a precompiled header shared by all wrappers, and results are remembered in pytest's cache by
content hash (source, flags, compiler versions), so a rerun compiles only what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from . import cpp
from .workspace import Submission

WORKER = Path(__file__).with_name("worker.py")
NVCC_FLAGS = ["-arch=sm_90", "-std=c++17", "-O0", "-Xcicc", "-O0", "-Xptxas", "-O0"]
HOST_FLAGS = ["-std=c++17", "-w", "-DTORCH_EXTENSION_NAME=d2k_metamorphic_ext", "-DTORCH_API_INCLUDE_EXTENSION_H"]
PCH_HEADERS = ["torch/extension.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAGuard.h"]
STUBS = {
    "cusparse.h": "typedef struct cusparseContext* cusparseHandle_t;\n"
                  "typedef enum { CUSPARSE_STATUS_SUCCESS = 0 } cusparseStatus_t;\n"
                  "const char* cusparseGetErrorString(cusparseStatus_t);\n",
    "cublas_v2.h": "typedef struct cublasContext* cublasHandle_t;\n"
                   "typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;\n",
    "cublasLt.h": "typedef struct cublasLtContext* cublasLtHandle_t;\n",
    "cusolver_common.h": "typedef enum { CUSOLVER_STATUS_SUCCESS = 0, CUSOLVER_STATUS_INVALID_VALUE = 3 } cusolverStatus_t;\n",
    "cusolverDn.h": "#include <cusolver_common.h>\ntypedef struct cusolverDnContext* cusolverDnHandle_t;\n",
    "c10/cuda/impl/cuda_cmake_macros.h": "",
}


# ---------------------------------------------------------------------------------------------
# Python


def undefined_names(text: str) -> set[str]:
    """Names read but defined nowhere (not even as builtins): a renaming that missed a spot."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    out = set()
    for scope in {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}:
        for access in scope.accesses:
            name = access.node.value if isinstance(access.node, cst.Name) else None
            if name and not access.referents and not (name.startswith("__") and name.endswith("__")):
                out.add(name)
    return out


def python_problems(files: dict[str, str]) -> list[str]:
    problems = []
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        try:
            compile(text, path, "exec")
        except SyntaxError as exc:
            problems.append(f"{path}: does not compile: {exc}")
            continue
        missing = undefined_names(text)
        if missing:
            problems.append(f"{path}: undefined names {sorted(missing)}")
    return problems


# ---------------------------------------------------------------------------------------------
# The worker


def run_worker(cases: list[dict], workdir: Path, timeout: int = 900, processes: int | None = None) -> dict[str, dict]:
    """Run ``worker.py`` on ``cases`` in child processes, one per core (the cases are independent:
    each imports and runs one submission), cases dealt out in turn; results by case id."""
    workdir.mkdir(parents=True, exist_ok=True)
    n = max(1, min(len(cases), processes or os.cpu_count() or 1))
    env = dict(os.environ, TRITON_INTERPRET="1")
    children = []
    for k in range(n):
        (workdir / f"cases{k}.json").write_text(json.dumps(cases[k::n]))
        out, err = workdir / f"results{k}.json", open(workdir / f"stderr{k}.txt", "w")
        children.append((subprocess.Popen([sys.executable, str(WORKER), str(workdir / f"cases{k}.json"), str(out)],
                                          stdout=subprocess.DEVNULL, stderr=err, text=True, env=env), out, err))
    results: dict[str, dict] = {}
    failures = []
    for proc, out, err in children:
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        err.close()
        if code != 0 or not out.exists():
            failures.append(f"worker {out.name} failed ({code}): {Path(err.name).read_text()[-3000:]}")
        else:
            results.update(json.loads(out.read_text()))
    if failures:
        raise RuntimeError("\n".join(failures))
    return results


# ---------------------------------------------------------------------------------------------
# Compiling


@dataclass
class Job:
    """One compile: a CUDA source (nvcc) or a C++ wrapper (host compiler, torch headers)."""

    label: str
    kind: str  # "cuda" | "host"
    source: str
    include_dirs: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    body: str = ""  # host: the wrapper sources alone; ``source`` is them plus load_inline's bindings
    functions: tuple[str, ...] = ()  # host: the functions load_inline binds

    def headers(self) -> str:
        """Local headers the source may include (part of the cache key)."""
        out = []
        for d in self.include_dirs:
            for p in sorted(Path(d).glob("*")):
                if p.suffix in (".cuh", ".h", ".hpp"):
                    out.append(f"{p.name}\n{p.read_text()}")
        return "\n".join(out)


@dataclass
class Outcome:
    ok: bool
    detail: str = ""


def _version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _defs(functions) -> str:
    """The ``m.def`` lines load_inline writes for ``functions=[...]``."""
    return "".join(f'  m.def("{f}", torch::wrap_pybind_function({f}), "{f}");\n' for f in functions)


def binding_code(functions: list[str]) -> str:
    """The pybind module load_inline appends to ``cpp_sources`` for ``functions=[...]``."""
    return f"\n#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n{_defs(functions)}}}\n"


HOST_BATCH = 8  # wrappers checked in one translation unit
_INCLUDE = re.compile(r"^\s*#\s*include\b.*$", re.M)
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.M)


def batch_source(jobs: list[Job]) -> str:
    """Several host wrappers as one translation unit: each in its own namespace with its bindings
    as a function there (one ``PYBIND11_MODULE`` per unit is all C++ allows), its ``#include``
    lines hoisted to the top and its macros undefined after it. Why: every unit pays GCC's
    deferred template instantiation of the torch headers (~11 s, precompiled header or not), once
    per unit instead of once per wrapper. A failing batch is compiled again one wrapper at a time,
    so a failure is always some wrapper's own."""
    includes: list[str] = []
    parts: list[str] = []
    for k, job in enumerate(jobs):
        for line in _INCLUDE.findall(job.body):
            if line.strip() not in includes:
                includes.append(line.strip())
        undef = "".join(f"#undef {name}\n" for name in dict.fromkeys(_DEFINE.findall(job.body)))
        parts.append(f"namespace d2k_job_{k} {{\n{_INCLUDE.sub('', job.body)}\n"
                     f"static void d2k_bind(pybind11::module_& m) {{\n{_defs(job.functions)}}}\n}}  // namespace d2k_job_{k}\n{undef}")
    return "#include <torch/extension.h>\n" + "\n".join(includes) + "\n" + "\n".join(parts)


def extern_c_names(text: str, defined: bool) -> set[str]:
    """``extern "C"`` functions a source declares (``defined=False``) or defines (``True``)."""
    out = set()
    for n in cpp.walk(cpp.parse(text).root_node):
        if n.type != "linkage_specification":
            continue
        for item in cpp.walk(n):
            if (item.type == "function_definition") == defined and item.type in ("function_definition", "declaration"):
                name = cpp.declarator_name(item.child_by_field_name("declarator"))
                if name is not None:
                    out.add(cpp.node_text(name))
    return out


class Compiler:
    """Runs compile jobs (two at a time), remembering successes in pytest's cache."""

    def __init__(self, workdir: Path, cache=None) -> None:
        self.workdir = workdir
        self.cache = cache
        self.nvcc = shutil.which("nvcc")
        self.cxx = shutil.which("c++") or shutil.which("g++")
        self._pch: Path | None = None
        self._pch_failed = ""
        self._pch_lock = threading.Lock()
        self._versions = _version([self.nvcc, "--version"]) if self.nvcc else ""
        self._versions += _version([self.cxx, "--version"]) if self.cxx else ""
        self.stats = {"compiled": 0, "cached": 0, "shared": 0, "host_batches": 0}

    # include paths ----------------------------------------------------------------------------
    def _cuda_include(self) -> list[str]:
        homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
        if self.nvcc:
            homes.append(str(Path(self.nvcc).resolve().parent.parent))
        return [str(Path(h) / "include") for h in homes if h and (Path(h) / "include" / "cuda_runtime.h").exists()][:1]

    def _host_includes(self) -> list[str]:
        from torch.utils.cpp_extension import include_paths

        dirs = list(include_paths()) + [sysconfig.get_paths()["include"]] + self._cuda_include()
        stub_dir = self.workdir / "stubs"
        for rel, text in STUBS.items():
            if not any((Path(d) / rel).exists() for d in dirs):
                (stub_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                (stub_dir / rel).write_text(f"#pragma once\n// stand-in, see metamorphic/validity.py\n{text}")
        return ([str(stub_dir)] if stub_dir.exists() else []) + dirs

    def host_command(self, source: Path, pch: bool) -> list[str]:
        cmd = [self.cxx, *HOST_FLAGS, *(f"-I{d}" for d in self._host_includes())]
        if pch and self._pch is not None:
            cmd += ["-include", str(self._pch), "-Winvalid-pch"]
        return cmd + ["-fsyntax-only", str(source)]

    def _build_pch(self) -> None:
        with self._pch_lock:  # one build; the other thread's host jobs wait for it
            self._build_pch_locked()

    def _build_pch_locked(self) -> None:
        if self._pch is not None or self._pch_failed:
            return
        header = self.workdir / "pch" / "d2k_torch.h"
        header.parent.mkdir(parents=True, exist_ok=True)
        header.write_text("".join(f"#include <{h}>\n" for h in PCH_HEADERS))
        cmd = [self.cxx, *HOST_FLAGS, *(f"-I{d}" for d in self._host_includes()), "-x", "c++-header",
               str(header), "-o", str(header) + ".gch"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode == 0:
            self._pch = header
        else:
            self._pch_failed = proc.stderr[-2000:]

    def remove_pch(self) -> None:
        if self._pch is not None:
            Path(str(self._pch) + ".gch").unlink(missing_ok=True)

    # jobs --------------------------------------------------------------------------------------
    def key(self, job: Job) -> str:
        h = hashlib.sha256()
        for part in (job.kind, " ".join(job.flags), self._versions, job.source, job.headers()):
            h.update(part.encode("utf-8") + b"\0")
        return "d2k_metamorphic/compile/" + h.hexdigest()[:32]

    def _run(self, job: Job, index: int) -> Outcome:
        folder = self.workdir / "jobs" / f"{index:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        if job.kind == "cuda":
            src = folder / "cuda.cu"
            src.write_text(job.source)
            cmd = [self.nvcc, *NVCC_FLAGS, *job.flags, *(f"-I{d}" for d in job.include_dirs), "--cubin", str(src),
                   "-o", str(folder / "cuda.cubin")]
        else:
            self._build_pch()
            src = folder / "main.cpp"
            src.write_text(job.source)
            cmd = self.host_command(src, pch=True) + [*(f"-I{d}" for d in job.include_dirs)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return Outcome(False, f"{job.label}: {' '.join(cmd[:3])} ... failed:\n{proc.stderr[-4000:]}")
        return Outcome(True, f"{job.label}: compiled")

    def _run_group(self, jobs: list[Job], group: list[int]) -> list[Outcome]:
        """One compile job, or a batch of host wrappers in one unit (each again on its own if the
        batch fails)."""
        if len(group) == 1:
            return [self._run(jobs[group[0]], group[0])]
        self._build_pch()
        folder = self.workdir / "jobs" / f"batch{group[0]:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        src = folder / "batch.cpp"
        src.write_text(batch_source([jobs[i] for i in group]))
        cmd = self.host_command(src, pch=True) + [*(f"-I{d}" for d in jobs[group[0]].include_dirs)]
        if subprocess.run(cmd, capture_output=True, text=True, timeout=600).returncode == 0:
            self.stats["host_batches"] += 1
            return [Outcome(True, f"{jobs[i].label}: compiled (a batch of {len(group)} wrappers)") for i in group]
        return [self._run(jobs[i], i) for i in group]

    def run(self, jobs: list[Job]) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(jobs)
        todo, first_of, same_as = [], {}, {}
        for i, job in enumerate(jobs):
            key = self.key(job)
            if self.cache is not None and self.cache.get(key, False):
                outcomes[i] = Outcome(True, f"{job.label}: compiled before (same content, cached)")
                self.stats["cached"] += 1
            elif key in first_of:
                same_as[i] = first_of[key]  # the same translation unit from another case: compiled once
            else:
                first_of[key] = i
                todo.append(i)
        # The precompiled torch header builds on one core while the CUDA jobs use the others; the
        # host wrappers go in batches of up to HOST_BATCH that share their include paths.
        groups: list[list[int]] = [[i] for i in todo if jobs[i].kind == "cuda"]
        by_paths: dict[tuple[str, ...], list[int]] = {}
        for i in todo:
            if jobs[i].kind == "host":
                by_paths.setdefault(tuple(jobs[i].include_dirs), []).append(i)
        for members in by_paths.values():
            groups += [members[k:k + HOST_BATCH] for k in range(0, len(members), HOST_BATCH)]
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            if any(jobs[i].kind == "host" for i in todo):
                pool.submit(self._build_pch)
            for group, results in zip(groups, pool.map(lambda g: self._run_group(jobs, g), groups)):
                for i, outcome in zip(group, results):
                    outcomes[i] = outcome
                    self.stats["compiled"] += 1
                    if outcome.ok and self.cache is not None:
                        self.cache.set(self.key(jobs[i]), True)
        for i, j in same_as.items():
            done = outcomes[j]
            outcomes[i] = Outcome(done.ok, f"{jobs[i].label}: same source as {jobs[j].label}: " + done.detail)
            self.stats["shared"] += 1
        return [o for o in outcomes if o is not None]


def cuda_jobs(label: str, capture: dict, original: dict) -> tuple[list[Job], list[str]]:
    """Compile jobs for what a CUDA case changed, and the binding problems found without compiling."""
    jobs, problems = [], []
    calls, before = capture["load_inline"], original["load_inline"]
    if len(calls) != len(before):
        return [], [f"{label}: load_inline called {len(calls)} times, originally {len(before)}"]
    for i, (call, orig) in enumerate(zip(calls, before)):
        missing = set(capture["attributes"]) - set(call["functions"])
        if missing:
            problems.append(f"{label}: run() uses {sorted(missing)}, not among functions={call['functions']}")
        defined = set().union(*(extern_c_names(s, True) for s in call["cuda_sources"])) if call["cuda_sources"] else set()
        declared = set().union(*(extern_c_names(s, False) for s in call["cpp_sources"])) if call["cpp_sources"] else set()
        if declared - defined:
            problems.append(f"{label}: wrapper declares extern \"C\" {sorted(declared - defined)}, "
                            f"the CUDA sources define {sorted(defined)}")
        flags = [f for f in call["extra_cuda_cflags"] if not f.startswith("-O")]
        headers_changed = bool(call["extra_include_paths"]) != bool(orig["extra_include_paths"])
        for j, src in enumerate(call["cuda_sources"]):
            if headers_changed or j >= len(orig["cuda_sources"]) or src != orig["cuda_sources"][j]:
                jobs.append(Job(f"{label} cuda_sources[{j}]", "cuda", src, call["extra_include_paths"], flags))
        if call["cpp_sources"] and (call["cpp_sources"] != orig["cpp_sources"] or call["functions"] != orig["functions"]):
            # load_inline joins the C++ sources into one file and appends the bindings
            body = "\n".join(call["cpp_sources"])
            jobs.append(Job(f"{label} cpp_sources", "host", body + binding_code(call["functions"]), call["extra_include_paths"],
                            body=body, functions=tuple(call["functions"])))
    return jobs, problems


# ---------------------------------------------------------------------------------------------
# Everything at once


@dataclass
class Case:
    id: str
    transformation: str
    sub: Submission  # the transformed submission
    folder: Path  # where it is written
    original: Path | None  # the untouched copy (CUDA: what its load_inline call is compared with)


def validate(cases: list[Case], workdir: Path, cache=None) -> tuple[dict[str, list[str]], dict]:
    """Problems per case id (an entry starting with "SKIP:" is a check that could not run), and
    tallies per transformation for the summary. One worker run, one batch of compiles."""
    worker_cases = [{"id": c.id, "folder": str(c.folder), "task": c.sub.task,
                     "kind": "cuda" if c.sub.is_cuda else "triton"} for c in cases]
    originals = {str(c.original): c.sub.task for c in cases if c.original is not None}
    worker_cases += [{"id": f"original:{f}", "folder": f, "task": t, "kind": "cuda"} for f, t in originals.items()]
    started = time.monotonic()
    ran = run_worker(worker_cases, workdir / "worker")
    ran_s = time.monotonic() - started
    compiler = Compiler(workdir / "compile", cache)
    problems: dict[str, list[str]] = {}
    jobs: list[Job] = []
    owners: list[Case] = []
    for case in cases:
        found = python_problems(case.sub.files)
        result = ran.get(case.id, {"ok": False, "error": "no result from the worker"})
        if not result.get("ok"):
            found.append(f"run failed: {result.get('error')}")
        elif case.original is not None:
            original = ran[f"original:{case.original}"]
            if not original.get("ok"):
                found.append(f"the original did not reach load_inline: {original.get('error')}")
            else:
                case_jobs, binding = cuda_jobs(case.id, result["capture"], original["capture"])
                found += binding
                for job in case_jobs:
                    tool = compiler.nvcc if job.kind == "cuda" else compiler.cxx
                    if tool:
                        jobs.append(job)
                        owners.append(case)
                    else:
                        found.append(f"SKIP: {job.label}: {'nvcc' if job.kind == 'cuda' else 'c++'} not found")
        problems[case.id] = found
    started = time.monotonic()
    try:
        for case, outcome in zip(owners, compiler.run(jobs)):
            if not outcome.ok:
                problems[case.id].append(outcome.detail)
    finally:
        compiler.remove_pch()
    compile_s = time.monotonic() - started
    tallies = {
        "compiled": Counter(c.transformation for c in owners),  # changed TUs checked
        "ran": Counter(c.transformation for c in cases if not c.sub.is_cuda),  # Triton smoke runs
        "invalid": Counter(c.transformation for c in cases if any(not p.startswith("SKIP:") for p in problems[c.id])),
        "compiler": dict(compiler.stats),
        "seconds": {"worker": round(ran_s, 1), "compiles": round(compile_s, 1)},
    }
    return problems, tallies
