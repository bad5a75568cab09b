"""Triton detectors on small snippets: the PROPERTIES.md conventions and the catalogue's false positives."""

from __future__ import annotations

import pytest

from d2k_analyze.model import Status

P, A, NA = Status.PRESENT, Status.ABSENT, Status.NOT_APPLICABLE

HEAD = "import triton\nimport triton.language as tl\n"

MATMUL = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK_M": 128, "GROUP_SIZE_M": 8}, num_stages=3, num_warps=8),
                          triton.Config({"BLOCK_M": 64, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4)], key=["M"])
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + k)
        b = tl.load(b_ptr + k)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + pid_m * N + pid_n, acc.to(tl.bfloat16))

def run(a, b):
    c = a.new_empty(a.shape)
    mm[(1,)](a, b, c, 1, 1, 1, BLOCK_N=64, BLOCK_K=32)
    return c
'''

PLAIN_MM = HEAD + '''
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        acc += tl.dot(tl.load(a_ptr + k), tl.load(b_ptr + k), input_precision="ieee")
    tl.store(c_ptr + pid_m + pid_n, acc)

def run(a, b, c):
    mm[(1, 1)](a, b, c, 1, BLOCK=32, GROUP_SIZE_M=8)
'''

DEAD_DOT = HEAD + '''
@triton.jit
def k(x_ptr, y_ptr, USE_DOT: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if USE_DOT:
        x = tl.dot(x, x)
    # tl.dot(x, x) in a comment earns nothing
    tl.store(y_ptr + tl.arange(0, BLOCK), x)

def run(x, y):
    k[(1,)](x, y, USE_DOT=False, BLOCK=16)
'''

EMULATED = HEAD + '''
@triton.jit
def k(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    a = tl.load(a_ptr).to(tl.float32)
    b = tl.load(b_ptr).to(tl.float32)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    tl.store(c_ptr, acc)

def run(a, b, c):
    k[(1,)](a, b, c, BLOCK=16)
'''

SOFTMAX_ROW = HEAD + '''
@triton.jit
def softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"), eviction_policy="evict_first").to(tl.float32)
    m = tl.max(x, axis=0)
    p = tl.math.exp2((x - m) * 1.4426950408889634)
    tl.store(y_ptr + row * N + cols, p / tl.sum(p, axis=0), mask=cols < N)

def run(x, y):
    softmax[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
'''

ONLINE = HEAD + '''
@triton.jit
def softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m_i = -float("inf")
    l_i = 0.0
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + tl.arange(0, BLOCK)).to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m_i = m_new
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + tl.arange(0, BLOCK)).to(tl.float32)
        tl.store(y_ptr + row * N + start + tl.arange(0, BLOCK), tl.exp(x - m_i) / l_i)

def run(x, y):
    softmax[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024, num_stages=1)
'''

PIPELINED = HEAD + '''
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.range(0, N, BLOCK, num_stages=3):
        acc += tl.load(x_ptr + i + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), acc)

def run(x, y):
    k[(1,)](x, y, 1, BLOCK=128)
'''

PERSISTENT = HEAD + '''
@triton.jit
def k(x_ptr, y_ptr, n_rows, NUM_SMS: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, NUM_SMS):
        tl.store(y_ptr + row, tl.load(x_ptr + row))

def run(x, y):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    k[(min(sms, x.shape[0]),)](x, y, x.shape[0], NUM_SMS=sms)
'''

DATA_SIZED_STRIDE = HEAD + '''
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def run(x, y):
    k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
