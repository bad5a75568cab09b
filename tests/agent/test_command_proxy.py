"""The command adapter: an external CLI behind the accounting proxy (a fake CLI, a fake API)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from agent_helpers import CLI_ARGS, KERNEL, busy_script, config, machine
from fake_server import Step

from d2k_agent import final, runner, snapshots, transcript
from d2k_agent.budget import Ledger, Limits
from d2k_agent.layout import RunDir
from d2k_agent.proxy import Accounting, AccountingProxy, usage_from_sse

CLI = CLI_ARGS
USAGE = {"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 2000}
PER_TURN = (1000 * 3 + 100 * 15 + 2000 * 0.3) / 1e6  # 0.0051


def test_proxy_budget_is_exact_even_when_the_cli_overshoots(tmp_path, api, keys):
    api.steps = busy_script()
    for s in api.steps:
        s.usage = USAGE
    cfg = config(tmp_path / "p-guided", api, adapter="command", command=CLI, turns=3, evaluate=False)
    [res] = runner.execute([cfg], machine(tmp_path))
    rec = res.record
    assert len(api.model_requests()) == 3  # the CLI wanted 10; the proxy forwarded 3
    assert (rec["turns"], rec["end_reason"], rec["submitted"]) == (3, "turn_budget", False)
    assert rec["cost_usd"] == pytest.approx(3 * PER_TURN)  # usage read from the streamed events
    td = RunDir(tmp_path / "p-guided").task("softmax")
    events = [json.loads(x) for x in (td.attempt(1) / "events.jsonl").read_text().splitlines()]
    assert events[-1]["type"] == "result" and events[-1]["status"] == 400 and "turn_budget" in events[-1]["message"]
    assert sum(e["type"] == "assistant" for e in events) == 3  # the CLI's raw event stream is kept
    log = transcript.read(td.attempt(1) / "transcript.jsonl")
    assert [r["turn"] for r in log if r["type"] == "response"] == [1, 2, 3]
    assert [r["reason"] for r in log if r["type"] == "refused"] == ["turn_budget"]
    # the real key never reached the CLI: the fake API only accepts it from the proxy
    assert all(r["body"]["model"] == "fake-model" for r in api.model_requests())
    # one snapshot per turn that changed the workspace (each appends to log.txt)
    assert [s.turn for s in snapshots.history(td.snapshots, "attempt-1")] == [0, 1, 2, 3]


def test_cli_agent_writes_benches_and_submits_through_the_tool_scripts(tmp_path, api, keys):
    api.steps = [Step([{"name": "editor", "input": {"path": "submission.py", "file_text": KERNEL}}]),
                 Step([{"name": "bench", "input": {}}]), Step([{"name": "submit", "input": {}}]), *busy_script()]
    cfg = config(tmp_path / "s-guided", api, adapter="command", command=CLI, turns=10, evaluate=False)
    [res] = runner.execute([cfg], machine(tmp_path))
    rec = res.record
    assert (rec["end_reason"], rec["submitted"], rec["turns"]) == ("submitted", True, 3)
    assert len(api.model_requests()) == 3  # the call after submit is refused by the proxy
    td = RunDir(tmp_path / "s-guided").task("softmax")
    tools = [r for r in transcript.read(td.attempt(1) / "transcript.jsonl") if r["type"] == "tool"]
    assert [t["name"] for t in tools] == ["bench", "submit"]
    assert "bench skipped: timing needs a GPU" in tools[0]["text"]
    assert (td.root / "submission.py").read_text() == KERNEL and final.validate(td)[1] == ""


def test_proxy_refuses_wrong_token_and_other_models(tmp_path, api):
    acct = Accounting(Limits(turns=5), Ledger(), None, "fake-model")
    log = transcript.Transcript(tmp_path / "t.jsonl")
    proxy = AccountingProxy(api.url, "test-key", acct, log).start()
    try:
        def post(body: dict, token: str) -> tuple[int, dict]:
            req = urllib.request.Request(proxy.url + "/v1/messages", data=json.dumps(body).encode(),
                                         headers={"x-api-key": token, "content-type": "application/json", "anthropic-version": "2023-06-01"})
            try:
                with urllib.request.urlopen(req) as r:
                    return r.status, json.loads(r.read())
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read())

        msg = {"model": "fake-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        assert post(msg, "test-key")[0] == 401  # the real key is not the proxy's token
        status, body = post({**msg, "model": "claude-cheaper"}, proxy.token)
        assert status == 400 and "not this run's model" in body["error"]["message"]
        status, body = post(msg, proxy.token)
        assert status == 200 and body["content"][-1]["name"] == "editor"
        assert acct.turns == 1 and api.model_requests()[-1]["body"]["model"] == "fake-model"
        assert len(api.model_requests()) == 1
    finally:
        proxy.stop()


def test_usage_from_anthropic_and_openai_streams():
    sse = ('event: message_start\ndata: {"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1, '
           '"cache_read_input_tokens": 5}}}\n\nevent: message_delta\ndata: {"type": "message_delta", "usage": {"output_tokens": 42}}\n\n')
    u = usage_from_sse(sse, "anthropic")
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (7, 42, 5)
    oa = 'data: {"choices": []}\n\ndata: {"usage": {"prompt_tokens": 30, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 10}}}\n\ndata: [DONE]\n'
    u = usage_from_sse(oa, "openai")
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (20, 4, 10)
    assert usage_from_sse("data: {}\n", "openai") is None  # unknown usage stays unknown
