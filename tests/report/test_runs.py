"""Run loading, per-task outcomes from result files, incomplete runs, discovery and the CLI's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from d2k_profile.results import Record, Status
from d2k_report import build_report
from d2k_report.report import ReportError
from d2k_report.bootstrap import BootstrapConfig
from d2k_report.cli import main
from d2k_report.discovery import proposed_items
from d2k_report.outcomes import TaskOutcome, apply_profile
from d2k_report.runs import load_run
from d2k_spec.catalogue import load_catalogue
from d2k_spec.schema import SpecError
from d2k_spec.task import load_tasks

TASKS = load_tasks()
FAST = BootstrapConfig(n_boot=50)


def record(task: str, workload: str, speedup: float, vs_expert: float | None, role: str = "submission",
           path: str = "/x/runs/r/softmax", status: Status = Status.OK) -> Record:
    return Record(task=task, submission=Path(path).name, path=path, role=role, workload=workload, mode="eager",
                  source_hash="h", status=status, speedup_vs_reference=speedup, speedup_vs_expert=vs_expert)


def outcome(task_id: str, records: list[Record], folder: str = "/x/runs/r/softmax") -> TaskOutcome:
    out = TaskOutcome(task_id, submitted=True)
    apply_profile(out, records, Path(folder), TASKS[task_id])
    return out


def all_workloads(task_id: str, speedup: float, vs_expert: float | None, **kw) -> list[Record]:
    return [record(task_id, w.name, speedup, vs_expert, **kw) for w in TASKS[task_id].workloads]


@pytest.mark.parametrize("speedup, vs_expert, expected", [
    (1.2, 1.0, 3),    # faster than the reference and at the expert's speed
    (1.2, 0.95, 3),   # tie: exactly 0.95 x the expert's speed earns the bonus
    (1.0, 0.5, 1),    # tie: a speedup of exactly 1 earns no bonus
    (0.5, 0.96, 2),   # slower than the reference, near the expert
])
def test_performance_score_from_records(speedup, vs_expert, expected):
    assert outcome("softmax", all_workloads("softmax", speedup, vs_expert)).performance_score == expected


@pytest.mark.parametrize("speedup, expected", [(1.2, 3), (0.96, 2), (0.9, 1)])
def test_reference_is_expert_bonuses_are_independent(speedup, expected):
    # gemm_bf16: the reference is cuBLAS, the expert library; speed vs expert = speedup vs reference.
    assert TASKS["gemm_bf16"].baseline.reference_is_expert
    recs = all_workloads("gemm_bf16", speedup, None, path="/x/runs/r/gemm_bf16")
    assert outcome("gemm_bf16", recs, "/x/runs/r/gemm_bf16").performance_score == expected


def test_missing_workload_or_failed_workload_is_incorrect():
    recs = all_workloads("softmax", 2.0, 1.0)
    out = outcome("softmax", recs[:-1])
    assert not out.correct and out.performance_score == 0 and "counts as incorrect" in out.notes[-1]
    recs[0] = record("softmax", recs[0].workload, 2.0, 1.0, status=Status.INCORRECT)
    assert outcome("softmax", recs).performance_score == 0


def test_expert_speedup_and_submission_matching_by_path():
    recs = all_workloads("softmax", 2.0, 1.0) + all_workloads("softmax", 0.5, 0.2, path="/y/corpus/softmax/other")
    recs += all_workloads("softmax", 3.0, 1.0, role="expert", path="/x/tasks/softmax/expert")
    out = outcome("softmax", recs, "/x/runs/r/softmax")
    assert out.speedup == pytest.approx(2.0) and out.expert_speedup == pytest.approx(3.0)
    assert outcome("softmax", recs, "/elsewhere/corpus/softmax/other").speedup == pytest.approx(0.5)


def write_run(root: Path, name: str, condition: str, tasks: list[str], *, profile: bool = True, extra: str = "") -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / "run.toml").write_text(f'model = "m"\ncondition = "{condition}"\n{extra}')
    lines = []
    for t in tasks:
        (run / t).mkdir()
        (run / t / "submission.py").write_text("def run(x):\n    return x\n")
        speed = 2.0 if condition == "guided" else 1.0
        lines += [r.to_json() for r in all_workloads(t, speed, 1.0, path=str(run / t))]
    if profile:
        (run / "profile.jsonl").write_text("\n".join(lines) + "\n")
    return run


def test_incomplete_runs_never_crash_and_say_so(tmp_path):
    g = write_run(tmp_path, "g", "guided", ["softmax", "layernorm"], profile=True)
    u = write_run(tmp_path, "u", "unguided", ["softmax"], profile=False,
                  extra='[tasks]\ngemm_bf16 = "../nowhere"\n')
    report = build_report([g, u], config=FAST, suite_size=26)  # a partial checkout scored against the full suite
    assert [(p.guided, p.unguided) for p in report.pairs] == [("g", "u")]  # paired automatically
    text = " ".join(report.notes)
    assert "u: no profile results" in text and "u: no analyze results" in text and "gemm_bf16" in text
    assert report.problems == ["u: [tasks] gemm_bf16 = '../nowhere': no such folder; the task counts as missing"]
    assert "g: 2 of 26 tasks submitted, 24 missing" in text
    head = {r["row"]: r for r in report.table("headline").rows}
    assert head["g"]["performance_score"] == pytest.approx(2 * 3 / 26)
    assert head["u"]["performance_score"] == 0 and head["u"]["geomean_speedup"] is None
    assert head["g"]["impl_all"] is None  # no analyze results: no implementation score
    per_task = {(r["task"], r["run"]): r for r in report.table("per_task").rows}
    assert per_task[("softmax", "u")]["status"] == "not profiled"
    assert per_task[("layernorm", "u")]["status"] == "missing"


def test_run_toml_is_validated(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "run.toml").write_text('model = "m"\ncondition = "sometimes"\nbudgett = 3\n')
    with pytest.raises(SpecError) as exc:
        load_run(tmp_path / "r", set())
    messages = str(exc.value)
    assert "condition: expected one of 'guided' | 'unguided'" in messages and "budgett: unknown key" in messages


def test_pointer_entries_resolve_relative_to_run_toml(tmp_path):
    sub = tmp_path / "corpus" / "softmax" / "v1"
    sub.mkdir(parents=True)
    (sub / "submission.py").write_text("")
    run = write_run(tmp_path / "runs", "r", "guided", [], extra='[tasks]\nsoftmax = "../../corpus/softmax/v1"\n')
    assert load_run(run, set(TASKS)).submissions == {"softmax": sub}


def test_discovery_is_a_keyword_match():
    task = TASKS["softmax"]
    found = proposed_items("We use an Online-Softmax pass and warp shuffle reductions.", task, load_catalogue())
    assert found["online_softmax"] and found["warp_shuffle_reduction"] and not found["exp2"]


def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty")]) == 2
    assert "not a run" in capsys.readouterr().err
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    assert main([str(g), "--pair", "g", "zz", "--out", str(tmp_path / "o"), "--bootstrap", "20"]) == 2
    err = capsys.readouterr().err
    assert "no run named 'zz'" in err and "Traceback" not in err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "run.toml").write_text("model = \n")
    assert main([str(tmp_path / "bad")]) == 2
    assert "TOML syntax error" in capsys.readouterr().err


def test_cli_writes_every_output(tmp_path, capsys):
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    u = write_run(tmp_path, "u", "unguided", ["softmax"])
    out = tmp_path / "o"
    assert main([str(g), str(u), "--out", str(out), "--bootstrap", "50"]) == 0
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert names == sorted(["report.html", "report.md", "report.json", "coverage.csv", "headline.csv",
                            "per_task.csv", "design_items.csv", "properties.csv"])
    doc = json.loads((out / "report.json").read_text())
    assert doc["pairs"] == [{"guided": "g", "unguided": "u"}] and doc["bootstrap"]["n_boot"] == 50
    folders = sum(1 for p in (Path(__file__).resolve().parents[2] / "tasks").iterdir() if (p / "task.toml").is_file())
    assert doc["suite_size"] == folders >= 3  # the task folders of the suite in effect, not a hard-coded 26
    # Re-running into the same folder just works (the files are the tool's own) ...
    assert main([str(g), str(u), "--out", str(out), "--bootstrap", "50"]) == 0
    # ... but a file the user edited there is not overwritten without --force.
    (out / "report.md").write_text("my notes\n")
    assert main([str(g), str(u), "--out", str(out), "--bootstrap", "50"]) == 2
    assert "report.md exists and was not written by d2k" in capsys.readouterr().err
    assert (out / "report.md").read_text() == "my notes\n"
    assert main([str(g), str(u), "--out", str(out), "--bootstrap", "50", "--force"]) == 0
    assert "my notes" not in (out / "report.md").read_text()


def test_cli_output_missing_folder_is_created_and_problems_exit_1(tmp_path, capsys):
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    with (g / "profile.jsonl").open("a") as fh:
        fh.write("this is not a record\n")
    out = tmp_path / "deep" / "er" / "o"
    assert main([str(g), "--out", str(out), "--bootstrap", "0"]) == 1
    err = capsys.readouterr().err
    assert "1 line(s) are not d2k-profile records" in err and "1 input problem" in err
    assert (out / "report.html").is_file()


def test_cli_never_writes_over_a_run_input(tmp_path, capsys):
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    (g / "report.md").write_text("kept")
    from d2k_spec.outputs import write_text

    write_text(g / "report.md", "a d2k file, but inside the run folder")  # even a tool-written input
    assert main([str(g), "--out", str(g), "--bootstrap", "0", "--force"]) == 2
    assert "one of the analysed inputs" in capsys.readouterr().err


def test_design_notes_add_discovery_columns(tmp_path):
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    (g / "softmax" / "design.md").write_text("Plan: online softmax, then exp2.\n")
    u = write_run(tmp_path, "u", "unguided", ["softmax"])
    report = build_report([g, u], config=FAST)
    items = report.table("design_items")
    assert any(c.key == "proposed:g" for c in items.columns)
    assert not any(c.key == "proposed:u" for c in items.columns)
    assert any(c.key == "discovery:g" for c in report.table("properties").columns)
    assert any("keyword match" in n for n in report.notes)


def _timed_on(run: Path, device: str | None) -> None:
    """Rewrite a run's profile records as timed on ``device`` (None: no GPU timing, a CPU check)."""
    from d2k_profile.results import Timing, record_from_dict

    lines = []
    for line in (run / "profile.jsonl").read_text().splitlines():
        r = record_from_dict(json.loads(line))
        if device is not None:
            r.device = device
            r.timing = Timing(median_ms=1.0, iqr_ms=0.0, min_ms=1.0, mean_ms=1.0, rse=0.0, n=10)
        lines.append(r.to_json())
    (run / "profile.jsonl").write_text("\n".join(lines) + "\n")