'''

SPLIT_K_ONE = HEAD + '''
@triton.jit
def k(a_ptr, c_ptr, K, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid_k = tl.program_id(1)
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        acc += tl.dot(tl.load(a_ptr + k0), tl.load(a_ptr + k0))
    tl.atomic_add(c_ptr, acc)

def run(a, c):
    k[(1, 1)](a, c, 64, BLOCK_K=32, SPLIT_K=1)
'''
SPLIT_K = SPLIT_K_ONE.replace("SPLIT_K=1)", "SPLIT_K=4)")

PDL_DEAD = HEAD + '''
@triton.jit
def k(x_ptr, USE_PDL: tl.constexpr):
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
    tl.store(x_ptr, 1.0)

def run(x):
    k[(1,)](x, USE_PDL=False)
'''
PDL_LIVE = PDL_DEAD.replace("USE_PDL=False", "USE_PDL=True, launch_pdl=True")

TMA = HEAD + '''
@triton.jit
def k(a_ptr, M, K, BLOCK: tl.constexpr, USE_TMA: tl.constexpr):
    if USE_TMA:
        desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK, BLOCK])
        a = desc.load([0, 0])
    else:
        a = tl.load(a_ptr + tl.arange(0, BLOCK))
    tl.store(a_ptr, a)

def run(a):
    k[(1,)](a, 1, 1, BLOCK=32, USE_TMA=USE)
'''
BLOCK_PTR = HEAD + '''
@triton.jit
def k(a_ptr, M, K, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    tl.store(a_ptr, tl.load(p))

def run(a):
    k[(1,)](a, 1, 1, BLOCK=32)
'''

WELFORD = HEAD + '''
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    mean = 0.0
    m2 = 0.0
    n = 0.0
    for i in range(0, N):
        x = tl.load(x_ptr + i).to(tl.float32)
        n += 1.0
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
    tl.store(y_ptr, m2 / n)

def run(x, y):
    k[(1,)](x, y, 1, BLOCK=1)
'''
TWO_PASS_VAR = HEAD + '''
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK)).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = x - mean
    var = tl.sum(d * d, axis=0) / N
    tl.store(y_ptr, var)

def run(x, y):
    k[(1,)](x, y, 1, BLOCK=1024)
'''

UNROLL = HEAD + '''
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    for i in tl.static_range(4):
        tl.store(x_ptr + i, 1.0)

def run(x):
    k[(1,)](x, BLOCK=4)
'''
PLAIN_RANGE = UNROLL.replace("tl.static_range(4)", "range(4)")

ONE_CONFIG = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

def run(x):
    k[(1,)](x, x.numel())
'''
COMPREHENSION_CONFIGS = ONE_CONFIG.replace(
    'configs=[triton.Config({"BLOCK": 128}, num_warps=4)]', 'configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128) for w in [4, 8]]'
)

CLUSTER = HEAD + '''
@triton.autotune(configs=[triton.Config({}, num_ctas=2), triton.Config({}, num_ctas=1)], key=[])
@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)

def run(x):
    k[(1,)](x)
'''

WARP_SPEC = HEAD + '''
@triton.jit
def k(x_ptr, N, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.range(0, N, BLOCK, warp_specialize=True):
        acc += tl.load(x_ptr + i)
    tl.store(x_ptr, acc)

def run(x):
    k[(1,)](x, 1, BLOCK=16)
'''

