"""The shipped benchmark data: every task, the catalogue and every corpus label validate, and every
reference and Triton kernel is correct on its task's smoke workload (CPU, Triton interpreter)."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest
from torch.utils.cpp_extension import COMMON_NVCC_FLAGS
from d2k_profile import interpreter
from d2k_profile.checks import tolerance_for
from d2k_profile.correctness import compare_all
from d2k_profile.loader import load_module
from d2k_spec.catalogue import load_catalogue
from d2k_spec.inputs_check import check_inputs, load_reference
from d2k_spec.labels import check_labels, labelled_folders
from d2k_spec.task import check_task, load_tasks, task_folders

REPO = Path(__file__).resolve().parents[2]
PILOTS = ("softmax", "layernorm", "gemm_bf16")
CATALOGUE = load_catalogue()
TASKS = load_tasks(REPO / "tasks", CATALOGUE)


WILD = REPO / "corpus" / "wild"  # vendored public kernels: read-only analyzer data, never built or run here


def hand_written(paths):
    return [p for p in paths if WILD not in p.parents]


def submission_folders() -> list[Path]:
    return sorted({p.parent for p in itertools.chain((REPO / "tasks").glob("*/expert/submission.py"),
                                                     (REPO / "corpus").glob("*/*/submission.py"))})


def is_cuda(folder: Path) -> bool:
    return any(folder.glob("*.cu"))


def task_of(folder: Path) -> str:
    return folder.parent.name  # tasks/<task>/expert and corpus/<task>/<variant> alike


def test_catalogue_has_the_fixed_properties():
    fixed = ("online_softmax welford split_k smem_tiling register_tiling multistage_pipeline async_copy "
             "persistent_kernel tile_swizzle kernel_fusion block_reduction warp_specialization thread_block_cluster "
             "atomics tensor_cores vectorized_access coalesced_access bank_conflict_avoidance warp_shuffle_reduction "
             "loop_unrolling autotuning").split()
    assert len(CATALOGUE) >= 35
    assert all(p in CATALOGUE for p in fixed)
    assert {CATALOGUE[p].level for p in ("online_softmax", "welford", "split_k")} == {"L1"}
    assert not CATALOGUE["vectorized_access"].applies_to("triton")


def test_pilot_tasks_are_complete():
    assert set(PILOTS) <= set(TASKS)
    for tid in PILOTS:
        task = TASKS[tid]
        assert len(task.workloads) == 4, tid
        assert 5 <= len(task.design) <= 9, tid
        assert {d.level for d in task.design} >= {"L2", "L3"}, tid


@pytest.mark.parametrize("folder", task_folders(REPO / "tasks"), ids=lambda p: p.name)
def test_task_validates_and_builds(folder):
    task, problems = check_task(folder, CATALOGUE)
    assert problems == []
    assert check_inputs(task) == []


@pytest.mark.parametrize("folder", labelled_folders(REPO / "corpus", REPO / "tasks"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_labels_validate(folder):
    labels, problems = check_labels(folder, CATALOGUE)
    assert problems == []
    assert labels.kernel


def test_every_submission_is_labelled():
    assert set(submission_folders()) == set(hand_written(labelled_folders(REPO / "corpus", REPO / "tasks")))
    for tid in PILOTS:
        variants = [f for f in submission_folders() if f.parent.name == tid]
        assert len(variants) >= 5, tid
        assert any(is_cuda(f) for f in variants) and any(not is_cuda(f) for f in variants), tid


TRITON_SUBMISSIONS = [f for f in submission_folders() if not is_cuda(f)]


@pytest.mark.parametrize("folder", TRITON_SUBMISSIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_triton_submission_correct_on_smoke(folder):
    interpreter.apply()
    task = TASKS[task_of(folder)]
    ref = load_reference(task)
    sub = load_module(folder, f"sub_{folder.parent.name}_{folder.name}")
    smoke = task.smoke
    tol = tolerance_for(task, smoke)
    for seed in smoke.seeds:
        inputs = ref.make_inputs(smoke, seed, "cpu")
        expected = ref.reference(*inputs)
        check = compare_all(sub.run(*inputs), expected, tol)
        assert check.ok, f"seed {seed}: {check.reason}"


# what torch.utils.cpp_extension passes to nvcc for every load_inline build (half/bf16 implicit
# conversions and operators off): a kernel that compiles without these flags may not build there
TORCH_EXTENSION_FLAGS = list(COMMON_NVCC_FLAGS)
# the corpus, the experts, and the candidate kernels the benchmarks sweep before one enters an expert
CUDA_SOURCES = (hand_written(sorted((REPO / "corpus").rglob("*.cu"))) + sorted((REPO / "tasks").rglob("*.cu"))
                + sorted((REPO / "benchmarks").glob("*.cu")))


@pytest.mark.parametrize("source", CUDA_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_cuda_source_compiles_for_sm90(source, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found: CUDA compile checks need the CUDA toolkit")
    proc = subprocess.run([nvcc, "-arch=sm_90", "-O3", *TORCH_EXTENSION_FLAGS, "-c", str(source), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
