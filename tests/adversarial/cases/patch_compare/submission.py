"""Cheat (patches the harness's module globals): at import, replaces the harness's comparison,
output check, null-kernel and roofline functions with ones that always pass, then returns a cheap
wrong answer (exp(x): as much memory traffic as softmax, so it stays above the roofline floor)."""
import sys

import torch


def _patch():
    for name, mod in list(sys.modules.items()):
        if not name.startswith("d2k_profile") or mod is None:
            continue
        comparison = getattr(mod, "Comparison", None)
        for attr in ("compare_all", "compare"):
            if callable(getattr(mod, attr, None)) and comparison is not None:
                setattr(mod, attr, lambda *a, _c=comparison, **k: _c(True, "", 0.0, 0.0, 0, 0))
        for attr in ("check_output", "check_values", "check_call", "check_inputs"):
            if callable(getattr(mod, attr, None)):
                setattr(mod, attr, lambda *a, **k: None)
        if callable(getattr(mod, "passing_nulls", None)):
            setattr(mod, "passing_nulls", lambda *a, **k: [])
        if callable(getattr(mod, "below_roofline", None)):
            setattr(mod, "below_roofline", lambda *a, **k: False)


_patch()


def run(x):
    return torch.exp(x)
