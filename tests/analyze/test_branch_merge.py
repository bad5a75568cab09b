"""What a local holds after a branch that set it on both sides (the interpreter's merge).

The merged value keeps what the two sides agree on and nothing the analyzer cannot know: a side
that the constants do not select must neither win nor vanish. Each case here once went wrong: a
Python local defined on both sides took the ``else`` side's value (``dloss = 0.0`` made the stored
gradient a constant 0), and a row pointer chosen by a branch lost the tensor it points into.
"""

from __future__ import annotations

from d2k_analyze.facts.expr import Load, Num, Sym, walk


def _stores(unit):
    return [a for a in unit.ast.accesses if a.kind == "store"]


def test_a_python_local_set_on_both_sides_is_neither_side(make_units):
    (unit,) = make_units({"k.py": """
        import triton
        import triton.language as tl

        @triton.jit
        def scale_rows(out_ptr, flag_ptr, s_ptr, BLOCK: tl.constexpr):
            tag = tl.load(flag_ptr).to(tl.int32)
            if tag != -100:
                factor = tl.load(s_ptr)
            else:
                factor = 0.0
            cols = tl.arange(0, BLOCK)
            tl.store(out_ptr + cols, factor * tl.load(out_ptr + cols))

        def run(o, f, s):
            scale_rows[(1,)](o, f, s, BLOCK=128)
        """})
    (store,) = _stores(unit)
    assert not isinstance(store.value, Num), store.value  # it was the else side's 0
    assert any(isinstance(n, Sym) and n.key.startswith("phi#") for n in walk(store.value))


def test_a_row_pointer_chosen_by_a_branch_still_points_into_its_tensor(make_units):
    (unit,) = make_units({"k.py": """
        import triton
        import triton.language as tl

        @triton.jit
        def copy_rows(src, dst, starts, stride, VARLEN: tl.constexpr, BLOCK: tl.constexpr):
            r = tl.program_id(0)
            if VARLEN:
                first = tl.load(starts + r).to(tl.int64)
                base = src + first * stride
            else:
                base = src + r * stride
            cols = tl.arange(0, BLOCK)
            tl.store(dst + r * stride + cols, tl.load(base + cols))

        def run(src, dst, starts, varlen):
            copy_rows[(src.shape[0],)](src, dst, starts, src.stride(0), VARLEN=varlen, BLOCK=64)
        """})
    (store,) = _stores(unit)
    loads = [n for n in walk(store.value) if isinstance(n, Load)]
    assert [unit.ast.objects[l.obj].origin for l in loads] == ["param#0"], f"the row load lost its tensor: {store.value}"


def test_the_same_element_read_with_and_without_a_mask_stays_a_load(make_units):
    (unit,) = make_units({"k.py": """
        import triton
        import triton.language as tl

        @triton.jit
        def axpy(x_ptr, y_ptr, n, a, EVEN: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            if EVEN:
                v = tl.load(x_ptr + offs)
            else:
                v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            tl.store(y_ptr + offs, a * v, mask=offs < n)

        def run(x, y, a, even):
            axpy[(x.numel() // 256,)](x, y, x.numel(), a, EVEN=even, BLOCK=256)
        """})
    (store,) = _stores(unit)
    assert any(isinstance(n, Load) for n in walk(store.value)), store.value


def test_a_cuda_pointer_set_on_both_sides_keeps_its_object(make_units):
    (unit,) = make_units({"k.cu": """
        __global__ void gather_rows(const float* __restrict__ src, float* dst, const int* offsets, int width, bool packed) {
            const float* row;
            if (packed) {
                row = src + offsets[blockIdx.x];
            } else {
                row = src + blockIdx.x * width;
            }
            dst[blockIdx.x * width + threadIdx.x] = row[threadIdx.x];
        }
        """})
    (store,) = _stores(unit)
    loads = [n for n in walk(store.value) if isinstance(n, Load)]
    assert [unit.ast.objects[l.obj].origin for l in loads] == ["param#0"], store.value  # src, not a pointer of its own
