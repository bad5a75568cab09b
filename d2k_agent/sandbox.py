"""How agent-side processes run: an environment allowlist, a private HOME and caches, and a
bubblewrap sandbox where ``bwrap`` works.

In the sandbox the workspace and the private HOME are writable, everything else is read-only,
and there is no network (``--unshare-net``). A CLI agent reaches the model endpoint only through
the accounting proxy, over a Unix socket bind-mounted into the sandbox and re-exposed on the
sandbox's own loopback by :mod:`d2k_agent.forward`. Without ``bwrap`` (``--sandbox auto`` on a
machine without it) only the allowlist and the private directories apply, and the run records
``sandbox = "none"``; ``--sandbox bwrap`` makes that a hard error instead.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

# Variables passed through from the runner's environment; everything else (API keys above all)
# stays out. CUDA_VISIBLE_DEVICES is set per tool call by the GPU queue.
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH",
                 "TRITON_INTERPRET", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH",
                 "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


@dataclass(frozen=True)
class Sandbox:
    """Where and how agent-side commands run."""

    workspace: Path
    home: Path
    mode: str  # "bwrap" | "none"
    readonly_extra: tuple[Path, ...] = ()  # e.g. the tool scripts folder
    writable_extra: tuple[Path, ...] = ()  # e.g. the proxy socket folder

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return agent_env(self.home, extra)

    def wrap(self, argv: list[str], network: bool = False) -> list[str]:
        if self.mode != "bwrap":
            return argv
        return bwrap_argv(argv, self.workspace, self.home, self.readonly_extra, self.writable_extra, network)


def agent_env(home: Path, extra: dict[str, str] | None = None, source: dict[str, str] | None = None) -> dict[str, str]:
    """The allowlisted variables of ``source`` (default: this process), a private HOME with its
    own torch-extension and Triton caches, and ``extra`` on top."""
    source = os.environ if source is None else source
    env = {k: source[k] for k in ENV_ALLOWLIST if k in source}
    home = Path(home)
    env.update({
        "HOME": str(home),
        "TORCH_EXTENSIONS_DIR": str(home / ".cache" / "torch_extensions"),
        "TRITON_CACHE_DIR": str(home / ".cache" / "triton"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(home / "tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    # The interpreter running d2k-agent, so that `python` in the sandbox sees the same packages.
    env["PATH"] = os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), *env.get("PATH", "/usr/bin:/bin").split(os.pathsep)]))
    env.update(extra or {})
    return env


def prepare_home(home: Path) -> None:
    for sub in ("", ".cache/torch_extensions", ".cache/triton", "tmp"):
        (Path(home) / sub).mkdir(parents=True, exist_ok=True)


def bwrap_argv(argv: list[str], workspace: Path, home: Path, readonly_extra=(), writable_extra=(), network: bool = False) -> list[str]:
    """The bubblewrap command line: / read-only (``/tmp`` too: TMPDIR points into the private HOME),
    /dev with the GPUs, a fresh /proc, the workspace and HOME writable, no network unless asked,
    killed with its parent."""
    out = ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    for p in (workspace, home, *writable_extra):
        out += ["--bind", str(p), str(p)]
    for p in readonly_extra:
        out += ["--ro-bind", str(p), str(p)]
    if not network:
        out.append("--unshare-net")
    out += ["--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(workspace), "--"]
    return out + list(argv)


@functools.lru_cache(maxsize=None)
def bwrap_works() -> bool:
    """True when ``bwrap`` exists *and* can create its namespaces here (containers often forbid it)."""
    if not shutil.which("bwrap"):
        return False
    try:
        probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def choose_mode(requested: str) -> str:
    """``auto``: bwrap where it works, else none. ``bwrap``: bwrap or a ConfigError. ``none``."""
    if requested not in ("auto", "bwrap", "none"):
        raise ConfigError(f"unknown --sandbox {requested!r} (auto, bwrap or none)")
    if requested == "none":
        return "none"
    if bwrap_works():
        return "bwrap"
    if requested == "bwrap":
        raise ConfigError("--sandbox bwrap: bubblewrap is not installed or cannot create namespaces here")
    return "none"
