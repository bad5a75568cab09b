"""The compile subprocess: confine, import the kernel-only modules, run ``triton.compile``.

    python -m d2k_analyze.compiled.triton_worker WORK_DIR

``WORK_DIR/request.json`` lists the sanitized modules (already written beneath ``WORK_DIR/src``)
and the variants; ``WORK_DIR/result.json`` receives, per variant, Triton's TTGIR and PTX text, the
source text of the jit function it compiled, or the error. Nothing is decided here: the analyzer
reads these texts (:mod:`.triton`, :mod:`.ttgir`).

Before anything untrusted is imported the process confines itself with the profiler's sandbox
(:mod:`d2k_profile.confine`): Landlock (writes only beneath ``WORK_DIR``, no TCP), seccomp (no
sockets but AF_UNIX/AF_NETLINK, no ptrace, no new sessions) and no capabilities. If the self-test
shows the network or a write outside ``WORK_DIR`` still possible, nothing is compiled.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

LAYERS = ["landlock", "capabilities", "seccomp"]
PACKAGE = "d2k_submission"


def confine(work: Path) -> tuple[bool, dict]:
    from d2k_profile import confine as sandbox

    report = sandbox.apply(str(work), [str(work)], LAYERS).as_dict()
    tests = report["self_test"]
    held = all(str(tests.get(k, "")).startswith("blocked") for k in ("network", "write outside the build folder"))
    return held, report


def _constexpr(value, tl):
    if isinstance(value, dict) and "dtype" in value:
        return tl.dtype(value["dtype"])
    return value


def compile_variant(fn, spec: dict, triton, tl) -> dict:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(spec["signature"])
    constexprs = {k: _constexpr(v, tl) for k, v in spec["constexprs"].items()}
    attrs = {(names.index(p),): [["tt.divisibility", 16]] for p in spec["aligned"]}
    source = ASTSource(fn=fn, signature=spec["signature"], constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(source, target=GPUTarget("cuda", spec["arch"], 32), options=dict(spec["options"]))
    return {"status": "ok", "ttgir": compiled.asm.get("ttgir", ""), "ptx": compiled.asm.get("ptx", ""),
            "src": getattr(fn, "src", ""), "shared": getattr(compiled.metadata, "shared", None)}


def error_line(exc: BaseException) -> str:
    """The line that says what went wrong: a Triton CompilationError prints the kernel source
    first and its message last, with the cause (the MLIR or Python error) chained below."""
    parts = []
    for e in (exc, exc.__cause__):
        if e is None:
            continue
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip() and not set(line.strip()) <= set("^~ ")]
        if lines:
            parts.append(f"{type(e).__name__}: {lines[-1]}")
    head = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return "; ".join(dict.fromkeys(parts))[:1000] or head[:1000]


def main(work: Path) -> int:
    request = json.loads((work / "request.json").read_text())
    held, report = confine(work)
    out: dict = {"confinement": report, "variants": {}}
    if not held:
        out["refused"] = "the OS sandbox could not be established: " + json.dumps(report["self_test"])
        (work / "result.json").write_text(json.dumps(out))
        return 0
    sys.path.insert(0, str(work / "src"))
    sys.path.insert(0, str(work / "src" / PACKAGE))
    import importlib

    import triton
    import triton.language as tl

    modules: dict = {}
    for vid, spec in request["variants"].items():
        try:
            name = spec["module"]
            if name not in modules:
                modules[name] = importlib.import_module(f"{PACKAGE}.{name}")
            fn = getattr(modules[name], spec["kernel"])
            out["variants"][vid] = compile_variant(fn, spec, triton, tl)
        except BaseException as exc:  # noqa: BLE001 - a compile error is a result, not a crash
            out["variants"][vid] = {"status": "failed", "error": error_line(exc)}
    (work / "result.json").write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_CACHE_DIR", str(Path(sys.argv[1]) / "cache"))
    sys.exit(main(Path(sys.argv[1])))
