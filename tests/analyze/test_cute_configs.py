"""CuTe-style kernels whose design lives in a configuration struct and a functor object.

The kernel declares ``typename Cfg::TiledMma mma;`` with ``Cfg`` bound at the launch to a struct
whose member aliases name the MMA, copy and swizzle atoms; it builds a functor with
``Gemm<Cfg> gemm(tile);`` (C++ reads an object there, the grammar a function declaration) and
calls ``gemm(a, b)``; the functor's methods carry CUTLASS/CuTe qualifier macros the submission
does not define. Each of these used to hide the design from the detectors.
"""

from __future__ import annotations

from pathlib import Path

from d2k_analyze.detectors import detect
from d2k_analyze.model import SourceFile
from d2k_analyze.parsing import kernel_units
from d2k_analyze.parsing.cuda import parse_cuda
from d2k_analyze.parsing.macros import collect, expand


def _unit(src: str):
    units, _ = kernel_units([SourceFile(Path("k.cu"), "cuda", src)])
    return units[0]


BOUND_MEMBER = """
namespace cfgs {
struct Sm80Cfg {
  private:
    using Atom = cute::MMA_Atom<cute::SM80_16x8x16_F32F16F16F32_TN>;
  public:
    using TiledMma = cute::TiledMMA<Atom, cute::Layout<cute::Shape<cute::Int<2>, cute::Int<2>, cute::Int<1>>>>;
};
}
template <typename Cfg>
__global__ void kern(float* out) {
    typename Cfg::TiledMma mma;
    auto part = mma.get_thread_slice(threadIdx.x);
    out[threadIdx.x] = 0.f;
}
template <typename Cfg>
void host(float* o) { kern<Cfg><<<1, 128>>>(o); }
void entry(float* o) { using C = cfgs::Sm80Cfg; host<C>(o); }
"""


def test_a_member_type_of_the_bound_config_struct_is_read_with_its_atoms():
    unit = _unit(BOUND_MEMBER)
    assert "cute.SM80_16x8x16_F32F16F16F32_TN" in unit.ast.lib_names_used()
    assert detect("tensor_cores", unit.ast).status.value == "present"


def test_library_qualifier_macros_do_not_break_a_struct():
    src = """template <typename Cfg, typename Out>
struct Accum {
   private:
    Out& dst;
    typename Cfg::Mma mma;
    decltype(mma.slice(0u)) part;
   public:
    CUTE_DEVICE Accum(Out& d) : dst(d), part(mma.slice(threadIdx.x)) { cute::clear(part); }
    CUTE_DEVICE void operator()(const Out& a) { cute::gemm(mma, a, part); }
    CUTE_HOST_DEVICE int size() const { return 1; }
};
"""
    parsed = parse_cuda(expand(src, collect([src])), "k.cu")
    assert {(f.owner, f.name) for f in parsed.functions} == {("Accum", "Accum"), ("Accum", "operator()"), ("Accum", "size")}
    own = "#define CUTE_DEVICE __device__\n" + src  # a submission's own definition wins
    assert collect([own])["CUTE_DEVICE"].body == "__device__"


FUNCTOR = """
template <int W>
struct WarpSum {
    float* dst;
    __device__ WarpSum(float* d) : dst(d) {}
    __device__ void operator()(float v) {
        for (int o = W / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x % W == 0) dst[threadIdx.x / W] = v;
    }
};

__global__ void sums(const float* x, float* out) {
    WarpSum<32> fold(out);
    fold(x[blockIdx.x * blockDim.x + threadIdx.x]);
}
"""


def test_an_object_built_from_a_local_is_an_object_and_its_call_operator_runs():
    assert detect("warp_shuffle_reduction", _unit(FUNCTOR).ast).status.value == "present"
