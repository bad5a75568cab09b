"""Work units and the content-addressed store (CPU): keys that follow content, atomic validated
files, a store shared between runs, records restored on resume, and the split between a lost
judge (retried on another GPU, never stored) and a failure of the submission (stored, not retried)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from profile_paths import SUBMISSIONS, TOY_TASK

from d2k_profile import cli, environment, runner as runner_mod
from d2k_profile.discovery import discover
from d2k_profile.native import NativeModule
from d2k_profile.results import JUDGE_LOST, Outcome, ResultStore, Status, read_lines
from d2k_profile.store import UnitStore
from d2k_profile.units import WorkUnit, task_hash
from d2k_spec.task import load_task

UNIT = WorkUnit(source_hash="a" * 16, role="submission", task_hash="b" * 16, workload="w", config_hash="c" * 16,
                device_model="NVIDIA H200", toolchain="torch=2.11")


def test_every_field_enters_the_key():
    keys = {UNIT.key}
    for f in dataclasses.fields(WorkUnit):
        keys.add(dataclasses.replace(UNIT, **{f.name: getattr(UNIT, f.name) + "x"}).key)
    assert len(keys) == 1 + len(dataclasses.fields(WorkUnit))
    assert WorkUnit(**dataclasses.asdict(UNIT)).key == UNIT.key  # content, not identity


def test_task_hash_follows_the_spec_and_the_expert(tmp_path):
    task_dir = tmp_path / "toy_softmax"
    shutil.copytree(TOY_TASK, task_dir)
    before = task_hash(load_task(task_dir))
    assert task_hash(load_task(task_dir)) == before
    (task_dir / "reference.py").write_text((task_dir / "reference.py").read_text() + "\n# edited\n")
    after_ref = task_hash(load_task(task_dir))
    expert = next(p for p in (task_dir / "expert").rglob("*.py"))
    expert.write_text(expert.read_text() + "\n# edited\n")
    assert len({before, after_ref, task_hash(load_task(task_dir))}) == 3


def test_store_round_trip_and_what_does_not_validate(tmp_path):
    store = UnitStore(tmp_path)
    outcome = Outcome(status=Status.INCORRECT, reason="max abs err 3.0", error_kind="check", max_abs_err=3.0, notes=["n"])
    path = store.put(UNIT, outcome)
    assert path.parent.name == UNIT.key[:2] and not list(tmp_path.rglob("*.tmp"))
    assert store.get(UNIT) == outcome
    other = dataclasses.replace(UNIT, workload="other")
    shutil.copy(path, store.path(other.key).parent.mkdir(parents=True, exist_ok=True) or store.path(other.key))
    assert store.get(other) is None  # a file under another unit's name is not trusted
    text = path.read_text()
    path.write_text(text[: len(text) // 2])  # torn
    assert store.get(UNIT) is None
    data = json.loads(text)
    data["outcome"]["injected"] = 1  # a key the record schema does not have
    path.write_text(json.dumps(data))
    assert store.get(UNIT) is None


def _toy(out: Path, *extra: str) -> int:
    return cli.main([str(TOY_TASK), "--cpu", "--jobs", "1", "--out", str(out), *extra])


def test_a_shared_store_skips_units_finished_by_another_run(tmp_path, capsys):
    shared = tmp_path / "store"
    assert _toy(tmp_path / "a", "--store", str(shared)) == 0
    first = read_lines(tmp_path / "a" / "results.jsonl")
    assert len(first) == 1 and first[0]["status"] == "ok" and len(list(shared.rglob("*.json"))) == 1
    capsys.readouterr()
    assert _toy(tmp_path / "b", "--store", str(shared)) == 0
    assert "1 already done" in capsys.readouterr().out
    second = read_lines(tmp_path / "b" / "results.jsonl")
    assert not (tmp_path / "b" / "logs").exists()  # no judge ran
    drop = ("finished_at", "key")
    assert [{k: v for k, v in r.items() if k not in drop} for r in second] == [{k: v for k, v in r.items() if k not in drop} for r in first]
    assert _toy(tmp_path / "c") == 0  # without --store (and --resume) a run measures afresh
    assert (tmp_path / "c" / "logs").exists()


def test_resume_restores_a_record_the_store_has_but_the_results_file_lost(tmp_path, capsys):
    out = tmp_path / "out"
    assert _toy(out) == 0
    results = out / "results.jsonl"
    kept = read_lines(results)
    results.write_text("")  # a kill between the store's write and the results line
    shutil.rmtree(out / "logs")
    capsys.readouterr()
    assert _toy(out, "--resume") == 0
    assert "1 already done" in capsys.readouterr().out and not (out / "logs").exists()
    restored = read_lines(results)
    assert [r["key"] for r in restored] == [r["key"] for r in kept] and restored[0]["status"] == "ok"
    assert _toy(out, "--resume") == 0 and len(read_lines(results)) == 1  # nothing duplicated


class _FakeJudges:
    """Stands in for isolation.run_judge: a script of outcomes per call, and the slots that served."""

    def __init__(self, script: list[Status | str], delay_s: float = 0.0):
        self.script, self.calls, self.delay_s = list(script), [], delay_s

    def __call__(self, spec, env, log, limits, on_result, info=None):
        import time

        self.calls.append(env.get("CUDA_VISIBLE_DEVICES"))
        time.sleep(self.delay_s)
        what = self.script.pop(0)
        for name in spec.workloads:
            if what == JUDGE_LOST:
                on_result(name, Outcome(status=Status.RUNTIME_ERROR, reason="judge killed by SIGKILL", error_kind=JUDGE_LOST))
            else:
                on_result(name, Outcome(status=what, reason="" if what == Status.OK else "wrong", error_kind="" if what == Status.OK else "check"))
        return {}


def _runner(tmp_path: Path, monkeypatch, script, gpus=("0", "1"), retries=1):
    fake = _FakeJudges(script)
    monkeypatch.setattr(runner_mod, "run_judge", fake)
    monkeypatch.setattr(runner_mod.native, "prepare", lambda cuda: NativeModule(None, cuda))
    monkeypatch.setattr(environment, "smi_value", lambda q, t: "NVIDIA H200")
    opts = runner_mod.RunOptions(out=tmp_path, gpus=list(gpus), prebuild=False, sandbox=False, retries=retries)
    store = ResultStore(tmp_path / "results.jsonl", resume=False)
    run = runner_mod.Runner(opts, store, True, lambda rec: None)
    subs = discover([str(SUBMISSIONS / "honest_torch")], tmp_path, task=str(TOY_TASK))
    jobs, _ = runner_mod.plan(subs, opts, True, store)
    run.run(jobs)
    return fake, read_lines(store.path), run


def test_a_lost_judge_is_retried_on_the_other_gpu_and_only_the_retry_is_stored(tmp_path, monkeypatch):
    fake, records, run = _runner(tmp_path, monkeypatch, [JUDGE_LOST] + [Status.OK] * 8)
    n = len(load_task(TOY_TASK).workloads)
    assert fake.calls[0] != fake.calls[1] and len(fake.calls) == 1 + n  # each lost workload again, elsewhere
    assert len(records) == n and {r["status"] for r in records} == {"ok"}
    assert len({r["key"] for r in records}) == n
    assert len(list(run.units.root.rglob("*.json"))) == n


def test_retries_exhausted_the_loss_is_recorded_but_not_stored(tmp_path, monkeypatch):
    fake, records, run = _runner(tmp_path, monkeypatch, [JUDGE_LOST] * 8, retries=0)
    assert len(fake.calls) == 1
    assert {(r["status"], r["error_kind"]) for r in records} == {("runtime_error", JUDGE_LOST)}
    assert not list(run.units.root.rglob("*.json"))  # a later --resume runs these units again


def test_a_failure_of_the_submission_is_its_result_never_retried(tmp_path, monkeypatch):
    fake, records, run = _runner(tmp_path, monkeypatch, [Status.INCORRECT] * 8)
    assert len(fake.calls) == 1
    assert {r["status"] for r in records} == {"incorrect"}
    assert len(list(run.units.root.rglob("*.json"))) == len(records)


@pytest.mark.parametrize("bad", ["-1", "x"])
def test_bad_retries_is_a_usage_error(tmp_path, capsys, bad):
    with pytest.raises(SystemExit) as exc:
        _toy(tmp_path / "o", "--retries", bad)
    assert exc.value.code == 2 and "--retries" in capsys.readouterr().err


def _health_runner(tmp_path: Path, monkeypatch, script, verdicts, gpus=("0", "1")):
    """A runner whose health check answers from ``verdicts[slot]`` (a list, last value repeated)."""
    from d2k_profile.health import Health

    fake = _FakeJudges(script, delay_s=0.5)  # a job outlasts the other slot's three quick failed checks
    monkeypatch.setattr(runner_mod, "run_judge", fake)
    monkeypatch.setattr(runner_mod.native, "prepare", lambda cuda: NativeModule(None, cuda))
    monkeypatch.setattr(environment, "smi_value", lambda q, t: "NVIDIA H200")
    opts = runner_mod.RunOptions(out=tmp_path, gpus=list(gpus), prebuild=False, sandbox=False, health_every=1)
    store = ResultStore(tmp_path / "results.jsonl", resume=False)
    run = runner_mod.Runner(opts, store, True, lambda rec: None)
    checks, said = [], []

    def check(slot):
        answers = verdicts[slot]
        checks.append(slot)
        ok = answers.pop(0) if len(answers) > 1 else answers[0]
        return Health(ok, 1.0 if ok else None, "" if ok else "wrong result")

    run.health_check, run.say, run.health.retry_s = check, said.append, 0.0
    subs = discover([str(SUBMISSIONS / "honest_torch"), str(SUBMISSIONS / "modelnew")], tmp_path, task=str(TOY_TASK))
    jobs, _ = runner_mod.plan(subs, opts, True, store)
    run.run(jobs)
    return fake, read_lines(store.path), run, checks, said


def test_a_gpu_failing_its_health_checks_leaves_the_pool(tmp_path, monkeypatch):
    fake, records, run, checks, said = _health_runner(tmp_path, monkeypatch, [Status.OK] * 8, {"0": [True], "1": [False]})
    assert set(fake.calls) == {"0"}  # every job ran on the healthy GPU
    assert checks.count("1") == 3 and len(said) == 1 and "GPU 1 taken out of the pool" in said[0]
    assert [(h["slot"], h["ok"]) for h in run.health_log if h["slot"] == "1"] == [("1", False)] * 3  # environment.json's record
    assert {r["status"] for r in records} == {"ok"} and len(records) == 2 * len(load_task(TOY_TASK).workloads)


def test_no_healthy_gpu_left_records_the_rest_as_not_run_and_stores_nothing(tmp_path, monkeypatch):
    fake, records, run, checks, said = _health_runner(tmp_path, monkeypatch, [Status.OK] * 8, {"0": [True, False], "1": [False]})
    assert len(fake.calls) == 1  # slot 0 served one job, then failed its checks
    statuses = [(r["status"], r["error_kind"]) for r in records]
    assert statuses.count(("skipped", "no_device")) == len(load_task(TOY_TASK).workloads)
    assert len(list(run.units.root.rglob("*.json"))) == len(load_task(TOY_TASK).workloads)  # only what ran


def test_a_check_that_got_slow_fails():
    from d2k_profile.health import Health, SlotHealth

    h = SlotHealth(every=2, slow_factor=5.0)
    assert h.due("0") and h.record("0", Health(True, 1.0)).ok and not h.due("0")
    h.served("0"), h.served("0")
    assert h.due("0")
    slow = h.record("0", Health(True, 6.0))
    assert not slow.ok and "more than 5x" in slow.reason and h.failures["0"] == 1
    h.lost_judge("1")
    assert h.due("1")


def test_the_health_probe_runs_here():
    from d2k_profile.health import check

    h = check(None)
    assert h.ok and h.ms is not None and h.ms > 0, h.reason


def test_an_outcome_decided_before_a_gpu_was_chosen_is_stored_under_the_runs_model(tmp_path, monkeypatch):
    """A pre-build failure on a GPU run is emitted with no slot: it must be stored, not crash the run."""
    monkeypatch.setattr(runner_mod.native, "prepare", lambda cuda: NativeModule(None, cuda))
    monkeypatch.setattr(environment, "smi_value", lambda q, t: "NVIDIA H200")
    opts = runner_mod.RunOptions(out=tmp_path, gpus=["0", "1"], prebuild=False, sandbox=False)
    store = ResultStore(tmp_path / "results.jsonl", resume=False)
    run = runner_mod.Runner(opts, store, True, lambda rec: None)
    subs = discover([str(SUBMISSIONS / "honest_torch")], tmp_path, task=str(TOY_TASK))
    jobs, _ = runner_mod.plan(subs, opts, True, store)
    run.emit(jobs[0], jobs[0].workloads[0], Outcome(status=Status.COMPILE_ERROR, reason="x", error_kind="compile"))
    (stored,) = [json.loads(p.read_text()) for p in run.units.root.rglob("*.json")]
    assert stored["unit"]["device_model"] == "NVIDIA H200" and stored["outcome"]["status"] == "compile_error"
