"""mbarrier: transaction barriers (``mbarrier`` PTX, ``cuda::barrier``, CUTLASS/TK wrappers).

## What it means
Asynchronous barrier objects that threads arrive on and wait for, usually tracking TMA
transaction bytes: ``mbarrier.init/arrive/try_wait``, ``arrive_and_expect_tx``,
``cuda::barrier``, ``ClusterTransactionBarrier``, ThunderKittens semaphores.

## How it is detected
PTX ``mbarrier.`` instructions, ``cuda::barrier`` / ``cuda::pipeline`` objects and their
arrive/wait calls, or known wrapper library names, in live code.

## Not to be confused with
``__syncthreads()`` (a plain CTA barrier).
"""

from ._base import Rule, Signature, absent, present

RULE = Rule("mbarrier", Signature(ptx=r"\bmbarrier\.\S+", sass=r"\bSYNCS\.\S+", refutes=True))
NAMES = ("barrier.arrive", "arrive_and_expect_tx", "expect_bytes", "init_semaphore", "ClusterTransactionBarrier", "ClusterBarrier",
         "cuda.barrier", "mbarrier", "arrive_and_wait", "producer_acquire", "consumer_wait", "expect_tx")


@RULE.cuda
def cuda(f):
    hits = f.asm_matching(r"\bmbarrier\.") + [c for c in f.calls if any(n in c.fn for n in NAMES)]
    if hits:
        return present(hits, "mbarrier / transaction barrier operations")
    names = sorted(n for n in f.lib_names_used() if any(k in n for k in ("ClusterTransactionBarrier", "cuda.barrier", "semaphore")))
    if names:
        return present([f.loc], f"transaction barrier objects: {', '.join(names[:3])}")
    return absent("no transaction barriers")
