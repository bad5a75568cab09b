"""Functions that share a name are told apart by what the code refers to, not by their name.

Real code reuses short names across classes and modules (a ``forward`` per op class, a helper
overload in a namespace with the name of its caller). Before, every call or launch of ``forward``
reached the first ``forward`` found, and a call from one ``forward`` into another was taken for
recursion and left opaque, so kernels lost their helpers' loops, dots and reductions.
"""

from __future__ import annotations

from pathlib import Path

from d2k_analyze.analysis import analyze_paths
from d2k_analyze.detectors import detect
from d2k_analyze.facts.expr import Call, Num, walk
from d2k_analyze.model import SourceFile
from d2k_analyze.parsing import kernel_units
from d2k_analyze.parsing.python import best_definition, parse_python

PRIMS = '''import triton
import triton.language as tl


class Tile:
    @staticmethod
    @triton.jit
    def forward(a_ptr, b_ptr, rm, rn, K, lda, ldb, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * lda + kk[None, :])
            b = tl.load(b_ptr + kk[:, None] * ldb + rn[None, :])
            acc += tl.dot(a, b)
        return acc


class Rows:
    @staticmethod
    @triton.jit
    def forward(x_ptr, row, n, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        return tl.sum(tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0), axis=0)
'''

OPS = '''import triton
import triton.language as tl

from pkg import prims


class Matmul:
    @staticmethod
    @triton.jit
    def forward(c_ptr, a_ptr, b_ptr, K, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        acc = prims.Tile.forward(a_ptr, b_ptr, rm, rn, K, lda, ldb, BM, BN, BK)
        tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc)


class Total:
    @staticmethod
    @triton.jit
    def forward(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        tl.store(y_ptr + row, prims.Rows.forward(x_ptr, row, n, BLOCK))


class Unused:
    @staticmethod
    @triton.jit
    def forward(y_ptr, BLOCK: tl.constexpr):
        tl.store(y_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))
'''

RUN = '''import torch

from pkg import ops


def matmul(a, b):
    c = torch.empty(a.shape[0], b.shape[1], device=a.device)
    ops.Matmul.forward[(a.shape[0] // 64, b.shape[1] // 64)](c, a, b, a.shape[1], a.stride(0), b.stride(0), c.stride(0), BM=64, BN=64, BK=32)
    return c


def total(x):
    y = torch.empty(x.shape[0], device=x.device)
    ops.Total.forward[(x.shape[0],)](y, x, x.shape[1], BLOCK=1024)
    return y
'''


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "prims.py").write_text(PRIMS)
    (pkg / "ops.py").write_text(OPS)
    (pkg / "run.py").write_text(RUN)
    return pkg


def test_a_dotted_reference_picks_the_definition_its_qualified_name_and_module_match(tmp_path: Path):
    pkg = _package(tmp_path)
    sources = [parse_python((pkg / f).read_text(), str(pkg / f)) for f in ("prims.py", "ops.py")]
    forwards = [(py, fn) for py in sources for fn in py.functions if fn.name == "forward"]
    picked = {ref: best_definition(forwards, ref) for ref in
              ("pkg.prims.Tile.forward", "pkg.prims.Rows.forward", "ops.Total.forward", "pkg.ops.Matmul.forward")}
    assert {ref: (Path(py.file).name, fn.qualname) for ref, (py, fn) in picked.items()} == {
        "pkg.prims.Tile.forward": ("prims.py", "Tile.forward"),
        "pkg.prims.Rows.forward": ("prims.py", "Rows.forward"),
        "ops.Total.forward": ("ops.py", "Total.forward"),
        "pkg.ops.Matmul.forward": ("ops.py", "Matmul.forward"),
    }


def test_each_kernel_gets_its_own_helper_and_its_own_launch(tmp_path: Path):
    [analysis] = analyze_paths([_package(tmp_path)])
    units = {(Path(u.unit.file).name, u.unit.span.start_line): u for u in analysis.units}
    ops = sorted((line, u) for (f, line), u in units.items() if f == "ops.py")
    matmul, total, unused = (u for _, u in ops)
    # the helpers in prims.py are called, never launched: not kernel units of their own
    assert not [u for (f, _), u in units.items() if f == "prims.py"]
    assert matmul.findings["tensor_cores"].status.value == "present", matmul.findings["tensor_cores"].reason
    assert total.findings["tensor_cores"].status.value == "absent"  # Rows.forward, not Tile.forward
    assert any(c.fn == "tl.sum" for c in total.unit.ast.calls)
    assert (matmul.unit.launched, total.unit.launched, unused.unit.launched) == (True, True, False)
    assert matmul.unit.launch_constants.get("BK") == 32 and "BK" not in total.unit.launch_constants


