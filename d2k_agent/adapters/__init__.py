"""Agent adapters behind one small interface (:class:`base.ModelClient` for the native tool-use
loop; the ``command`` adapter drives an external CLI instead). :func:`make_client` picks one by
name; an unknown name, a missing key or an unknown model is a ConfigError, never a fallback."""

from __future__ import annotations

from ..errors import ConfigError
from .base import ModelClient

NATIVE = ("anthropic", "openai-compatible", "replay")
ADAPTERS = (*NATIVE, "command")


def make_client(adapter: str, model: str, base_url: str | None = None, replay: str | None = None,
                api_key_env: str | None = None, max_retries: int = 4, timeout_s: float = 600) -> ModelClient:
    if adapter == "anthropic":
        from .anthropic import AnthropicClient

        return AnthropicClient(model, base_url, api_key_env or "ANTHROPIC_API_KEY", max_retries, timeout_s)
    if adapter == "openai-compatible":
        from .openai_compat import OpenAIClient

        return OpenAIClient(model, base_url, api_key_env or "OPENAI_API_KEY", max_retries, timeout_s)
    if adapter == "replay":
        from .replay import ReplayClient

        if not replay:
            raise ConfigError("--agent replay needs --replay FILE_OR_DIR (a recorded transcript)")
        return ReplayClient(model, replay)
    raise ConfigError(f"unknown --agent {adapter!r} (one of: {', '.join(ADAPTERS)})")


__all__ = ["ADAPTERS", "NATIVE", "ModelClient", "make_client"]
