"""The provider-neutral conversation and the one interface every native adapter implements.

A conversation is a list of :class:`Message`: the task (user), the model's turns (assistant: text
and tool calls) and tool results. Each adapter translates it to its wire format and translates the
response back into a :class:`ModelTurn`, so the loop, the budget and the transcript never see a
provider's format.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol

from ..pricing import Usage


@dataclass
class ToolCall:
    id: str
    name: str
    input: dict


@dataclass
class ToolOutput:
    id: str
    name: str
    text: str
    is_error: bool = False


@dataclass
class Message:
    """role ``user`` (text), ``assistant`` (text + tool_calls) or ``tool`` (results)."""

    role: str
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolOutput] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Message":
        return cls(d["role"], d.get("text", ""), [ToolCall(**c) for c in d.get("tool_calls", [])],
                   [ToolOutput(**r) for r in d.get("results", [])])


@dataclass
class ModelTurn:
    """One model response: what the loop needs, plus the provider's own response for the record."""

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str = ""
    model: str = ""
    raw: dict = field(default_factory=dict)

    def message(self) -> Message:
        return Message("assistant", self.text, list(self.tool_calls))


class ModelClient(Protocol):
    adapter: str
    model: str

    def check(self) -> None:
        """Fail loudly (ConfigError) when the key is missing or the model unknown, before any run."""

    def complete(self, system: str, messages: list[Message], tools: list[dict]) -> ModelTurn:
        """One model call. Raises InfraError after the SDK's retries, ModelRefusedRequest for a
        request the API rejects because of the conversation itself."""
