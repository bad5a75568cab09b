"""split_kv: the KV/sequence (or softmax-row) axis of one work item split across CTAs/programs,
each split storing partial statistics (max/sum or LSE) that are merged with an exp(m_i - m_max)
rescale; the combine kernel (loading the partials and rescaling) shows it too. A chunked loop
inside one CTA is tiling, and a split count of 1 at every launch is 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present

STAT = r"(?i)^(m|s|l|lse|m_i|l_i|mx|sm|row_max|row_sum|max_\w*|sum_\w*|\w*_max|\w*_sum|\w*lse\w*|logsumexp|exp_sums?|max_logits?)$"
PID = r"program_id|blockIdx\.[xyz]|\bpid\b|\bbid\b"


def _split_index(facts) -> list:
    """Assignments that carve a split out of the grid: program_id(1|2) named split/chunk, or a
    start offset (pid % S) * CHUNK."""
    pids = {a.target for a in facts.assigns if rx.search(PID, a.value)} | {"pid"}
    pn = "|".join(map(re.escape, sorted(pids)))
    out = []
    for a in facts.assigns:
        if rx.search(r"program_id\(\s*(axis\s*=\s*)?[12]\s*\)|blockIdx\.[yz]", a.value) and rx.search(r"(?i)split|part|chunk|kv", a.target):
            out.append(a)
        elif rx.search(r"(?i)start|begin|lo\b|off", a.target) and rx.search(rf"\(\s*({pn})\s*%\s*\w+\s*\)\s*\*", a.value):
            out.append(a)
    return out


def _stat_stores(facts) -> list:
    out = []
    for c in facts.calls:
        if c.short == "store" and len(c.args) >= 2 and rx.match(STAT, c.args[1].strip()):
            out.append(c)
    for a in facts.assigns:
        base = a.target.split("[")[0].strip()
        if "[" in a.target and rx.search(r"(?i)(max|sum|lse|m|s|l)_?(part|partial|ptr|out|buf|ws)\w*$", base) and rx.match(STAT, a.value.strip()):
            out.append(a)
    return out


def _merges(facts) -> list:
    """sum(s_i * exp(m_i - m)) over partials loaded from global memory."""
    loaded = {a.target for a in facts.assigns if rx.search(r"tl\.load|\.load\(|\w+_(ptr|part|partial|buf)\w*\s*\[", a.value)}
    out = []
    for a in facts.assigns:
        m = rx.search(r"([\w.]+)\s*\*\s*(?:tl\.)?(?:math\.)?(?:__)?exp2?f?\s*\(\s*\(?\s*([\w.]+)\s*-\s*([\w.]+)", a.value)
        if m and m.group(1) in loaded and (m.group(2) in loaded or m.group(3) in loaded):
            out.append(a)
    return out


def detect(facts):
    counts = facts.idents_matching(r"(?i)^(num_?splits|n_?splits|num_?partitions|split_?kv|kv_?splits|splits)$")
    vals = [v for n in counts for v in list(facts.constexpr_values(n)) + facts.config_values(n) if isinstance(v, int)]
    if vals and max(vals) <= 1:
        return absent("number of splits is 1 at every launch")
    split = _split_index(facts)
    stores = _stat_stores(facts)
    if split and stores:
        return present(split[:1] + stores[:2], "grid split of the reduction axis, partial statistics stored per split")
    merges = _merges(facts)
    if merges:
        return present(merges[:2], "partial (max, sum) / LSE pairs loaded and merged with an exp rescale")
    return absent("no split of the KV/row axis across CTAs/programs")


detect_cuda = detect_triton = detect
