"""Kernel units: what is found, where (line mapping of embedded CUDA), and with which helpers."""

from __future__ import annotations

from d2k_analyze.detectors import detect
from d2k_analyze.model import Status

EMBEDDED = '''import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <cuda_runtime.h>
__device__ float helper(float v) { return __expf(v); }

__global__ void scale_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = helper(x[i]);
}

void launch(const float* x, float* y, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, y, n); }
"""

DOC_EXAMPLE = """__global__ void never_compiled(float* x) { atomicAdd(x, 1.0f); }"""

_mod = load_inline(name="m", cpp_sources="void launch(const float*, float*, int);", cuda_sources=CUDA_SRC, functions=["launch"])


def run(x):
    y = torch.empty_like(x)
    _mod.launch(x, y, x.numel())
    return y
'''


def test_embedded_cuda_maps_lines_to_the_python_file(make_units):
    [unit] = make_units({"submission.py": EMBEDDED})
    assert unit.name == "scale_kernel" and unit.language == "cuda"
    assert unit.file == "submission.py"
    assert (unit.span.start_line, unit.span.end_line) == (8, 11)
    assert unit.helpers == ["helper"]
    assert unit.launched
    finding = detect("fast_math", unit.ast)
    assert finding.status == Status.PRESENT and finding.hits[0].line == 6  # __expf in the helper


def test_uncompiled_cuda_string_earns_nothing(make_units):
    units = make_units({"submission.py": EMBEDDED})
    assert "never_compiled" not in {u.name for u in units}


def test_cu_file_read_from_python_and_extern_c_launcher(make_units):
    files = {
        "kernel.cu": """
            __global__ void used(float* x) { x[threadIdx.x] = 1.f; }
            __global__ void unused(float* x) { x[threadIdx.x] = 2.f; }
            extern "C" void launch_used(float* x, cudaStream_t s) { used<<<1, 32, 0, s>>>(x); }
        """,
        "submission.py": """
            from pathlib import Path
            import ctypes
            _lib = load_inline(name="k", cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(), functions=["launch_used"])
            def run(x):
                _lib.launch_used(x)
                return x
        """,
    }
    units = {u.name: u for u in make_units(files)}
    assert units["used"].launched and not units["unused"].launched
    assert units["used"].launch_sites and units["used"].launch_sites[0].file == "kernel.cu"


def test_standalone_cu_counts_kernels_launched_from_host(make_units):
    units = {u.name: u for u in make_units({"k.cu": """
        __global__ void a(float* x) { x[0] = 1.f; }
        __global__ void b(float* x) { x[0] = 2.f; }
        int main() { float* x; a<<<1, 1>>>(x); return 0; }
    """})}
    assert units["a"].launched and not units["b"].launched


def test_cupy_raw_kernel_is_launched(make_units):
    [unit] = make_units({"submission.py": '''
        import cupy as cp
        SRC = r"""
        extern "C" __global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }
        """
        _k = cp.RawKernel(SRC, "add_one")
        def run(x):
            _k((1,), (32,), (x,))
            return x
    '''})
    assert unit.name == "add_one" and unit.launched


def test_triton_units_helpers_and_launch_constants(make_units):
    units = {u.name: u for u in make_units({"submission.py": '''
        import triton
        import triton.language as tl

        @triton.jit
        def _helper(x):
            return tl.math.exp2(x)

        @triton.jit
        def kern(x_ptr, BLOCK: tl.constexpr, USE: tl.constexpr = False):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            tl.store(x_ptr + tl.arange(0, BLOCK), _helper(x))

        @triton.jit
        def dead_kernel(x_ptr):
            tl.atomic_add(x_ptr, 1.0)

        def run(x):
            kern[(1,)](x, BLOCK=128)
            return x

        if __name__ == "__main__":
            dead_kernel[(1,)](None)
    '''})}
    assert set(units) == {"kern", "dead_kernel"}  # _helper is part of kern, not a unit
    kern = units["kern"]
    assert kern.launched and kern.helpers == ["_helper"]
    assert kern.launch_constants == {"BLOCK": 128, "USE": False}
    assert detect("fast_math", kern.ast).status == Status.PRESENT
    assert not units["dead_kernel"].launched  # launched only from the __main__ block


