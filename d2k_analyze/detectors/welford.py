"""welford: a Welford update (delta = x - mean; mean += delta / n; m2 += delta * (x - mean)) or a
Chan merge (M2 = M2_a + M2_b + delta^2 * n_a * n_b / n). Names alone (a variable called m2)
do not count; a single-pass sum of squares and a two-pass centred variance are 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present

MEAN = rx.compile(r"(?i)mean|\bmu\b|^mu|avg")
OPERAND = r"[\w.]+(?:\[[^\]]*\])?"


def _deltas(facts) -> set[str]:
    """Variables holding a difference with a mean: d = x - mean, shift = mean_c - mean."""
    out = set()
    for a in facts.assigns:
        m = rx.fullmatch(rf"\(?\s*({OPERAND})\s*-\s*({OPERAND})\s*\)?", a.value)
        if m and rx.fullmatch(r"[A-Za-z_]\w*", a.target) and (MEAN.search(m.group(2)) or MEAN.search(m.group(1))):
            out.add(a.target)
    return out


def detect(facts):
    helpers = [c for c in facts.calls if rx.match(r"^welford(_reduce|_combine)?$", c.short) and "triton_helpers" in c.name]
    if helpers:
        return present(helpers, "Inductor welford helpers")
    deltas = _deltas(facts)
    if not deltas:
        return absent("no delta-from-mean variable: sum of squares or two-pass statistics")
    dn = "|".join(map(re.escape, sorted(deltas)))
    mean_updates, m2_updates, chan = [], [], []
    for a in facts.assigns:
        if not rx.search(rf"\b({dn})\b", a.value):
            continue
        self_ref = a.op in ("+=", "-=") or rx.search(rf"(?<![\w.]){re.escape(a.target)}\b", a.value)
        mean_in_value = any(MEAN.search(t) for t in rx.findall(r"[A-Za-z_][\w.]*", a.value))
        if MEAN.search(a.target) and (self_ref or mean_in_value) and rx.search(rf"\b({dn})\b\s*[/*]|div\w*\s*\(\s*({dn})\b", a.value):
            mean_updates.append(a)  # mean += delta / n   /   new_mean = mean + d / count
        if self_ref and rx.search(rf"\b({dn})\b\s*\*\s*\(", a.value):
            m2_updates.append(a)  # m2 += delta * (x - mean_new)
        squared = rx.search(rf"\b({dn})\b\s*\*\s*\b({dn})\b|\b({dn})\b\s*\*\*\s*2", a.value)
        if squared and "+" in a.value and rx.search(r"(?i)m2|\bvar|count|\bn_|\bn\b|cnt|weight", a.value):
            chan.append(a)  # M2 = M2_a + M2_b + delta^2 * n_a * n_b / n
    if chan:
        return present(chan[:2], "Chan merge of (count, mean, M2) partials")
    if mean_updates and m2_updates:
        return present(mean_updates[:1] + m2_updates[:1], "Welford running mean / M2 update")
    return absent("no Welford/Chan update (sum of squares or two-pass statistics)")


detect_cuda = detect_triton = detect
