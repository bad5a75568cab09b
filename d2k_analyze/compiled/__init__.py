"""The compiled-artifact layer: what ``nvcc`` actually emitted for each CUDA kernel.

Syntax says what the source *asks for*; the compiler's PTX (and SASS where ``cuobjdump`` exists)
says what the GPU will *run*. A ``wmma`` call in a template that is never instantiated, or a
``cp.async`` behind a macro that expands to nothing, shows in the first and not in the second.

    translation units (.cu files, complete CUDA strings in .py)        units.py
      -> nvcc -cubin -Xptxas -v --keep (PTX kept), cuobjdump -sass     compiler.py (+ cache.py)
      -> per kernel: instructions that evidence properties, resources  artifacts.py, signatures.py
      -> confirm / refute / upgrade syntax findings                    combine.py

The layer never blocks the analysis: no compiler, or a failed compile, is recorded in a
:class:`CompileResult` and reported, never raised.
"""

from .artifacts import KernelArtifact
from .combine import apply_compiled, compiled_status
from .compiler import CompileResult, compile_all
from .toolchain import Toolchain, find_toolchain
from .units import TranslationUnit, translation_units

__all__ = [
    "CompileResult",
    "KernelArtifact",
    "Toolchain",
    "TranslationUnit",
    "apply_compiled",
    "compile_all",
    "compiled_status",
    "find_toolchain",
    "translation_units",
]
