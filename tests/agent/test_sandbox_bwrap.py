"""The bubblewrap sandbox, for real where bwrap works (it is a system package: on a machine
without it, --sandbox auto records "none" and these tests are skipped with that reason)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from agent_helpers import CLI_ARGS, busy_script, config, machine
from d2k_spec.task import default_tasks_root, load_task

from d2k_agent import runner
from d2k_agent.gpu import GpuPool
from d2k_agent.sandbox import Sandbox, bwrap_works, prepare_home
from d2k_agent.tools import ToolBox
from d2k_agent.workspace import seed

pytestmark = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap (bwrap) is not installed or cannot create namespaces here")


def test_bash_in_bwrap_writes_only_the_workspace_and_has_no_network(tmp_path, api):
    task = load_task(default_tasks_root() / "softmax")
    ws = seed(task, tmp_path / "ws")
    prepare_home(tmp_path / "home")
    (tmp_path / "outside.txt").write_text("original")
    box = ToolBox(task, Sandbox(ws.path, tmp_path / "home", "bwrap"), GpuPool(["0"], False), has_gpu=False)
    assert box.run("bash", {"command": "echo new > inside.txt && cat inside.txt"}).text.strip() == "new"
    with tempfile.TemporaryDirectory(dir="/var/tmp") as other:
        for target in (tmp_path / "outside.txt", Path(other) / "outside.txt"):  # beside the workspace, and elsewhere
            target.write_text("original")
            res = box.run("bash", {"command": f"echo x > {target}"})
            assert res.is_error and "Read-only file system" in res.text
            assert target.read_text() == "original"
    assert box.run("bash", {"command": "echo t > $TMPDIR/t && cat $TMPDIR/t"}).text.strip() == "t"  # TMPDIR is private and writable
    port = api.url.rsplit(":", 1)[1]
    res = box.run("bash", {"command": f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\""})
    assert res.is_error and ("refused" in res.text or "unreachable" in res.text)


def test_cli_agent_in_bwrap_reaches_the_model_only_through_the_proxy(tmp_path, api, keys):
    api.steps = busy_script()
    cfg = config(tmp_path / "b-guided", api, adapter="command", command=CLI_ARGS, turns=2, evaluate=False, sandbox="bwrap")
    [res] = runner.execute([cfg], machine(tmp_path))
    assert (res.record["turns"], res.record["end_reason"]) == (2, "turn_budget")
    assert len(api.model_requests()) == 2
