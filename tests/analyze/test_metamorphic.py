"""Metamorphic tests of the static analyzer (issue 10, item 4): names, layout, file structure and
the way constants are written must not change what it reports.

For every corpus submission (not corpus/wild/, vendored third-party code) and every task expert,
each transformation of tests/analyze/metamorphic/ is applied to a temporary copy, and
``analyze_submission`` (static layers) must give the same kernel units with the same launched
flags, the same status for every (unit, property), and the same implementation score (overall,
per level, per design item) as for an untouched copy. Evidence lines may move; nothing else may.

Three more groups keep the comparison honest: each transformation must really transform
(``test_transformation_transforms``), must apply to at least one submission
(``test_transformation_applies``), and must leave a working program
(``test_transformed_program_is_valid``: changed CUDA compiles with nvcc, changed torch wrappers
with the host compiler, Triton runs its smoke workload in the CPU interpreter; a reformatted copy,
whose check proves the same C++ tokens and the same Python AST, is valid by that proof).

A summary (cases per transformation, differences per property) is printed at the end of the module.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest
from d2k_spec.catalogue import load_catalogue
from d2k_spec.task import check_task
from metamorphic import compare, constants, cpp, pysrc, rename, validity
from metamorphic.checks import CHECKS
from metamorphic.registry import TRANSFORMS
from metamorphic.workspace import REPO, NotApplicable, Submission, load_submission, submission_folders

FOLDERS = submission_folders()
# Transformations whose own check (metamorphic/checks.py) proves the program unchanged: reformat
# keeps the C++ token sequence (an independent regex lexer; #define bodies compared token by token,
# other directives as whole lines) and the Python AST, so the copy works exactly when the original
# does, and compiling or running it again would only repeat the original's build. Its validity is
# that check.
PROVED_BY_CHECK = ("reformat",)
CASES = [(folder, name) for name in TRANSFORMS for folder in FOLDERS]


def _case_id(case: tuple[Path, str]) -> str:
    folder, name = case
    return f"{name}:{folder.parent.name}/{folder.name}"


class Lab:
    """Session state: the submissions, their transformed copies on disk, fingerprints, tallies."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.catalogue = load_catalogue()
        self._subs: dict[Path, Submission] = {}
        self._copies: dict[tuple[Path, str], Submission | NotApplicable | Exception] = {}
        self._written: dict[tuple[Path, str], Path] = {}
        self._fps: dict[tuple[Path, str], compare.Fingerprint] = {}
        self._tasks: dict[str, object] = {}
        self.outcome: dict[tuple[Path, str], str] = {}  # case -> "same" / "differs"
        self.validity: dict = {}  # tallies of the validity checks, for the summary
        self.diffs: dict[tuple[Path, str], list[compare.Difference]] = {}

    def original(self, folder: Path) -> Submission:
        if folder not in self._subs:
            self._subs[folder] = load_submission(folder)
        return self._subs[folder]

    def transformed(self, folder: Path, name: str) -> Submission | NotApplicable:
        """The transformed submission, or NotApplicable; a transformer crash is re-raised."""
        key = (folder, name)
        if key not in self._copies:
            try:
                self._copies[key] = TRANSFORMS[name](self.original(folder))
            except NotApplicable as exc:
                self._copies[key] = exc
            except Exception as exc:  # noqa: BLE001 - kept and re-raised by every test of the case
                self._copies[key] = exc
        result = self._copies[key]
        if isinstance(result, Exception) and not isinstance(result, NotApplicable):
            raise result
        return result

    def written(self, folder: Path, name: str) -> Path:
        """The folder of the transformed copy (name 'original' for the untouched copy)."""
        key = (folder, name)
        if key not in self._written:
            sub = self.original(folder) if name == "original" else self.transformed(folder, name)
            self._written[key] = sub.write(self.root / name)
        return self._written[key]

    def task(self, task_id: str):
        if task_id not in self._tasks:
            task, problems = check_task(REPO / "tasks" / task_id, self.catalogue)
            assert task is not None and not problems, problems
            self._tasks[task_id] = task
        return self._tasks[task_id]

    def fingerprint(self, folder: Path, name: str) -> compare.Fingerprint:
        key = (folder, name)
        if key not in self._fps:
            sub = self.original(folder)
            self._fps[key] = compare.fingerprint(sub.name, self.written(folder, name), self.task(sub.task), self.catalogue)
        return self._fps[key]


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Lab:
    return Lab(tmp_path_factory.mktemp("metamorphic"))


