"""Shared pieces of the d2k-agent tests: the scripted agent, configs, an in-process machine.

(A uniquely named module, not conftest: several test folders have a conftest.py.)"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fake_server import FakeAPI, Step  # noqa: E402

from d2k_agent import runner  # noqa: E402
from d2k_agent.layout import RunConfig  # noqa: E402

REPO = HERE.parents[1]
# The command adapter's --command for the fake CLI (it wants 10 turns: more than any test's budget).
CLI_ARGS = f"{sys.executable} {HERE / 'fake_cli.py'} --max-turns 10 --model {{model}} {{user}}"

# A single-pass Triton softmax: one program per row, the row held in registers, fp32 statistics.
KERNEL = '''"""Row softmax in Triton: one program per row, the whole row in registers."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def run(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    softmax_kernel[(M,)](x, y, N, x.stride(0), BLOCK=triton.next_power_of_2(N))
    return y
'''
DESIGN = "# Design\n\nOne program per row, the row kept on chip in registers; fp32 max and sum; one read, one write.\n"

SCRIPT = [
    Step([{"name": "editor", "input": {"command": "create", "path": "submission.py", "file_text": KERNEL}},
          {"name": "editor", "input": {"command": "create", "path": "design.md", "file_text": DESIGN}}], text="Writing the kernel."),
    Step([{"name": "test", "input": {}}]),
    Step([{"name": "bench", "input": {}}]),
    Step([{"name": "submit", "input": {}}]),
]


def busy_script(n: int = 50) -> list[Step]:
    """An agent that never submits: every turn runs one cheap shell command."""
    return [Step([{"name": "bash", "input": {"command": f"echo turn {i} >> log.txt"}}]) for i in range(n)]


def config(out: Path, api: FakeAPI, **kw) -> RunConfig:
    base = RunConfig(name=str(out), arm="guided", tasks=["softmax"], adapter="anthropic", model="fake-model", turns=10,
                     base_url=api.url, sandbox="none", prices=str(HERE / "prices.toml"))
    return replace(base, **kw)


def machine(tmp_path: Path) -> runner.Machine:
    return runner.Machine(has_gpu=False, gpus=["0"], jobs=1, work_root=tmp_path / "work")
