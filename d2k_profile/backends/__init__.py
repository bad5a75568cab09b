"""Where judges run: the backends behind one interface.

A backend takes the planned jobs and gets each one judged, reporting every workload's outcome
through ``Runner.emit`` (which stores it, or holds a lost judge's workload back for a retry that
the backend then picks up with ``Runner.take_retries``). ``local`` (the default) runs one judge
per GPU of ``--gpus`` at a time, in this machine's processes; ``ray`` sends each job to a Ray
cluster as a task that asks for one whole GPU. Timing never shares a GPU on either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..runner import Job, RunOptions, Runner


class Backend(Protocol):
    name: str
    # True when the judges use this machine's build folders, so a parallel pre-build here pays
    shares_build_folders: bool

    def run(self, runner: "Runner", jobs: list["Job"]) -> None:
        """Judge every job, emitting each workload's outcome through ``runner.emit``."""


BACKENDS = ("local", "ray")


def backend_named(name: str, opts: "RunOptions") -> Backend:
    if name == "local":
        from .local import LocalBackend

        return LocalBackend()
    if name == "ray":
        from .ray_cluster import RayBackend

        return RayBackend(opts.ray_address)
    raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
