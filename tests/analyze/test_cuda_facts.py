"""Facts of CUDA code that tree-sitter or a naive lowering gets wrong: bounds checks written as
``a < b && c >= d`` (tree-sitter reads a template there), loads inside a conditional expression
(guarded by its condition), and fields of register structs such as WMMA fragments (registers,
not global memory)."""

from __future__ import annotations

from pathlib import Path

from d2k_analyze.facts.expr import Num, Op, TypeRef, walk
from d2k_analyze.model import SourceFile
from d2k_analyze.parsing import kernel_units


def facts_of(tmp_path: Path, src: str):
    path = tmp_path / "k.cu"
    path.write_text(src)
    units, _ = kernel_units([SourceFile(path, "cuda", src)])
    return units[0].ast


def comparisons(e) -> list[str]:
    return sorted(n.op for n in walk(e) if isinstance(n, Op) and n.op in ("<", "<=", ">", ">="))


def test_a_parenthesised_bounds_check_with_less_than_then_greater_equal_keeps_every_comparison(tmp_path):
    # in parentheses tree-sitter reads "y < rows && x >" as a template and "= lo && ..." as an assignment
    f = facts_of(tmp_path, """
__global__ void clip_copy(const float* src, float* dst, int rows, int cols, int lo) {
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  bool inside = (y >= 0 && y < rows && x >= lo && x < cols);
  if (inside) dst[y * cols + x] = src[y * cols + x];
}
""")
    load = next(a for a in f.accesses if a.kind == "load")
    assert [comparisons(g) for g in load.guards] == [["<", "<", ">=", ">="]]
    flag = next(a for a in f.assigns if a.loc.line == 5)
    assert comparisons(flag.new) == ["<", "<", ">=", ">="]


def test_a_load_in_a_conditional_expression_is_guarded_by_its_condition(tmp_path):
    f = facts_of(tmp_path, """
__global__ void pad_read(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (i < n && i >= 1) ? in[i - 1] : 0.0f;
  out[i] = v;
}
""")
    load = next(a for a in f.accesses if a.kind == "load")
    assert [comparisons(g) for g in load.guards] == [["<", ">="]]
    store = next(a for a in f.accesses if a.kind == "store")
    assert store.guards == ()


def test_fields_of_a_wmma_fragment_are_registers(tmp_path):
    f = facts_of(tmp_path, """
#include <mma.h>
using namespace nvcuda;
__global__ void scale_tile(const half* a, const half* b, float* c, float s) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  for (int e = 0; e < acc.num_elements; ++e) acc.x[e] *= s;
  wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}
""")
    on_line_12 = [a for a in f.accesses if a.loc.line == 12]
    assert on_line_12 and {f.objects[a.obj].space for a in on_line_12} == {"local"}


def test_a_templated_declaration_read_as_two_comparisons_still_declares_the_local(tmp_path):
    # without the cooperative-groups header tree-sitter reads `thread_block_tile<32> w = ...;` as
    # `(thread_block_tile < 32) > (w = ...)`; the local must still hold the tile
    f = facts_of(tmp_path, """
namespace cg = cooperative_groups;
__global__ void lane_ids(int* out) {
  cg::thread_block blk = cg::this_thread_block();
  cg::thread_block_tile<32> w = cg::tiled_partition<32>(blk);
  out[blockIdx.x * blockDim.x + threadIdx.x] = w.thread_rank();
}
""")
    store = next(a for a in f.accesses if a.kind == "store")
    assert repr(store.value) == "Sym(key='lane', deps=frozenset())"
    assert not any(isinstance(n, Op) and n.op in ("<", ">") for a in f.assigns for n in walk(a.new))


TRAITS = """
template <int N> struct Lane { using word = char; };
template <> struct Lane<4> { using word = unsigned; };
template <> struct Lane<16> { using word = int4; };

template <typename T, int K>
__global__ void move(const T* in, T* out) {
  using W = typename Lane<(sizeof(T) * K) % 32>::word;
  reinterpret_cast<W*>(out)[threadIdx.x] = reinterpret_cast<const W*>(in)[threadIdx.x];
}
void go(const float* a, float* b) { move<float, KPER><<<1, 32>>>(a, b); }
"""


def test_a_member_type_of_a_traits_struct_follows_the_specialisation_its_evaluated_argument_selects(tmp_path):
    # (4 * 4) % 32 = 16 picks Lane<16>; (4 * 1) % 32 = 4 picks Lane<4>; (4 * 2) % 32 = 8 has no
    # specialisation, so the primary template's member applies
    for k, elem in ((4, "int4"), (1, "unsigned"), (2, "char")):
        f = facts_of(tmp_path, TRAITS.replace("KPER", str(k)))
        store = next(a for a in f.accesses if a.kind == "store")
        assert store.elem == elem, (k, store.elem)


