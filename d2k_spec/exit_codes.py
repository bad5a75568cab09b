"""The exit status of every ``d2k-*`` command, defined once.

Scripts and CI jobs branch on these, so all four commands follow one rule and print the same
explanation at the end of their ``--help`` (:data:`HELP`):

* ``0`` done: every input was handled. What a kernel *is* (incorrect, slow, missing design
  items, failing to compile in d2k-profile, whose verdict that is) is a result, not an error; so is
  what this machine lacks, which the command states (no GPU: CUDA submissions are skipped and
  nothing is timed; no nvcc: no compiled layer).
* ``1`` done but incomplete: the output was written, yet some input could not be handled in full
  (an unreadable, binary or oversized file, a compile or judge failure in the analyzer, an unusable
  task spec, a result line that could not be read, a validation problem). Every such problem is
  listed on stderr.
* ``2`` nothing done: a usage error (bad option, missing path, unknown task, an output that would
  overwrite a file the tool did not write).
* ``128 + N`` stopped by signal N: 130 for Ctrl-C (SIGINT), 143 for SIGTERM.
"""

from __future__ import annotations

import signal

OK = 0
INCOMPLETE = 1
USAGE = 2
INTERRUPTED = 128 + signal.SIGINT  # 130
TERMINATED = 128 + signal.SIGTERM  # 143

HELP = """\
exit status (the same for every d2k command):
  0    done: every input was handled (a kernel's own failures are results, and what this
       machine lacks - a GPU, nvcc - is stated, not an error)
  1    done but incomplete: some input could not be handled in full; each problem is on stderr
  2    nothing done: usage error (bad option, missing path, unknown task, refused overwrite)
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM)"""


def status(problems: int) -> int:
    """The exit status of a run that finished with ``problems`` inputs not handled in full."""
    return INCOMPLETE if problems else OK


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM so that ``finally`` blocks (temporary folders, child
    process groups) run before the process exits with :data:`TERMINATED`. A BaseException, like
    KeyboardInterrupt, so that ``except Exception`` in library code does not swallow it."""


def _raise_terminated(signum, frame) -> None:  # noqa: ARG001 - the signal handler signature
    raise Terminated()


def install_sigterm_handler() -> None:
    """Turn SIGTERM into :class:`Terminated` (call once, from a command's ``main``)."""
    signal.signal(signal.SIGTERM, _raise_terminated)