def test_kernels_defined_under_import_guards_are_module_kernels(make_units):
    """``if HAS_TRITON:`` / ``try: ... except ImportError`` blocks run at import: what they define
    is a module-level kernel, launched by the wrapper defined beside it."""
    units = {u.name: u for u in make_units({"ops.py": '''
        try:
            import triton
            import triton.language as tl
            OK = True
        except ImportError:
            OK = False

        if OK:
            @triton.jit
            def scale_rows(p, q, n, B: tl.constexpr):
                offs = tl.program_id(0) * B + tl.arange(0, B)
                v = tl.load(p + offs, mask=offs < n)
                tl.store(q + offs, tl.sigmoid(v) * v, mask=offs < n)

            with open(__file__):
                @triton.jit
                def never_used(p):
                    tl.store(p, 1.0)

            def apply(x, y):
                scale_rows[(4,)](x, y, x.numel(), B=256)
        else:
            def apply(x, y):
                y.copy_(x)
    '''})}
    assert set(units) == {"scale_rows", "never_used"}
    assert units["scale_rows"].launched and units["scale_rows"].launch_constants["B"] == 256
    assert not units["never_used"].launched


def test_autotune_applied_as_a_call(make_units):
    [unit] = make_units({"submission.py": '''
        import triton
        import triton.language as tl

        def _cfg(bm, stages):
            return triton.Config({"BM": bm}, num_stages=stages, num_warps=4)

        CONFIGS = [_cfg(64, 3), _cfg(128, 4)]

        @triton.jit
        def kern(x_ptr, N, BM: tl.constexpr):
            for i in range(0, N, BM):
                tl.store(x_ptr + i, tl.load(x_ptr + i))

        kern_tuned = triton.autotune(configs=CONFIGS, key=["N"])(kern)

        def run(x):
            kern_tuned[(1,)](x, x.numel())
    '''})
    facts = unit.ast
    assert unit.launched and len(facts.configs) == 2
    assert sorted(v for config in facts.configs for v in config.get("num_stages", [])) == [3, 4]
    assert detect("autotuning", facts).status == Status.PRESENT
    assert detect("multistage_pipeline", facts).status == Status.PRESENT


def test_syntax_error_recovery_keeps_other_kernels(make_units):
    units = make_units({"k.cu": """
        __global__ void ok(float* x) { x[threadIdx.x] = __expf(x[0]); }
        __global__ void broken(float* x) { x[ = ; }}
    """})
    assert "ok" in {u.name for u in units}


def test_macro_bodies_are_part_of_the_unit(make_units):
    [unit] = make_units({"k.cu": """
        #define CP_ASYNC(dst, src) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src))
        __global__ void k(const float* x) { __shared__ float s[64]; CP_ASYNC(0, x); }
    """})
    assert detect("async_copy", unit.ast).status == Status.PRESENT


def test_pragma_between_for_and_body_parses(make_units):
    [unit] = make_units({"k.cu": """
        __global__ void k(float* acc) {
            for (int i = 0; i < 4; ++i)
        #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i * 4 + j] += 1.f;
        }
    """})
    assert not unit.parse_warnings
    assert detect("loop_unrolling", unit.ast).status == Status.PRESENT


