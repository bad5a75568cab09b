"""thread_block_cluster: thread-block clusters (Hopper+).

## What it means
``__cluster_dims__`` with more than one block, a cluster launch attribute
(``cudaLaunchAttributeClusterDimension``, ``cudaFuncSetAttribute(..., ClusterDimMustBeSet)``),
cluster APIs (``cg::this_cluster``, ``map_shared_rank``, PTX ``mapa`` / ``barrier.cluster``),
distributed shared memory or TMA multicast; Triton ``num_ctas > 1``.

## How it is detected
The kernel's ``__cluster_dims__`` attribute with a resolved product > 1; cluster PTX or APIs in
live code; a cluster launch attribute in the host code that launches the kernel; Triton
``num_ctas`` in every autotune config or at the launch, > 1.

## Not to be confused with
Cluster dims that resolve to 1; the ``.shared::cluster`` destination of a plain global-to-shared
bulk copy or TMA load, which PTX spells that way in a CTA launched alone; a cluster-scoped fence
(``fence.mbarrier_init.release.cluster``).
"""

import re

from ..facts.expr import num
from ..parsing.liveness import UNKNOWN, literal_value
from ._base import Rule, Signature, absent, present

# ``.shared::cluster`` followed by ``.global`` is the destination of a plain global-to-shared bulk
# copy (cp.async.bulk[.tensor].shared::cluster.global): PTX requires that spelling in a lone CTA too
# (a cluster of one), so it says nothing. Peer accesses, shared-to-shared copies, remote barriers,
# mapa, cluster barriers and multicast do.
CLUSTER_ASM = r"barrier\.cluster|\bmapa\b|shared::cluster\b(?!\.global)|%cluster_|multicast::cluster"
RULE = Rule("thread_block_cluster", Signature(ptx=r"\bbarrier\.cluster\S*|\bmapa\S*|\.shared::cluster\b(?!\.global)|multicast::cluster|%cluster_\w+", sass=r"\bUCGABAR\S*", refutes=True))
CLUSTER_CALLS = ("this_cluster", "map_shared_rank", "cluster_sync", "cluster_arrive", "cluster_wait", "block_rank_in_cluster", "cluster_ctarank")
HOST_ATTRS = ("cudaLaunchAttributeClusterDimension", "cudaFuncAttributeRequiredClusterWidth", "cudaFuncAttributeNonPortableClusterSizeAllowed", "ClusterLauncher", "cluster_shape", "ClusterShape")


@RULE.cuda
def cuda(f):
    for attr in f.attributes:
        m = re.search(r"__cluster_dims__\s*\(([^)]*)\)", attr)
        if m:
            vals = [literal_value(x.strip(), None, "cuda") for x in m.group(1).split(",")]
            if all(v is not UNKNOWN and isinstance(v, int) for v in vals):
                prod = 1
                for v in vals:
                    prod *= v
                if prod <= 1:
                    return absent("cluster dims resolve to 1")
            return present([f.loc], f"cluster dims {m.group(1).strip()}")
    hits = f.asm_matching(CLUSTER_ASM) + [c for c in f.calls if c.short in CLUSTER_CALLS]
    if hits:
        return present(hits, "cluster-scope barriers / distributed shared memory")
    host = sorted(n for n in f.host_names if any(a in n for a in HOST_ATTRS))
    if host:
        return present([lf.loc for lf in f.launches][:1] or [f.loc], f"cluster launch attribute in the host code: {host[0]}")
    return absent("no thread-block clusters")


@RULE.triton
def triton(f):
    vals = [v for cfg in f.configs for v in cfg.get("num_ctas", [])]
    vals += [num(lf.kwargs["num_ctas"]) for lf in f.launches if "num_ctas" in lf.kwargs]
    ints = [v for v in vals if isinstance(v, int)]
    if ints and max(ints) > 1:
        return present([f.loc], f"num_ctas {sorted(set(ints))}")
    return absent("no num_ctas > 1")
