"""Shared test setup.

Triton kernels run on the CPU through Triton's interpreter, which must be switched on before
triton is first imported; on a machine with a CUDA GPU the real compiler is used instead.
"""

import os
import shutil

if os.environ.get("TRITON_INTERPRET") is None and shutil.which("nvidia-smi") is None:
    os.environ["TRITON_INTERPRET"] = "1"
