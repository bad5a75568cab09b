"""The same tool-use loop over the official ``openai`` SDK, for OpenAI and any OpenAI-compatible
server (vLLM, SGLang, ...) given with ``--base-url``.

Usage: ``prompt_tokens`` includes cached tokens; they are split out so that every adapter reports
input tokens the same way (uncached input + cache reads).
"""

from __future__ import annotations

import json
import os

from ..errors import ConfigError, InfraError, ModelRefusedRequest
from ..pricing import Usage
from .base import Message, ModelTurn, ToolCall

try:
    import openai
except ImportError:  # an optional extra: pip install 'd2k-bench[agent]'
    openai = None


def to_wire(system: str, messages: list[Message]) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": system}]
    for m in messages:
        if m.role == "user":
            out.append({"role": "user", "content": m.text})
        elif m.role == "assistant":
            msg: dict = {"role": "assistant", "content": m.text or None}
            if m.tool_calls:
                msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.input)}}
                                     for c in m.tool_calls]
            out.append(msg)
        else:
            out += [{"role": "tool", "tool_call_id": r.id, "content": r.text or "(no output)"} for r in m.results]
    return out


def tools_to_wire(tools: list[dict]) -> list[dict]:
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}
            for t in tools]


def _arguments(raw: str | None) -> dict:
    try:
        val = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"__unparsed_arguments__": raw}  # the tool reports bad arguments to the model
    return val if isinstance(val, dict) else {"__unparsed_arguments__": raw}


def from_wire(resp) -> ModelTurn:
    if not resp.choices:
        raise InfraError("api_error", "response without choices")
    choice = resp.choices[0]
    msg = choice.message
    calls = [ToolCall(c.id, c.function.name, _arguments(c.function.arguments)) for c in (msg.tool_calls or [])]
    u = resp.usage
    cached = 0
    if u is not None and getattr(u, "prompt_tokens_details", None) is not None:
        cached = u.prompt_tokens_details.cached_tokens or 0
    usage = Usage((u.prompt_tokens or 0) - cached, u.completion_tokens or 0, 0, cached) if u is not None else Usage()
    return ModelTurn(msg.content or "", calls, usage, choice.finish_reason or "", resp.model, resp.model_dump(mode="json"))


class OpenAIClient:
    adapter = "openai-compatible"

    def __init__(self, model: str, base_url: str | None, key_env: str, max_retries: int, timeout_s: float):
        if openai is None:
            raise ConfigError("the openai-compatible adapter needs the openai SDK: pip install 'd2k-bench[agent]'")
        key = os.environ.get(key_env)
        if not key:
            raise ConfigError(f"{key_env} is not set: the openai-compatible adapter needs an API key "
                              "(a local server without keys: set it to any value, e.g. EMPTY)")
        self.model = model
        self.client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout_s)

    def check(self) -> None:
        try:
            known = [m.id for m in self.client.models.list()]
        except openai.AuthenticationError as exc:
            raise ConfigError(f"the API rejected the key: {exc.message}") from exc
        except openai.APIError as exc:
            raise InfraError("api_error", f"model list failed: {exc}") from exc
        if self.model not in known:
            shown = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
            raise ConfigError(f"unknown model {self.model!r} at {self.client.base_url} (served: {shown or 'none'}; no fallback)")

    def complete(self, system: str, messages: list[Message], tools: list[dict]) -> ModelTurn:
        try:
            resp = self.client.chat.completions.create(model=self.model, messages=to_wire(system, messages), tools=tools_to_wire(tools))
        except openai.NotFoundError as exc:
            raise ConfigError(f"unknown model {self.model!r} (no fallback)") from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ConfigError(f"the API rejected the key: {exc.message}") from exc
        except openai.BadRequestError as exc:
            raise ModelRefusedRequest(str(exc.message)) from exc
        except openai.APIError as exc:
            raise InfraError("api_error", f"{type(exc).__name__}: {exc}") from exc
        return from_wire(resp)
