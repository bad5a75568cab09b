"""Building the judge's requests: grading a submission, and reading its design notes.

A :class:`JudgeRequest` is complete and deterministic: the same submission, rubric, evidence,
model and template give the same request, and its ``key`` (sha256 over model, prompt version,
system text, user text and tool schema, i.e. rubric + source + evidence) is the cache key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task

from ..model import SubmissionAnalysis, SubmissionScore
from .answers import tool_definition
from .source_view import ShownFile, fence_marker, fence_source, number_lines
from .templates import PromptTemplate

GRADE_MAX_TOKENS = 4096
DISCOVER_MAX_TOKENS = 2048
DESIGN_NOTES = "design.md"


@dataclass(frozen=True)
class JudgeRequest:
    submission: str
    kind: str  # grade | discover
    prompt_version: str
    model: str
    system: str
    user: str
    tool: dict
    max_tokens: int
    item_ids: tuple[str, ...]
    key: str = field(default="")

    def params(self) -> dict:
        """Keyword arguments of ``client.messages.create`` (and of a batch request's ``params``)."""
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": [{"role": "user", "content": self.user}],
            "tools": [self.tool],
            "tool_choice": {"type": "tool", "name": self.tool["name"]},
        }


def request_key(model: str, version: str, system: str, user: str, tool: dict) -> str:
    digest = hashlib.sha256()
    for part in (model, version, system, user, json.dumps(tool, sort_keys=True)):
        digest.update(part.encode("utf-8", errors="replace") + b"\0")
    return digest.hexdigest()


def _make(submission, kind, template: PromptTemplate, model, system, user, tool, max_tokens, ids) -> JudgeRequest:
    key = request_key(model, template.label, system, user, tool)
    return JudgeRequest(submission, kind, template.label, model, system, user, tool, max_tokens, tuple(ids), key)


# --- rubric text ------------------------------------------------------------------------------


def items_text(task: Task) -> str:
    parts = []
    for d in task.design:
        deps = ", ".join(d.depends_on) or "none"
        parts.append(
            f"## {d.id} ({d.level}, weight {d.weight:g}): {d.title}\n"
            f"Properties: {', '.join(d.properties)} (require {d.require}); depends on: {deps}\n"
            f"Guidance:\n{d.guidance.strip()}\n"
            f"What counts as implemented:\n{d.judge_hint.strip()}"
        )
    return "\n\n".join(parts)


def properties_text(task: Task, catalogue: Catalogue) -> str:
    parts = []
    for pid in dict.fromkeys(p for d in task.design for p in d.properties):
        if pid not in catalogue:
            continue
        p = catalogue[pid]
        text = f"## {p.id} ({p.level}): {p.name}\n{p.definition.strip()}"
        if p.false_positives:
            text += "\nDoes not count:\n" + "\n".join(f"- {fp.strip()}" for fp in p.false_positives)
        if p.judge_hint.strip():
            text += f"\nHint: {p.judge_hint.strip()}"
        if p.triton_convention.strip():
            text += f"\nTriton: {p.triton_convention.strip()}"
        parts.append(text)
    return "\n\n".join(parts)


# --- static evidence --------------------------------------------------------------------------


def _renamer(files: list[ShownFile]):
    """Evidence spans name files as the analyzer displays them; the judge sees submission-relative names."""
    names = {f.display: f.name for f in files}

    def rename(display: str) -> str:
        return names.get(display, Path(display).name)

    return rename


def evidence_text(analysis: SubmissionAnalysis, static: SubmissionScore | None, files: list[ShownFile],
                  compiled: str = "") -> str:
    rename = _renamer(files)
    lines = ["Kernel units (only launched ones count):"]
    for ua in analysis.units:
        u = ua.unit
        present = sorted(p for p, f in ua.findings.items() if f.status.value == "present")
        state = "launched" if u.launched else "NOT launched (dead: earns nothing)"
        lines.append(f"- {u.name} ({u.language}) {rename(u.file)}:{u.span.start_line}-{u.span.end_line}, {state}; "
                     f"properties detected: {', '.join(present) or 'none'}")
    if not analysis.units:
        lines.append("- none found")
    if compiled:
        lines.append(f"Compiled layer: {compiled}")
    if static is not None:
        lines.append("\nStatic verdict per design item (before dependencies):")
        for v in static.items:
            spans = "; ".join(dict.fromkeys(
                f"{rename(e.span.file)}:{e.span.start_line}-{e.span.end_line} ({e.layer}, {e.confidence})" for e in v.evidence
            ))
            lines.append(f"- {v.item}: {v.raw.value}. {v.reason}" + (f" Evidence: {spans}" if spans else ""))
    return "\n".join(lines)


# --- the two requests -------------------------------------------------------------------------


def grade_request(
    analysis: SubmissionAnalysis, task: Task, catalogue: Catalogue, template: PromptTemplate, model: str,
    files: list[ShownFile], static: SubmissionScore | None = None, compiled: str = "",
) -> JudgeRequest:
    marker = fence_marker(files)
    system = template.system.format(fence=marker)
    user = template.user.format(
        task_title=task.title, task_id=task.id, task_statement=task.statement.strip(),
        items=items_text(task), properties=properties_text(task, catalogue),
        evidence=evidence_text(analysis, static, files, compiled),
        n_files=len(files), source=fence_source(files, marker),
    )
    ids = [d.id for d in task.design]
    tool = tool_definition(template.tool_name, template.tool_description, ids)
    return _make(analysis.name, "grade", template, model, system, user, tool, GRADE_MAX_TOKENS, ids)


def design_notes(analysis: SubmissionAnalysis) -> ShownFile | None:
    """The agent's ``design.md`` in the submission folder, if any."""
    folder = Path(analysis.path)
    path = (folder if folder.is_dir() else folder.parent) / DESIGN_NOTES
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return ShownFile(DESIGN_NOTES, str(path), "other", text)


def discover_request(analysis: SubmissionAnalysis, task: Task, template: PromptTemplate, model: str,
                     notes: ShownFile) -> JudgeRequest:
    marker = fence_marker([notes])
    system = template.system.format(fence=marker)
    fenced = (f"===== BEGIN {marker} file={notes.name} =====\n{number_lines(notes.text)}\n"
              f"===== END {marker} file={notes.name} =====")
    user = template.user.format(
        task_title=task.title, task_id=task.id, task_statement=task.statement.strip(), items=items_text(task), notes=fenced,
    )
    ids = [d.id for d in task.design]
    tool = tool_definition(template.tool_name, template.tool_description, ids)
    return _make(analysis.name, "discover", template, model, system, user, tool, DISCOVER_MAX_TOKENS, ids)
