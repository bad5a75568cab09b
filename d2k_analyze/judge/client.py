"""Sending judge requests through the Messages API: retries, backoff, timeouts, concurrency.

Retry policy, in two independent loops:

* transport: a 429, a 5xx (529 overloaded included), a timeout or a dropped connection is retried
  up to ``max_retries`` times, waiting ``backoff_base * 2**attempt`` seconds (jittered, capped at
  ``backoff_max``, at least the server's ``retry-after``). Other errors (400, 401, 403, 404...)
  are not retried: they will not go away by themselves;
* answer: a response whose tool call does not validate (:mod:`.answers`) is asked again, up to
  ``malformed_retries`` more times; then the record carries the error.

The SDK's own retries are switched off (``max_retries=0``) so that this policy is the only one
and every attempt is counted. The API key is passed to the SDK and never logged or stored.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Callable

from .answers import MalformedAnswer, tool_input, validate
from .prompt import JudgeRequest
from .records import JudgeRecord, Usage
from .templates import PriceTable


@dataclass(frozen=True)
class ClientSettings:
    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    timeout: float = 120.0
    max_retries: int = 4
    malformed_retries: int = 2
    concurrency: int = 4
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    poll_interval: float = 15.0
    batch_timeout: float = 24 * 3600.0


class RequestFailed(Exception):
    """A request that failed for good (after the retries it was worth)."""

    def __init__(self, message: str, attempts: int):
        super().__init__(message)
        self.attempts = attempts


def make_client(settings: ClientSettings):
    import anthropic

    kwargs = {"api_key": settings.api_key, "timeout": settings.timeout, "max_retries": 0}
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
    return anthropic.Anthropic(**kwargs)


def _retryable(exc: Exception) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def describe(exc: Exception) -> str:
    """A one-line error description without request headers (so never the key)."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return "request timed out"
    if isinstance(exc, anthropic.APIStatusError):
        return f"HTTP {exc.status_code}: {str(exc.message)[:200]}"
    if isinstance(exc, anthropic.APIConnectionError):
        return "connection error"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _retry_after(exc: Exception) -> float:
    response = getattr(exc, "response", None)
    try:
        return float(response.headers.get("retry-after", 0)) if response is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


def backoff_delay(attempt: int, settings: ClientSettings, exc: Exception | None = None) -> float:
    delay = settings.backoff_base * (2 ** attempt) * (0.5 + random.random() / 2)
    if exc is not None:
        delay = max(delay, _retry_after(exc))
    return min(delay, settings.backoff_max)


def call_with_retries(fn: Callable[[], object], settings: ClientSettings, sleep=time.sleep) -> tuple[object, int]:
    """``fn()`` with the transport retry policy; returns (result, attempts) or raises RequestFailed."""
    for attempt in range(settings.max_retries + 1):
        try:
            return fn(), attempt + 1
        except Exception as exc:  # noqa: BLE001 - classified below
            if not _retryable(exc):
                raise RequestFailed(describe(exc), attempt + 1) from None
            if attempt == settings.max_retries:
                raise RequestFailed(f"{describe(exc)} (gave up after {attempt + 1} attempts)", attempt + 1) from None
            sleep(backoff_delay(attempt, settings, exc))
    raise AssertionError("unreachable")


def usage_of(message) -> Usage:
    u = getattr(message, "usage", None)
    return Usage(int(getattr(u, "input_tokens", 0) or 0), int(getattr(u, "output_tokens", 0) or 0))


def new_record(request: JudgeRequest) -> JudgeRecord:
    return JudgeRecord(request.submission, request.kind, request.model, request.prompt_version, request.key)


def accept(record: JudgeRecord, request: JudgeRequest, message) -> bool:
    """Validate ``message``'s tool call into ``record.answer``; False (and record.error) if malformed."""
    try:
        record.answer = validate(tool_input(message, request.tool["name"]), list(request.item_ids))
        record.error = None
        return True
    except MalformedAnswer as exc:
        record.error = f"malformed answer: {exc}"
        return False


def ask(client, request: JudgeRequest, settings: ClientSettings, prices: PriceTable, sleep=time.sleep,
        record: JudgeRecord | None = None) -> JudgeRecord:
    """One request through the Messages API, with both retry loops; never raises for API trouble."""
    record = record or new_record(request)
    for _ in range(settings.malformed_retries + 1):
        try:
            message, attempts = call_with_retries(lambda: client.messages.create(**request.params()), settings, sleep)
        except RequestFailed as exc:
            record.attempts += exc.attempts
            record.error = str(exc)
            return record
        record.attempts += attempts
        usage = usage_of(message)
        record.usage = record.usage + usage
        spent = prices.cost(request.model, usage.input_tokens, usage.output_tokens)
        record.cost_usd = None if spent is None or record.cost_usd is None else record.cost_usd + spent
        if accept(record, request, message):
            return record
    record.error = f"{record.error} (after {settings.malformed_retries + 1} answers)"
    return record


def ask_all(client, requests: list[JudgeRequest], settings: ClientSettings, prices: PriceTable,
            on_done: Callable[[], None] = lambda: None, sleep=time.sleep) -> dict[str, JudgeRecord]:
    """Every request, at most ``settings.concurrency`` in flight; records by request key."""
    out: dict[str, JudgeRecord] = {}
    if not requests:
        return out
    with ThreadPoolExecutor(max_workers=max(1, min(settings.concurrency, len(requests)))) as pool:
        futures = {pool.submit(ask, client, r, settings, prices, sleep): r for r in requests}
        for fut in as_completed(futures):
            out[futures[fut].key] = fut.result()
            on_done()
    return out
