"""The Triton compiled layer (d2k_analyze/compiled/triton*.py): CPU-only ``triton.compile`` for sm_90
and sm_100, read by the detectors' declared readers.

Compiles are slow (~1 s each), so every compiled submission is analysed once per session, into a
private cache folder, and the tests share the results.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from d2k_analyze.analysis import analyze_submission
from d2k_analyze.compiled import triton as layer
from d2k_analyze.compiled import triton_plan
from d2k_analyze.compiled.triton_combine import apply_triton
from d2k_analyze.compiled.triton_gate import import_refusal
from d2k_analyze.compiled.triton_module import KernelModule
from d2k_analyze.compiled.ttgir import TritonIR
from d2k_analyze.detectors import signatures
from d2k_analyze.model import Status
from d2k_analyze.scoring import score_submission
from d2k_spec.task import load_task

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[2]
PILOT = {
    "corpus/softmax/naive_triton": "softmax", "corpus/softmax/online_triton": "softmax",
    "corpus/layernorm/naive_triton": "layernorm", "corpus/layernorm/welford_triton": "layernorm",
    "corpus/gemm_bf16/naive_triton": "gemm_bf16", "corpus/gemm_bf16/tiled_triton": "gemm_bf16",
    "tasks/softmax/expert": "softmax", "tasks/layernorm/expert": "layernorm", "tasks/gemm_bf16/expert": "gemm_bf16",
}

GEMM = '''
import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, IEEE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        if IEEE:  # genuine fp32 operands (from bf16 they would be exact in tf32, and Blackwell uses tcgen05)
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


def run(a, b):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if @IEEE@:
        a, b = a.float(), b.float()
    mm_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32, IEEE=@IEEE@, num_stages=@STAGES@, num_warps=4)
    return c
'''

TMA = '''
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def tma_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


def run(a, b):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    a_desc = TensorDescriptor.from_tensor(a, [128, 64])
    b_desc = TensorDescriptor.from_tensor(b, [128, 64])
    c_desc = TensorDescriptor.from_tensor(c, [128, 128])
    tma_kernel[(triton.cdiv(M, 128), triton.cdiv(N, 128))](a_desc, b_desc, c_desc, K, BM=128, BN=128, BK=64, num_stages=3)
    return c
'''

ROWS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr, COLUMN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if COLUMN:
        offs = cols * stride + row  # one column: adjacent elements are a row apart
    else:
        offs = row * stride + cols
    x = tl.load(x_ptr + offs, mask=cols < N, other=0.0).to(tl.float32)
    y = x / tl.sum(x, axis=0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=cols < N)


def run(x):
    M, N = x.shape
    y = torch.empty_like(x)
    rows_kernel[(M,)](x, y, N, x.stride(0), BLOCK=triton.next_power_of_2(N), COLUMN=@COLUMN@, num_warps=@WARPS@)
    return y
'''

MALICIOUS = '''
import socket
import triton
import triton.language as tl

open(@MARKER@, "w").write("pwned")
socket.create_connection(("127.0.0.1", 9))


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


def run(x):
    k[(1,)](x, BLOCK=128)
    return x
'''


def _write(folder: Path, text: str, **subs) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for key, value in subs.items():
        text = text.replace(f"@{key}@", str(value))
    (folder / "submission.py").write_text(textwrap.dedent(text))
    return folder


def _task(task_id: str):
    return load_task(ROOT / "tasks" / task_id)


def _run(folder: Path, task_id: str):
    analysis = analyze_submission(folder.name, folder, task_id)
    result = layer.compile_submission(analysis, _task(task_id))
    return analysis, result


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    """Every fixture submission and the pilot corpus, compiled once (cold, private cache)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    mp.setattr(triton_plan, "MAX_VARIANTS", 2)
    mp.setattr(layer, "MAX_VARIANTS", 2)
    base = tmp_path_factory.mktemp("subs")
    subs = {
        "mm_bf16": (_write(base / "gemm_bf16" / "mm_bf16", GEMM, IEEE=False, STAGES=3), "gemm_bf16"),
        "mm_ieee": (_write(base / "gemm_bf16" / "mm_ieee", GEMM, IEEE=True, STAGES=3), "gemm_bf16"),
        "mm_1stage": (_write(base / "gemm_bf16" / "mm_1stage", GEMM, IEEE=False, STAGES=1), "gemm_bf16"),
        "tma": (_write(base / "gemm_bf16" / "tma", TMA), "gemm_bf16"),
        "rows": (_write(base / "softmax" / "rows", ROWS, COLUMN=False, WARPS=4), "softmax"),
        "column": (_write(base / "softmax" / "column", ROWS, COLUMN=True, WARPS=1), "softmax"),
    }
    out = {name: _run(folder, task) for name, (folder, task) in subs.items()}
    for sub, task in PILOT.items():
        out[sub] = _run(ROOT / sub, task)
    yield out
    mp.undo()


