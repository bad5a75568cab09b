"""Tool behaviour that does not need a model: bounded output, the editor's confinement, timeouts,
the environment allowlist and the sandbox command line."""

from __future__ import annotations

from d2k_spec.task import default_tasks_root, load_task

from d2k_agent.gpu import GpuPool
from d2k_agent.sandbox import Sandbox, agent_env, bwrap_argv, prepare_home
from d2k_agent.tools import ToolBox, bound
from d2k_agent.workspace import seed


def _box(tmp_path) -> ToolBox:
    task = load_task(default_tasks_root() / "softmax")
    ws = seed(task, tmp_path / "ws")
    prepare_home(tmp_path / "home")
    return ToolBox(task, Sandbox(ws.path, tmp_path / "home", "none"), GpuPool(["0"], False), has_gpu=False)


def test_bound_keeps_head_and_tail_and_says_what_was_cut():
    text = "A" * 10_000 + "MIDDLE" + "Z" * 10_000
    out = bound(text, 1000)
    assert out.startswith("A" * 500) and out.endswith("Z" * 500) and "MIDDLE" not in out
    assert f"[... {len(text) - 1000} characters cut from the middle of the output ...]" in out
    assert bound("short", 1000) == "short"


def test_bash_runs_in_the_workspace_with_a_private_home_and_no_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    box = _box(tmp_path)
    res = box.run("bash", {"command": "pwd; echo HOME=$HOME; echo KEY=${ANTHROPIC_API_KEY:-none}; echo $TRITON_CACHE_DIR"})
    lines = res.text.splitlines()
    assert lines[0] == str(tmp_path / "ws") and lines[1] == f"HOME={tmp_path / 'home'}" and lines[2] == "KEY=none"
    assert lines[3] == str(tmp_path / "home" / ".cache" / "triton")
    res = box.run("bash", {"command": "seq 1 200000"})
    assert "characters cut from the middle" in res.text and res.text.rstrip().endswith("200000")
    res = box.run("bash", {"command": "sleep 5", "timeout": 1})
    assert res.is_error and "timed out after 1 s" in res.text
    res = box.run("bash", {"command": "exit 3"})
    assert res.is_error and "[exit code 3]" in res.text


def test_editor_is_confined_to_the_workspace(tmp_path):
    box = _box(tmp_path)
    assert box.run("editor", {"command": "create", "path": "k.py", "file_text": "a = 1\nb = 2\n"}).text.startswith("wrote k.py")
    assert box.run("editor", {"command": "str_replace", "path": "k.py", "old_str": "b = 2", "new_str": "b = 3"}).is_error is False
    assert "     2\tb = 3" in box.run("editor", {"command": "view", "path": "k.py"}).text
    for bad in ("../outside.py", str(tmp_path / "home" / "x.py"), "/etc/passwd"):
        res = box.run("editor", {"command": "create", "path": bad, "file_text": "x"})
        assert res.is_error and "outside the workspace" in res.text
    assert not (tmp_path / "outside.py").exists()
    assert box.run("nope", {}).is_error and box.run("test", {"workloads": ["nope"]}).is_error


def test_environment_allowlist_and_bwrap_command_line(tmp_path):
    env = agent_env(tmp_path, source={"PATH": "/usr/bin", "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "AWS_SECRET": "s", "LANG": "C"})
    assert "ANTHROPIC_API_KEY" not in env and "OPENAI_API_KEY" not in env and "AWS_SECRET" not in env
    assert env["LANG"] == "C" and env["HOME"] == str(tmp_path) and env["TORCH_EXTENSIONS_DIR"].startswith(str(tmp_path))
    argv = bwrap_argv(["bash", "-c", "x"], tmp_path / "ws", tmp_path / "home")
    assert argv[:3] == ["bwrap", "--ro-bind", "/"] and "--unshare-net" in argv and "--tmpfs" not in argv
    assert argv[argv.index("--bind") + 1] == str(tmp_path / "ws") and argv[-3:] == ["bash", "-c", "x"]
    assert "--unshare-net" not in bwrap_argv(["true"], tmp_path, tmp_path, network=True)