CASES = [
    ("tensor_cores", MATMUL, P), ("tensor_cores", PLAIN_MM, A), ("tensor_cores", DEAD_DOT, A), ("tensor_cores", EMULATED, A),
    ("smem_tiling", MATMUL, NA), ("smem_tiling", EMULATED, A), ("register_tiling", MATMUL, NA), ("register_tiling", SOFTMAX_ROW, A),
    ("tile_swizzle", MATMUL, P), ("tile_swizzle", PLAIN_MM, A),
    ("autotuning", MATMUL, P), ("autotuning", ONE_CONFIG, A), ("autotuning", COMPREHENSION_CONFIGS, P), ("autotuning", PLAIN_MM, A),
    ("multistage_pipeline", MATMUL, P), ("async_copy", MATMUL, P), ("multistage_pipeline", PLAIN_MM, NA), ("async_copy", PLAIN_MM, NA),
    ("multistage_pipeline", SOFTMAX_ROW, A), ("multistage_pipeline", ONLINE, A), ("multistage_pipeline", PIPELINED, P),
    ("mixed_precision_accumulation", MATMUL, P), ("mixed_precision_accumulation", EMULATED, P), ("mixed_precision_accumulation", SOFTMAX_ROW, P),
    ("block_reduction", SOFTMAX_ROW, NA), ("warp_shuffle_reduction", SOFTMAX_ROW, NA), ("block_reduction", UNROLL, A), ("warp_shuffle_reduction", UNROLL, A),
    ("fast_math", SOFTMAX_ROW, P), ("fast_math", ONLINE, A),
    ("cache_hints", SOFTMAX_ROW, P), ("cache_hints", ONLINE, A),
    ("online_softmax", ONLINE, P), ("online_softmax", SOFTMAX_ROW, A),
    ("single_pass_io", SOFTMAX_ROW, P), ("single_pass_io", ONLINE, A),
    ("persistent_kernel", PERSISTENT, P), ("grid_stride_loop", PERSISTENT, P),
    ("persistent_kernel", DATA_SIZED_STRIDE, A), ("grid_stride_loop", DATA_SIZED_STRIDE, P),
    ("split_k", SPLIT_K, P), ("split_k", SPLIT_K_ONE, A), ("atomics", SPLIT_K, P), ("atomics", MATMUL, A),
    ("programmatic_dependent_launch", PDL_DEAD, A), ("programmatic_dependent_launch", PDL_LIVE, P),
    ("tma", TMA.replace("USE_TMA=USE", "USE_TMA=True"), P), ("tma", TMA.replace("USE_TMA=USE", "USE_TMA=False"), A), ("tma", BLOCK_PTR, A),
    ("async_copy", TMA.replace("USE_TMA=USE", "USE_TMA=True"), P),
    ("welford", WELFORD, P), ("welford", TWO_PASS_VAR, A),
    ("loop_unrolling", UNROLL, P), ("loop_unrolling", PLAIN_RANGE, A),
    ("thread_block_cluster", CLUSTER, P), ("thread_block_cluster", MATMUL, A),
    ("warp_specialization", WARP_SPEC, P), ("warp_specialization", MATMUL, A),
]


@pytest.mark.parametrize("prop,src,expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_triton_detector(prop, src, expected, prop_status):
    assert prop_status(prop, src) == expected


def test_not_applicable_properties_get_no_finding(make_units, catalogue):
    from d2k_analyze.detectors import run_detectors

    [unit] = make_units({"submission.py": SOFTMAX_ROW})
    findings = run_detectors(unit, catalogue)
    applicable = {p.id for p in catalogue if p.applies_to("triton")}
    assert set(findings) == applicable
    assert "vectorized_access" not in findings and "ldmatrix" not in findings
    for f in findings.values():
        if f.status == Status.PRESENT:
            assert f.evidence and all(e.layer == "syntax" and e.span.start_line >= 1 for e in f.evidence)


GROUP_ONE = MATMUL.replace('"GROUP_SIZE_M": 8', '"GROUP_SIZE_M": 1')
HEURISTICS_ONLY = HEAD + '''
@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

def run(x):
    k[(1,)](x, x.numel())
'''
HALF_ACC = MATMUL.replace("dtype=tl.float32", "dtype=tl.bfloat16")


@pytest.mark.parametrize(
    "prop,src,expected",
    [
        ("tile_swizzle", GROUP_ONE, A),  # a grouping factor of 1 everywhere is no swizzle
        ("autotuning", HEURISTICS_ONLY, A),  # computed, not measured
        ("mixed_precision_accumulation", HALF_ACC, A),  # bf16 accumulator
        ("kernel_fusion", SOFTMAX_ROW, A),  # one operation, however many steps
    ],
)
def test_triton_false_positives(prop, src, expected, prop_status):
    assert prop_status(prop, src) == expected
