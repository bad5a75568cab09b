"""The run metrics are defined once (d2k_spec.run_metrics) and d2k-profile's summary and d2k-report
agree on them, including for a --workloads subset (the case where they used to disagree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from d2k_profile.results import Record, Status
from d2k_profile.summary import summarize
from d2k_report.outcomes import TaskOutcome, apply_profile
from d2k_spec import run_metrics as rm
from d2k_spec.task import load_tasks

TASKS = load_tasks()
SOFTMAX = TASKS["softmax"]
TIMED = [w.name for w in SOFTMAX.workloads]


def results(ok: dict[str, bool], speedup: float = 2.0, vs_expert: float | None = 1.0) -> dict[str, rm.WorkloadResult]:
    return {w: rm.WorkloadResult(w, good, speedup, vs_expert) for w, good in ok.items()}


def test_correct_means_ok_on_every_required_workload():
    m = rm.task_metrics(results({w: True for w in TIMED}), "task", TIMED)
    assert m.correct and m.task_correct and m.ok == 4 and m.not_run == ()
    assert m.speedup_vs_reference == pytest.approx(2.0) and m.performance_score == 3
    m = rm.task_metrics(results({**{w: True for w in TIMED}, TIMED[2]: False}), "task", TIMED)
    assert not m.correct and m.performance_score == 0 and m.speedup_vs_reference is None


def test_a_workload_without_a_result_leaves_correctness_unproven():
    m = rm.task_metrics(results({TIMED[0]: True}), "task", TIMED)
    assert not m.correct and m.ok == 1 and m.not_run == tuple(TIMED[1:]) and m.performance_score == 0


def test_scope_smoke_check_versus_task():
    assert rm.check_scope(TIMED, "smoke", ["smoke"], timed=False) == ("smoke", ("smoke",))
    assert rm.check_scope(TIMED, "smoke", ["smoke"], timed=True) == ("smoke", ("smoke",))  # --smoke on a GPU
    assert rm.check_scope(TIMED, "smoke", [TIMED[0]], timed=True) == ("task", tuple(TIMED))
    m = rm.task_metrics(results({"smoke": True}, None, None), "smoke", ["smoke"])
    assert m.correct and not m.task_correct and m.performance_score is None


def test_expert_and_reference_is_expert_bonuses():
    ok = {w: True for w in TIMED}
    assert rm.task_metrics(results(ok, 0.9, None), "task", TIMED, is_expert=True).performance_score == 2
    assert rm.task_metrics(results(ok, 0.96, None), "task", TIMED, reference_is_expert=True).performance_score == 2
    assert rm.task_metrics(results(ok, 1.2, None), "task", TIMED).performance_score == 2  # expert not timed: no bonus


def test_run_level_metrics_over_the_suite():
    assert rm.run_performance_score([3, 1, None], 4) == 1.0
    assert rm.fast_p([(True, 1.5), (True, 1.0), (False, 9.0)], 1.0, 4) == 0.25
    assert rm.geomean([2.0, 8.0]) == pytest.approx(4.0) and rm.geomean([]) is None and rm.geomean([1.0, 0.0]) is None


def test_suite_size_is_the_task_folders(tmp_path):
    root = Path(SOFTMAX.path).parent
    folders = [p for p in root.iterdir() if (p / "task.toml").is_file()]
    assert len(folders) >= 3 and rm.suite_size(root) == len(TASKS) == len(folders)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "task.toml").write_text("")
    (tmp_path / "not_a_task").mkdir()
    assert rm.suite_size(tmp_path) == 2 and rm.suite_size(tmp_path / "missing") == 0


def record(workload: str, status: Status = Status.OK, mode: str = "eager") -> Record:
    return Record(task="softmax", submission="mine", path="/r/softmax", role="submission", workload=workload,
                  mode=mode, source_hash="h", status=status, speedup_vs_reference=1.5, speedup_vs_expert=1.0)


@pytest.mark.parametrize("recorded, correct", [(TIMED, True), (TIMED[:1], False), (TIMED[:3], False)])
def test_profile_summary_and_report_agree(recorded, correct):
    """A --workloads subset is not a correct submission, in d2k-profile's summary and in d2k-report alike."""
    recs = [record(w) for w in recorded]
    [row] = summarize(recs, tasks={"softmax": SOFTMAX})
    out = TaskOutcome("softmax", submitted=True)
    apply_profile(out, recs, Path("/r/softmax"), SOFTMAX)
    assert row.correct is correct and out.correct is correct
    assert row.performance_score == out.performance_score == (3 if correct else 0)
    assert (row.ok, row.workloads) == (out.workloads_ok, out.workloads_total) == (len(recorded), 4)
    if not correct:
        assert row.first_problem.startswith("not run: ")


def test_cpu_smoke_rows_show_no_score_whatever_their_status():
    rows = summarize([record("smoke", Status.OK, "cpu")], tasks={"softmax": SOFTMAX})
    skipped = summarize([record("smoke", Status.SKIPPED, "cpu")], tasks={"softmax": SOFTMAX})
    assert rows[0].performance_score is None and skipped[0].performance_score is None  # shown as "-"
    assert rows[0].correct and not skipped[0].correct
