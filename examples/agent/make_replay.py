"""Writes the recorded transcripts that the replay adapter plays back in examples/agent/.

A SCRIPTED agent, not an LLM: each recording writes design notes and a kernel taken from the
labelled corpus (the naive Triton variant in the unguided arm, a more advanced Triton variant in
the guided arm), tests it, benches it, and submits. It exists to run d2k-agent end to end
(workspace, tools on the GPU, snapshots, final evaluation, d2k-report) without a model API.

    python examples/agent/make_replay.py          # rewrites examples/agent/replay/*.jsonl
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[1] / "corpus"

PLAN = {
    ("softmax", "unguided"): ("naive_triton", "m8192_n1024",
                              "# Design\n\n- One program per row; three passes over the row in 1024-wide chunks: max, sum of exp, normalize.\n"
                              "- Statistics in fp32 for bf16 input.\n"),
    ("softmax", "guided"): ("online_triton", "m8192_n1024",
                            "# Design\n\n- Online softmax: running max and rescaled sum in one pass (online_softmax), then a normalize pass.\n"
                            "- fp32 statistics for bf16 (fp32_accumulation); exp via exp2 with log2(e) folded in (exp2).\n"
                            "- Proposed, not implemented: keeping short rows on chip (row_on_chip), splitting long rows across programs.\n"),
    ("layernorm", "unguided"): ("naive_triton", "m8192_n4096",
                                "# Design\n\n- One program per row: mean pass, variance pass, normalize pass over column chunks; fp32 sums.\n"),
    ("layernorm", "guided"): ("welford_triton", "m8192_n4096",
                              "# Design\n\n- Welford statistics in one streaming pass, lanes merged with Chan's formula.\n"
                              "- Cache hints: keep x in L2 for the normalize pass (evict_last), then stream it (evict_first).\n"),
}


def recording(task: str, arm: str) -> list[dict]:
    variant, workload, notes = PLAN[(task, arm)]
    kernel = (CORPUS / task / variant / "submission.py").read_text()
    calls = [
        [{"name": "editor", "input": {"command": "view", "path": "TASK.md"}}],
        [{"name": "editor", "input": {"command": "create", "path": "design.md", "file_text": notes}},
         {"name": "editor", "input": {"command": "create", "path": "submission.py", "file_text": kernel}}],
        [{"name": "test", "input": {}}],
        [{"name": "bench", "input": {"workloads": [workload]}}],
        [{"name": "submit", "input": {}}],
    ]
    out = []
    for turn, group in enumerate(calls, 1):
        tool_calls = [{"id": f"replay-{turn}-{i}", **c} for i, c in enumerate(group)]
        out.append({"type": "response", "turn": turn, "message": {"role": "assistant", "text": f"(scripted step {turn}: corpus/{task}/{variant})",
                                                                  "tool_calls": tool_calls}})
    return out


def main() -> None:
    folder = HERE / "replay"
    folder.mkdir(exist_ok=True)
    for task, arm in PLAN:
        path = folder / f"{task}.{arm}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recording(task, arm)))
        print(path)


if __name__ == "__main__":
    main()