def test_a_pair_timed_on_two_device_models_is_refused_unless_asked(tmp_path, capsys):
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    u = write_run(tmp_path, "u", "unguided", ["softmax"])
    _timed_on(g, "NVIDIA H200")
    _timed_on(u, "NVIDIA A100-SXM4-80GB")
    with pytest.raises(ReportError, match="different device models .*NVIDIA H200.*A100"):
        build_report([g, u], config=FAST)
    assert main([str(g), str(u), "--out", str(tmp_path / "o"), "--bootstrap", "20"]) == 2
    err = capsys.readouterr().err
    assert "--mixed-devices" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    report = build_report([g, u], config=FAST, mixed_devices=True)
    assert any("compared anyway (--mixed-devices)" in n for n in report.notes)
    assert main([str(g), str(u), "--out", str(tmp_path / "o2"), "--bootstrap", "20", "--mixed-devices"]) == 0


def test_one_device_model_or_cpu_checks_pair_as_before(tmp_path):
    g = write_run(tmp_path, "g", "guided", ["softmax"])
    u = write_run(tmp_path, "u", "unguided", ["softmax"])
    _timed_on(g, "NVIDIA H200")
    _timed_on(u, "NVIDIA H200")
    assert [(p.guided, p.unguided) for p in build_report([g, u], config=FAST).pairs] == [("g", "u")]
    c = write_run(tmp_path / "cpu", "c", "unguided", ["softmax"])  # smoke checks on a CPU: no device model
    assert [(p.guided, p.unguided) for p in build_report([g, c], config=FAST).pairs] == [("g", "c")]
    _timed_on(c, "cpu")  # a timing taken on the CPU names no GPU model either
    assert [(p.guided, p.unguided) for p in build_report([g, c], config=FAST).pairs] == [("g", "c")]
