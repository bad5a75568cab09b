"""Running the judge over a set of analysed submissions: cache first, then API (or batch), then
the citation check.

:func:`judge_results` is the one entry point the CLI uses. Modes:

* ``anthropic``: cached answers are reused; the rest go to the API (Messages, or one Message
  Batch with ``batch``) and valid answers are cached;
* ``replay``: only the cache; any miss is a :class:`JudgeUnavailable` listing what is missing.

The citation check (:mod:`.citations`) runs on every answer, cached or fresh, so improving it
never needs new requests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task

from ..model import Evidence, Span
from . import citations
from .answers import parse_items
from .cache import CacheError, JudgeCache, default_cache_path
from .client import ClientSettings, ask_all, make_client, new_record
from .prompt import JudgeRequest, design_notes, discover_request, grade_request
from .records import ItemJudgement, JudgeRecord, JudgeTotals, SubmissionJudgement, Usage
from .source_view import ShownFile, citable_lines, shown_files
from .templates import DISCOVER, GRADE, PriceTable, load_prices, load_template

DEFAULT_MODEL = "claude-sonnet-5-5"  # the newest Sonnet-class id in the installed SDK's model list
MODES = ("none", "anthropic", "replay")


class JudgeUnavailable(Exception):
    """The judge cannot run as asked (replay miss, unreadable cache, bad template): one clear line."""


@dataclass(frozen=True)
class JudgeSettings:
    mode: str = "none"
    client: ClientSettings = field(default_factory=lambda: ClientSettings(DEFAULT_MODEL))
    batch: bool = False
    cache_path: Path | None = None  # None: the default location
    use_cache: bool = True


@dataclass
class _Pending:
    """One submission's requests and what the citation check needs to read its answers."""

    index: int
    grade: JudgeRequest
    files: list[ShownFile]
    citable: dict[str, set[int]]
    discover: JudgeRequest | None = None


def _prepare(results, tasks: dict[str, Task], catalogue: Catalogue, model: str) -> list[_Pending]:
    grade_t, discover_t = load_template(GRADE), load_template(DISCOVER)
    pending = []
    for i, r in enumerate(results):
        if r.score is None or r.analysis.task not in tasks or not r.analysis.units:
            continue  # nothing to grade: unknown task, or no kernel (the static score already says absent)
        task = tasks[r.analysis.task]
        files = shown_files(r.analysis)
        req = grade_request(r.analysis, task, catalogue, grade_t, model, files, r.score, r.compiled)
        notes = design_notes(r.analysis)
        disc = discover_request(r.analysis, task, discover_t, model, notes) if notes is not None else None
        pending.append(_Pending(i, req, files, citable_lines(r.analysis, files), disc))
    return pending


def _from_cache(request: JudgeRequest, cache: JudgeCache | None) -> JudgeRecord | None:
    hit = cache.get(request.key) if cache is not None else None
    if hit is None:
        return None
    record = new_record(request)
    record.answer, record.cached, record.via = hit["answer"], True, "cache"
    record.usage, record.cost_usd = Usage(hit["input_tokens"], hit["output_tokens"]), hit["cost_usd"]
    return record


def _item_judgements(record: JudgeRecord, request: JudgeRequest, files: list[ShownFile],
                     citable: dict[str, set[int]]) -> dict[str, ItemJudgement]:
    if not record.ok:
        return {}
    n_lines = {f.name: len(f.lines) for f in files}
    parsed = parse_items(record.answer, list(request.item_ids))
    return {item: citations.check(item, v, cites, why, citable, n_lines) for item, (v, cites, why) in parsed.items()}


def _open_cache(settings: JudgeSettings) -> JudgeCache | None:
    if not settings.use_cache:
        if settings.mode == "replay":
            raise JudgeUnavailable("--judge replay needs the cache (drop --no-judge-cache)")
        return None
    path = settings.cache_path or default_cache_path()
    try:
        return JudgeCache(path, create=settings.mode != "replay")
    except CacheError as exc:
        if settings.mode == "replay":
            raise JudgeUnavailable(f"--judge replay: {exc}") from None
        return None


