"""The native loop end to end against a local fake API in both wire formats: a scripted agent
writes a Triton kernel, tests it (Triton interpreter on the CPU), benches it (skipped on the
CPU, with the message) and submits; then the final evaluation and d2k-report."""

from __future__ import annotations

import json
from pathlib import Path

from agent_helpers import KERNEL, config, machine

from d2k_agent import evaluation, final, runner, snapshots, transcript
from d2k_agent.layout import RunDir


def _tool_texts(run: RunDir, task: str = "softmax", attempt: int = 1) -> dict[str, str]:
    recs = transcript.read(run.task(task).attempt(attempt) / transcript.TRANSCRIPT)
    out = {}
    for r in recs:
        if r["type"] == "response":
            calls = r["message"]["tool_calls"]
        if r["type"] == "tools":
            for c, res in zip(calls, r["results"]):
                out[c["name"]] = res["text"]
    return out


def test_anthropic_wire_full_run_with_final_evaluation_and_report(tmp_path, api, keys):
    out = tmp_path / "runs" / "fake"
    cfg = config(Path(f"{out}-guided"), api)
    events: list[str] = []
    m = machine(tmp_path)
    assert m.eval_pool().deferred  # no GPU reserved for evaluations: they wait for the agent loops
    [res] = runner.execute([cfg], m, lambda kind, data: events.append(kind))
    assert res.status == "finished", res.errors
    assert "evaluate" in events and events.index("evaluate") > events.index("finished"), events  # timed after the agent loop
    assert res.record["evaluation"]["profile"]["status"] == "done"  # the returned record is the re-signed one
    run = RunDir(Path(f"{out}-guided"))
    rec, why = final.validate(run.task("softmax"))
    assert why == ""
    assert (rec["end_reason"], rec["turns"], rec["submitted"], rec["attempt"]) == ("submitted", 4, True, 1)
    assert len(api.model_requests()) == 4 and all(r["path"] == "/v1/messages" for r in api.model_requests())
    # the tools really ran: the interpreter checked the kernel, bench said why it could not time it
    texts = _tool_texts(run)
    assert texts["test"].startswith("smoke: ok"), texts["test"]
    assert "bench skipped: timing needs a GPU" in texts["bench"]
    assert texts["submit"].startswith("submitted")
    # tool results went back to the model in the Anthropic format
    last = api.model_requests()[-1]["body"]["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["type"] == "tool_result" and "bench skipped" in last["content"][0]["content"]
    # exported submission, final evaluation outside the workspace, assembled result files
    assert (run.root / "softmax" / "submission.py").read_text() == KERNEL
    assert set(rec["files"]) == {"submission.py", "design.md"}
    assert rec["evaluation"]["profile"]["status"] == "done" and rec["evaluation"]["profile"]["ok"] == 1
    assert rec["evaluation"]["analyze"]["status"] == "done"
    prof = [json.loads(x) for x in run.profile.read_text().splitlines()]
    assert [(p["task"], p["workload"], p["status"]) for p in prof] == [("softmax", "smoke", "ok")]
    assert Path(prof[0]["path"]) == run.root / "softmax"
    ana = [json.loads(x) for x in run.analyze.read_text().splitlines()]
    assert any(r["row_type"] == "submission" and r["task"] == "softmax" for r in ana)
    # snapshots: the seeded workspace (turn 0) and the turn that wrote the kernel; tests changed nothing
    hist = snapshots.history(run.task("softmax").snapshots, "attempt-1")
    assert [s.turn for s in hist] == [0, 1]
    # d2k-report reads the run folder
    from d2k_report.runs import load_run

    loaded = load_run(run.root, {"softmax", "layernorm", "gemm_bf16"})
    assert loaded.spec.condition == "guided" and loaded.spec.model == "fake-model" and "softmax" in loaded.submissions
    assert "softmax" in loaded.design_notes and not loaded.notes
    # a killed invocation leaves the profile queued: the next one times it, and the record stays valid
    final.update_evaluation(run.task("softmax"), {"profile": dict(evaluation.QUEUED)})
    updated = runner.run_queued([(cfg, run)], m.eval_pool())
    assert updated[("guided", "softmax")]["evaluation"]["profile"]["status"] == "done"
    rec, why = final.validate(run.task("softmax"))
    assert why == "" and rec["evaluation"]["profile"]["ok"] == 1
    assert runner.run_queued([(cfg, run)], m.eval_pool()) == {}  # nothing left queued


def test_openai_wire_same_script(tmp_path, api, keys):
    cfg = config(tmp_path / "runs" / "oa-unguided", api, adapter="openai-compatible", base_url=api.url + "/v1", arm="unguided", evaluate=False)
    [res] = runner.execute([cfg], machine(tmp_path))
    assert res.status == "finished", res.errors
    rec = res.record
    assert (rec["end_reason"], rec["turns"], rec["submitted"]) == ("submitted", 4, True)
    reqs = api.model_requests()
    assert len(reqs) == 4 and all(r["path"] == "/v1/chat/completions" for r in reqs)
    body = reqs[-1]["body"]
    assert body["messages"][0]["role"] == "system" and body["tools"][0]["type"] == "function"
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    assert any(m["content"].startswith("smoke: ok") for m in tool_msgs)
    assert any("bench skipped: timing needs a GPU" in m["content"] for m in tool_msgs)
    assert rec["evaluation"]["profile"]["status"] == "pending"
    # the unguided arm's first message has no guidance block
    assert "Expert design guidance" not in body["messages"][1]["content"]
