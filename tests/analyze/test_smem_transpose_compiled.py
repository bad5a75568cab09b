"""smem_transpose's reading of compiled Triton (no compiler needed: TTGIR/PTX text as triton 3.6
emits it for the transpose expert on sm_90). A convert_layout between blocked layouts whose fastest
dimension differs, with shared-memory traffic in the PTX, is the staging; a conversion that keeps
the order, or none, is not."""

from d2k_analyze.compiled.ttgir import TritonIR
from d2k_analyze.detectors.smem_transpose import _compiled

LAYOUTS = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
"""
FLIP = "    %1 = ttg.convert_layout %flipped : tensor<64x64xf32, #blocked1> -> tensor<64x64xf32, #blocked> loc(#loc27)\n"
SAME = "    %1 = ttg.convert_layout %x : tensor<64x64xf32, #blocked2> -> tensor<64x64xf32, #blocked> loc(#loc27)\n"
PTX_SMEM = "\tst.shared.b32 \t[%r223], %r1;\n\tld.shared.v4.b32 \t{%r1, %r2, %r3, %r4}, [%r300];\n"


def test_layout_flip_through_shared_memory_is_staging():
    reading = _compiled(TritonIR(LAYOUTS + FLIP, PTX_SMEM, 90))
    assert reading.decision is True and any("convert_layout" in e for e in reading.evidence)


def test_same_order_conversion_or_none_is_not():
    assert _compiled(TritonIR(LAYOUTS + SAME, PTX_SMEM, 90)).decision is False
    assert _compiled(TritonIR(LAYOUTS, "", 90)).decision is False


def test_flip_without_shared_traffic_cannot_tell():
    assert _compiled(TritonIR(LAYOUTS + FLIP, "\tld.global.v4.b32 \t{%r1, %r2, %r3, %r4}, [%rd1];\n", 90)).decision is None
