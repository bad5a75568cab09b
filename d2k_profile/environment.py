"""What a result was measured on: GPU, clocks, driver and library versions, the source's hash.

Clocks are read through ``nvidia-smi`` (NVML bindings are not guaranteed on the GPU machines) before
and after each submission, so a throttled measurement is visible in its record.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
from pathlib import Path

from .procs import run_group

CODE_SUFFIXES = {".py", ".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c"}
SMI_FIELDS = ("clocks.sm", "clocks.max.sm", "clocks.mem", "temperature.gpu", "power.draw", "clocks_throttle_reasons.active")


def source_hash(folder: Path) -> str:
    """sha256 (first 16 hex digits) over the code files of a submission folder (or one file)."""
    folder = Path(folder)
    files = [folder] if folder.is_file() else sorted(p for p in folder.rglob("*") if p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts)
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(folder) if folder.is_dir() else p.name).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _smi(query: str, target: str | None) -> list[str] | None:
    if not shutil.which("nvidia-smi"):
        return None
    cmd = ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"]
    if target:
        cmd += ["-i", target]
    try:
        out = run_group(cmd, timeout_s=10)
    except OSError:
        return None
    if out.timed_out or out.returncode != 0 or not out.output.strip():
        return None
    return [x.strip() for x in out.output.strip().splitlines()[0].split(",")]


def smi_value(query: str, target: str | None) -> str | None:
    """One nvidia-smi field of GPU ``target`` (index or UUID); None without nvidia-smi or that GPU."""
    values = _smi(query, target)
    return values[0] if values else None


def clocks(gpu_uuid: str | None) -> dict[str, str]:
    """SM/memory clocks, temperature, power and throttle reasons now (empty without nvidia-smi)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip() or None
    values = None
    for target in dict.fromkeys([gpu_uuid, visible]):  # the UUID first, then the visible index
        values = _smi(",".join(SMI_FIELDS), target)
        if values is None:  # drivers name the throttle field differently: retry without it
            values = _smi(",".join(SMI_FIELDS[:-1]), target)
        if values is not None:
            break
    return dict(zip(SMI_FIELDS, values)) if values else {}


def versions() -> dict[str, str]:
    """Python, torch, CUDA, triton and numpy versions of this process."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        import torch

        out["torch"] = torch.__version__
        out["cuda"] = str(torch.version.cuda)
    except ImportError:
        pass
    for mod in ("triton", "numpy"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            out[mod] = "absent"
    return out


def device_info() -> dict[str, object]:
    """The current CUDA device (name, UUID, L2, SMs, capability, driver); {} without a GPU."""
    import torch

    if not torch.cuda.is_available():
        return {}
    idx = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(idx)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid and not uuid.startswith("GPU-"):
        uuid = "GPU-" + uuid
    driver = _smi("driver_version", uuid or None)
    return {
        "name": props.name,
        "uuid": uuid,
        "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0),
        "sm_count": props.multi_processor_count,
        "capability": f"{props.major}.{props.minor}",
        "memory_gib": round(props.total_memory / 2**30, 1),
        "driver": driver[0] if driver else "unknown",
    }
