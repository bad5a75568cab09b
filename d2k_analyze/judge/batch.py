"""Large corpora through the Message Batches API: submit once, poll with progress, collect.

Batch requests cost ``batch_discount`` times the Messages price (:class:`.templates.PriceTable`).
A request that comes back errored, expired, canceled or malformed is sent again through the
Messages API (:func:`.client.ask`) with the usual retries, so a batch never turns a recoverable
problem into a judge error. Custom ids are the first 32 hex digits of the request key (requests
are de-duplicated by key before they get here).
"""

from __future__ import annotations

import time
from typing import Callable

from .client import ClientSettings, RequestFailed, accept, ask, call_with_retries, new_record, usage_of
from .prompt import JudgeRequest
from .records import JudgeRecord
from .templates import PriceTable

Progress = Callable[[int, int], None]  # (finished requests, total)


def custom_id(request: JudgeRequest) -> str:
    return request.key[:32]


def _finished(counts) -> int:
    return sum(int(getattr(counts, k, 0) or 0) for k in ("succeeded", "errored", "canceled", "expired"))


def submit_and_wait(client, requests: list[JudgeRequest], settings: ClientSettings, on_progress: Progress,
                    sleep=time.sleep, clock=time.monotonic):
    """Create the batch and poll until it has ended; returns the final batch object."""
    body = [{"custom_id": custom_id(r), "params": r.params()} for r in requests]
    batch, _ = call_with_retries(lambda: client.messages.batches.create(requests=body), settings, sleep)
    deadline = clock() + settings.batch_timeout
    while batch.processing_status != "ended":
        on_progress(_finished(batch.request_counts), len(requests))
        if clock() > deadline:
            raise RequestFailed(f"batch {batch.id} still {batch.processing_status} after {settings.batch_timeout:.0f} s", 1)
        sleep(settings.poll_interval)
        batch, _ = call_with_retries(lambda: client.messages.batches.retrieve(batch.id), settings, sleep)
    on_progress(len(requests), len(requests))
    return batch


def ask_batch(client, requests: list[JudgeRequest], settings: ClientSettings, prices: PriceTable,
              on_progress: Progress = lambda done, total: None, sleep=time.sleep) -> dict[str, JudgeRecord]:
    """Every request through one Message Batch; failures retried through the Messages API."""
    out: dict[str, JudgeRecord] = {}
    if not requests:
        return out
    by_id = {custom_id(r): r for r in requests}
    try:
        batch = submit_and_wait(client, requests, settings, on_progress, sleep)
        results, _ = call_with_retries(lambda: list(client.messages.batches.results(batch.id)), settings, sleep)
    except RequestFailed as exc:
        for r in requests:
            record = new_record(r)
            record.via, record.attempts, record.error = "batch", exc.attempts, f"batch failed: {exc}"
            out[r.key] = record
        return out
    retry: list[tuple[JudgeRequest, JudgeRecord]] = []
    for line in results:
        request = by_id.get(line.custom_id)
        if request is None:
            continue
        record = new_record(request)
        record.via, record.attempts = "batch", 1
        result = line.result
        if result.type == "succeeded":
            usage = usage_of(result.message)
            record.usage = usage
            record.cost_usd = prices.cost(request.model, usage.input_tokens, usage.output_tokens, batch=True)
            if accept(record, request, result.message):
                out[request.key] = record
                continue
        else:
            record.error = f"batch result {result.type}"
        retry.append((request, record))
    seen = {r.key for r, _ in retry} | set(out)
    retry += [(r, new_record(r)) for r in requests if r.key not in seen]  # missing from the results file
    for request, record in retry:
        record.error = None
        out[request.key] = ask(client, request, settings, prices, sleep, record=record)
    return out
