"""The three ways a run can go wrong, each handled once, at its boundary.

* :class:`ConfigError`: a user mistake or a missing prerequisite (no API key, unknown model, bad
  option). Fails loudly before or at the first call; the CLI prints one line and exits 2. Never
  retried and never answered by falling back to something else.
* :class:`InfraError`: the infrastructure failed under the agent (API errors after the SDK's
  retries, a lost tool worker). The attempt is abandoned and the task re-run from scratch as the
  next attempt (crash policy, :mod:`d2k_agent.attempts`).
* Everything the *agent* does wrong (bad code, a failing test, no submission) is a result, not an
  error: it ends up in the transcript and the final record.
"""

from __future__ import annotations


class ConfigError(Exception):
    """A user mistake or missing prerequisite: one clear line, exit 2, no fallback."""


class InfraError(Exception):
    """An infrastructure failure; ``kind`` names it in the attempt record (e.g. ``api_error``)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class ModelRefusedRequest(Exception):
    """The model API rejected a request for a reason the agent caused (e.g. the conversation
    outgrew the context window). Ends the attempt as a result, not as an infrastructure failure."""