CUDA = '''
namespace fast {
__device__ __forceinline__ float ex(float v) { return __expf(v); }
}

__device__ __forceinline__ float ex(float v, float top) { return fast::ex(v - top); }

__global__ void shifted_exp(const float* x, float* y, float top, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = ex(x[i], top);
}
'''


def test_a_helper_calling_a_same_named_overload_is_not_recursion():
    [unit] = kernel_units([SourceFile(Path("k.cu"), "cuda", CUDA)])[0]
    [store] = [a for a in unit.ast.accesses if a.kind == "store"]
    assert "__expf" in {n.fn for n in walk(store.value) if isinstance(n, Call)}


SET_ONCE = '''
static int sm_total;
static int launches_done;

void init_device() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    sm_total = prop.multiProcessorCount;
}

__global__ void bump_rows(float* x, int rows, int width) {
    for (int r = blockIdx.x; r < rows; r += gridDim.x)
        for (int c = threadIdx.x; c < width; c += blockDim.x) x[r * width + c] += 1.f;
}

void bump(float* x, int rows, int width) {
    bump_rows<<<sm_total, 256>>>(x, rows, width);
    launches_done++;
}
'''


def test_a_file_variable_set_once_by_host_code_is_that_value_at_the_launch():
    [unit] = kernel_units([SourceFile(Path("k.cu"), "cuda", SET_ONCE)])[0]
    assert detect("persistent_kernel", unit.ast).status.value == "present"
    # written twice (or from device code), a variable is not a constant
    twice = SET_ONCE.replace("launches_done++;", "sm_total = rows;")
    [unit] = kernel_units([SourceFile(Path("k.cu"), "cuda", twice)])[0]
    assert detect("persistent_kernel", unit.ast).status.value == "absent"


PLAIN = '''import triton
import triton.language as tl


@triton.jit
def _body(x):
    return x * 2.0


@triton.jit
def _kern(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + o, _body(tl.load(x_ptr + o, mask=o < n)), mask=o < n)


def run(y, x):
    _kern[(triton.cdiv(x.numel(), 256),)](y, x, x.numel(), BLOCK=256)
'''


