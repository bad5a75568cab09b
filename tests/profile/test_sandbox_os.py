"""The OS sandbox of the untrusted process, applied for real in a child process: no network, no
ptrace, no setsid, writes only beneath the build folder (Landlock), no capabilities; exec and
threads still work (compilers and torch need them). And the process-group/session kill."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from d2k_profile import confine, procs

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent('''
    import json, os, socket, subprocess, sys, threading
    from d2k_profile import confine
    build, outside = sys.argv[1], sys.argv[2]
    rep = confine.apply(build, [], sys.argv[3].split(","))
    got = {"report": rep.as_dict()}
    def attempt(name, fn):
        try:
            fn(); got[name] = "allowed"
        except OSError as exc:
            got[name] = "denied"
    attempt("inet socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
    attempt("unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
    attempt("write inside", lambda: open(os.path.join(build, "x"), "w").write("x"))
    attempt("write outside", lambda: open(outside, "w").write("x"))
    def write_back(path):  # rewrite a procfs file with its own value
        with open(path) as f:
            value = f.read()
        with open(path, "w") as f:
            f.write(value)
    waiter = threading.Event()
    other = threading.Thread(target=waiter.wait); other.start()
    attempt("write own proc", lambda: write_back(f"/proc/{os.getpid()}/oom_score_adj"))
    attempt("write own thread name", lambda: write_back(f"/proc/self/task/{other.native_id}/comm"))
    waiter.set(); other.join()
    attempt("write parent proc", lambda: write_back(f"/proc/{os.getppid()}/oom_score_adj"))
    attempt("write outside via proc root", lambda: open(f"/proc/self/root{outside}", "w").write("x"))
    attempt("setsid", os.setsid)
    attempt("setpgid", lambda: os.setpgid(0, 0))
    got["exec"] = subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout.strip()
    t = threading.Thread(target=lambda: got.setdefault("thread", "ran")); t.start(); t.join()
    print(json.dumps(got))
''')


def run_child(tmp_path, layers):
    build = tmp_path / "build"
    build.mkdir(parents=True)
    out = subprocess.run([sys.executable, "-c", CHILD, str(build), str(tmp_path / "outside.txt"), layers], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_layer_is_enforced(tmp_path):
    got = run_child(tmp_path, "landlock,seccomp,capabilities")
    enforced, selftest = got["report"]["enforced"], got["report"]["self_test"]
    assert enforced["no_new_privs"] == "on" and enforced["seccomp"].startswith("on")
    assert got["inet socket"] == "denied" and got["unix socket"] == "allowed"
    assert got["setsid"] == "denied" and got["setpgid"] == "allowed"  # ninja moves its jobs to new groups
    assert got["exec"] == "hi" and got["thread"] == "ran"
    assert selftest["network"].startswith("blocked") and selftest["ptrace"].startswith("blocked")
    assert got["write inside"] == "allowed"
    if confine.landlock_abi():
        assert enforced["landlock"].startswith("on") and got["write outside"] == "denied"
        assert selftest["write outside the build folder"].startswith("blocked")
        assert not (tmp_path / "outside.txt").exists()
    else:  # a kernel without Landlock: said, not hidden
        assert enforced["landlock"].startswith("not available") and got["write outside"] == "allowed"


def test_layers_can_be_loosened_where_a_gpu_stack_needs_it(tmp_path):
    got = run_child(tmp_path, "landlock:opendev,seccomp:inet")
    assert got["inet socket"] == "allowed" and "sockets of any family" in got["report"]["enforced"]["seccomp"]
    if confine.landlock_abi():
        assert "/tmp" in got["report"]["enforced"]["landlock"]


def test_a_timeout_kills_the_whole_process_group(tmp_path):
    marker = tmp_path / "grandchild.pid"
    script = f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    t0 = time.monotonic()
    res = procs.run_group([sys.executable, "-c", script], timeout_s=2.0)
    assert res.timed_out and time.monotonic() - t0 < 20
    grandchild = int(marker.read_text())
    time.sleep(0.5)
    assert not _alive(grandchild)  # subprocess.run(timeout=...) would have left it running


def test_a_session_kill_reaches_children_in_other_groups(tmp_path):
    marker = tmp_path / "pid"
    script = (f"import os, subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setpgid(0, 0); time.sleep(60)']);"
              f" open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    for _ in range(100):
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.1)
    child = int(marker.read_text())
    time.sleep(0.3)
    assert os.getpgid(child) == child != leader.pid  # it left the leader's group
    procs.kill_session(leader.pid)
    leader.wait(timeout=10)
    time.sleep(0.5)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        return state != "Z"
    except OSError:
        return False


def test_registry_kills_what_is_left(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    reg = procs.GroupRegistry()
    reg.add(p.pid)
    assert reg.kill_all() == 1 and reg.alive() == []
    assert p.wait(timeout=10) == -signal.SIGKILL


def test_own_proc_entry_can_be_opened_up_without_opening_anything_else(tmp_path):
    """The H200's CUDA writes files of its own process under /proc; the procself variant grants
    exactly that: not another process's entry, and not the file system through /proc/self/root."""
    if not confine.landlock_abi():
        return
    strict = run_child(tmp_path / "a", "landlock")
    assert strict["write own proc"] == "denied" and strict["write own thread name"] == "denied"
    for variant, own in (("landlock:procself", "allowed"), ("landlock:proctask", "denied")):
        got = run_child(tmp_path / variant.replace(":", "_"), variant)
        assert got["report"]["enforced"]["landlock"].startswith("on") and "writable (procfs files" in got["report"]["enforced"]["landlock"]
        assert got["write own thread name"] == "allowed" and got["write own proc"] == own
        assert got["write parent proc"] == "denied" and got["write outside via proc root"] == "denied"
        assert got["write outside"] == "denied" and got["write inside"] == "allowed"
        assert not (tmp_path / variant.replace(":", "_") / "outside.txt").exists()