def test_a_host_local_constant_given_as_template_argument_is_its_value(tmp_path):
    # ``constexpr int width = 16 / sizeof(T)`` in the host template: the kernel's N is 8 for __half,
    # so its loop over a bundle has a known trip count (before: N stayed the unresolved name ``width``)
    f = facts_of(tmp_path, """
#include <cuda_fp16.h>
template <typename E, int N>
__global__ void widen_rows(const E* src, float* dst, long count) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count / N; i += (long)gridDim.x * blockDim.x)
    for (int j = 0; j < N; ++j) dst[i * N + j] = __half2float(src[i * N + j]);
}
template <typename E>
void widen(const E* src, float* dst, long count) {
  constexpr int width = 16 / sizeof(E);
  widen_rows<E, width><<<132, 256>>>(src, dst, count);
}
extern "C" void widen_half(const void* src, float* dst, long count) { widen<__half>(static_cast<const __half*>(src), dst, count); }
""")
    assert [launch.targs[1] for launch in f.launches] == [Num(8)]
    inner = next(lp for lp in f.loops.values() if lp.parent is not None)
    assert inner.trips == 8


HALF2_VIEW = '''
#include <cuda_fp16.h>
__device__ inline float row_dot(const float* x, const half* w, int row, int n) {
    int lane = threadIdx.x % 32;
    float acc = 0.f;
    for (int j = lane * 2; j < n; j += 64) {
        float2 p = __half22float2(*(const half2*)&w[row * n + j]);
        acc += p.x * x[j] + p.y * x[j + 1];
    }
    return acc;
}
template <typename W>
__global__ void gemv_rows(float* y, const float* x, const W* w, int n) { y[blockIdx.x] = row_dot(x, w, blockIdx.x, n); }
'''


def _half2_lane_step(facts):
    """How many half2 elements apart neighbouring lanes read (the offset's lane coefficient)."""
    from d2k_analyze.facts import poly as P

    [acc] = [a for a in facts.accesses if a.space == "global" and a.elem == "half2"]
    return P.constant_of(acc.thread_stride())


def test_a_kernel_pointer_parameter_takes_the_type_its_launch_binds(tmp_path):
    """``const W* w`` launched as ``pairs<half>``: a ``half2`` view of it in the kernel moves one
    half2 per lane."""
    src = """
#include <cuda_fp16.h>
template <typename W>
__global__ void pairs(float2* y, const W* w, int n) {
    int j = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (j < n) y[j / 2] = __half22float2(*(const half2*)&w[j]);
}
void go(float2* y, const half* w, int n) { pairs<half><<<n / 64, 32>>>(y, w, n); }
"""
    assert _half2_lane_step(facts_of(tmp_path, src)) == 1


def test_an_unbound_template_pointer_handed_to_a_typed_parameter_takes_that_type(tmp_path):
    """No launch pins ``W`` (two instantiations): the call into ``const half* w`` only compiles for
    halves, so the ``half2`` view still moves one half2 per lane."""
    src = HALF2_VIEW + ("void go(float* y, const float* x, const void* w, int n, bool f) {\n"
                        "  if (f) gemv_rows<half><<<64, 32>>>(y, x, (const half*)w, n);\n"
                        "  else gemv_rows<float><<<64, 32>>>(y, x, (const float*)w, n); }\n")
    assert _half2_lane_step(facts_of(tmp_path, src)) == 1


def test_a_vector_local_stored_whole_carries_its_components_written_one_by_one(tmp_path):
    # ``p.x = ...; out[i] = p`` stores the new components, not the loaded float2 it started from
    f = facts_of(tmp_path, """
__global__ void shift_pairs(const float2* a, const float2* b, float2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 p = a[i];
  const float2 q = b[i];
  p.x = p.x * 3.f + q.x;
  p.y = p.y * 3.f + q.y;
  out[i] = p;
}
""")
    store = next(a for a in f.accesses if a.kind == "store")
    read = {n.obj for n in walk(store.value) if type(n).__name__ == "Load"}
    assert len(read) == 2  # both inputs reach the stored pair
    assert any(isinstance(n, Num) and n.v == 3.0 for n in walk(store.value))


def _shared_offsets(f, line: int) -> list[str]:
    from d2k_analyze.facts.expr import show
    return [show(a.off) for a in f.accesses if a.space == "shared" and a.loc.line == line]