def _send(requests: list[JudgeRequest], settings: JudgeSettings, prices: PriceTable,
          progress: Callable[[int, int], None], sleep) -> dict[str, JudgeRecord]:
    client = make_client(settings.client)
    try:
        if settings.batch:
            from .batch import ask_batch

            return ask_batch(client, requests, settings.client, prices, progress, sleep)
        done = [0]

        def tick() -> None:
            done[0] += 1
            progress(done[0], len(requests))

        return ask_all(client, requests, settings.client, prices, tick, sleep)
    finally:
        client.close()


def judge_results(results, tasks: dict[str, Task], catalogue: Catalogue, settings: JudgeSettings,
                  progress: Callable[[int, int], None] = lambda done, total: None,
                  sleep=time.sleep) -> tuple[dict[int, SubmissionJudgement], JudgeTotals]:
    """Judge every scored result; returns judgements by result index and the run's totals."""
    from .templates import TemplateError

    try:
        pending = _prepare(results, tasks, catalogue, settings.client.model)
        prices = load_prices()
    except TemplateError as exc:
        raise JudgeUnavailable(str(exc)) from None
    cache = _open_cache(settings)
    requests = [r for p in pending for r in (p.grade, p.discover) if r is not None]
    records: dict[str, JudgeRecord] = {}
    for r in requests:
        hit = _from_cache(r, cache)
        if hit is not None:
            records[r.key] = hit
    missing = list({r.key: r for r in requests if r.key not in records}.values())
    if missing and settings.mode == "replay":
        first = missing[0]
        raise JudgeUnavailable(
            f"--judge replay: {len(missing)} of {len(requests)} judge requests are not in the cache "
            f"{cache.path if cache else ''} (first: {first.submission}, {first.kind}, {first.prompt_version}, "
            f"{first.model}); run with --judge anthropic first"
        )
    if missing:
        fresh = _send(missing, settings, prices, progress, sleep)
        for r in missing:
            rec = fresh[r.key]
            records[r.key] = rec
            if rec.ok and cache is not None:
                cache.put(r.key, r.kind, r.model, r.prompt_version, rec.answer, rec.usage.input_tokens,
                          rec.usage.output_tokens, rec.cost_usd)
    if cache is not None:
        cache.close()

    totals = JudgeTotals()
    out: dict[int, SubmissionJudgement] = {}
    counted: set[str] = set()
    for p in pending:
        grade = _copy(records[p.grade.key], p.grade)
        judgement = SubmissionJudgement(grade, _item_judgements(grade, p.grade, p.files, p.citable))
        grade.injection_flagged = bool(grade.ok and grade.answer.get("injection_attempt"))
        if p.discover is not None:
            disc = _copy(records[p.discover.key], p.discover)
            judgement.discover = disc
            if disc.ok:
                parsed = parse_items(disc.answer, list(p.discover.item_ids))
                judgement.proposed = {item: v for item, (v, _, _) in parsed.items()}
        for rec in judgement.records:
            if rec.key in counted and not rec.cached:
                rec.cached, rec.via = True, "cache"  # an identical submission earlier in this run paid for it
            counted.add(rec.key)
            totals.add(rec)
        out[p.index] = judgement
    return out, totals


def _copy(record: JudgeRecord, request: JudgeRequest) -> JudgeRecord:
    """A per-submission copy (identical submissions share one request and one answer)."""
    rec = JudgeRecord(**{**record.__dict__})
    rec.submission = request.submission
    return rec


# --- what scoring needs -----------------------------------------------------------------------


def judge_verdicts(judgement: SubmissionJudgement, files_display: dict[str, str]):
    """``{item: scoring.JudgeVerdict}`` with the judge's valid citations as evidence."""
    from ..scoring import JudgeVerdict

    out = {}
    for item, ij in judgement.items.items():
        evidence = tuple(
            Evidence(Span(files_display.get(c.file, c.file), c.start_line, c.end_line), "", "judge", "medium", ij.rationale)
            for c in ij.citations
        ) if not ij.downgraded else ()
        reason = ij.rationale + (f" [{ij.note}]" if ij.note else "")
        out[item] = JudgeVerdict(item, ij.verdict, evidence, reason)
    return out


def display_names(analysis) -> dict[str, str]:
    """Submission-relative file name -> the analyzer's display path (for evidence spans)."""
    return {f.name: f.display for f in shown_files(analysis)}