def _decision(result, unit: str, prop: str) -> bool | None:
    from d2k_analyze.compiled.triton_combine import decide

    return decide(result.kernels[unit], prop)[0]


# --- the layer ran -----------------------------------------------------------------------------


def test_fixtures_compile_for_both_targets(compiled):
    for name in ("mm_bf16", "mm_ieee", "mm_1stage", "tma", "rows", "column"):
        _, result = compiled[name]
        assert result.status == "ok", (name, result.message, result.notes)
        outcomes = [o for vs in result.kernels.values() for o in vs]
        assert {o.arch for o in outcomes} == {90, 100}, name
        assert all(o.status == "ok" for o in outcomes), [(o.where, o.message) for o in outcomes]


@pytest.mark.parametrize("name, unit, prop, expected", [
    ("mm_bf16", "mm_kernel", "tensor_cores", True),        # wgmma / tcgen05.mma
    ("mm_ieee", "mm_kernel", "tensor_cores", False),       # fp32 dot forced to IEEE: FMA units
    ("mm_bf16", "mm_kernel", "multistage_pipeline", True),  # num_stages=3: a ring of stages
    ("mm_1stage", "mm_kernel", "multistage_pipeline", False),
    ("mm_bf16", "mm_kernel", "async_copy", True),           # cp.async
    ("mm_1stage", "mm_kernel", "async_copy", False),
    ("tma", "tma_kernel", "tma", True),                     # cp.async.bulk.tensor
    ("mm_bf16", "mm_kernel", "tma", False),
    ("mm_bf16", "mm_kernel", "smem_tiling", True),          # dot operands staged in shared memory
    ("mm_bf16", "mm_kernel", "bank_conflict_avoidance", True),  # 128-byte NVMMA swizzle
    ("mm_bf16", "mm_kernel", "warp_specialization", False),
    ("rows", "rows_kernel", "vectorized_access", True),     # ld.global.v4 on an aligned row
    ("column", "rows_kernel", "vectorized_access", False),  # a strided column: scalar loads
    ("rows", "rows_kernel", "coalesced_access", True),
    ("rows", "rows_kernel", "warp_shuffle_reduction", True),
    ("rows", "rows_kernel", "block_reduction", True),       # 4 warps on the reduced axis
    ("column", "rows_kernel", "block_reduction", False),    # one warp: no cross-warp round
])
def test_signature_fixtures(compiled, name, unit, prop, expected):
    _, result = compiled[name]
    assert _decision(result, unit, prop) is expected


def test_register_usage_from_ptxas(compiled):
    if layer.ptxas_for(90) is None:
        pytest.skip("no ptxas")
    _, result = compiled["mm_bf16"]
    art = result.kernels["mm_kernel"][0].artifact
    assert art.registers and art.registers > 0 and art.spill_stores is not None


# --- readers on text the compiler could also emit -------------------------------------------------


def test_readers_on_ttgir_text():
    swizzled = TritonIR("#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>\n"
                        "%a = ttg.local_alloc : () -> !ttg.memdesc<2x64x32xbf16, #shared, #smem, mutable>\n", "", 90)
    plain = TritonIR("#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>\n"
                     "%a = ttg.local_alloc : () -> !ttg.memdesc<2x64x32xbf16, #shared, #smem, mutable>\n", "", 90)
    ws = TritonIR("ttg.warp_specialize(%a) attributes {requestedRegisters = array<i32: 24>}\n", "", 100)
    read = {p: s.triton for p, s in signatures().items() if s.triton}
    assert read["bank_conflict_avoidance"](swizzled).decision is True
    assert read["bank_conflict_avoidance"](plain).decision is False
    assert read["warp_specialization"](ws).decision is True


# --- verdicts in the score --------------------------------------------------------------------------


def _not_assessed(analysis, result, task_id, catalogue):
    task = _task(task_id)
    before = score_submission(analysis, task, catalogue).not_assessed
    after = score_submission(apply_triton(analysis, result, catalogue), task, catalogue).not_assessed
    return before, after