def test_a_table_of_stage_pointers_filled_in_a_loop_resolves_at_a_computed_stage(tmp_path):
    f = facts_of(tmp_path, """
__global__ void ring(const float* x, float* y, int n) {
  extern __shared__ float pool[];
  float* slot[3];
  for (int s = 0; s < 3; ++s) slot[s] = pool + s * 512;
  for (int k = 0; k < n; ++k) {
    float* cur = slot[k % 3];
    cur[threadIdx.x] = x[k * 512 + threadIdx.x];
    y[k * 512 + threadIdx.x] = slot[(k + 2) % 3][threadIdx.x];
  }
}
""")
    # the store through ``cur`` and the read two stages ahead both land in ``pool``, at the stage
    # the loop counter selects
    assert _shared_offsets(f, 8) == ["((512 * (iter#1 % 3)) + tid.x)"]
    assert _shared_offsets(f, 9) == ["((512 * ((2 + iter#1) % 3)) + tid.x)"]


def test_a_brace_initialised_table_of_pointers_with_a_constant_stride_resolves(tmp_path):
    f = facts_of(tmp_path, """
__global__ void pair(const float* x, float* y, int n) {
  __shared__ float mem[2][256];
  float* side[] = {mem[0], mem[1]};
  for (int k = 0; k < n; ++k) side[k & 1][threadIdx.x] = x[k * 256 + threadIdx.x];
  y[threadIdx.x] = side[1][threadIdx.x];
}
""")
    assert _shared_offsets(f, 5) == ["((256 * (1 & iter#0)) + tid.x)"]
    assert _shared_offsets(f, 6) == ["(256 + tid.x)"]


def test_a_pointer_table_overwritten_with_something_else_is_not_guessed(tmp_path):
    f = facts_of(tmp_path, """
__global__ void odd(const float* x, float* y, float* other, int n) {
  __shared__ float mem[512];
  float* side[2];
  side[0] = mem;
  side[1] = other;
  y[threadIdx.x] = side[n & 1][threadIdx.x];
}
""")
    assert not _shared_offsets(f, 7)


def test_an_asm_operand_bound_to_a_constant_is_written_into_the_instruction(tmp_path):
    f = facts_of(tmp_path, """
template <int N> __device__ void wait_n() { asm volatile("cp.async.wait_group %0;\\n" :: "n"(N)); }
__global__ void k(float* y) { wait_n<2>(); asm volatile("mov.u32 %0, %%laneid;" : "=r"(*(unsigned*)y)); y[0] = 1.f; }
""")
    assert f.asm[0].resolved.strip() == "cp.async.wait_group 2;"
    assert "%%laneid" in f.asm[1].resolved  # a literal percent is not an operand


def test_a_one_member_struct_returned_by_a_helper_keeps_its_member(tmp_path):
    from d2k_analyze.facts.expr import atoms
    f = facts_of(tmp_path, """
struct Desc { unsigned long long bits; };
__device__ Desc make(const float* p) { Desc d; d.bits = (unsigned long long)__cvta_generic_to_shared(p) >> 4; return d; }
__global__ void k(float* y) {
  __shared__ float t[64];
  y[threadIdx.x] = (float)make(t + 8).bits;
}
""")
    store = next(a for a in f.accesses if a.kind == "store")
    shared = {f"obj#{o.id}" for o in f.objects.values() if o.space == "shared"}
    assert atoms(store.value) & shared


def test_members_of_a_struct_member_assigned_in_a_loop_are_carried_and_read_as_such(tmp_path):
    from d2k_analyze.facts.expr import Sym, atoms
    f = facts_of(tmp_path, """
struct Pair { float m; float s; };
struct Outer { Pair p; int tag; };
__device__ Pair step(Pair a, float x) { Pair r; r.m = fmaxf(a.m, x); r.s = a.s + x; return r; }
__global__ void k(const float* x, float* y, int n) {
  Outer o;
  o.p.m = -1e30f; o.p.s = 0.f; o.tag = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) o.p = step(o.p, x[i]);
  y[threadIdx.x] = o.p.s;
}
""")
    in_loop = [a for a in f.assigns if a.loops and a.cell is not None and a.loc.line == 8]
    olds = [a.old for a in in_loop if isinstance(a.old, Sym)]
    carried = {a.old.key for a in in_loop if isinstance(a.old, Sym) and a.old.key.startswith("carried#")}
    assert len(carried) >= 3, olds  # o.p, o.p.m and o.p.s each carried round the loop
    # the helper reads the members' own carried values, not a member of the parent's symbol
    from d2k_analyze.facts.expr import Op
    s_update = next(a for a in in_loop if isinstance(a.new, Op) and a.new.op == "+")
    assert s_update.old.key in carried and s_update.old.key in atoms(s_update.new)


