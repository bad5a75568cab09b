"""The judge's side of a workload's inputs: secret seeds, a private copy of every input, shared
buffers the sandbox reads.

Correctness uses the workload's listed seeds, one shared set per seed (each call sees new
addresses, and earlier inputs stay alive). Timed calls use one more set whose contents are
replaced before every call with inputs drawn from a secret seed (the judge's RNG, seeded from the
OS): a cache keyed on the input's address returns stale data, and the sandbox never sees an input
before the call that gets it. The judge keeps the plaintext of the last inputs it wrote, for the
re-check and the modified-input check. A last, spare set is bound but never called with unless a
re-check fails: the failed input then goes to an address the submission has never been given.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from types import ModuleType

import torch

from d2k_spec.task import Workload

from .protocol import BufferSpec
from .shared import Arena, SharedBuffer

MAX_REDRAWS = 8


@dataclass
class InputSet:
    """One set of shared input buffers (``None`` for a non-tensor input, passed by value)."""

    buffers: list[SharedBuffer | None]
    values: list[object]

    def specs(self) -> list[BufferSpec]:
        return [b.spec if b is not None else BufferSpec("", 0, "value", [], v) for b, v in zip(self.buffers, self.values)]

    def tensors(self) -> tuple:
        return tuple(b.tensor if b is not None else v for b, v in zip(self.buffers, self.values))


def signature(inputs: tuple) -> list[object]:
    return [(tuple(x.shape), x.dtype) if isinstance(x, torch.Tensor) else ("value", x) for x in inputs]


class WorkloadInputs:
    def __init__(self, ref_mod: ModuleType, wl: Workload, device: str, rng: random.Random, arena: Arena):
        self.ref_mod, self.wl, self.device, self.rng, self.arena = ref_mod, wl, device, rng, arena
        first = self.make(wl.seeds[0])
        self.sig = signature(first)
        self.sets = [self._alloc(first) for _ in wl.seeds] + [self._alloc(first), self._alloc(first)]
        self.timed_index = len(wl.seeds)
        self.spare_index = len(wl.seeds) + 1
        self.plain: tuple = ()  # what the timed set holds now (the judge's private copy)
        self.redraws = 0

    def make(self, seed: int) -> tuple:
        return tuple(self.ref_mod.make_inputs(self.wl, seed, self.device))

    def _alloc(self, inputs: tuple) -> InputSet:
        return InputSet([self.arena.like(x) if isinstance(x, torch.Tensor) else None for x in inputs], list(inputs))

    def _write(self, index: int, plain: tuple) -> None:
        for buf, x in zip(self.sets[index].buffers, plain):
            if buf is not None:
                buf.tensor.copy_(x)
        if self.device == "cuda":
            torch.cuda.synchronize()  # the sandbox reads these next, from another process

    def load_spare(self, plain: tuple) -> None:
        """Write ``plain`` (inputs drawn earlier) into the spare set."""
        self._write(self.spare_index, plain)

    def load_seed(self, i: int) -> tuple:
        """Write the inputs of the workload's seed ``i`` into set ``i``; returns the private copy."""
        plain = self.make(self.wl.seeds[i])
        if signature(plain) != self.sig:
            raise ValueError(f"seed {self.wl.seeds[i]} gives inputs of another shape or value than seed {self.wl.seeds[0]}")
        self._write(i, plain)
        return plain

    def refresh_timed(self) -> tuple:
        """New inputs from a secret seed into the timed set (redrawn, at most a few times, until
        their shapes fit the buffers: tasks whose shapes vary with the seed are timed on the
        first seed's shapes)."""
        for _ in range(MAX_REDRAWS):
            plain = self.make(self.rng.randrange(1 << 31))
            if signature(plain) == self.sig:
                break
            self.redraws += 1
        else:
            raise ValueError("secret seeds keep giving inputs of another shape than the workload's first seed")
        self._write(self.timed_index, plain)
        self.plain = plain
        return plain

    def shared(self, index: int) -> tuple:
        return self.sets[index].tensors()
