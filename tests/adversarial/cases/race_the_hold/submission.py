"""Cheat (races the stream hold; a gap in the cross-checks): the work is launched at once on a
private stream that does not wait for the timed stream, so it runs while the harness's flush and
stream hold still occupy the timed stream, before the start event; the timed stream then waits for
it (the output is complete at the end event) and sleeps for about the roofline floor so the event
time stays plausible. Its kernel time is many times its event time. Needs a GPU."""
import torch

_side = None
H200_BYTES_PER_S = 4.8e12
CYCLES_PER_S = 1.98e9


def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    global _side
    _side = _side or torch.cuda.Stream()
    with torch.cuda.stream(_side):  # no wait on the timed stream: starts during its hold
        y = _softmax(x)
        done = torch.cuda.Event()
        done.record(_side)
    cur = torch.cuda.current_stream()
    cur.wait_event(done)
    floor_s = 2 * x.numel() * x.element_size() / H200_BYTES_PER_S
    torch.cuda._sleep(int(floor_s * 1.05 * CYCLES_PER_S))
    return y
