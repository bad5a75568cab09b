"""Workspace snapshots: a git repository inside the run folder, one commit per turn that changed
the workspace, one branch per attempt (``attempt-1``, ``attempt-2``, ...).

The repository is bare (``<task>/.agent/snapshots.git``): it holds no checked-out files, so
``d2k-profile runs/<run>`` and ``d2k-analyze runs/<run>`` never mistake a snapshot for the
submission. Each commit's message is ``turn <n>``; :func:`history` lists them and :func:`extract`
writes one out for ``d2k-analyze --trajectory``.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

GIT = ["git", "-c", "user.name=d2k-agent", "-c", "user.email=d2k-agent@localhost", "-c", "commit.gpgsign=false",
       "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main"]
EXCLUDE = "__pycache__/\n*.pyc\n*.so\n*.o\nd2k-out/\n.d2k/\n"
MAX_FILE = "2m"  # larger files are not snapshotted (data dumps, binaries)


@dataclass(frozen=True)
class Snapshot:
    turn: int
    commit: str


def _git(repo: Path, *args: str, work_tree: Path | None = None, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    cmd = [*GIT, f"--git-dir={repo}"] + ([f"--work-tree={work_tree}"] if work_tree else []) + list(args)
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo), "LC_ALL": "C"}
    return subprocess.run(cmd, capture_output=True, check=check, input=stdin, env=env)


class Snapshots:
    """Commits a workspace after each turn onto the branch of the current attempt."""

    def __init__(self, repo: Path, workspace: Path, attempt: int):
        self.repo, self.workspace, self.branch = Path(repo), Path(workspace), f"attempt-{attempt}"
        if not (self.repo / "HEAD").is_file():
            self.repo.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([*GIT, "init", "--bare", "-q", str(self.repo)], check=True, capture_output=True)
            (self.repo / "info").mkdir(exist_ok=True)
            (self.repo / "info" / "exclude").write_text(EXCLUDE)
        _git(self.repo, "symbolic-ref", "HEAD", f"refs/heads/{self.branch}")

    def commit(self, turn: int) -> str | None:
        """Commit the workspace as ``turn <n>`` if anything changed since the last commit."""
        _git(self.repo, "add", "-A", ".", work_tree=self.workspace)
        for big in self._oversized():
            _git(self.repo, "rm", "-q", "--cached", big, work_tree=self.workspace, check=False)
        has_head = _git(self.repo, "rev-parse", "-q", "--verify", "HEAD", check=False).returncode == 0
        if has_head and _git(self.repo, "diff", "--cached", "--quiet", work_tree=self.workspace, check=False).returncode == 0:
            return None
        _git(self.repo, "commit", "-q", "--allow-empty", "-m", f"turn {turn}", work_tree=self.workspace)
        return _git(self.repo, "rev-parse", "HEAD").stdout.decode().strip()

    def _oversized(self) -> list[str]:
        out = _git(self.repo, "ls-files", "-s", work_tree=self.workspace).stdout.decode().splitlines()
        big = []
        for line in out:
            path = line.split("\t", 1)[-1]
            p = self.workspace / path
            if p.is_file() and p.stat().st_size > 2 * 1024 * 1024:
                big.append(path)
        return big


def branches(repo: Path) -> list[str]:
    out = _git(Path(repo), "for-each-ref", "--format=%(refname:short)", "refs/heads/", check=False).stdout.decode()
    return sorted(out.split(), key=lambda b: int(b.rsplit("-", 1)[-1]) if b.rsplit("-", 1)[-1].isdigit() else 0)


def history(repo: Path, branch: str) -> list[Snapshot]:
    """Snapshots of one attempt, oldest first."""
    out = _git(Path(repo), "log", "--reverse", "--format=%H %s", branch).stdout.decode().splitlines()
    snaps = []
    for line in out:
        commit, _, subject = line.partition(" ")
        if subject.startswith("turn ") and subject[5:].isdigit():
            snaps.append(Snapshot(int(subject[5:]), commit))
    return snaps


def extract(repo: Path, commit: str, dest: Path) -> Path:
    """Write the tree of ``commit`` into ``dest`` (created)."""
    data = _git(Path(repo), "archive", "--format=tar", commit).stdout
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest
