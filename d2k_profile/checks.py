"""The judge's verdict on one call of the submission, from what the native loop reported and what
it copied into escrow: never from anything the submission's process computed about itself.

Order: the call's own failure (an exception, a compiler failure, a CUDA error), then the outputs'
form (a tensor subclass is a lazy result: cheat; a wrong count, dtype, shape or device: incorrect),
then the values against the reference the judge computed from its private copy of the inputs
(incorrect), then aliasing and modified inputs (cheat, unless the task is in-place).
"""

from __future__ import annotations

import torch

from d2k_spec.task import Task, Tolerance, Workload

from . import anticheat
from .correctness import Comparison, as_outputs, compare_all
from .frames import CallFrame, CallStatus, OutFlag
from .results import Outcome, Status

EXACT = Tolerance(atol=0.0, rtol=0.0, max_rel_l2=0.0)
FORM = OutFlag.NOT_TENSOR | OutFlag.WRONG_COUNT | OutFlag.WRONG_DTYPE | OutFlag.WRONG_SHAPE | OutFlag.WRONG_DEVICE


class Verdict(Exception):
    """Ends a workload early with a status and a reason; ``kind`` says what failed."""

    def __init__(self, status: Status, reason: str, kind: str = "check"):
        super().__init__(reason)
        self.status, self.reason, self.kind = status, reason, kind


class CompileFailure(Exception):
    """A compiler failure at the first call: every workload of the submission fails alike."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def tolerance_for(task: Task, wl: Workload) -> Tolerance:
    """The task's tolerance for the workload's output dtype; exact for integer outputs."""
    for spec in task.interface.outputs:
        dtype = str(wl.params.get(spec.dtype, spec.dtype))
        if dtype in task.tolerance:
            return task.tolerance[dtype]
        if dtype.startswith(("int", "uint", "bool")):
            return EXACT
    return next(iter(task.tolerance.values()), EXACT)


def check_frame(frame: CallFrame, what: str, in_place: bool) -> None:
    """Raise the verdict a call's own report implies (its status and its outputs' form)."""
    if frame.status == CallStatus.BUILD_FAILURE:
        raise CompileFailure(frame.text)
    if frame.status == CallStatus.EXCEPTION:
        raise Verdict(Status.RUNTIME_ERROR, f"{what}: {frame.text}", "call")
    if frame.status == CallStatus.CUDA_ERROR:
        raise Verdict(Status.RUNTIME_ERROR, f"{what}: {frame.text}", "cuda")
    if frame.status == CallStatus.DEVICE_BUSY:
        raise Verdict(Status.CHEAT_SUSPECTED, f"{what}: {frame.text}")
    if frame.status in (CallStatus.BAD_COMMAND, CallStatus.UNSUPPORTED):
        raise Verdict(Status.RUNTIME_ERROR, f"{what}: the native loop refused the command: {frame.text}", "harness")
    if frame.flags & OutFlag.SUBCLASS:
        raise Verdict(Status.CHEAT_SUSPECTED, f"{what}: {frame.text} (a lazy or deferred result)")
    if frame.status == CallStatus.BAD_OUTPUT or frame.flags & FORM:
        raise Verdict(Status.INCORRECT, f"{what}: {frame.text or 'the outputs do not have the expected form'}")


def check_aliasing(frame: CallFrame, what: str, in_place: bool) -> None:
    if frame.flags & OutFlag.ALIASES_INPUT and not in_place:
        raise Verdict(Status.CHEAT_SUSPECTED, f"{what}: an output aliases an input")


def check_inputs(shared: tuple, plain: tuple, what: str, in_place: bool, after: tuple | None = None,
                 tol: Tolerance | None = None) -> None:
    """The shared input buffers must still hold exactly what the judge wrote; for an in-place task,
    what the reference's own in-place call left in its copies (``after``, see :func:`run_reference`)."""
    if in_place:
        if after is not None:
            check_in_place(shared, plain, after, tol or EXACT, what)
        return
    if changed := anticheat.modified_inputs(plain, shared):
        raise Verdict(Status.CHEAT_SUSPECTED, f"{what}: modified input(s) {changed} (the task is not in-place)")


def check_in_place(shared: tuple, plain: tuple, after: tuple, tol: Tolerance, what: str) -> None:
    """An in-place task's result is the input buffers, not only what the call returns: every input
    the reference writes must hold the reference's result (within ``tol``; returning right values in
    new tensors and leaving the inputs untouched is ``incorrect``), every input it leaves alone must
    be bit-for-bit unchanged (a cheat otherwise, as for an out-of-place task)."""
    written = set(anticheat.modified_inputs(plain, after))
    for i in sorted(written):
        cmp = compare_all(shared[i], after[i], tol)
        if not cmp.ok:
            raise Verdict(Status.INCORRECT, f"{what}: input {i} does not hold the in-place result: {cmp.reason}")
    if changed := [i for i in anticheat.modified_inputs(plain, shared) if i not in written]:
        raise Verdict(Status.CHEAT_SUSPECTED, f"{what}: modified input(s) {changed}, which the in-place reference leaves unchanged")


def run_reference(reference, plain: tuple) -> tuple[object, tuple]:
    """The reference on private copies of ``plain``: its outputs, and the copies as it left them
    (an in-place reference writes its result into them; :func:`check_inputs` compares against that)."""
    copies = clone_all(plain)
    return reference(copies), copies


def check_values(escrow: tuple, ref_out: object, tol: Tolerance, what: str, outcome: Outcome | None = None) -> Comparison:
    """Compare the escrowed outputs with the reference; the largest errors seen go to ``outcome``
    (also when the comparison fails: an ``incorrect`` record says by how much)."""
    refs = as_outputs(ref_out)
    out = escrow if len(refs) > 1 else escrow[0]
    cmp = compare_all(out, ref_out, tol)
    if outcome is not None:
        for name, value in (("max_abs_err", cmp.max_abs_err), ("rel_l2_err", cmp.rel_l2_err)):
            old = getattr(outcome, name)
            if value == value:  # not NaN
                setattr(outcome, name, value if old is None else max(old, value))
    if not cmp.ok:
        raise Verdict(Status.INCORRECT, f"{what}: {cmp.reason}")
    return cmp


def check_call(frame: CallFrame, escrow: tuple, shared: tuple, plain: tuple, ref_out: object, tol: Tolerance,
               in_place: bool, what: str, outcome: Outcome | None = None, after: tuple | None = None) -> Comparison:
    """Every check of one escrowed call, in order (a wrong answer is ``incorrect`` before anything
    else: returning the input unchanged is wrong, returning it holding the right answer a cheat).
    ``after``: the reference's inputs after its own call (what an in-place task's buffers must hold)."""
    check_frame(frame, what, in_place)
    cmp = check_values(escrow, ref_out, tol, what, outcome)
    check_aliasing(frame, what, in_place)
    check_inputs(shared, plain, what, in_place, after, tol)
    return cmp


def clone_all(inputs: tuple) -> tuple:
    return tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
