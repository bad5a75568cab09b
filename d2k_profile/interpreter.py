"""Make Triton's CPU interpreter (``TRITON_INTERPRET=1``) compute bf16 the way the GPU does.

Triton's interpreter keeps bf16 tensors as raw 16-bit patterns in numpy (which has no bf16) and
then (as of triton 3.6) multiplies those *bit patterns* in ``tl.dot`` and truncates fp32 -> bf16
casts instead of rounding to nearest-even. Kernels that are right on the GPU then fail smoke tests
on the CPU. :func:`apply` widens bf16 dot operands to fp32 (exact, as tensor cores multiply bf16
exactly into fp32 accumulators), rounds fp32 -> bf16 to nearest-even, and lets scalar tensors
be used as Python ints under numpy >= 2.4 (``tl.range(tl.program_id(0), ...)``). It only touches the
interpreter, and only when it is in use.
"""

from __future__ import annotations

import os

import numpy as np

_APPLIED = False


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even fp32 -> bf16, NaN kept quiet."""
    f = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), rounded).astype(np.uint16)


def apply() -> bool:
    """Patch the interpreter once; return whether it is active (TRITON_INTERPRET=1)."""
    global _APPLIED
    if os.environ.get("TRITON_INTERPRET") != "1":
        return False
    if _APPLIED:
        return True
    import triton.language as tl
    from triton.runtime import interpreter as interp

    builder = interp.InterpreterBuilder
    original_dot, original_cast = builder.create_dot, builder.cast_impl

    def widen(handle):
        if handle.dtype.scalar == tl.bfloat16:
            return interp.TensorHandle(bf16_bits_to_f32(handle.data), tl.float32)
        return handle

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return original_dot(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)

    def cast_impl(self, src, dst_type):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return interp.TensorHandle(f32_to_bf16_bits(src.data), dst_type.scalar)
        return original_cast(self, src, dst_type)

    builder.create_dot = create_dot
    builder.cast_impl = cast_impl
    builder.create_fp_trunc = lambda self, src, dst_type: self.cast_impl(src, dst_type)
    _fix_scalar_index(interp)
    _APPLIED = True
    return True


def _fix_scalar_index(interp) -> None:
    """Make scalar ``tl.tensor.__index__`` work under numpy >= 2.4.

    The interpreter converts a scalar tensor to a Python int with ``int(data)``, but it keeps
    scalars (e.g. ``tl.program_id(0)``) as 1-element arrays, which numpy 2.4 refuses to convert:
    ``tl.range(tl.program_id(0), n, step)`` then fails with "only 0-dimensional arrays can be
    converted to Python scalars". This re-patches ``__index__`` with ``.item()``."""
    original = interp._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))

    interp._patch_lang_tensor = patched
