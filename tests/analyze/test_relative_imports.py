"""A @triton.jit helper imported from another module of the submission by a relative import
(``from .acts import gelu``) is followed into, like one defined next to the kernel. Its call was
read as a method call on its first argument (``x.method()`` lowers to a call named ``.method``),
so the helper's formula never reached the kernel's facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from d2k_analyze.analysis import analyze_paths
from d2k_analyze.facts.expr import Call, walk

ACTS = '''import triton
import triton.language as tl


@triton.jit
def tanh_gelu(v):
    return 0.5 * v * (1.0 + tl.math.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))
'''

KERNEL = '''import torch
import triton
import triton.language as tl

{import_line}


@triton.jit
def bias_gelu(x_ptr, b_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    h = tl.load(x_ptr + i, mask=m) + tl.load(b_ptr + i % cols, mask=m)
    tl.store(y_ptr + i, {call}(h), mask=m)


def run(x, b):
    y = torch.empty_like(x)
    bias_gelu[(triton.cdiv(x.numel(), 1024),)](x, b, y, x.numel(), b.numel(), BLOCK=1024)
    return y
'''


@pytest.mark.parametrize("import_line, call", [
    ("from .acts import tanh_gelu", "tanh_gelu"),
    ("from .acts import tanh_gelu as act", "act"),
    ("from . import acts", "acts.tanh_gelu"),
])
def test_a_relatively_imported_helper_is_inlined(tmp_path: Path, import_line: str, call: str):
    pkg = tmp_path / "sub"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "acts.py").write_text(ACTS)
    (pkg / "kernels.py").write_text(KERNEL.format(import_line=import_line, call=call))
    [analysis] = analyze_paths([pkg])
    [unit] = [ua for ua in analysis.units if ua.unit.name == "bias_gelu"]
    [store] = [a for a in unit.unit.ast.accesses if a.kind == "store"]
    names = {n.fn for n in walk(store.value) if isinstance(n, Call)}
    assert "tl.math.tanh" in names and not any("tanh_gelu" in n for n in names), names  # the formula, not an opaque call
    fusion = unit.findings["kernel_fusion"]
    assert fusion.status.value == "present", fusion.reason  # bias add + activation