def test_a_helper_renamed_in_another_module_is_the_function_it_names(make_units):
    """``order = order_v1`` in a helpers module imported with ``*``: a kernel calling ``order``
    calls ``order_v1`` (its grouped rasterisation is the kernel's own)."""
    units = {u.name: u for u in make_units({
        "pkg/helpers.py": '''
            import triton
            import triton.language as tl

            @triton.jit
            def order_v1(pid, n_m, n_n, G: tl.constexpr):
                per = G * n_n
                first = (pid // per) * G
                h = tl.minimum(n_m - first, G)
                return first + (pid % per) % h, (pid % per) // h

            order = order_v1
        ''',
        "pkg/kern.py": '''
            import triton
            import triton.language as tl
            from .helpers import *

            @triton.jit
            def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
                tm, tn = order(tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN), 8)
                rm = tm * BM + tl.arange(0, BM)
                rn = tn * BN + tl.arange(0, BN)
                rk = tl.arange(0, BK)
                acc = tl.zeros((BM, BN), dtype=tl.float32)
                for k in range(0, K, BK):
                    acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]), tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
                tl.store(c + rm[:, None] * N + rn[None, :], acc)

            def run(a, b, c):
                mm[(64,)](a, b, c, 512, 512, 512, BM=64, BN=64, BK=32)
        '''})}
    assert units["mm"].helpers == ["order_v1"]
    assert detect("tile_swizzle", units["mm"].ast).status == Status.PRESENT


def test_an_ide_shim_that_empties_cuda_qualifiers_does_not_hide_the_kernels(make_units):
    """A header that ``#define``s ``__global__`` and friends as nothing for an IDE's indexer
    (under a flag no build sets) is not the language nvcc compiles: the kernels stay kernels."""
    units = make_units({
        "shim.h": '''
            #pragma once
            #ifdef SOME_EDITOR_INDEXER
            #define __global__
            #define __device__
            #define __forceinline__
            #endif
        ''',
        "k.cu": '''
            #include "shim.h"
            __device__ __forceinline__ float twice(float v) { return 2.f * v; }
            __global__ void scale(float* x, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) x[i] = twice(x[i]);
            }
            void go(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
        '''})
    assert [(u.name, u.launched) for u in units] == [("scale", True)]


def test_configs_of_a_builder_looping_over_a_product_of_its_arguments(make_units):
    # the module-level name holds the builder's call; its loop runs over product(stages, warps)
    [unit] = make_units({"submission.py": '''
        from itertools import product
        import triton
        import triton.language as tl

        def grid_of(stage_list, warp_list):
            return [triton.Config({"BM": 64}, num_stages=s, num_warps=w) for s, w in product(stage_list, warp_list)]

        TUNE = grid_of([2, 3, 5], [4, 8])

        @triton.autotune(TUNE, key=["N"])
        @triton.jit
        def kern(x_ptr, N, BM: tl.constexpr):
            for i in range(0, N, BM):
                tl.store(x_ptr + i, tl.load(x_ptr + i) * 2)

        def run(x):
            kern[(1,)](x, x.numel())
    '''})
    [config] = unit.ast.configs
    assert config["num_stages"] == [2, 2, 3, 3, 5, 5]
    assert config["num_warps"] == [4, 8, 4, 8, 4, 8]


def test_an_if_on_a_macro_the_file_defines_to_a_value_keeps_only_the_side_it_selects(make_units):
    # ``#define WITH_PROBE 0`` makes ``#if WITH_PROBE == 1`` dead in every build: the probe
    # kernel launched only there is not launched, and the ``#else`` side's launch stays
    src = '''
        #define WITH_PROBE 0
        __global__ void probe(float* p) { p[threadIdx.x] = 0.f; }
        __global__ void work(float* p) { p[threadIdx.x] *= 2.f; }
        void step(float* p, cudaStream_t s) {
        #if WITH_PROBE == 1
            probe<<<1, 32, 0, s>>>(p);
        #else
            work<<<1, 32, 0, s>>>(p);
        #endif
        }
    '''
    units = {u.name: u for u in make_units({"step.cu": src})}
    assert units["work"].launched and not units["probe"].launched
    flipped = {u.name: u for u in make_units({"step.cu": src.replace("WITH_PROBE 0", "WITH_PROBE 1")})}
    assert flipped["probe"].launched and not flipped["work"].launched
    # a macro no file defines is a build flag: both sides stay
    flag = {u.name: u for u in make_units({"step.cu": src.replace("#define WITH_PROBE 0", "")})}
    assert flag["probe"].launched and flag["work"].launched
