"""Pre-builds and compile errors: a submission that compiles lazily (at its first call) is built by
the pre-build's warm-up call, its compiler failure is a ``compile_error`` for every workload, a
warm-up call that fails for any other reason is left to the timing job, and an exception raised
while importing is a ``runtime_error`` of kind ``import`` (not a compile error)."""

import json
import subprocess
import textwrap

import pytest
from profile_paths import TOY_TASK

from d2k_profile.anticheat import classify_exception, import_failure_kind
from d2k_profile.discovery import Submission
from d2k_profile.isolation import Limits, build_only
from d2k_profile.results import ResultStore
from d2k_profile.runner import Job, RunOptions, Runner
from d2k_spec.task import load_task

# What torch.utils.cpp_extension raises when ninja fails (the text is torch's own).
LAZY_BUILD_FAILURE = '''
_ext = None

def run(x):
    global _ext
    if _ext is None:
        raise RuntimeError("Error building extension 'lazy_ext': nvcc exited with status 1")
    return x
'''

CASES = {
    "lazy_build_failure": (LAZY_BUILD_FAILURE, "compile_error", "compile"),
    "syntax_error": ("def run(x)\n    return x\n", "compile_error", "compile"),
    "raises_at_import": ("raise RuntimeError('no GPU found')\n\ndef run(x):\n    return x\n", "runtime_error", "import"),
    "raises_at_call": ("def run(x):\n    raise ValueError('wrong shape')\n", "ok", ""),
    "segfault_at_call": ("import ctypes\n\ndef run(x):\n    return ctypes.string_at(0)\n", "ok", ""),
    "honest": ("import torch\n\ndef run(x):\n    return torch.softmax(x.float(), -1).to(x.dtype)\n", "ok", ""),
}


def _job(tmp_path, name: str, source: str) -> tuple[Runner, Job]:
    folder = tmp_path / "subs" / name
    folder.mkdir(parents=True)
    (folder / "submission.py").write_text(textwrap.dedent(source))
    task = load_task(TOY_TASK)
    out = tmp_path / "out"
    runner = Runner(RunOptions(out=out), ResultStore(out / f"{name}.jsonl", resume=False), has_gpu=False, on_record=lambda r: None)
    return runner, Job(Submission(task.id, TOY_TASK, folder, name, "submission", "python"), task, [task.smoke.name], "h")


@pytest.mark.parametrize("name", sorted(CASES))
def test_prebuild_counts_only_import_and_compiler_failures(tmp_path, name):
    source, expected, kind = CASES[name]
    runner, job = _job(tmp_path, name, source)
    spec, env = runner.job_spec(job, build_only_=True)
    outcome, _info = build_only(spec, env, tmp_path / "build.log", Limits(build_timeout_s=60, workload_timeout_s=60))
    status = outcome.status.value if outcome else "ok"
    assert status == expected, outcome
    if outcome is not None:
        assert outcome.reason and outcome.error_kind == kind  # the compiler's (or importer's) text is kept, with its kind
    if kind == "import":
        assert "no GPU found" in outcome.reason and outcome.reason.startswith("exception at import")


def test_lazy_compiler_failure_is_one_compile_error_for_every_workload(tmp_path):
    runner, job = _job(tmp_path, "lazy", LAZY_BUILD_FAILURE)
    job.workloads = [w.name for w in job.task.workload]
    runner.run([job])
    records = [json.loads(line) for line in runner.store.path.read_text().splitlines()]
    assert {r["workload"] for r in records} == set(job.workloads)
    assert {r["status"] for r in records} == {"compile_error"}
    assert "Error building extension" in records[0]["reason"]


def test_build_failure_is_recognised_through_the_exception_chain():
    try:
        try:
            raise subprocess.CalledProcessError(1, ["ninja"])
        except subprocess.CalledProcessError as exc:
            raise RuntimeError("something wrapped it") from exc
    except RuntimeError as wrapped:
        assert classify_exception(wrapped) == 1
    assert classify_exception(RuntimeError("Error building extension 'x'")) == 1
    assert classify_exception(RuntimeError("CUDA error: an illegal memory access was encountered")) == 0
    assert classify_exception(ValueError("Error building extension")) == 0
    assert import_failure_kind(SyntaxError("x")) == "compile" and import_failure_kind(ImportError("no module")) == "import"
