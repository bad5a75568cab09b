"""The compiled-artifact layer: parsing nvcc outputs, combining with syntax, real compiles."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from d2k_analyze.compiled import apply_compiled, compile_all, compiled_status, find_toolchain, translation_units
from d2k_analyze.compiled.artifacts import KernelArtifact, base_name, kernel_artifacts, parse_ptxas, split_ptx
from d2k_analyze.compiled.compiler import CompileResult, compile_unit
from d2k_analyze.compiled.signatures import scan
from d2k_analyze.compiled.toolchain import Toolchain
from d2k_analyze.compiled.units import TranslationUnit
from d2k_analyze.model import Evidence, KernelUnit, PropertyFinding, Span, Status, SubmissionAnalysis, UnitAnalysis
from d2k_spec.catalogue import Catalogue, Property

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: real compile tests skipped")

CATALOGUE = Catalogue(1, [
    Property(p, "L3", p, "d", {"cuda": c, "triton": "medium"}, [], "h")
    for p, c in [("tensor_cores", "high"), ("vectorized_access", "high"), ("warp_shuffle_reduction", "high"),
                 ("async_copy", "high"), ("ldmatrix", "medium"), ("fast_math", "high")]
])

PTX = """
.func  (.param .b32 func_retval0) _Z8warp_sumf(
\t.param .b32 _Z8warp_sumf_param_0
)
{
\tshfl.sync.bfly.b32 \t%r8|%p1, %r5, %r2, %r6, %r7;
\tret;
}
.visible .entry _Z6reduceP6float4Pf(
\t.param .u64 _Z6reduceP6float4Pf_param_0
)
.maxntid 256, 1, 1
{
\tld.global.nc.v4.f32 \t{%f2, %f3, %f4, %f5}, [%rd5];
\tcall.uni (retval0), _Z8warp_sumf, (param0);
\tex2.approx.ftz.f32 \t%f25, %f24;
}
.visible .entry gemm(
\t.param .u64 gemm_param_0
)
{
\tmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};
\tcp.async.cg.shared.global [%r1], [%rd1], 16;
\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
}
"""

PTXAS = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z6reduceP6float4Pf' for 'sm_90'
ptxas info    : Function properties for _Z6reduceP6float4Pf
    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 128 bytes smem, 360 bytes cmem[0]
ptxas info    : Compiling entry function 'gemm' for 'sm_90'
ptxas info    : Function properties for gemm
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers
"""

SASS = """
\tcode for sm_90
\t\tFunction : gemm
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED"
        /*0100*/                   LDSM.16.M88.4 R4, [R2] ;
        /*0110*/                   HMMA.16816.F32.BF16 R8, R4, R12, R8 ;
        /*0120*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R6.64] ;
\t\tFunction : _Z6reduceP6float4Pf
        /*0100*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*0110*/                   SHFL.BFLY PT, R5, R4, 0x10, 0x1f ;
        /*0120*/                   MUFU.EX2 R7, R6 ;
"""


@pytest.mark.parametrize(
    "symbol, name",
    [
        ("_Z6reduceP6float4Pf", "reduce"),
        ("_ZN2ns5innerEPf", "inner"),
        ("_Z2tkILi4EEvP6__halfS1_Pf", "tk"),
        ("_ZN12_GLOBAL__N_16kernelEPf", "kernel"),
        ("_ZN3abc4gemmILi128ELi64EEEvPK13__nv_bfloat16", "gemm"),
        ("softmax_kernel", "softmax_kernel"),
    ],
)
def test_base_name(symbol, name):
    assert base_name(symbol) == name


def test_split_ptx_includes_called_functions():
    kernels = split_ptx(PTX)
    assert set(kernels) == {"_Z6reduceP6float4Pf", "gemm"}
    assert "shfl.sync" in kernels["_Z6reduceP6float4Pf"]  # from the non-inlined helper
    assert "shfl.sync" not in kernels["gemm"]


