"""A scripted agent with no LLM: plays back the model responses of a recorded transcript.

The recording is a transcript.jsonl written by d2k-agent (its ``response`` lines), or a
hand-written file of the same shape: one JSON object per line with ``"type": "response"`` and
``"message": {"text": ..., "tool_calls": [{"id", "name", "input"}]}`` (``usage`` optional).
``--replay DIR`` picks ``DIR/<task>.<arm>.jsonl``, else ``DIR/<task>.jsonl``. The tools run for
real, so a replay exercises the whole runner: workspace, tools on the GPU, snapshots, budget,
final evaluation. Runs made with it are marked ``demonstration = true``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError
from ..pricing import Usage
from .base import ModelTurn, ToolCall


class ReplayExhausted(Exception):
    """The recording has no more responses: the run ends (reason ``replay_exhausted``)."""


def recording_path(source: str, task: str, arm: str) -> Path:
    p = Path(source)
    if p.is_dir():
        for cand in (p / f"{task}.{arm}.jsonl", p / f"{task}.jsonl"):
            if cand.is_file():
                return cand
        raise ConfigError(f"--replay {source}: neither {task}.{arm}.jsonl nor {task}.jsonl is there")
    if not p.is_file():
        raise ConfigError(f"--replay {source}: no such file or folder")
    return p


def load_recording(path: Path) -> list[dict]:
    out = []
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{i}: not JSON ({exc.msg})") from exc
        if rec.get("type") == "response":
            out.append(rec)
    if not out:
        raise ConfigError(f"{path}: no response lines to replay")
    return out


class ReplayClient:
    adapter = "replay"

    def __init__(self, model: str, source: str):
        self.model = model or "replay"
        self.source = source
        self.responses: list[dict] = []
        self.next = 0

    def bind(self, task: str, arm: str) -> "ReplayClient":
        """A fresh player for one (task, arm): each run replays its recording from the start."""
        player = ReplayClient(self.model, self.source)
        player.path = recording_path(self.source, task, arm)
        player.responses = load_recording(player.path)
        return player

    def check(self) -> None:
        return None

    def complete(self, system, messages, tools) -> ModelTurn:
        if self.next >= len(self.responses):
            raise ReplayExhausted(f"the recording has {len(self.responses)} responses")
        rec = self.responses[self.next]
        self.next += 1
        msg = rec.get("message", {})
        calls = [ToolCall(c.get("id") or f"replay-{self.next}-{i}", c["name"], c.get("input", {})) for i, c in enumerate(msg.get("tool_calls", []))]
        return ModelTurn(msg.get("text", ""), calls, Usage.from_dict(rec.get("usage")), "tool_use" if calls else "end_turn", self.model)
