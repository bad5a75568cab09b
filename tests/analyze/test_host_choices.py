"""Launch settings chosen in host code keep the condition that chose them.

The interpreter reads host code to resolve each launch. A setting picked between constants by a
run-time condition (``64 if m < 512 else 128``, an ``if`` on both sides, a helper's early
returns, ``config or settings(m)``) stays a choice ``c ? x : y`` instead of becoming an opaque
merged symbol, and each launch records the conditions it is made under. Device code is not
affected: a kernel's locals set on both sides of a branch still merge as before.
"""

from __future__ import annotations

from d2k_analyze.facts.expr import Num, Op, Sym, walk


def _choices(value):
    return [n for n in walk(value) if isinstance(n, Op) and n.op == "?:"]


def test_a_settings_tuple_from_a_helper_unpacks_into_choices_per_setting(make_units):
    (unit,) = make_units({"k.py": """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, B: tl.constexpr):
            i = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(x + i, tl.load(x + i, mask=i < n) * 2, mask=i < n)

        def plan(n):
            if n <= 4096:
                return 256, 4
            return 1024, 8

        def run(x, cfg=None):
            n = x.numel()
            b, w = cfg or plan(n)
            k[(triton.cdiv(n, b),)](x, n, B=b, num_warps=w)
        """})
    (lf,) = unit.ast.launches
    warps = _choices(lf.kwargs["num_warps"])
    arms = {(a.args[1], a.args[2]) for a in warps}
    assert (Num(4), Num(8)) in arms, lf.kwargs["num_warps"]  # the helper's two returns
    cond = next(a.args[0] for a in warps if (a.args[1], a.args[2]) == (Num(4), Num(8)))
    assert cond.op == "<=" and cond.args[1] == Num(4096)


def test_launches_on_the_two_sides_of_a_branch_are_exclusive(make_units):
    units = make_units({"k.cu": """
        __global__ void one(float* y, const float* x, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }
        __global__ void many(float* y, const float* x, int n) { int i = blockIdx.x * 256 + threadIdx.x; if (i < n) y[i] = 2.f * x[i]; }
        void go(float* y, const float* x, int n) {
            if (n < 256) { one<<<1, 256>>>(y, x, n); return; }
            many<<<(n + 255) / 256, 256>>>(y, x, n);
        }
        """})
    by_name = {u.name: u for u in units}
    (first,) = by_name["one"].ast.launches
    (second,) = by_name["many"].ast.launches
    assert first.exclusive and first.exclusive[0].op == "<"
    assert second.exclusive == (Op("not", (first.exclusive[0],)),)  # after the early return


def test_device_code_still_merges_branch_values_into_a_symbol(make_units):
    (unit,) = make_units({"k.py": """
        import triton
        import triton.language as tl

        @triton.jit
        def k(out, flag, BLOCK: tl.constexpr):
            if tl.load(flag) > 0:
                s = 2.0
            else:
                s = 3.0
            c = tl.arange(0, BLOCK)
            tl.store(out + c, s * tl.load(out + c))

        def run(o, f):
            k[(1,)](o, f, BLOCK=64)
        """})
    (store,) = [a for a in unit.ast.accesses if a.kind == "store"]
    assert not _choices(store.value), store.value
    assert any(isinstance(n, Sym) and n.key.startswith("phi#") for n in walk(store.value))


def test_a_kernel_chosen_by_a_condition_is_launched_on_each_side(make_units):
    units = make_units({"k.cu": """
        __global__ void narrow(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = 0.f; }
        __global__ void wide(float* y, int n) { int i = blockIdx.x * 512 + threadIdx.x; if (i < n) y[i] = 1.f; }
        void fill(float* y, int n) {
            auto k = n < 512 ? narrow : wide;
            k<<<(n + 511) / 512, 512>>>(y, n);
        }
        """})
    by_name = {u.name: u for u in units}
    (a,) = by_name["narrow"].ast.launches
    (b,) = by_name["wide"].ast.launches
    assert a.guards and a.guards[-1].op == "<"
    assert b.guards[-1] == Op("not", (a.guards[-1],))
