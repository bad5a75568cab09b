"""Buffers shared between the judge and the sandbox: inputs (judge writes) and escrows (sandbox
writes the outputs into them, judge reads).

On a GPU they are plain ``cudaMalloc`` allocations of the judge, exported with CUDA IPC handles
(``native.ipc_alloc``) and mapped by the sandbox (``native.ipc_open``); on a CPU they are files in a
per-job folder under ``/dev/shm`` (or the temp folder), mapped by both processes. Either way both
sides see them as ordinary tensors of the workload's shape and dtype. The sandbox never sees the
judge's private copy of the inputs, its seeds, or the reference outputs.
"""

from __future__ import annotations

import mmap
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch

from .protocol import BufferSpec
from .session import shm_root

_TENSOR_DATA_PTR = torch._C.TensorBase.data_ptr  # bound before any submission import


def dtype_named(name: str) -> torch.dtype:
    dt = getattr(torch, name.removeprefix("torch."), None)
    if not isinstance(dt, torch.dtype):
        raise ValueError(f"not a torch dtype: {name}")
    return dt


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _nbytes(shape: tuple[int, ...], dtype: torch.dtype) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n * torch.empty((), dtype=dtype).element_size()


class _CudaArray:
    """Just enough ``__cuda_array_interface__`` for ``torch.as_tensor`` to view raw device memory."""

    def __init__(self, addr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (addr, False), "version": 3, "strides": None}


def view(addr: int, raw: object | None, nbytes: int, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    """A tensor of ``shape``/``dtype`` over ``nbytes`` at ``addr`` (CUDA) or over ``raw`` (an mmap)."""
    if raw is None:
        flat = torch.as_tensor(_CudaArray(addr, max(nbytes, 1)), device="cuda")
    else:
        flat = torch.frombuffer(raw, dtype=torch.uint8, count=max(nbytes, 1))
    return flat[:nbytes].view(dtype).view(shape)


@dataclass
class SharedBuffer:
    spec: BufferSpec
    tensor: torch.Tensor
    addr: int


class Arena:
    """The judge's shared buffers for one sandbox session; freed by :meth:`close`."""

    def __init__(self, device: str, native: ModuleType | None, folder: Path | None = None):
        self.device, self.native = device, native
        self.buffers: list[SharedBuffer] = []
        self._maps: list[mmap.mmap] = []
        self.folder: Path | None = None
        if device != "cuda":
            self.folder = Path(tempfile.mkdtemp(prefix="arena-", dir=folder or shm_root()))

    def alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> SharedBuffer:
        shape = tuple(int(s) for s in shape)
        nbytes = _nbytes(shape, dtype)
        if self.device == "cuda":
            addr, handle = self.native.ipc_alloc(max(nbytes, 1))
            spec = BufferSpec(handle.hex(), nbytes, dtype_name(dtype), list(shape))
            buf = SharedBuffer(spec, view(addr, None, nbytes, dtype, shape), addr)
        else:
            path = self.folder / f"buf-{len(self.buffers)}"
            with open(path, "wb") as fh:
                fh.truncate(max(nbytes, 1))
            with open(path, "r+b") as fh:
                mm = mmap.mmap(fh.fileno(), max(nbytes, 1))
            self._maps.append(mm)
            t = view(0, mm, nbytes, dtype, shape)
            spec = BufferSpec(str(path), nbytes, dtype_name(dtype), list(shape))
            buf = SharedBuffer(spec, t, _TENSOR_DATA_PTR(t))
        self.buffers.append(buf)
        return buf

    def like(self, t: torch.Tensor) -> SharedBuffer:
        return self.alloc(tuple(t.shape), t.dtype)

    def close(self) -> None:
        """Free every buffer (the sandbox using them must be gone or done with them)."""
        for b in self.buffers:
            if self.device == "cuda" and self.native is not None:
                self.native.dev_free(b.addr)
        self.buffers.clear()
        self._maps.clear()  # the tensors may still hold the maps; the files go now
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def attach(spec: BufferSpec, device: str, native: ModuleType) -> SharedBuffer:
    """The sandbox's view of a judge's buffer."""
    dtype, shape = dtype_named(spec.dtype), tuple(spec.shape)
    if device == "cuda":
        addr = native.ipc_open(bytes.fromhex(spec.handle))
        return SharedBuffer(spec, view(addr, None, spec.nbytes, dtype, shape), addr)
    with open(spec.handle, "r+b") as fh:
        mm = mmap.mmap(fh.fileno(), max(spec.nbytes, 1))
    t = view(0, mm, spec.nbytes, dtype, shape)
    return SharedBuffer(spec, t, _TENSOR_DATA_PTR(t))
