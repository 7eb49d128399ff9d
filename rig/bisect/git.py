"""The repository under search, through `git -C REPO ...`. The user's checkout is never
touched: commits are checked out in the bisect's own worktree (docs/bisect.md), and
`Snapshot` lets the runner prove the repository is left as it was found."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from rig.errors import InputError, RigError


def git(repo: Path, *args: str, check: bool = True) -> str:
    """git's output; git failing on a repository it accepted is the rig's failure (3)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RigError(f"git {' '.join(args)} in {repo}: {e}") from None
    if check and proc.returncode != 0:
        raise RigError(f"git {' '.join(args)} in {repo}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout.strip()


def resolve(repo: Path, rev: str, what: str) -> str:
    """The full commit id of `rev`; an unknown revision is the user's error (exit 2)."""
    if not repo.is_dir() or not git(repo, "rev-parse", "--git-dir", check=False):
        raise InputError(f"--repo {repo}: not a git repository")
    out = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if not out:
        raise InputError(f"--{what} {rev!r}: no such commit in {repo}")
    return out


def chain(repo: Path, good: str, bad: str) -> list[str]:
    """[good, ..., bad]: the first-parent chain from good to bad, each the first parent
    of the next (a merge on it is one step). good must be on bad's first-parent line."""
    if good == bad:
        raise InputError("--good and --bad name the same commit: nothing to search")
    ids = git(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}").split()
    if not ids or git(repo, "rev-parse", f"{ids[0]}^") != good:
        raise InputError(
            f"--good {good[:12]} is not an ancestor of --bad {bad[:12]} on its first-parent "
            "line: give a good commit the bad one was built on"
        )
    return [good, *ids]


def subject(repo: Path, commit: str) -> str:
    return git(repo, "log", "-1", "--format=%s", commit)


@dataclass(frozen=True)
class Snapshot:
    """What the repository looked like: HEAD, the branch, the status, the worktrees."""

    head: str
    branch: str | None
    status: str
    worktrees: str

    @classmethod
    def take(cls, repo: Path, own: Path) -> Snapshot:
        """`own`: the bisect's worktree, left out (a killed bisect's is reused, then gone)."""
        branch = git(repo, "symbolic-ref", "-q", "HEAD", check=False) or None
        blocks = git(repo, "worktree", "list", "--porcelain").split("\n\n")
        mine = f"worktree {own.resolve()}"
        others = "\n\n".join(b for b in blocks if b.splitlines()[:1] != [mine])
        return cls(
            git(repo, "rev-parse", "HEAD"),
            branch,
            git(repo, "status", "--porcelain", "--untracked-files=all"),
            others,
        )


class Worktree:
    """A detached worktree of `repo` at `path`, checked out commit by commit; `close`
    removes it (and git's record of it)."""

    def __init__(self, repo: Path, path: Path) -> None:
        self.repo = repo
        self.path = path
        self.added = False

    def checkout(self, commit: str) -> None:
        if not self.added:
            # A worktree a killed bisect left at this path is reused (its files make
            # the next build incremental); --force re-adds one whose folder is gone. No
            # `git worktree prune`: the user's other stale worktrees are not ours to drop.
            if not (self.path / ".git").exists():
                git(self.repo, "worktree", "add", "--detach", "--force", str(self.path), commit)
            self.added = True
        # Untracked files (build products) stay: the next build is incremental.
        git(self.path, "checkout", "--detach", "--force", "--quiet", commit)

    def close(self) -> None:
        if self.added or self.path.exists():
            git(self.repo, "worktree", "remove", "--force", "--force", str(self.path))
        self.added = False
