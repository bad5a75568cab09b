"""The default adapter: our own tool-use loop on the official Anthropic SDK.

Retries (429, 5xx, connection errors) are the SDK's (``max_retries``, exponential backoff); what
still fails is an infrastructure failure. The system prompt and the latest message carry
``cache_control`` so that each turn re-reads the conversation from the prompt cache; the cache
tokens are counted and priced separately.
"""

from __future__ import annotations

import os

import anthropic

from ..errors import ConfigError, InfraError, ModelRefusedRequest
from ..pricing import Usage
from .base import Message, ModelTurn, ToolCall

MAX_TOKENS = 16_000


def to_wire(messages: list[Message]) -> list[dict]:
    out: list[dict] = []
    for m in messages:
        if m.role == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": m.text}]})
        elif m.role == "assistant":
            blocks: list[dict] = [{"type": "text", "text": m.text}] if m.text else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no output)"}]})
        else:
            out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": r.id, "content": r.text or "(no output)",
                                                     "is_error": r.is_error} for r in m.results]})
    if out and out[-1]["content"]:
        out[-1]["content"][-1] = {**out[-1]["content"][-1], "cache_control": {"type": "ephemeral"}}
    return out


def tools_to_wire(tools: list[dict]) -> list[dict]:
    return [{"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]} for t in tools]


def from_wire(resp) -> ModelTurn:
    text = "".join(b.text for b in resp.content if b.type == "text")
    calls = [ToolCall(b.id, b.name, dict(b.input or {})) for b in resp.content if b.type == "tool_use"]
    u = resp.usage
    usage = Usage(u.input_tokens or 0, u.output_tokens or 0, getattr(u, "cache_creation_input_tokens", 0) or 0,
                  getattr(u, "cache_read_input_tokens", 0) or 0)
    return ModelTurn(text, calls, usage, resp.stop_reason or "", resp.model, resp.model_dump(mode="json"))


class AnthropicClient:
    adapter = "anthropic"

    def __init__(self, model: str, base_url: str | None, key_env: str, max_retries: int, timeout_s: float):
        key = os.environ.get(key_env)
        if not key:
            raise ConfigError(f"{key_env} is not set: the anthropic adapter needs an API key (no fallback)")
        self.model = model
        self.client = anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout_s)

    def check(self) -> None:
        try:
            self.client.models.retrieve(self.model)
        except anthropic.NotFoundError as exc:
            raise ConfigError(f"unknown model {self.model!r} at {self.client.base_url} (no fallback)") from exc
        except anthropic.AuthenticationError as exc:
            raise ConfigError(f"the API rejected the key: {exc.message}") from exc
        except anthropic.APIError as exc:
            raise InfraError("api_error", f"model check failed: {exc}") from exc

    def complete(self, system: str, messages: list[Message], tools: list[dict]) -> ModelTurn:
        try:
            resp = self.client.messages.create(
                model=self.model, max_tokens=MAX_TOKENS, tools=tools_to_wire(tools), messages=to_wire(messages),
                system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            )
        except anthropic.NotFoundError as exc:
            raise ConfigError(f"unknown model {self.model!r} (no fallback)") from exc
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise ConfigError(f"the API rejected the key: {exc.message}") from exc
        except anthropic.BadRequestError as exc:
            raise ModelRefusedRequest(str(exc.message)) from exc
        except anthropic.APIError as exc:  # status errors after retries, connection errors, timeouts
            raise InfraError("api_error", f"{type(exc).__name__}: {exc}") from exc
        return from_wire(resp)
