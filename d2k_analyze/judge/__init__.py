"""The LLM rubric judge (layer 3 of docs/architecture.md): grades each design item of a submission's task
through the Anthropic API, with cached, costed, injection-checked verdicts.

Modules, in the order a request flows through them:

* :mod:`.templates`: versioned prompt templates and the price table (``rubrics/judge/``);
* :mod:`.source_view`: the numbered, fenced source and the lines a verdict may cite;
* :mod:`.prompt`: the grading and design-discovery requests, and their cache keys;
* :mod:`.cache`, :mod:`.client`, :mod:`.batch`: SQLite cache, Messages API with retries and
  concurrency, Message Batches with polling;
* :mod:`.answers`, :mod:`.citations`: the tool schema, strict validation, the mechanical
  downgrade of verdicts that cite no live code;
* :mod:`.runner`: all of it for a list of analysed submissions; :mod:`.discovery`: design notes
  against the implementation.
"""

from .records import Citation, ItemJudgement, JudgeRecord, JudgeTotals, SubmissionJudgement, Usage
from .runner import DEFAULT_MODEL, MODES, JudgeSettings, JudgeUnavailable, judge_results, judge_verdicts

__all__ = [
    "Citation", "DEFAULT_MODEL", "ItemJudgement", "JudgeRecord", "JudgeSettings", "JudgeTotals", "JudgeUnavailable",
    "MODES", "SubmissionJudgement", "Usage", "judge_results", "judge_verdicts",
]
