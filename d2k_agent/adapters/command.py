"""The ``command`` adapter: an external coding-agent CLI, run headless, behind the accounting proxy.

The CLI (Claude Code by default: ``--command claude``) runs in the sandbox with the workspace as
its working directory. It reaches the model only through :mod:`d2k_agent.proxy`, which counts
every model call as a turn and refuses calls past the budget; the CLI's own ``--max-turns`` is set
too, but the proxy's count is the one that holds. The benchmark's tools are scripts on its PATH
(``kernel-test``, ``kernel-bench``, ``kernel-profile``, ``kernel-submit``), described in the
workspace's AGENTS.md; they call the proxy's tool endpoint, i.e. the same ToolBox as the native
loop. The CLI's raw event stream (stdout) is kept as ``events.jsonl``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..errors import ConfigError, InfraError
from ..loop import LoopOutcome
from ..prompts import Prompt
from ..proxy import Accounting, AccountingProxy
from ..snapshots import Snapshots
from ..tools import ToolBox
from ..transcript import Transcript

PRESETS = {
    "claude": "claude -p {user} --append-system-prompt {system} --output-format stream-json --verbose "
              "--max-turns {turns} --model {model} --dangerously-skip-permissions",
}
CLAUDE_ENV = {"DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
              "DISABLE_AUTOUPDATER": "1"}
DEFAULT_UPSTREAM = "https://api.anthropic.com"
GRACE_S = 20.0  # after submit or the budget, the CLI gets this long to exit by itself
SCRIPTS = {"kernel-test": "test", "kernel-bench": "bench", "kernel-profile": "profile", "kernel-submit": "submit"}

SCRIPT = '''#!{python}
"""{name}: the d2k-agent `{tool}` tool (runs outside the sandbox, through the run's proxy)."""
import json, os, sys, urllib.request
args = sys.argv[1:]
payload = {payload}
req = urllib.request.Request(os.environ["D2K_TOOL_URL"] + "/{tool}", data=json.dumps(payload).encode(),
                             headers={{"content-type": "application/json", "x-api-key": os.environ["D2K_TOOL_TOKEN"]}})
with urllib.request.urlopen(req, timeout=7200) as resp:
    out = json.loads(resp.read())
print(out["text"])
sys.exit(1 if out["is_error"] else 0)
'''
PAYLOADS = {"test": '{"workloads": args}', "bench": '{"workloads": args}', "profile": '{"workload": args[0] if args else ""}', "submit": "{}"}


def agents_md() -> str:
    return """# Tools for this task (the same in every run)

Run these from the workspace; they use the benchmark's own profiler, outside your sandbox:

- `kernel-test [WORKLOAD ...]`: compile submission.py and check correctness against the reference
  on the smoke workload (default) or the named workloads.
- `kernel-bench [WORKLOAD ...]`: time submission.py against the reference (and the expert) on the
  GPU with the same harness as the final evaluation; all timed workloads by default.
- `kernel-profile WORKLOAD`: an ncu summary of your kernels on one workload, where ncu exists.
- `kernel-submit`: submit the workspace as your final answer. This ends your work on the task.

Your model calls are counted: every model response is one turn, and calls past the budget are refused.
Keep design.md with the designs you propose. The final evaluation re-runs everything outside
this workspace on freshly generated inputs.
"""


def write_scripts(bin_dir: Path) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, tool in SCRIPTS.items():
        p = bin_dir / name
        p.write_text(SCRIPT.format(python=sys.executable, name=name, tool=tool, payload=PAYLOADS[tool]))
        p.chmod(0o555)


def command_argv(template: str, prompt: Prompt, turns: int, model: str, prompt_file: Path, workspace: Path) -> list[str]:
    """The CLI's argv: a preset name or a template; placeholders are filled per argument (never
    through a shell), so prompt text cannot inject options or commands."""
    template = PRESETS.get(template, template)
    if not template.strip():
        raise ConfigError("--agent command needs --command (a preset: claude, or a command line with {user}/{prompt_file}/...)")
    values = {"system": prompt.system, "user": prompt.user, "prompt": f"{prompt.system}\n\n{prompt.user}",
              "prompt_file": str(prompt_file), "turns": str(turns), "model": model, "workspace": str(workspace)}
    out = []
    for part in shlex.split(template):
        try:
            out.append(part.format(**values))
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(f"--command: bad placeholder in {part!r} (known: {', '.join('{' + k + '}' for k in values)})") from exc
    return out


def preflight(cfg) -> None:
    """A missing CLI or key fails before any run starts."""
    argv0 = shlex.split(PRESETS.get(cfg.command, cfg.command) or "x")[0]
    if not shutil.which(argv0):
        raise ConfigError(f"--command: {argv0!r} is not on PATH")
    key_env = cfg.api_key_env or "ANTHROPIC_API_KEY"
    if not os.environ.get(key_env):
        raise ConfigError(f"{key_env} is not set: the accounting proxy needs the real API key to forward to (no fallback)")


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def run_command_agent(unit, prompt: Prompt, toolbox: ToolBox, snaps: Snapshots, log: Transcript, adir: Path, bin_dir: Path,
                      started: float, on_turn: Callable[[int], None]) -> LoopOutcome:
    cfg = unit.cfg
    write_scripts(bin_dir)
    acct = Accounting(unit.limits, unit.ledger, unit.price, cfg.model, started=started)

    def on_call(completed: int) -> None:
        snaps.commit(completed)
        if completed:
            on_turn(completed)

    key = os.environ.get(cfg.api_key_env or "ANTHROPIC_API_KEY", "")
    proxy = AccountingProxy(cfg.base_url or DEFAULT_UPSTREAM, key, acct, log, toolbox, on_call).start()
    base = proxy.url
    wrap_prefix: list[str] = []
    unix_listener = None
    sandbox = toolbox.sandbox
    sock_dir = None
    if sandbox.mode == "bwrap":  # no network in the sandbox: reach the proxy through a Unix socket
        from ..forward import unix_to_tcp

        sock_dir = Path(tempfile.mkdtemp(prefix="d2k-sock-"))  # short: a socket path has at most 107 bytes
        sock = sock_dir / "proxy.sock"
        sandbox = replace(sandbox, writable_extra=(*sandbox.writable_extra, sock_dir))
        unix_listener = unix_to_tcp(str(sock), int(base.rsplit(":", 1)[1]))
        inner_port = 8790
        base = f"http://127.0.0.1:{inner_port}"
        wrap_prefix = ["bash", "-c", f'"{sys.executable}" -m d2k_agent.forward {inner_port} "{sock}" & sleep 0.3; exec "$@"', "d2k-forward"]
    prompt_file = adir / "prompt.md"
    prompt_file.write_text(f"{prompt.system}\n\n{prompt.user}")
    argv = command_argv(cfg.command, prompt, cfg.turns, cfg.model, prompt_file, toolbox.workspace)
    env = toolbox.sandbox.env({
        "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": proxy.token, "OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": proxy.token,
        "ANTHROPIC_SMALL_FAST_MODEL": cfg.model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": cfg.model,
        "D2K_TOOL_URL": base + "/d2k/tool", "D2K_TOOL_TOKEN": proxy.token, **CLAUDE_ENV,
    })
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    log.write("command", argv=argv, sandbox=toolbox.sandbox.mode)
    events, stderr = open(adir / "events.jsonl", "wb"), open(adir / "stderr.log", "wb")
    stop_seen: float | None = None
    try:
        proc = subprocess.Popen(sandbox.wrap(wrap_prefix + argv), cwd=toolbox.workspace, env=env, stdout=events, stderr=stderr,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        proxy.stop()
        raise InfraError("cli_start", f"{argv[0]}: {exc}") from exc
    try:
        while proc.poll() is None:
            time.sleep(0.1)
            over = cfg.wall_time_s is not None and time.monotonic() - started >= cfg.wall_time_s
            if (toolbox.submitted or acct.refused) and stop_seen is None:
                stop_seen = time.monotonic()
            if over or (stop_seen is not None and time.monotonic() - stop_seen > GRACE_S):
                _kill(proc)
                if over and not acct.refused:
                    acct.refused = "wall_time"
    finally:
        if proc.poll() is None:
            _kill(proc)
        events.close()
        stderr.close()
        proxy.stop()
        if unix_listener is not None:
            unix_listener.close()
        if sock_dir is not None:
            shutil.rmtree(sock_dir, ignore_errors=True)
    snaps.commit(acct.turns)
    if toolbox.submitted:
        reason = "submitted"
    elif acct.refused:
        reason = acct.refused
    elif proc.returncode != 0 and acct.upstream_failures:
        raise InfraError("api_error", f"the CLI exited with {proc.returncode} after {acct.upstream_failures} failed upstream call(s)")
    else:
        reason = f"agent_exited ({proc.returncode})"
    return LoopOutcome(reason, acct.turns, acct.usage, acct.cost, toolbox.submitted)