def test_a_bare_name_is_the_callers_own_module_definition(tmp_path: Path):
    """Two modules each with a ``_body`` helper and a ``_kern`` launched by bare name: each
    kernel runs its own module's helper, and each launch reaches its own module's kernel."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a_plain.py").write_text(PLAIN)
    (pkg / "b_exp.py").write_text(PLAIN.replace("return x * 2.0", "return tl.exp(x)").replace("256", "512"))
    [analysis] = analyze_paths([pkg])
    by_file = {Path(u.unit.file).name: u.unit for u in analysis.units}
    assert set(by_file) == {"a_plain.py", "b_exp.py"}
    exp_calls = {name: any(c.fn == "tl.exp" for c in unit.ast.calls) for name, unit in by_file.items()}
    assert exp_calls == {"a_plain.py": False, "b_exp.py": True}
    assert {name: unit.launch_constants.get("BLOCK") for name, unit in by_file.items()} == {"a_plain.py": 256, "b_exp.py": 512}


def test_a_cuda_helper_is_the_one_in_the_callers_file():
    first = "__device__ float tweak(float v) { return v + 1.f; }\n__global__ void k1(float* p) { p[threadIdx.x] = tweak(p[threadIdx.x]); }\n"
    second = "__device__ float tweak(float v) { return __expf(v); }\n__global__ void k2(float* p) { p[threadIdx.x] = tweak(p[threadIdx.x]); }\n"
    units, _ = kernel_units([SourceFile(Path("a.cu"), "cuda", first), SourceFile(Path("b.cu"), "cuda", second)])
    calls = {u.name: {n.fn for a in u.ast.accesses if a.kind == "store" for n in walk(a.value) if isinstance(n, Call)} for u in units}
    assert calls == {"k1": set(), "k2": {"__expf"}}


# Two versions of one program kept side by side, as tutorial repositories keep them: the same
# kernel name, helper name, constant and macro, and a driver that launches whichever version it
# is linked with. Each .cu file is a translation unit of its own.
VERSION_1 = """
#define STAGES 1
constexpr int TILE = 64;
__device__ float load_one(const float* p, int i) { return p[i]; }
__global__ void kernel(const float* x, float* y) {
  __shared__ float buf[STAGES][TILE];
  buf[0][threadIdx.x] = load_one(x, blockIdx.x * TILE + threadIdx.x);
  __syncthreads();
  y[blockIdx.x * TILE + threadIdx.x] = buf[0][TILE - 1 - threadIdx.x];
}
void launch_v1(const float* x, float* y, int n) { kernel<<<n / TILE, TILE>>>(x, y); }
"""

VERSION_2 = """
#define STAGES 3
constexpr int TILE = 128;
__device__ float4 load_one(const float* p, int i) { return reinterpret_cast<const float4*>(p)[i]; }
__global__ void kernel(const float* x, float* y) {
  float4 v = load_one(x, blockIdx.x * TILE + threadIdx.x);
  atomicAdd(y + blockIdx.x, v.x + v.y + v.z + v.w);
}
void launch_v2(const float* x, float* y, int n) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(n / TILE); cfg.blockDim = dim3(TILE);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  cudaLaunchKernelEx(&cfg, kernel, x, y);
}
"""

VERSION_3 = """
template <int B>
__global__ void kernel(const float* x, float* y) { y[blockIdx.x * B + threadIdx.x] = 2.f * x[blockIdx.x * B + threadIdx.x]; }
void launch_v3(const float* x, float* y, int n) { kernel<256><<<n / 256, 256>>>(x, y); }
"""

DRIVER = """
#include <cstdio>
int STAGES = 2;  // a variable here: version 1's macro must not rewrite it
extern __global__ void kernel(const float* x, float* y);
int main() { float *x, *y; kernel<<<8, 64>>>(x, y); std::printf("%d", STAGES); return 0; }
"""


def test_each_standalone_file_keeps_its_own_helpers_constants_macros_and_launches():
    files = [SourceFile(Path(n), "cuda", t) for n, t in (("v1.cu", VERSION_1), ("v2.cu", VERSION_2), ("v3.cu", VERSION_3), ("main.cu", DRIVER))]
    units, warnings = kernel_units(files)
    assert not [w for w in warnings if "syntax" in w], warnings
    by_file = {Path(u.file).name: u for u in units}
    assert set(by_file) == {"v1.cu", "v2.cu", "v3.cu"}
    # an ``extern`` declaration cannot reach another file's template: v3 keeps its own launch only
    assert [Path(s.file).name for s in by_file["v3.cu"].launch_sites] == ["v3.cu"]
    assert [Path(lf.loc.file).name for lf in by_file["v3.cu"].ast.launches] == ["v3.cu"]
    v1, v2 = by_file["v1.cu"], by_file["v2.cu"]
    # helpers: each kernel inlines its own file's load_one (v2's is a float4 load)
    assert v1.helpers == ["load_one"] and v2.helpers == ["load_one"]
    assert detect("vectorized_access", v2.ast).status.value == "present"
    assert detect("vectorized_access", v1.ast).status.value == "absent"
    # launches: v2's cluster attribute is v2's alone; main.cu's launch of the extern kernel
    # reaches both definitions
    assert detect("thread_block_cluster", v2.ast).status.value == "present"
    assert detect("thread_block_cluster", v1.ast).status.value == "absent"
    assert sorted(Path(s.file).name for s in v1.launch_sites) == ["main.cu", "v1.cu"]
    assert sorted(Path(s.file).name for s in v2.launch_sites) == ["main.cu", "v2.cu"]
    # constants: TILE is 64 at v1's own launch and 128 at v2's
    blocks = {(Path(u.file).name, Path(lf.loc.file).name): lf.block for u in units for lf in u.ast.launches}
    assert blocks[("v1.cu", "v1.cu")] == (Num(64),)
    assert blocks[("v2.cu", "v2.cu")] == (Num(128),)


SPECIALISED = """
#include <cuda_fp16.h>
template <typename T>
__global__ void scale_rows(T* out, const T* in, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = in[i] * T(2);
}

