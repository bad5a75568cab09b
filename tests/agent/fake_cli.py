#!/usr/bin/env python3
"""A fake coding-agent CLI (stands in for `claude -p ... --output-format stream-json`).

It talks to ANTHROPIC_BASE_URL with the key in ANTHROPIC_API_KEY through the official SDK, with
streaming, for up to --max-turns model calls (deliberately more than the run's budget in the
tests: the proxy's count must be the one that holds). It runs the tool calls it gets: bash and
editor itself, test/bench/submit through the kernel-* scripts on its PATH. Every event is printed
as one JSON line (the raw event stream d2k-agent keeps).
"""

import argparse
import json
import os
import subprocess
import sys

import anthropic


def emit(**ev):
    print(json.dumps(ev), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-turns", type=int, default=10)
    ap.add_argument("--model", required=True)
    ap.add_argument("prompt")
    args = ap.parse_args()
    client = anthropic.Anthropic(max_retries=0)
    messages = [{"role": "user", "content": args.prompt}]
    emit(type="system", subtype="init", base_url=os.environ["ANTHROPIC_BASE_URL"])
    for turn in range(args.max_turns):
        try:
            with client.messages.stream(model=args.model, max_tokens=1000, messages=messages) as stream:
                msg = stream.get_final_message()
        except anthropic.APIStatusError as exc:
            emit(type="result", subtype="error", status=exc.status_code, message=str(exc.message))
            return 1
        emit(type="assistant", message=msg.model_dump(mode="json"))
        messages.append({"role": "assistant", "content": [b.model_dump(mode="json", exclude_none=True) for b in msg.content]})
        results = []
        for block in msg.content:
            if block.type != "tool_use":
                continue
            name, inp = block.name, block.input
            if name == "bash":
                p = subprocess.run(["bash", "-c", inp["command"]], capture_output=True, text=True)
                out = p.stdout + p.stderr
            elif name == "editor":
                with open(inp["path"], "w") as fh:
                    fh.write(inp["file_text"])
                out = "written"
            else:
                p = subprocess.run([f"kernel-{name}"], capture_output=True, text=True)
                out = p.stdout + p.stderr
            emit(type="tool_result", name=name, output=out)
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": out or "(none)"})
        if not results:
            break
        messages.append({"role": "user", "content": results})
    emit(type="result", subtype="success")
    return 0


if __name__ == "__main__":
    sys.exit(main())
