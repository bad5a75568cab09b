"""online_softmax: a running max with a rescaled running sum (or LSE) in one pass, or a merge of
partial (max, sum) pairs with the same rescale. Recognised by the rescale itself: a loop-carried
quantity multiplied by exp(m_old - m_new) (directly, or through an ``alpha``-like variable)."""

from __future__ import annotations

import re
from functools import lru_cache

from ..parsing import rx
from ._base import absent, present

EXP = r"(?:__expf|expf|exp2f|__exp2f|exp|exp2|hexp|tl\.exp|tl\.exp2|tl\.math\.exp|tl\.math\.exp2|libdevice\.exp2?|fast_expf)"
EXP_OF_DIFF = rx.compile(EXP + r"\s*\((?=[^;]*-)")


@lru_cache(maxsize=65536)
def _names(value: str) -> frozenset[str]:
    return frozenset(rx.findall(r"[A-Za-z_]\w*", value))


def detect(facts):
    # Variables holding exp(a - b): the rescale factors (alpha = exp(m_old - m_new)).
    factors = {a.target for a in facts.assigns if EXP_OF_DIFF.search(a.value) and rx.fullmatch(r"[A-Za-z_]\w*", a.target)}
    has_max = bool(facts.grep(r"(?i)max|>\s*\w+\s*\?"))
    hits = []
    for a in facts.assigns:
        v = a.value
        scaled_by = (EXP_OF_DIFF.search(v) is not None) or bool(_names(v) & factors)
        if not scaled_by:
            continue
        t = re.escape(a.target.split("[")[0].strip())
        if not t or not rx.fullmatch(r"[\w.]+", a.target.split("[")[0].strip()):
            continue
        if a.op == "*=" or rx.search(rf"(?<![\w.]){t}\b(\[[^\]]*\])?\s*\*|\*\s*{t}\b", v):
            hits.append(a)  # s = s * exp(m_old - m_new) + ...   /   acc *= alpha
        elif rx.search(r"\*\s*" + EXP + r"\s*\([^)]*-[^)]*\)\s*\+\s*[\w.\[\]]+\s*\*\s*" + EXP, v):
            hits.append(a)  # pair merge: s_a * exp(m_a - m) + s_b * exp(m_b - m)
    # a reduction of partial sums rescaled to a common max: sum(s_i * exp(m_i - m))
    merges = [a for a in facts.assigns if rx.search(r"sum\s*\([^;]*[\w.\]]\s*\*\s*" + EXP + r"\s*\(\s*\(?\s*[\w.]+\s*-\s*[\w.]+", a.value)]
    hits += merges
    if hits and has_max:
        return present(hits, "running sum/accumulator rescaled by exp(m_old - m_new)")
    return absent("no running rescale of the sum by exp(m_old - m_new)")


detect_cuda = detect_triton = detect
