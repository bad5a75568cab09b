"""The local backend: one judge at a time on each GPU slot of this machine (``--gpus``), or on
``--jobs`` CPU slots without a GPU. Slots take jobs from one queue; a job whose judge was lost on
a slot goes back to the queue and is taken by another slot where there is one. On a GPU each slot
runs the device health check (:mod:`d2k_profile.health`) when it is due; a slot that fails it too
often in a row leaves the pool with a message, and once no slot is left the jobs still queued are
recorded as not run (an infrastructure failure: not stored, run by a later ``--resume``)."""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING

from ..results import NO_DEVICE, Outcome, Status

if TYPE_CHECKING:
    from ..runner import Job, Runner


class LocalBackend:
    name = "local"
    shares_build_folders = True

    def run(self, runner: "Runner", jobs: list["Job"]) -> None:
        slots = runner.opts.slots(runner.has_gpu)
        q: queue.Queue = queue.Queue()
        for j in jobs:
            q.put(j)
        errors: list[BaseException] = []
        busy = [0]  # jobs being run: a slot that finds the queue empty waits while one may come back
        gone: set = set()  # slots taken out of the pool by their health checks
        lock = threading.Lock()

        def healthy(slot: str | None) -> bool | None:
            """True: go on; False: checked and failed (try again); None: the slot is retired."""
            if runner.health_check is None or not runner.health.due(slot):
                return True
            h = runner.health.record(slot, runner.health_check(slot))
            with runner.lock:
                runner.health_log.append({"slot": slot, "ok": h.ok, "ms": h.ms, "reason": h.reason, "at": time.time()})
            if h.ok:
                return True
            if runner.health.retired(slot):
                runner.say(f"d2k-profile: GPU {slot} taken out of the pool: it failed {runner.health.max_failures} health checks in a row "
                           f"(last: {h.reason})")
                return None
            return False

        def retire(slot: str | None) -> None:
            with lock:
                gone.add(slot)
                last = gone >= set(slots)
            if last:  # nothing can run what is left: record it as not run
                left = runner.take_retries()
                while not q.empty():
                    left.append(q.get_nowait())
                for job in left:
                    for name in job.workloads:
                        runner.emit(job, name, Outcome(status=Status.SKIPPED, reason="not run: no healthy GPU left in the pool",
                                                       error_kind=NO_DEVICE))

        def next_job(slot: str | None) -> "Job | None":
            """A queued job this slot may take (not one whose judge was lost on it, unless no other
            slot is left to take it), or None once nothing is queued or running."""
            while True:
                with lock:
                    for job in runner.take_retries():
                        q.put(job)
                    try:
                        job = q.get_nowait()
                    except queue.Empty:
                        if busy[0] == 0 or errors:
                            return None
                        job = None
                    if job is not None and (slot not in job.avoid or set(slots) - gone <= job.avoid):
                        busy[0] += 1
                        return job
                    if job is not None:
                        q.put(job)
                time.sleep(0.05)

        def drain(slot: str | None) -> None:
            while (job := next_job(slot)) is not None:
                state = healthy(slot)
                if state is not True:  # not on this slot now: the job goes back first
                    with lock:
                        q.put(job)
                        busy[0] -= 1
                    if state is None:
                        retire(slot)
                        return
                    time.sleep(runner.health.retry_s)
                    continue
                runner.health.served(slot)
                try:
                    runner.run_job(job, slot)
                except BaseException as exc:  # noqa: BLE001  (re-raised in the main thread)
                    errors.append(exc)
                    return
                finally:
                    with lock:
                        busy[0] -= 1

        threads = [threading.Thread(target=drain, args=(s,), daemon=True) for s in slots]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)  # short joins: Ctrl-C reaches the main thread at once
        if errors:
            raise errors[0]
