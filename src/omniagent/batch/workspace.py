"""A task's own workspace: prepared from its source before the session opens, diffed after the turn ends.

Every workspace gets a baseline in a git directory kept *outside* it (`<workspace>.git`), so the agent sees exactly
the source's files and the final diff (new, changed and deleted files, binary ones included) is one `git diff`
against that baseline, whatever the source was:
- a directory is copied (symlinks kept as links);
- a git repository is cloned (`git clone --local`: its objects hard-linked where the file system allows) and the
  clone checked out at the commit, detached: the agent sees a git checkout, and nothing is written into the source
  repository (no worktree registered there, no object an agent's commit makes);
- no source: an empty directory;
then the seed files, when the task has any (a Dockerfile's `COPY` into the workdir: harbor.py), are copied in.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from omniagent.batch.tasks import CopyWorkspace, GitWorkspace, SeedFile, Workspace
from omniagent.errors import OmniagentError

# Who the baseline commits are by: fixed, so no user git config is needed (or read).
_IDENTITY = ["-c", "user.name=omniagent batch", "-c", "user.email=batch@omniagent.invalid", "-c", "core.autocrlf=false"]


class WorkspaceError(OmniagentError):
    """The workspace could not be prepared or diffed; the message says which command failed and why."""


async def prepare(source: Workspace | None, path: Path, seed: Sequence[SeedFile] = ()) -> None:
    """Make `path` a fresh workspace from `source` and `seed` (removing what an interrupted attempt left). Raises:
    `WorkspaceError`."""
    await discard(source, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, GitWorkspace):
        await _clone(source, path)
    else:
        await asyncio.to_thread(_fill, source, path)
    await asyncio.to_thread(_seed, seed, path)
    await _baseline(path)


async def discard(source: Workspace | None, path: Path) -> None:
    """Remove a workspace and its baseline. A git worktree an earlier omniagent left there (its `.git` a file) is
    unregistered from its repository too."""
    if isinstance(source, GitWorkspace) and await asyncio.to_thread(os.path.isfile, path / ".git"):
        await _git("-C", source.git, "worktree", "remove", "--force", str(path), check=False)
        await _git("-C", source.git, "worktree", "prune", check=False)
    await asyncio.to_thread(_remove, path, _baseline_dir(path))


async def diff(path: Path) -> str:
    """The workspace's changes since it was prepared, as a git patch (empty when nothing changed)."""
    git = _in(path)
    await _git(*git, "add", "--all", "--force", ".")
    return await _git(*git, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "HEAD")


async def _clone(source: GitWorkspace, path: Path) -> None:
    # Resolved in the source first: a branch there is only a remote-tracking one in the clone.
    wanted = f"{source.commit}^{{commit}}"
    commit = (await _git("-C", source.git, "rev-parse", "--verify", "--end-of-options", wanted, check=False)).strip()
    if not commit:
        await _git("-C", source.git, "rev-parse", "--git-dir")  # not a repository at all: git says so
        raise WorkspaceError(f"{source.commit!r} is not a commit of the repository {source.git}")
    await _git("clone", "--quiet", "--local", "--no-checkout", "--", source.git, str(path))
    await _git("-C", str(path), "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit)


async def _baseline(path: Path) -> None:
    git = _in(path)
    # No template: git's sample hooks and info files would be copied into every baseline, a few ms a trial for
    # files nothing reads (the baseline commit runs no hook).
    await _git("init", "--quiet", "--bare", "--template=", str(_baseline_dir(path)))
    await _git(*git, "add", "--all", "--force", ".")
    await _git(*git, *_IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "baseline")


def _fill(source: CopyWorkspace | None, path: Path) -> None:
    if source is None:
        path.mkdir()
    elif not os.path.isdir(source.copy_from):
        raise WorkspaceError(f"the workspace source {source.copy_from} is not a directory")
    else:
        shutil.copytree(source.copy_from, path, symlinks=True)


def _seed(seed: Sequence[SeedFile], path: Path) -> None:
    """Copy each seed item in as Docker's COPY does: a directory's contents into the target, a file into a target
    directory (a target ending in `/`, or one that exists) or as the target."""
    for item in seed:
        source, target = Path(item.source), path / item.target
        if not target.resolve().is_relative_to(path.resolve()):
            raise WorkspaceError(f"the seed target {item.target!r} is outside the workspace")
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        elif source.is_file():
            into = item.target.endswith("/") or target.is_dir()
            if into:
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / source.name if into else target)
        else:
            raise WorkspaceError(f"the seed source {item.source} does not exist")


def _remove(*paths: Path) -> None:
    for path in paths:
        if os.path.lexists(path):
            shutil.rmtree(path)


def _baseline_dir(path: Path) -> Path:
    return path.with_name(path.name + ".git")


def _in(path: Path) -> list[str]:
    return [f"--git-dir={_baseline_dir(path)}", f"--work-tree={path}", "-C", str(path)]


async def _git(*args: str, check: bool = True) -> str:
    process = await asyncio.create_subprocess_exec(
        "git",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_GIT_ENV,
    )
    out, err = await process.communicate()
    if check and process.returncode != 0:
        message = err.decode(errors="replace").strip().splitlines()
        raise WorkspaceError(f"git {args[-2] if len(args) > 1 else args[0]} failed: {message[-1] if message else ''}")
    return out.decode(errors="replace")


# No user or system config (hooks, signing, pagers), no prompts: the same result on every machine.
_GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}
