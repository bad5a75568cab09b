"""The native tool-use loop: model call, tool calls, transcript, snapshot; until submit or a limit.

Every limit is checked before the model call (:func:`d2k_agent.budget.stop_reason`). The model's
response is written to the transcript the moment it arrives (with its tokens and cost), the tool
results after they ran, and the workspace is committed when the turn changed it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from .adapters.base import Message, ModelClient, ToolOutput
from .adapters.replay import ReplayExhausted
from .budget import Ledger, Limits, stop_reason
from .errors import ModelRefusedRequest
from .pricing import Price, Usage, add_costs, cost_usd
from .prompts import Prompt
from .snapshots import Snapshots
from .tools import TOOL_SPECS, ToolBox
from .transcript import Transcript


@dataclass
class LoopOutcome:
    end_reason: str  # submitted | turn_budget | cost_budget | total_cost_budget | wall_time | model_refused | replay_exhausted
    turns: int
    usage: Usage
    cost_usd: float | None
    submitted: bool
    detail: str = ""


def run_loop(client: ModelClient, prompt: Prompt, nudge: str, toolbox: ToolBox, limits: Limits, ledger: Ledger,
             price: Price | None, transcript: Transcript, snapshots: Snapshots,
             on_turn: Callable[[int], None] = lambda n: None, started: float | None = None) -> LoopOutcome:
    started = time.monotonic() if started is None else started
    messages = [Message("user", prompt.user)]
    turns, usage, spent = 0, Usage(), 0.0
    snapshots.commit(0)  # the seeded workspace
    detail = ""
    while True:
        reason = stop_reason(turns, spent, started, limits, ledger)
        if reason:
            break
        try:
            turn = client.complete(prompt.system, messages, TOOL_SPECS)
        except ReplayExhausted as exc:
            reason, detail = "replay_exhausted", str(exc)
            break
        except ModelRefusedRequest as exc:
            reason, detail = "model_refused", str(exc)
            break
        turns += 1
        cost = cost_usd(turn.usage, price)
        usage, spent = usage + turn.usage, add_costs(spent, cost)
        ledger.add(cost)
        transcript.write("response", turn=turns, model=turn.model, stop_reason=turn.stop_reason, message=turn.message().to_dict(),
                         usage=turn.usage.to_dict(), cost_usd=cost, raw=turn.raw)
        messages.append(turn.message())
        results = []
        for call in turn.tool_calls:
            res = toolbox.run(call.name, call.input)
            results.append(ToolOutput(call.id, call.name, res.text, res.is_error))
        messages.append(Message("tool", results=results) if results else Message("user", nudge))
        transcript.write("tools", turn=turns, results=[r.__dict__ for r in results],
                         nudge=None if results else nudge)
        snapshots.commit(turns)
        on_turn(turns)
        if toolbox.submitted:
            reason = "submitted"
            break
    return LoopOutcome(reason, turns, usage, spent, toolbox.submitted, detail)