template <>
__global__ void scale_rows<__half>(__half* out, const __half* in, int n) {
  const half2* in2 = reinterpret_cast<const half2*>(in);
  half2* out2 = reinterpret_cast<half2*>(out);
#pragma unroll 4
  for (int i = 0; i < 64; ++i) out2[threadIdx.x + i * 32] = __hmul2(in2[threadIdx.x + i * 32], __float2half2_rn(2.f));
}

void launch(float* o, const float* i, __half* ho, const __half* hi, int n) {
  scale_rows<float><<<1, 256>>>(o, i, n);
  scale_rows<__half><<<1, 32>>>(ho, hi, n);
}
"""


def test_an_explicit_specialisation_is_a_unit_of_its_own():
    # Before, the second definition of the name was dropped with its body: the __half kernel's
    # vector loads and unrolled loop were never seen.
    units, _ = kernel_units([SourceFile(Path("k.cu"), "cuda", SPECIALISED)])
    by_name = {u.name: u for u in units}
    assert set(by_name) == {"scale_rows", "scale_rows<__half>"}
    def status(name: str, prop: str) -> str:
        return detect(prop, by_name[name].ast).status.value

    assert status("scale_rows<__half>", "loop_unrolling") == "present"
    assert status("scale_rows", "loop_unrolling") == "absent"
    assert status("scale_rows<__half>", "vectorized_access") == "present"
    assert all(u.launched for u in units)


FACTORY = '''import triton
import triton.language as tl


def clone(fn, **bindings):
    return fn


def scaled_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * 2.0, mask=offs < n)


def make_kernel():
    k = scaled_copy
    k = clone(k, tag="x2")
    k = triton.heuristics({"BLOCK": lambda a: 1024})(triton.jit(k))
    return k


scaled_copy_k = make_kernel()


def run(x):
    y = x.new_empty(x.shape)
    scaled_copy_k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel())
    return y
'''


def test_a_function_jitted_by_a_factory_call_is_a_kernel():
    # no decorator: ``triton.jit(k)`` on a local taken from the module function (through a copy)
    units, _ = kernel_units([SourceFile(Path("f.py"), "python", FACTORY)])
    assert [u.name for u in units] == ["scaled_copy"]
    assert units[0].ast is not None and any(a.kind == "store" for a in units[0].ast.accesses)


ALIASED_HELPER = '''import triton
import triton.language as tl


@triton.jit
def passthrough(v):
    return v


post = passthrough


@triton.jit
def shift(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, post(tl.load(x_ptr + offs, mask=offs < n) + 1.0), mask=offs < n)


def run(x, y):
    shift[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
'''


def test_a_jit_helper_called_through_a_module_alias_is_a_helper_not_a_kernel():
    units, _ = kernel_units([SourceFile(Path("a.py"), "python", ALIASED_HELPER)])
    assert [u.name for u in units] == ["shift"]


DEDUCED = """
struct f4 { float a, b, c, d; };
template <typename T>
__global__ void widen(T* out, const int8_t* q, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = T(q[i]) * s;
}
template <>
__global__ void widen(f4* out, const int8_t* q, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const char4 v = reinterpret_cast<const char4*>(q)[i];
  if (i < n / 4) out[i] = f4{v.x * s, v.y * s, v.z * s, v.w * s};
}
void run(float* o, f4* o4, const int8_t* q, float s, int n) {
  widen<<<n / 256, 256>>>(o, q, s, n);
  widen<<<n / 1024, 256>>>(o4, q, s, n);
}
"""


def test_a_specialisation_with_deduced_arguments_is_a_unit_named_by_its_parameter_types():
    units, _ = kernel_units([SourceFile(Path("w.cu"), "cuda", DEDUCED)])
    names = sorted(u.name for u in units)
    assert names == ["widen", "widen<f4*,const int8_t*,float,int>"]
    special = next(u for u in units if u.name != "widen")
    assert detect("vectorized_access", special.ast).status.value == "present"
    assert detect("vectorized_access", next(u for u in units if u.name == "widen").ast).status.value == "absent"
