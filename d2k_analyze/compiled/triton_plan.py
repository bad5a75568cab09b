"""What to compile for one launched Triton kernel: its variants (signature, constexprs, options).

A :class:`~.triton_host.Binding` holds argument values; Triton compiles on what those values
*specialize to*: a tensor becomes ``*bf16`` (16-byte aligned, as torch allocates), an integer that
is a multiple of 16 is marked divisible, an integer equal to 1 becomes the constant 1, a host tensor
descriptor becomes ``tensordesc<bf16[128, 64]>``. This module turns bindings into
:class:`Variant` records, the unit of compiling and of caching.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .triton_host import UNKNOWN, Binding, Descriptor, DType, JitRef, Tensor

MAX_VARIANTS = 6  # per kernel and target: the first ones in workload and config order


@dataclass(frozen=True)
class Variant:
    """One compile: kernel ``kernel`` of module ``module`` for SM ``arch``."""

    module: str
    kernel: str
    arch: int
    signature: dict[str, str]
    constexprs: dict[str, object]
    aligned: tuple[str, ...]
    options: dict[str, object]
    label: str
    workloads: tuple[str, ...] = field(default=(), compare=False)

    def key(self) -> str:
        """What determines the compiler's output (not the label or the workloads that reach it)."""
        return json.dumps([self.module, self.kernel, self.arch, self.signature, self.constexprs, list(self.aligned),
                           self.options], sort_keys=True, default=str)

    def to_json(self) -> dict:
        return {"module": self.module, "kernel": self.kernel, "arch": self.arch, "signature": self.signature,
                "constexprs": self.constexprs, "aligned": list(self.aligned), "options": self.options}


def _constexpr(value: object) -> tuple[bool, object]:
    """(representable?, JSON form) of a constexpr value; dtypes travel as ``{"dtype": "bf16"}``."""
    if isinstance(value, DType):
        return True, {"dtype": value.name}
    if value is None or isinstance(value, (bool, int, float, str)):
        return True, value
    return False, None


def specialize(name: str, value: object, constexpr: bool) -> tuple[str, object, bool] | str:
    """(signature type, constexpr value, aligned) of one argument, or why it cannot be compiled."""
    if value is UNKNOWN:
        return f"argument {name} is not known at the launch"
    if constexpr or value is None or isinstance(value, (str, DType)):
        ok, form = _constexpr(value)
        return ("constexpr", form, False) if ok else f"constexpr {name} is not a constant"
    if isinstance(value, Tensor):
        return f"*{value.dtype.name}", None, True
    if isinstance(value, Descriptor):
        shape = value.block_shape
        if not isinstance(shape, list) or not all(isinstance(n, int) for n in shape):
            return f"tensor descriptor {name} has no known block shape"
        return f"tensordesc<{value.base.dtype.name}[{', '.join(map(str, shape))}]>", None, False
    if isinstance(value, bool):
        return "u1", None, False
    if isinstance(value, int):
        if value == 1:
            return "constexpr", 1, False
        return ("i32" if -2**31 <= value < 2**31 else "i64"), None, value % 16 == 0
    if isinstance(value, float):
        return "fp32", None, False
    return f"argument {name} is not a tensor, descriptor or number"


def variant(kernel: JitRef, binding: Binding, arch: int, workload: str) -> Variant | str:
    """The variant a binding compiles, or why it cannot be compiled."""
    if not binding.resolved:
        return binding.label
    signature: dict[str, str] = {}
    constexprs: dict[str, object] = {}
    aligned: list[str] = []
    for p in kernel.params:
        spec = specialize(p.name, binding.values.get(p.name, UNKNOWN), p.constexpr)
        if isinstance(spec, str):
            return spec
        kind, const, align = spec
        signature[p.name] = kind
        if kind == "constexpr":
            constexprs[p.name] = const
        if align:
            aligned.append(p.name)
    options = {k: v for k, v in binding.options.items() if isinstance(v, (int, bool)) and v is not None}
    return Variant(kernel.file, kernel.name, arch, signature, constexprs, tuple(aligned), options, binding.label, (workload,))


# Elements one thread holds along a program's widest constexpr extent, above which a compile takes
# minutes (a row softmax at BLOCK = 262144 with 4 warps: 2048 per thread, over a minute per target;
# BLOCK = 32768, 256 per thread: 2 s). Such variants are left out and said so.
MAX_ELEMENTS_PER_THREAD = 256


def elements_per_thread(v: Variant) -> int:
    """The widest power-of-two integer constexpr (a block extent) over the program's threads:
    what the compiler unrolls per thread, and what its compile time grows with."""
    extents = [c for c in v.constexprs.values() if isinstance(c, int) and not isinstance(c, bool) and c > 0 and c & (c - 1) == 0]
    warps = v.options.get("num_warps", 4)
    threads = 32 * (warps if isinstance(warps, int) and warps > 0 else 4)
    return max(extents, default=0) // threads


def too_slow_to_compile(v: Variant) -> bool:
    return elements_per_thread(v) > MAX_ELEMENTS_PER_THREAD


def merge(variants: list[Variant]) -> list[Variant]:
    """Identical compiles reached from several workloads become one, with every workload listed."""
    out: dict[str, Variant] = {}
    for v in variants:
        old = out.get(v.key())
        if old is None:
            out[v.key()] = v
        elif not set(v.workloads) <= set(old.workloads):
            out[v.key()] = Variant(old.module, old.kernel, old.arch, old.signature, old.constexprs, old.aligned,
                                   old.options, old.label, old.workloads + v.workloads)
    return list(out.values())
