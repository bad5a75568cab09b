"""thread_block_cluster: __cluster_dims__ > 1, a cluster launch attribute, distributed shared
memory or TMA multicast; Triton num_ctas > 1."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, first, present
from ..parsing.liveness import literal_value


def _dims_product(attr: str) -> int | None:
    m = rx.search(r"\(([^()]*)\)", attr)
    if not m:
        return None
    prod = 1
    for part in m.group(1).split(","):
        v = literal_value(part.strip(), None, "cuda")
        if not isinstance(v, int):
            return None
        prod *= v
    return prod


def detect_cuda(facts):
    dims = [a for a in facts.attributes if "__cluster_dims__" in a.text and (_dims_product(a.text) or 2) > 1]
    hits = first(
        dims,
        facts.calls_named("this_cluster", "map_shared_rank", "cluster_sync", "cluster_arrive", "cluster_wait", "block_rank_in_cluster"),
        facts.grep_asm(r"\bmapa\b|shared::cluster|multicast::cluster|barrier\.cluster|%cluster_ctarank"),
        facts.grep_host(r"cudaLaunchAttributeClusterDimension|clusterDim\.[xyz]\s*=\s*([2-9]|\d\d)"),
        facts.grep(r"kNumTMAMulticast\s*=\s*[2-9]|ClusterShape\s*<\s*_?[2-9]"),
    )
    return present(hits, "thread-block cluster / DSMEM / multicast") if hits else absent("no cluster launch or cluster APIs")


def detect_triton(facts):
    values = [v for v in facts.config_values("num_ctas")]
    values += [literal_value(l.kwargs["num_ctas"]) for l in facts.launches if "num_ctas" in l.kwargs]
    if any(isinstance(v, int) and v > 1 for v in values):
        hits = [d for d in facts.decorators if "num_ctas" in d.text] or [l for l in facts.launches if "num_ctas" in l.kwargs]
        return present(hits, f"num_ctas {sorted(v for v in values if isinstance(v, int))}")
    return absent("num_ctas is 1 or unset")
