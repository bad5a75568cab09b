"""Liveness: constant folding, dead branches under launch-site constants, reachability."""

from __future__ import annotations

import pytest

from d2k_analyze.detectors import detect
from d2k_analyze.parsing.liveness import UNKNOWN, Unknown, branch_truth, evaluate, literal_value, reachable
from d2k_analyze.model import Status


@pytest.mark.parametrize(
    "expr,env,lang,expected",
    [
        ("kStages > 1 && !kUseTma", {"kStages": 3, "kUseTma": False}, "cuda", True),
        ("BLOCK >= 128u", {"BLOCK": 64}, "cuda", False),
        ("(N / 2) == 3", {"N": 7}, "cuda", True),  # C integer division
        ("not USE_TMA", {"USE_TMA": False}, "python", True),
        ("STAGE == 1 or STAGE == 3", {"STAGE": 3}, "python", True),
        ("true", {}, "cuda", True),
    ],
)
def test_evaluate(expr, env, lang, expected):
    assert evaluate(expr, env, lang) is expected


def test_unknown_names_stay_unknown():
    with pytest.raises(Unknown):
        evaluate("n > 4", {}, "cuda")
    assert literal_value("foo(3)") is UNKNOWN
    assert branch_truth("USE", [{"USE": True}, {"USE": False}], "python") is None  # differs across launches
    assert branch_truth("USE", [{"USE": False}, {"USE": False}], "python") is False


def test_reachable():
    edges = {"run": {"a"}, "a": {"b"}, "c": {"d"}}
    assert reachable(["run"], edges) == {"run", "a", "b"}


def test_template_argument_folds_if_constexpr(make_units):
    src = """
        template <int kStages>
        __global__ void k(float* x) {
            if constexpr (kStages > 1) { atomicAdd(x, 1.f); } else { x[0] = 0.f; }
        }
        void launch(float* x) { k<1><<<1, 32>>>(x); }
    """
    [unit] = make_units({"k.cu": src})
    assert unit.launch_constants == {"kStages": 1}
    assert detect("atomics", unit.ast).status == Status.ABSENT
    [unit] = make_units({"k.cu": src.replace("k<1>", "k<3>")})
    assert detect("atomics", unit.ast).status == Status.PRESENT


def test_branch_live_when_any_launch_takes_it(make_units):
    [unit] = make_units({"k.cu": """
        template <bool kAtomic>
        __global__ void k(float* x) { if (kAtomic) atomicAdd(x, 1.f); }
        void launch(float* x, bool a) { if (a) k<true><<<1, 1>>>(x); else k<false><<<1, 1>>>(x); }
    """})
    assert detect("atomics", unit.ast).status == Status.PRESENT


def test_if_zero_region_is_dead(make_units):
    [unit] = make_units({"k.cu": """
        __global__ void k(float* x) {
        #if 0
            atomicAdd(x, 1.f);
        #endif
            x[0] = 1.f;
        }
    """})
    assert detect("atomics", unit.ast).status == Status.ABSENT


def test_triton_constexpr_from_autotune_configs_and_defaults(make_units):
    src = '''
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"USE_ATOMIC": False}), triton.Config({"USE_ATOMIC": False})], key=[])
        @triton.jit
        def k(x_ptr, USE_ATOMIC: tl.constexpr, ELSE_PATH: tl.constexpr = True):
            if USE_ATOMIC:
                tl.atomic_add(x_ptr, 1.0)
            elif ELSE_PATH:
                tl.store(x_ptr, tl.math.exp2(1.0))

        def run(x):
            k[(1,)](x)
    '''
    [unit] = make_units({"submission.py": src})
    assert detect("atomics", unit.ast).status == Status.ABSENT
    assert detect("fast_math", unit.ast).status == Status.PRESENT
    assert min(unit.code_lines) > 0


def test_helper_branch_folded_with_call_site_constants(make_units):
    [unit] = make_units({"submission.py": '''
        import triton
        import triton.language as tl

        @triton.jit
        def inner(x_ptr, STAGE: tl.constexpr):
            if STAGE == 2:
                tl.atomic_add(x_ptr, 1.0)
            tl.store(x_ptr, 0.0)

        @triton.jit
        def outer(x_ptr):
            inner(x_ptr, 1)

        def run(x):
            outer[(1,)](x)
    '''})
    assert unit.name == "outer" and unit.helpers == ["inner"]
    assert detect("atomics", unit.ast).status == Status.ABSENT


def test_comments_and_strings_earn_nothing(make_units):
    [unit] = make_units({"submission.py": '''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr):
            """tl.atomic_add(x_ptr, 1.0) would be faster here."""
            # tl.atomic_add(x_ptr, 1.0)
            tl.store(x_ptr, 1.0)

        def run(x):
            k[(1,)](x)
    '''})
    assert detect("atomics", unit.ast).status == Status.ABSENT
    live_text = [unit.ast.file_lines[file][line - 1] for file, line in unit.ast.lines]
    assert live_text and all("atomic" not in text for text in live_text)


def test_modelnew_entry_point(make_units):
    units = {u.name: u for u in make_units({"submission.py": '''
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def used(x_ptr):
            tl.store(x_ptr, 1.0)

        @triton.jit
        def unused(x_ptr):
            tl.store(x_ptr, 2.0)

        def _launch_unused(x):
            unused[(1,)](x)

        class ModelNew(torch.nn.Module):
            def forward(self, x):
                used[(1,)](x)
                return x
    '''})}
    assert units["used"].launched and not units["unused"].launched


PREPROC_LAUNCHES = """
#define FAST_PATH
__global__ void fast(float* x) { x[threadIdx.x] = 1.f; }
__global__ void slow(float* x) { x[threadIdx.x] = 2.f; }
__global__ void legacy(float* x) { x[threadIdx.x] = 3.f; }
__global__ void flagged(float* x) { x[threadIdx.x] = 4.f; }
void launch(float* x) {
#ifdef FAST_PATH
  fast<<<1, 32>>>(x);
#else
  slow<<<1, 32>>>(x);
#endif
#if 0
  legacy<<<1, 32>>>(x);
#endif
#ifdef USE_FLAGGED  // a build flag the source never defines: both sides may be compiled
  flagged<<<1, 32>>>(x);
#endif
}
"""


def test_launches_in_preprocessor_branches_the_file_rules_out_are_not_live():
    from pathlib import Path

    from d2k_analyze.model import SourceFile
    from d2k_analyze.parsing import kernel_units

    units, _ = kernel_units([SourceFile(Path("p.cu"), "cuda", PREPROC_LAUNCHES)])
    assert {u.name: u.launched for u in units} == {"fast": True, "slow": False, "legacy": False, "flagged": True}


def test_a_header_guard_is_not_a_condition_that_rules_its_body_out():
    from pathlib import Path

    from d2k_analyze.model import SourceFile
    from d2k_analyze.parsing import kernel_units

    header = "#ifndef KERNELS_CUH\n#define KERNELS_CUH\n__global__ void k(float* x) { x[0] = 1.f; }\n#endif\n"
    main = '#include "kernels.cuh"\nvoid go(float* x) { k<<<1, 1>>>(x); }\n'
    units, _ = kernel_units([SourceFile(Path("kernels.cuh"), "cuda", header), SourceFile(Path("main.cu"), "cuda", main)])
    assert [(u.name, u.launched) for u in units] == [("k", True)]
    assert [a.kind for a in units[0].ast.accesses] == ["store"]  # its body is live code