def test_pilot_corpus_and_experts_get_compiled_verdicts(compiled, catalogue):
    total_before = total_after = 0
    for sub, task in PILOT.items():
        analysis, result = compiled[sub]
        assert result.status == "ok", (sub, result.message)
        before, after = _not_assessed(analysis, result, task, catalogue)
        total_before += len(before)
        total_after += len(after)
        assert set(after) <= set(before), sub
    # 18 items since the LayerNorm expert's long rows went to a CUDA kernel, which decides its own
    # items from source (20 before)
    assert total_before >= 16 and total_after == 0, (total_before, total_after)


def test_expert_gemm_verdicts_come_from_the_compiler(compiled, catalogue):
    analysis, result = compiled["tasks/gemm_bf16/expert"]
    unit = next(ua for ua in apply_triton(analysis, result, catalogue).units if ua.unit.name == "gemm_persistent_tma_kernel")
    for prop in ("tma", "multistage_pipeline", "bank_conflict_avoidance", "smem_tiling", "tensor_cores"):
        finding = unit.findings[prop]
        assert finding.status == Status.PRESENT, prop
        compiled_ev = finding.evidence[-1]
        assert compiled_ev.layer == "compiled" and compiled_ev.snippet, prop  # the TTGIR/PTX line itself
    assert "wgmma" in unit.findings["tensor_cores"].evidence[-1].snippet or "tcgen05" in unit.findings["tensor_cores"].evidence[-1].snippet


def test_three_pass_softmax_reductions_decided(compiled, catalogue):
    analysis, result = compiled["corpus/softmax/naive_triton"]
    before, after = _not_assessed(analysis, result, "softmax", catalogue)
    assert {"row_mapping", "vectorized_io", "warp_shuffle_reduction"} <= set(before) and not after


# --- refusals and the sandbox -------------------------------------------------------------------------


def test_malicious_import_is_refused_and_leaves_nothing(tmp_path, compiled):
    marker = tmp_path / "pwned.txt"
    folder = _write(tmp_path / "softmax" / "evil", MALICIOUS, MARKER=repr(str(marker)))
    leftovers = set(Path(tempfile.gettempdir()).glob("d2k-triton-*"))
    _, result = _run(folder, "softmax")
    assert result.status == "refused" and "open(" in result.message
    assert not marker.exists()
    assert set(Path(tempfile.gettempdir()).glob("d2k-triton-*")) == leftovers


def test_import_gate_allows_definitions_only():
    import ast

    ok = "import triton\nimport triton.language as tl\nX = 3\nCONFIGS = [triton.Config({'B': b}) for b in (1, 2)]\n" \
         "def f(n):\n    return [triton.Config({'B': n})]\nY = f(2)\nif __name__ == '__main__':\n    print('hi')\n"
    assert import_refusal(ast.parse(ok), "m.py") is None
    for bad in ("import torch\ntorch.manual_seed(0)\n", "import os\nos.system('x')\n", "import torch\nx = torch.randn(4)\n",
                "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", "with open('f') as fh:\n    pass\n",
                "def f():\n    open('x', 'w')\nY = f()\n"):
        assert import_refusal(ast.parse(bad), "m.py") is not None, bad


def test_kernel_gate_refuses_compile_time_escapes(tmp_path):
    escape = GEMM.replace("pid_m = tl.program_id(0)", "pid_m = tl.program_id(0) + triton.runtime.driver.active.get_current_device()")
    _, result = _run(_write(tmp_path / "gemm_bf16" / "escape", escape, IEEE=False, STAGES=3), "gemm_bf16")
    assert result.status == "refused" and "outside the Triton language" in result.message


def test_sandbox_blocks_writes_and_network(tmp_path):
    """Even code that got past both gates runs confined: no write outside the work folder, no socket."""
    marker = tmp_path / "outside.txt"
    text = (f"import socket\ntry:\n    open({str(marker)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
            "try:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    NET = 'open'\nexcept OSError:\n    NET = 'blocked'\n"
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n"
            "    tl.store(x_ptr + tl.arange(0, B), 1.0)\n")
    module = KernelModule("probe", text, {"k": ""})
    spec = triton_plan.Variant("probe", "k", 90, {"x_ptr": "*fp32", "B": "constexpr"}, {"B": 128}, ("x_ptr",), {}, "probe")
    raw, error = layer.run_worker({"probe": module}, {"0": spec})
    assert error is None and raw["0"]["status"] == "ok"
    assert not marker.exists()


