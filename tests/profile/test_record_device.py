"""The ``device`` of a record is the device its own judge ran on. The run's environment info is
filled only when a judge's job has finished, so the records of the first jobs (all of them, for a
single submission: d2k-agent's final evaluation) used to read ``cpu`` on an H200."""

from profile_paths import TOY_TASK

from d2k_profile import native, runner
from d2k_profile.discovery import Submission
from d2k_profile.results import Outcome, ResultStore, Status
from d2k_spec.task import load_task


def _runner(tmp_path, monkeypatch, has_gpu: bool):
    monkeypatch.setattr(runner.native, "prepare", lambda _gpu: native.NativeModule(None, False))
    out = tmp_path / "out"
    records = []
    r = runner.Runner(runner.RunOptions(out=out, sandbox=False, prebuild=False), ResultStore(out / "results.jsonl", resume=False),
                      has_gpu=has_gpu, on_record=records.append)
    task = load_task(TOY_TASK)
    job = runner.Job(Submission(task.id, TOY_TASK, tmp_path, "sub", "submission", "python"), task, ["w1", "w2"], "h")
    return r, job, records


def _fake_judge(name: str | None):
    def run_judge(spec, env, log, limits, on_result, info=None):
        info = {} if info is None else info
        info.update({"python": "3.12"} | ({"name": name} if name else {}))  # the judge's Hello, before any result
        for w in spec.workloads:
            on_result(w, Outcome(status=Status.OK))
        return info
    return run_judge


def test_records_name_their_judges_gpu_from_the_first_job_on(tmp_path, monkeypatch):
    r, job, records = _runner(tmp_path, monkeypatch, has_gpu=True)
    monkeypatch.setattr(runner, "run_judge", _fake_judge("NVIDIA H200"))
    r.run_job(job, "0")
    assert [rec.device for rec in records] == ["NVIDIA H200", "NVIDIA H200"]
    assert r.env_info["name"] == "NVIDIA H200"


def test_a_gpu_run_never_says_cpu_and_a_cpu_run_does(tmp_path, monkeypatch):
    r, job, records = _runner(tmp_path, monkeypatch, has_gpu=True)
    monkeypatch.setattr(runner, "run_judge", _fake_judge(None))  # a judge that died before its Hello
    r.run_job(job, "0")
    assert {rec.device for rec in records} == {"cuda"}
    r, job, records = _runner(tmp_path / "cpu", monkeypatch, has_gpu=False)
    monkeypatch.setattr(runner, "run_judge", _fake_judge(None))
    r.run_job(job, None)
    assert {rec.device for rec in records} == {"cpu"}
