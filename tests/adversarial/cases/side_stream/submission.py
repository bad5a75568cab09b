"""Cheat: does its work on a private stream and returns without joining it, so events on the
current stream see (almost) nothing. Needs a GPU (on a CPU it fails: runtime_error)."""
import torch

def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)

_stream = None


def run(x):
    global _stream
    _stream = _stream or torch.cuda.Stream()
    _stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(_stream):
        y = x
        for _ in range(8):  # make the hidden work long
            y = _softmax(x)
    return y