def test_scan_ptx_and_sass_markers():
    ptx = scan(split_ptx(PTX)["gemm"], "ptx")
    assert {"tensor_cores", "async_copy", "ldmatrix"} <= set(ptx)
    assert "tma" not in ptx and "vectorized_access" not in ptx
    sass = scan(SASS, "sass")
    assert {"tensor_cores", "async_copy", "ldmatrix", "vectorized_access", "warp_shuffle_reduction", "fast_math", "cache_hints"} <= set(sass)
    assert scan("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];", "ptx").keys() >= {"tma", "async_copy"}
    # a lone CTA's bulk copy and TMA load spell their destination .shared::cluster: no cluster there
    assert "thread_block_cluster" not in scan("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];\n"
                                             "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];\n"
                                             "fence.mbarrier_init.release.cluster;", "ptx")
    for peer in ("mapa.shared::cluster.u32 %r2, %r1, %r3;", "ld.shared::cluster.f32 %f1, [%r2];",
                 "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], %r3, [%r4];",
                 "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%r2, %r3}], [%r4], %rs1;"):
        assert "thread_block_cluster" in scan(peer, "ptx"), peer
    assert "atomics" in scan("atom.global.add.f32 %f1, [%rd1], %f2;", "ptx")
    assert "atomics" not in scan("bar.red.popc.u32 %r1, 0, %p1;", "ptx")


def test_ptxas_resources_and_artifacts():
    res = parse_ptxas(PTXAS)
    assert res["_Z6reduceP6float4Pf"] == {"stack_bytes": 0, "spill_stores": 8, "spill_loads": 4, "registers": 40, "smem_bytes": 128}
    arts = {k.name: k for k in kernel_artifacts(PTX, SASS, PTXAS)}
    assert arts["gemm"].registers == 128 and arts["gemm"].has("tensor_cores")
    assert arts["gemm"].sass_markers["tensor_cores"][1] == ("HMMA.16816.F32.BF16",)
    assert arts["reduce"].has("warp_shuffle_reduction") and arts["reduce"].has("vectorized_access")
    assert any(s.startswith("SASS: SHFL.BFLY") for s in arts["reduce"].samples("warp_shuffle_reduction"))


def test_compile_result_json_round_trip():
    arts = tuple(kernel_artifacts(PTX, SASS, PTXAS))
    r = CompileResult("k.cu", "ok", "", "sm_90", arts, sass=True)
    assert CompileResult.from_json(r.to_json()) == r


# --- combining with syntax findings ---------------------------------------------------------------


def _analysis(name: str, **findings: tuple[Status, str]) -> SubmissionAnalysis:
    u = KernelUnit(name, "cuda", "sub/k.cu", Span("sub/k.cu", 5, 40), "src", launched=True)
    fs = {
        p: PropertyFinding(p, s, c, (Evidence(Span("sub/k.cu", 9, 9), "x", "syntax", c),) if s == Status.PRESENT else (), "syntax")
        for p, (s, c) in findings.items()
    }
    return SubmissionAnalysis("sub", Path("sub"), None, [UnitAnalysis(u, fs)])


def _result(*kernels: KernelArtifact) -> list[CompileResult]:
    return [CompileResult("sub/k.cu", "ok", "", "sm_90", kernels)]


def test_refute_confirm_and_upgrade():
    art = KernelArtifact("_Z4gemmPf", "gemm", ptx_markers={"warp_shuffle_reduction": (2, ("shfl.sync.bfly.b32",)),
                                                          "ldmatrix": (1, ("ldmatrix.sync",))})
    a = _analysis(
        "gemm",
        tensor_cores=(Status.PRESENT, "high"),  # no mma emitted -> refuted
        warp_shuffle_reduction=(Status.PRESENT, "high"),  # emitted -> confirmed
        ldmatrix=(Status.ABSENT, "medium"),  # emitted, medium -> upgraded
        vectorized_access=(Status.ABSENT, "high"),  # high-confidence absent, nothing emitted -> unchanged
        fast_math=(Status.PRESENT, "high"),  # not refutable: no ex2.approx marker does not refute
    )
    out = apply_compiled(a, _result(art), CATALOGUE).units[0].findings
    assert out["tensor_cores"].status == Status.ABSENT and out["tensor_cores"].reason.startswith("refuted")
    assert [e.layer for e in out["tensor_cores"].evidence] == ["syntax", "compiled"]
    assert out["warp_shuffle_reduction"].status == Status.PRESENT
    assert out["warp_shuffle_reduction"].evidence[-1].layer == "compiled"
    assert "shfl.sync" in out["warp_shuffle_reduction"].evidence[-1].snippet
    assert out["ldmatrix"].status == Status.PRESENT and out["ldmatrix"].reason.startswith("upgraded")
    assert out["vectorized_access"].status == Status.ABSENT
    assert out["fast_math"].status == Status.PRESENT
    assert a.units[0].findings["tensor_cores"].status == Status.PRESENT  # the input is not mutated