def test_a_table_of_pointers_that_is_not_a_progression_is_not_guessed(tmp_path):
    f = facts_of(tmp_path, """
__global__ void uneven(const float* x, float* y, int n) {
  __shared__ float mem[1024];
  float* part[] = {mem, mem + 100, mem + 300};
  part[n % 3][threadIdx.x] = x[threadIdx.x];
  y[threadIdx.x] = part[1][threadIdx.x];
}
""")
    assert not _shared_offsets(f, 5)  # which buffer ``n % 3`` picks is not base + i * step
    assert _shared_offsets(f, 6) == ["(100 + tid.x)"]  # a constant index still reads its own entry


def test_a_product_added_to_a_value_set_afresh_each_iteration_is_no_gemm_reduction(tmp_path):
    # a per-element gradient: ``g`` is recomputed in every iteration, so ``g += a * b`` sums
    # nothing across the loop; the running ``acc`` of the second kernel does
    from d2k_analyze.detectors._queries import gemm_loops

    fresh = facts_of(tmp_path, """
__global__ void grad_row(const float* x, const float* lse, const float* scale, const float* bonus,
                         const int* pick, float* dx, int n) {
  int r = blockIdx.x;
  for (int c = threadIdx.x; c < n; c += blockDim.x) {
    float g = __expf(x[r * n + c] - lse[r]);
    if (c == pick[r]) g += bonus[r] * scale[0];
    dx[r * n + c] = g;
  }
}
""")
    assert gemm_loops(fresh) == []
    running = facts_of(tmp_path, """
__global__ void row_dot(const float* a, const float* b, float* out, int n) {
  int r = blockIdx.x;
  float acc = 0.f;
  for (int c = 0; c < n; ++c) acc += a[r * n + c] * b[c];
  out[r] = acc;
}
""")
    assert len(gemm_loops(running)) == 1


def test_sizeof_a_cuda_header_type_spelled_as_an_expression_is_its_size(tmp_path):
    # the grammar reads ``sizeof(__half)`` as the size of an expression named __half; it is the
    # 2-byte type of cuda_fp16.h, so the loop runs 16 / 2 = 8 times
    from d2k_analyze.facts.expr import num

    f = facts_of(tmp_path, """
#include <cuda_fp16.h>
__global__ void halves(const __half* in, float* out) {
  float s = 0.f;
  for (int i = 0; i < 16 / sizeof(__half); ++i) s += __half2float(in[threadIdx.x * 8 + i]);
  out[threadIdx.x] = s;
}
""")
    [loop] = f.loops.values()
    assert num(loop.bound) == 8


def test_a_direct_initialisation_from_an_element_reads_that_element(tmp_path):
    # ``float const v(src[i + 1]);`` parses as a function declaration with an array parameter
    f = facts_of(tmp_path, """
__global__ void shift(const float* src, float* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float const v(src[i + 1]);
  dst[i] = v * 2.f;
}
""")
    loads = [a for a in f.accesses if a.kind == "load" and a.space == "global"]
    assert len(loads) == 1 and loads[0].obj == 0


_TEMPLATED_LAUNCHER = """
template <int W, typename T> struct Cfg {
  static constexpr int kVec = 16 / sizeof(T);
  static constexpr int kWidth = W;
};
template <typename C> __global__ void widen(const float* x, float* y) {
  float acc = 0.f;
  for (int i = 0; i < C::kVec; ++i) acc += x[threadIdx.x * C::kVec + i];
  for (int j = 0; j < C::kWidth; ++j) y[threadIdx.x * C::kWidth + j] = acc;
}
template <int W, typename T>
void run(const float* x, float* y, cudaStream_t s) {
  using C = Cfg<W, T>;
  auto k = &widen<C>;
  k<<<1, 32, 0, s>>>(x, y);
}
"""


def test_an_explicitly_instantiated_host_template_launches_through_a_pointer_with_its_arguments(tmp_path):
    # nothing here calls run<>: ``template void run<4, float>(...)`` is what it is compiled for;
    # the kernel pointer carries widen<Cfg<4, float>>, the alias written with the bound arguments
    f = facts_of(tmp_path, _TEMPLATED_LAUNCHER + "template void run<4, float>(const float*, float*, cudaStream_t);\n")
    assert [str(t) for lf in f.launches for t in lf.targs] == [str(TypeRef("struct:Cfg<4, float>"))]


def test_a_static_member_of_several_instantiations_is_known_only_where_they_agree(tmp_path):
    from d2k_analyze.facts.expr import num

    f = facts_of(tmp_path, _TEMPLATED_LAUNCHER + "template void run<4, float>(const float*, float*, cudaStream_t);\n"
                                                 "template void run<8, float>(const float*, float*, cudaStream_t);\n")
    bounds = sorted((lp.loc.line, num(lp.bound)) for lp in f.loops.values())
    assert bounds[0][1] == 4  # kVec: 16 / sizeof(float) in both
    assert bounds[1][1] is None  # kWidth: 4 in one, 8 in the other
