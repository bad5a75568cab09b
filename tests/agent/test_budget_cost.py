"""Turn budget, cost accounting against hand-computed values, cost limits, loud config errors."""

from __future__ import annotations

import pytest
from agent_helpers import HERE, busy_script, config, machine

from d2k_agent import cli, runner, transcript
from d2k_agent.budget import Ledger, Limits, stop_reason
from d2k_agent.errors import ConfigError
from d2k_agent.layout import RunDir
from d2k_agent.pricing import Price, Usage, add_costs, cost_usd, load_prices

USAGE = {"input_tokens": 1000, "output_tokens": 200, "cache_write_tokens": 300, "cache_read_tokens": 5000}
# fake-model: $3 / $15 / $3.75 (cache write) / $0.30 (cache read) per million tokens
PER_TURN_ANTHROPIC = (1000 * 3 + 200 * 15 + 300 * 3.75 + 5000 * 0.3) / 1e6  # = 0.008625
PER_TURN_OPENAI = (1000 * 3 + 200 * 15 + 5000 * 0.3) / 1e6  # no cache writes on that wire: 0.0075


def test_cost_by_hand():
    price = load_prices(HERE / "prices.toml")["fake-model"]
    assert cost_usd(Usage(1000, 200, 300, 5000), price) == pytest.approx(0.008625)
    assert cost_usd(Usage(1_000_000, 0, 0, 0), Price(3.0, 15.0)) == pytest.approx(3.0)
    assert cost_usd(Usage(10, 10), None) is None  # unknown model: unknown, not 0
    assert cost_usd(Usage(), None) == 0.0  # no tokens: nothing spent, whatever the price
    assert cost_usd(Usage(10, 10, 0, 5), Price(1.0, 2.0)) is None  # cache reads with no cache rate: unknown
    assert cost_usd(Usage(10, 10, 0, 0), Price(1.0, 2.0)) == pytest.approx(30 / 1e6)
    assert add_costs(1.0, None) is None and add_costs(1.0, 2.0) == 3.0


def test_stop_reason_checks_every_limit_before_a_call():
    lim = Limits(turns=3, max_cost=1.0, wall_time_s=10, max_total_cost=5.0)
    led = Ledger()
    assert stop_reason(2, 0.5, 0.0, lim, led, now=1.0) is None
    assert stop_reason(3, 0.5, 0.0, lim, led, now=1.0) == "turn_budget"
    assert stop_reason(2, 1.0, 0.0, lim, led, now=1.0) == "cost_budget"
    assert stop_reason(2, None, 0.0, lim, led, now=1.0) is None  # unknown cost: enforced by refusing to start instead
    assert stop_reason(2, 0.5, 0.0, lim, led, now=10.0) == "wall_time"
    led.add(5.0)
    assert stop_reason(2, 0.5, 0.0, lim, led, now=1.0) == "total_cost_budget"


@pytest.mark.parametrize("adapter,path,per_turn", [("anthropic", "", PER_TURN_ANTHROPIC), ("openai-compatible", "/v1", PER_TURN_OPENAI)])
def test_budget_stops_at_exactly_n_turns_and_costs_add_up(tmp_path, api, keys, adapter, path, per_turn):
    api.steps = busy_script()
    for s in api.steps:
        s.usage = USAGE
    cfg = config(tmp_path / "r-guided", api, adapter=adapter, base_url=api.url + path, turns=3, evaluate=False)
    [res] = runner.execute([cfg], machine(tmp_path))
    rec = res.record
    assert len(api.model_requests()) == 3
    assert (rec["end_reason"], rec["turns"], rec["submitted"]) == ("turn_budget", 3, False)
    assert rec["cost_usd"] == pytest.approx(3 * per_turn)
    assert rec["usage"]["output_tokens"] == 600 and rec["usage"]["cache_read_tokens"] == 15000
    assert rec["all_attempts"]["cost_usd"] == pytest.approx(3 * per_turn)
    # the agent's three commands ran in the workspace, which was exported... as nothing but code: log.txt is not code
    assert "log.txt" not in rec["files"]
    lines = transcript.read(RunDir(tmp_path / "r-guided").task("softmax").attempt(1) / "transcript.jsonl")
    assert [r["turn"] for r in lines if r["type"] == "response"] == [1, 2, 3]


def test_max_cost_stops_before_the_call_that_would_exceed_it(tmp_path, api, keys):
    api.steps = busy_script()
    for s in api.steps:
        s.usage = USAGE
    # after 2 turns 0.01725 < 0.02: a third call is made; after it 0.025875 >= 0.02: no fourth
    cfg = config(tmp_path / "c-guided", api, turns=10, max_cost=0.02, evaluate=False)
    [res] = runner.execute([cfg], machine(tmp_path))
    assert (res.record["end_reason"], res.record["turns"]) == ("cost_budget", 3)
    assert len(api.model_requests()) == 3


def test_unpriced_model_with_a_cost_limit_refuses_to_start(tmp_path, api, keys):
    api.models = ("fake-model", "unpriced")
    cfg = config(tmp_path / "u-guided", api, model="unpriced", max_cost=1.0)
    with pytest.raises(ConfigError, match="no price for model 'unpriced'"):
        runner.execute([cfg], machine(tmp_path))
    assert api.model_requests() == []


def test_missing_key_and_unknown_model_fail_loudly_without_fallback(tmp_path, api, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    argv = ["run", "--tasks", "softmax", "--arm", "guided", "--model", "fake-model", "--base-url", api.url, "--cpu",
            "--out", str(tmp_path / "k"), "--sandbox", "none"]
    assert cli.main(argv) == 2
    assert "ANTHROPIC_API_KEY is not set" in capsys.readouterr().err
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    argv[argv.index("fake-model")] = "no-such-model"
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown model 'no-such-model'" in err and "no fallback" in err and "Traceback" not in err
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    argv[argv.index("--base-url") + 1] = api.url + "/v1"
    assert cli.main([*argv, "--agent", "openai-compatible"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err
    assert api.model_requests() == []  # nothing was sent to any model
    assert not (tmp_path / "k-guided" / "softmax").exists()
