"""The timed device of :mod:`.timing` for a sandbox, in the judge.

Per call: fresh inputs from a secret seed into the shared timed set, one native call (flush, hold,
events, escrow) in the sandbox, the judge's wall clock around it as an upper bound of the reported
event time, and, when the schedule says so (decided after the call returned), the re-check of the
escrowed outputs against the reference on the judge's private copy of the inputs.
"""

from __future__ import annotations

import time
from typing import Callable

from . import frames
from .checks import Verdict, check_frame, check_inputs, check_values, run_reference
from .frames import CallFlag, Op
from .inputs import WorkloadInputs
from .results import Outcome, Status
from .session import Session
from .timing import RecheckFailed, Sample

WALL_SLACK_MS = 0.05  # an event time may exceed the judge's wall clock around the call by no more


class SandboxDevice:
    """The timed device of :mod:`.timing` for a sandbox: fresh inputs from a secret seed, one
    native call, the judge's wall clock around it as an upper bound of the reported event time,
    and the re-check of escrowed outputs against the reference on the judge's private inputs."""

    def __init__(self, session: Session, inputs: WorkloadInputs, impl_index: dict[str, int], escrow_of: dict[str, int],
                 escrows: list[tuple], reference: Callable[[tuple], object], tol, in_place: bool, deadline: float, outcome: Outcome):
        self.s, self.inputs, self.impl_index, self.escrow_of, self.escrows = session, inputs, impl_index, escrow_of, escrows
        self.reference, self.tol, self.in_place, self.deadline, self.outcome = reference, tol, in_place, deadline, outcome
        self.last: dict[str, tuple] = {}

    def call(self, impl: str, timed: bool, hold_cycles: int) -> Sample:
        plain = self.inputs.refresh_timed()
        eset = self.escrow_of.get(impl) if timed else None  # warmup calls are never re-checked
        flags = (CallFlag.TIMED if timed else 0) | (CallFlag.ESCROW if eset is not None else 0)
        t0 = time.monotonic()
        frame = self.s.op(frames.command(Op.CALL, self.impl_index[impl], self.inputs.timed_index, eset or 0, flags, hold_cycles), self.deadline)
        wall_ms = (time.monotonic() - t0) * 1e3
        frame = self.s.expect(frame, frames.CallFrame)
        check_frame(frame, f"{impl}, {'timed' if timed else 'warmup'} call", self.in_place or impl not in self.escrow_of)
        if frame.event_ms > wall_ms + WALL_SLACK_MS:
            raise Verdict(Status.CHEAT_SUSPECTED, f"{impl}: reported {frame.event_ms:.4f} ms for a call the judge saw take {wall_ms:.4f} ms "
                                                  "in all (the reported time exceeds the judge's own clock)")
        self.last[impl] = plain
        return Sample(frame.event_ms, frame.host_ms, frame.call_id)

    def checkable(self, impl: str) -> bool:
        return impl in self.escrow_of

    def recheck(self, impl: str) -> None:
        plain = self.last[impl]
        try:
            ref, after = run_reference(self.reference, plain)
            check_inputs(self.inputs.shared(self.inputs.timed_index), plain, f"{impl}, timed call", self.in_place, after, self.tol)
            check_values(self.escrows[self.escrow_of[impl]], ref, self.tol, f"{impl}, timed call")
        except Verdict as v:
            raise RecheckFailed(v.reason) from None
