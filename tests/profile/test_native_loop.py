"""The sandbox's call loop, driven the way the judge drives it: the C++ module (CPU build) and its
Python fallback must give the same frames for the same commands. A child process plays the
sandbox: it reads the MAC key from the command pipe, binds a few implementations (an honest one,
one that returns its input, a tensor subclass, one that raises, a wrong shape, a non-contiguous
output) and serves."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from d2k_profile import frames, native
from d2k_profile.frames import CallFlag, CallStatus, ChannelViolation, FrameReader, Op, OutFlag
from d2k_profile.shared import Arena

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent('''
    import json, sys, traceback
    import torch
    from d2k_profile import anticheat, native, protocol, shared
    mod = native.load(None if sys.argv[1] == "py" else sys.argv[1])
    cmd_fd, res_fd, specs = int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
    base = torch._C.TensorBase
    mod.setup(cmd_fd, res_fd, (torch.Tensor, base.data_ptr, base.nbytes, base.dtype, base.shape, base.is_contiguous, base.is_cuda,
                               base.contiguous, anticheat.classify_exception, lambda e: "".join(traceback.format_exception(e))), False, 0, 0, 0)
    inp = shared.attach(protocol.BufferSpec(**specs["input"]), "cpu", mod)
    esc = shared.attach(protocol.BufferSpec(**specs["escrow"]), "cpu", mod)
    class Lazy(torch.Tensor):
        pass
    impls = (
        lambda x: x[0] * 2,                            # 0 honest
        lambda x: x[0],                                # 1 returns its input
        lambda x: (x[0] * 2).as_subclass(Lazy),        # 2 a tensor subclass
        lambda x: 1 / 0,                               # 3 raises
        lambda x: x[0][:, :2] * 2,                     # 4 wrong shape
        lambda x: (x[0].t().contiguous() * 2).t(),     # 5 right values, not contiguous
        lambda x: [x[0] * 2],                          # 6 a list of one output is fine
    )
    mod.bind(impls, ((inp.tensor,),), (((esc.addr, esc.spec.nbytes),),), ((torch.float32, (4, 4), 64),))
    print("stopped" if mod.serve() else "closed", flush=True)
''')


def loops():
    built = native.prepare(False)
    out = [pytest.param("py", id="python")]
    if built.path is not None:
        out.insert(0, pytest.param(str(built.path), id="cpp"))
    return out


@pytest.fixture
def served(tmp_path, request):
    arena = Arena("cpu", None, tmp_path)
    inp, esc = arena.alloc((4, 4), torch.float32), arena.alloc((4, 4), torch.float32)
    inp.tensor.copy_(torch.arange(16, dtype=torch.float32).view(4, 4))
    cmd_r, cmd_w = os.pipe()
    res_r, res_w = os.pipe()
    key = os.urandom(16)
    os.write(cmd_w, key)
    specs = json.dumps({"input": vars(inp.spec), "escrow": vars(esc.spec)})
    proc = subprocess.Popen([sys.executable, "-c", CHILD, request.param, str(cmd_r), str(res_w), specs], pass_fds=(cmd_r, res_w),
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    os.close(cmd_r)
    reader = FrameReader(res_r, key)

    def op(impl, flags=CallFlag.ESCROW, opcode=Op.CALL):
        os.write(cmd_w, frames.command(opcode, impl, 0, 0, flags))
        return reader.read(time.monotonic() + 60)

    yield op, inp, esc, res_w, proc
    os.close(cmd_w)
    proc.wait(timeout=30)
    arena.close()


@pytest.mark.parametrize("served", loops(), indirect=True)
def test_one_call_per_command_checked_and_escrowed(served):
    op, inp, esc, _res_w, proc = served
    f = op(0)
    assert f.status == CallStatus.OK and f.flags == OutFlag.ESCROWED and f.call_id == 1
    assert torch.equal(esc.tensor, inp.tensor * 2)  # the judge reads the output from escrow
    esc.tensor.zero_()
    f = op(1)
    assert f.status == CallStatus.OK and f.flags & OutFlag.ALIASES_INPUT
    f = op(2)
    assert f.status == CallStatus.BAD_OUTPUT and f.flags & OutFlag.SUBCLASS and "Lazy" in f.text
    f = op(3)
    assert f.status == CallStatus.EXCEPTION and "ZeroDivisionError" in f.text
    f = op(4)
    assert f.status == CallStatus.BAD_OUTPUT and f.flags & OutFlag.WRONG_SHAPE
    esc.tensor.zero_()
    f = op(5)
    assert f.status == CallStatus.OK and f.flags == OutFlag.ESCROWED | OutFlag.NONCONTIGUOUS and torch.equal(esc.tensor, inp.tensor * 2)
    f = op(6, flags=0)
    assert f.status == CallStatus.OK and not f.flags & OutFlag.ESCROWED  # no escrow asked, none done
    f = op(99)
    assert f.status == CallStatus.BAD_COMMAND
    assert isinstance(op(0, opcode=Op.STOP), frames.StoppedFrame)
    assert proc.wait(timeout=30) == 0 and proc.stdout.read().strip() == "stopped"


@pytest.mark.parametrize("served", loops(), indirect=True)
def test_bytes_written_by_anyone_else_are_refused(served):
    op, _inp, _esc, res_w, _proc = served
    assert op(0).status == CallStatus.OK
    os.write(res_w, b'{"type": "Result", "workload": "w", "outcome": {"status": "ok"}}\n')  # what a submission could write
    with pytest.raises(ChannelViolation):
        op(0)