def test_without_triton_the_layer_is_skipped(monkeypatch, tmp_path):
    layer.triton_version.cache_clear()
    monkeypatch.setattr(layer.importlib.util, "find_spec", lambda name: None)
    try:
        folder = _write(tmp_path / "softmax" / "rows", ROWS, COLUMN=False, WARPS=4)
        _, result = _run(folder, "softmax")
        assert result.status == "skipped" and "not installed" in result.message
    finally:
        monkeypatch.undo()
        layer.triton_version.cache_clear()


def test_cached_results_are_reused(compiled):
    analysis, first = compiled["corpus/softmax/naive_triton"]
    again = layer.compile_submission(analysis, _task("softmax"))
    assert again.compiled == 0 and again.cached == sum(len(v) for v in first.kernels.values())


def test_no_compiled_flag_keeps_working(tmp_path):
    import subprocess

    out = subprocess.run([sys.executable, "-m", "d2k_analyze", str(ROOT / "corpus/softmax/naive_triton"), "--no-compiled",
                          "--judge", "none"], capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0 and "compiled layer: off" in out.stdout and "triton:" not in out.stdout


def test_variants_that_take_minutes_to_compile_are_left_out_and_said():
    """A row softmax launched with BLOCK = 262144 on 4 warps holds 2048 elements per thread: over a
    minute of compile per target (BLOCK = 32768 compiles in about 2 s). Such a variant is left out
    of the plan with a note naming the workload; the others are still compiled."""
    from d2k_analyze.compiled.triton_plan import Variant, elements_per_thread, too_slow_to_compile

    def v(block, warps=4, **extra):
        return Variant("m", "k", 90, {"BLOCK": "constexpr"}, {"BLOCK": block, **extra}, (), {"num_warps": warps}, "", ("w",))

    assert elements_per_thread(v(262144)) == 2048 and too_slow_to_compile(v(262144))
    assert not too_slow_to_compile(v(32768)) and not too_slow_to_compile(v(262144, warps=32))
    assert not too_slow_to_compile(v(64, STAGES=3, FLAG=True))  # small extents, non-extent constants ignored


def test_plan_leaves_out_the_huge_block_workload(tmp_path, monkeypatch):
    from d2k_analyze.compiled.triton import plan

    monkeypatch.setattr(layer, "MAX_VARIANTS", 6)  # the session fixture lowers it to 2
    from d2k_spec.task import load_task
    from d2k_spec.locations import tasks_root

    src = (tmp_path / "submission.py")
    src.write_text(SOFTMAX_ONE_ROW)
    task = load_task(tasks_root() / "softmax")
    planned, notes = plan({"submission": src.read_text()}, "submission", task, {("submission", "row_softmax"): "row_softmax"})
    blocks = sorted(v.constexprs["BLOCK"] for v in planned["row_softmax"])
    assert 262144 not in blocks and 1024 in blocks and 32768 in blocks
    assert any("m128_n262144_fp32" in n and "elements per thread" in n for n in notes)


SOFTMAX_ONE_ROW = '''
import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * n + c, mask=c < n, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + r * n + c, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=c < n)


def run(x):
    y = torch.empty_like(x)
    row_softmax[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return y
'''


def test_vectorized_access_counts_pipelined_async_copies():
    """A load Triton software-pipelines (tl.range(..., num_stages=2)) becomes 16-byte cp.async
    copies into shared memory, not ld.global.v4: still a 128-bit global access (PTX lines as
    triton 3.6 emits them for the cross_entropy expert)."""
    from d2k_analyze.detectors.vectorized_access import _compiled

    pipelined = TritonIR("", "cp.async.cg.shared.global [ %r46 + 0 ], [ %rd9 + 0 ], 0x10, %r47;\n"
                             "cp.async.commit_group;\nld.global.cg.b32 { %r1 }, [ %rd2 + 0 ];\n", 90)
    assert _compiled(pipelined).decision is True
    narrow = TritonIR("", "cp.async.ca.shared.global [ %r46 + 0 ], [ %rd9 + 0 ], 0x4, %r47;\n", 90)
    assert _compiled(narrow).decision is False
    scalar = TritonIR("", "ld.global.L1::evict_first.L2::cache_hint.b16 { %rs1 }, [ %rd3 + 0 ], %rd4;\n", 90)
    assert _compiled(scalar).decision is False