def _applicable(lab: Lab, folder: Path, name: str) -> Submission:
    result = lab.transformed(folder, name)
    if isinstance(result, NotApplicable):
        pytest.skip(f"{name} not applicable to {lab.original(folder).name}: {result}")
    return result


# ---------------------------------------------------------------------------------------------
# The metamorphic relation


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_analysis_unchanged(case, lab):
    folder, name = case
    sub = _applicable(lab, folder, name)
    diffs = compare.differences(lab.fingerprint(folder, "original"), lab.fingerprint(folder, name))
    lab.outcome[case] = "differs" if diffs else "same"
    lab.diffs[case] = diffs
    assert not diffs, compare.report(sub.name, name, sub.notes, diffs)


# ---------------------------------------------------------------------------------------------
# The transformations are real


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_transformation_transforms(case, lab):
    folder, name = case
    sub = _applicable(lab, folder, name)
    problems = CHECKS[name](lab.original(folder), sub)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transformation_applies(name, lab):
    applied, skipped = [], []
    for folder in FOLDERS:
        result = lab.transformed(folder, name)
        (skipped if isinstance(result, NotApplicable) else applied).append(folder)
    assert applied, f"{name} applies to none of the {len(FOLDERS)} submissions"
    languages = {"CUDA" if lab.original(f).is_cuda else "Triton" for f in applied}
    assert languages == {"CUDA", "Triton"}, f"{name} applies only to {languages} submissions"


def test_rename_finds_every_kind_of_declaration():
    """The C++ declaration finder on one snippet with every kind the issue lists."""
    text = """
    #define TILE 32
    #define MAXF(a, b) ((a) > (b) ? (a) : (b))
    namespace ns { constexpr int kPad = 8; }
    enum Kind : int { kOne = 1, kTwo = 2 };
    typedef float real_t;
    using vec_t = float4;
    struct Stat { float mean, m2; __device__ void add(float v) { mean += v; } };
    template <typename T, int VW> __device__ T helper(const T* __restrict__ src, T (*tile)[VW]) {
      __shared__ __align__(16) float smem[TILE];
      for (int i = 0; i < VW; ++i) { smem[i] = src[i]; }
      label: return src[0];
    }
    __global__ void kern(float* out) { Stat s; s.add(threadIdx.x); out[0] = s.mean; }
    """
    decl = cpp.declarations(cpp.parse(text).root_node)
    expected = {"TILE", "MAXF", "a", "b", "ns", "kPad", "Kind", "kOne", "kTwo", "real_t", "vec_t", "Stat",
                "T", "VW", "helper", "src", "tile", "smem", "i", "label", "out", "s", "v"}
    assert expected <= decl.names, sorted(expected - decl.names)
    assert {"mean", "m2", "add"} <= decl.fields
    assert decl.kernels == {"kern"}
    renamed = rename.rename_cpp(text, decl, {n: f"v{i}" for i, n in enumerate(sorted(decl.all()))})
    assert "threadIdx.x" in renamed and "kern(" in renamed and "kPad" not in renamed and "smem" not in renamed


def test_rename_leaves_a_library_template_named_like_a_user_typedef():
    """``typedef cub::BlockReduce<float, 128> BlockReduce;``: the user's alias is renamed, the
    library template it names is not (renaming it would make a different program)."""
    text = """
    template <int N> __global__ void k(const float* x, float* y) {
      typedef cub::BlockReduce<float, N> BlockReduce;
      __shared__ typename BlockReduce::TempStorage tmp;
      float v = BlockReduce(tmp).Reduce(x[threadIdx.x], cub::Sum());
      if (threadIdx.x == 0) y[blockIdx.x] = v;
    }
    """
    decl = cpp.declarations(cpp.parse(text).root_node)
    renamed = rename.rename_cpp(text, decl, {n: f"v{i}" for i, n in enumerate(sorted(decl.all()))})
    assert "cub::BlockReduce<float" in renamed
    assert renamed.count("BlockReduce") == 1  # the alias and its two uses are renamed