def test_unmatched_kernel_is_left_alone():
    """A kernel the compiler did not emit (uninstantiated template, header) keeps its findings."""
    a = _analysis("other", tensor_cores=(Status.PRESENT, "high"))
    art = KernelArtifact("_Z4gemmPf", "gemm")
    assert apply_compiled(a, _result(art), CATALOGUE).units[0].findings["tensor_cores"].status == Status.PRESENT


def test_status_lines_never_raise():
    tu = TranslationUnit("k.cu", "__global__ void k(){}")
    skipped = compile_unit(tu, Toolchain(None, None))
    assert skipped.status == "skipped"
    assert compiled_status([skipped]) == "compiled layer: skipped: nvcc not found"
    failed = CompileResult("k.cu", "failed", "k.cu(3): error: expected a \";\"")
    assert compiled_status([failed]).startswith("compiled layer: failed: k.cu: k.cu(3): error")
    assert compiled_status([], enabled=False) == "compiled layer: off (--no-compiled)"
    assert compile_all([tu, tu], Toolchain(None, None), jobs=2)[1].status == "skipped"


def test_translation_units_from_files_and_python_strings(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(float* p) { p[0] = 1; }\n")
    (tmp_path / "k.cuh").write_text("__global__ void h(float* p) { p[0] = 1; }\n")
    (tmp_path / "sub.py").write_text(
        'import x\n\nSRC = r"""\n#include <cuda_fp16.h>\n__global__ void e(float* p) { p[0] = 2; }\n"""\n'
        'EXT = """#include <torch/extension.h>\n__global__ void t(float* p) {}\n"""\n'
    )
    units, notes = translation_units([tmp_path / "k.cu", tmp_path / "k.cuh", tmp_path / "sub.py"])
    assert [(Path(u.origin).name, u.first_line) for u in units] == [("k.cu", 1), ("sub.py", 3)]
    assert "__global__ void e" in units[1].text
    assert any("header" in n for n in notes)


# --- real nvcc --------------------------------------------------------------------------------------

KERNEL = """
#include <cuda_fp16.h>
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__global__ void row_sum(const float4* __restrict__ x, float* y) {
  __shared__ float s[32];
  float4 v = x[threadIdx.x];
  float t = warp_sum(v.x + v.y + v.z + v.w);
  s[threadIdx.x % 32] = t;
  __syncthreads();
  y[blockIdx.x] = s[0];
}
extern "C" void launch(const float4* x, float* y, int n, cudaStream_t st) { row_sum<<<n, 256, 0, st>>>(x, y); }
"""


@needs_nvcc
def test_real_compile_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "bad.cu").write_text("__global__ void k(float* p) { p[0] = ; }\n")
    tc = find_toolchain()
    units, _ = translation_units([tmp_path / "k.cu", tmp_path / "bad.cu"])
    ok, bad = compile_all(units, tc, jobs=2)
    assert ok.status == "ok" and not ok.cached, ok.message
    (k,) = ok.kernels
    assert k.name == "row_sum" and k.registers and k.smem_bytes == 128
    assert k.has("warp_shuffle_reduction") and k.has("vectorized_access")
    assert bad.status == "failed" and "error" in bad.message and "bad.cu" in bad.message
    again = compile_unit(units[0], tc)
    assert again.cached and again.kernels == ok.kernels
    assert list((tmp_path / "cache" / "d2k-bench" / "compiled").glob("*.json"))


@needs_nvcc
def test_a_library_header_that_is_not_installed_skips_the_unit(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "k.cu").write_text('#include "some_vendor/tiles.cuh"\n' + KERNEL)
    units, _ = translation_units([tmp_path / "k.cu"])
    (result,) = compile_all(units, find_toolchain(), jobs=1)
    assert result.status == "skipped" and "some_vendor/tiles.cuh" in result.message, result.message


@needs_nvcc
def test_arch_specific_instructions_retry_on_sm90a(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tu = TranslationUnit(str(tmp_path / "w.cu"), '__global__ void w(float* p) { asm volatile("wgmma.fence.sync.aligned;"); p[0] = 1; }\n')
    result = compile_unit(tu, find_toolchain())
    assert result.status == "ok" and result.arch == "sm_90a", result.message