def test_define_to_constexpr_compiles(tmp_path):
    """The #define -> constexpr direction (the corpus has no #define): output compiles."""
    text = "#define BLOCK 128\n#define PAD (BLOCK / 16)\n__global__ void k(float* x) {\n" \
           "  __shared__ float s[BLOCK + PAD];\n  s[threadIdx.x] = x[threadIdx.x];\n  x[0] = s[0];\n}\n"
    new, names = constants.define_to_constexpr(text)
    assert names == ["BLOCK", "PAD"] and "#define" not in new and "constexpr auto BLOCK = 128;" in new
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found: CUDA compile checks need the CUDA toolkit")
    (tmp_path / "k.cu").write_text(new)
    proc = subprocess.run([nvcc, *validity.NVCC_FLAGS, "-c", str(tmp_path / "k.cu"), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


_GOOD_CU = """#include <cuda_runtime.h>
template <int W> __global__ void fill(float* out, float v) { out[blockIdx.x * W + threadIdx.x] = v; }
template <typename T> int host_width(const T& shape) { return shape.width; }
struct Shape { int width; };
extern "C" int fill_launch(float* out, int n, cudaStream_t s) {
  fill<32><<<n / host_width(Shape{32}), 32, 0, s>>>(out, 1.f);
  return static_cast<int>(cudaGetLastError());
}
"""


def test_the_compile_check_rejects_host_and_device_errors(tmp_path):
    """The CUDA compile of the validity check (nvcc --cubin, no host-compiler pass) still rejects a
    host-side error, one inside a template instantiated only from host code, and a device-side one
    (the three ways a broken rename or constant rewrite shows up), and accepts the intact file."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found: CUDA compile checks need the CUDA toolkit")
    broken = {
        "host": _GOOD_CU.replace("return static_cast<int>(cudaGetLastError());", "return static_cast<int>(no_such_status);"),
        "host template": _GOOD_CU.replace("return shape.width;", "return shape.height;"),
        "device": _GOOD_CU.replace("out[blockIdx.x * W + threadIdx.x] = v;", "out[blockIdx.x * W + lane] = v;"),
    }
    assert all(text != _GOOD_CU for text in broken.values())
    jobs = [validity.Job("intact", "cuda", _GOOD_CU)] + [validity.Job(name, "cuda", text) for name, text in broken.items()]
    outcomes = validity.Compiler(tmp_path).run(jobs)
    assert [o.ok for o in outcomes] == [True, False, False, False], [o.detail[-300:] for o in outcomes]


_STUB_TORCH = {
    "torch/extension.h": "#pragma once\nnamespace at { struct Tensor { int n; }; }\n"
                         "namespace pybind11 { struct module_ { template <class F> void def(const char*, F, const char*) {} }; }\n"
                         "namespace torch { template <class F> F wrap_pybind_function(F f) { return f; } }\n"
                         "#define PYBIND11_MODULE(name, m) void d2k_module_init(pybind11::module_& m)\n",
}


class _StubCompiler(validity.Compiler):
    """The validity compiler against a stand-in torch header: batching is about C++ scoping, and the
    real headers cost ~30 s a unit."""

    def _host_includes(self) -> list[str]:
        root = self.workdir / "stub_torch"
        for rel, text in _STUB_TORCH.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        return [str(root)]

    def _build_pch(self) -> None:
        self._pch_failed = "not used here"


def _wrapper(name: str, value: str, extra: str = "") -> validity.Job:
    body = (f"#include <torch/extension.h>\n#define SCALE {value}\n{extra}"
            "at::Tensor scale(const at::Tensor& x) { return at::Tensor{x.n * SCALE}; }\n"
            'extern "C" int launch_scale(int n);\n')
    return validity.Job(name, "host", body + validity.binding_code(["scale"]), body=body, functions=("scale",))


def test_host_wrappers_checked_in_a_batch_keep_their_own_verdicts(tmp_path):
    """Wrappers that define the same function and macro share a unit without clashing; a broken one
    fails on its own (the batch is rechecked one by one); a wrapper that only compiles with an
    earlier wrapper's macro is not let through by sharing its unit."""
    if shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("no host C++ compiler")
    compiler = _StubCompiler(tmp_path)
    clean = [_wrapper("a", "2"), _wrapper("b", "3"), _wrapper("c", "4", "static int helper = 1;\n")]
    assert [o.ok for o in compiler.run(clean)] == [True, True, True]
    assert compiler.stats["host_batches"] == 1
    broken = _wrapper("broken", "2", "static int bad = undefined_name;\n")
    leaning = validity.Job("leaning", "host", "int twice(int v) { return v * SCALE; }\n", body="int twice(int v) { return v * SCALE; }\n")
    outcomes = compiler.run([_wrapper("d", "5"), broken, _wrapper("e", "6")])
    assert [o.ok for o in outcomes] == [True, False, True], [o.detail[-200:] for o in outcomes]
    assert "undefined_name" in outcomes[1].detail
    outcomes = compiler.run([_wrapper("f", "7"), leaning])
    assert [o.ok for o in outcomes] == [True, False] and "SCALE" in outcomes[1].detail


def test_unsupported_embedded_cpp_is_reported():
    """C++ built from f-strings is not rewritten silently: the transformer says it cannot."""
    module = cst.parse_module('from torch.utils.cpp_extension import load_inline\nN = 4\n'
                              'SRC = f"__global__ void k() {{ int a[{N}]; }}"\n'
                              'm = load_inline(name="x", cpp_sources="", cuda_sources=SRC)\n')
    with pytest.raises(pysrc.UnsupportedSource):
        pysrc.embedded_cpp_strings(module)


# ---------------------------------------------------------------------------------------------
# The transformed programs still work


@pytest.fixture(scope="session")
def validity_results(lab, request, tmp_path_factory) -> dict[str, list[str]]:
    """Problems per case id, from one worker run and one batch of compiles for all cases."""
    pytest.importorskip("torch", reason="the validity checks import the submissions (torch needed)")
    cases, proved = [], {}
    for folder, name in CASES:
        try:
            sub = lab.transformed(folder, name)
        except Exception:  # noqa: BLE001 - reported by the other tests of the case
            continue
        if isinstance(sub, NotApplicable):
            continue
        if name in PROVED_BY_CHECK:
            # Same C++ token sequence and same Python AST as the working original: nothing to run.
            proved[_case_id((folder, name))] = CHECKS[name](lab.original(folder), sub)
            continue
        original = lab.written(folder, "original") if sub.is_cuda else None
        cases.append(validity.Case(_case_id((folder, name)), name, sub, lab.written(folder, name), original))
    problems, lab.validity = validity.validate(cases, tmp_path_factory.mktemp("metamorphic_validity"),
                                               getattr(request.config, "cache", None))
    lab.validity["proved"] = Counter(case_id.split(":")[0] for case_id in proved)
    return problems | proved


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_transformed_program_is_valid(case, lab, validity_results):
    folder, name = case
    _applicable(lab, folder, name)
    found = validity_results.get(_case_id(case), ["not checked"])
    failures = [p for p in found if not p.startswith("SKIP:")]
    assert not failures, "\n".join(failures)
    if found:
        pytest.skip("; ".join(p[5:].strip() for p in found))


# ---------------------------------------------------------------------------------------------
# Summary


@pytest.fixture(scope="module", autouse=True)
def _summary(request, lab):
    yield
    lines = ["", "metamorphic summary (cases per transformation; analyzer differences by property)"]
    for name in TRANSFORMS:
        done = [c for c in lab._copies if c[1] == name]
        applied = [c for c in done if isinstance(lab._copies[c], Submission)]
        na = [c for c in done if isinstance(lab._copies[c], NotApplicable)]
        compared = [c for c in lab.outcome if c[1] == name]
        differ = [c for c in compared if lab.outcome[c] == "differs"]
        lines.append(f"  {name:17s} applied {len(applied):2d}, not applicable {len(na):2d}, compared {len(compared):2d}, "
                     f"analysis differs in {len(differ):2d}")
        props = Counter()
        for c in differ:
            for d in lab.diffs[c]:
                props[d.what if d.kind == "status" else f"[{d.kind}] {d.what or d.unit}"] += 1
        if lab.validity:
            v = lab.validity
            lines.append(f"      validity: {v['compiled'][name]} changed translation units compiled (or known compiled), "
                         f"{v['ran'][name]} Triton submissions run, {v['proved'][name]} proved by the transformation's "
                         f"check, {v['invalid'][name]} invalid")
        for prop, n in props.most_common():
            lines.append(f"      {n:3d}  {prop}")
    if lab.validity:
        c = lab.validity["compiler"]
        t = lab.validity["seconds"]
        lines.append(f"  compiles: {c['compiled']} run now ({c.get('host_batches', 0)} batches of host wrappers), "
                     f"{c.get('shared', 0)} the same as another case's, "
                     f"{c['cached']} known from pytest's cache; {t['worker']} s running the submissions, "
                     f"{t['compiles']} s compiling")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            for line in lines:
                reporter.write_line(line)
