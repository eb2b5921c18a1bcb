"""Install the pinned real agent CLIs (and the ACP reference SDK) from npm into a cache directory outside the repo.

    python scripts/install_agents.py            # every package in tests/e2e/agents/versions.json
    python scripts/install_agents.py qwen gemini
    python scripts/install_agents.py --list     # name, version, installed or not, entry path

Each package goes to its own prefix, `<cache>/<name>-<version>`, so bumping a version in versions.json installs
afresh and leaves the old prefix alone. The cache is `$OMNIAGENT_AGENTS_CACHE`, else `npm/` under the user cache
dir of `omniagent-tests` (`~/.cache/omniagent-tests/npm` on Linux). Idempotent: a prefix holding our marker file
is not touched again. An install runs in a temporary sibling directory and is renamed into place only when the
entry file exists, so an interrupted install never looks installed. npm's default for install scripts is kept:
npm 11 skips them (with a warning) yet opencode's `.bin/opencode` still ends up the native binary, whereas
`--ignore-scripts` leaves it a stub that only prints "postinstall script was not run".

The tests import this file (`tests/e2e/agents/packages.py`) so CI and a fresh checkout install the same way; a
failing npm install is an error there too, never a skip.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ROOT / "tests" / "e2e" / "agents" / "versions.json"
CACHE_ENV = "OMNIAGENT_AGENTS_CACHE"
MARKER = ".omniagent-installed.json"
# Seconds one `npm install` may take: the biggest package (opencode, ~350 MB) takes ~11 s on a warm network.
INSTALL_TIMEOUT = 600
# npm installs at once: they wait on the network, not on the 2 CPUs.
PARALLEL = 3


@dataclass(frozen=True, slots=True)
class Package:
    """One pinned npm package: `entry` is the file to run, relative to its prefix."""

    name: str
    package: str
    version: str
    entry: str

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"


class InstallError(RuntimeError):
    """npm failed, or the entry file is missing after the install."""


def cache_dir() -> Path:
    """Where prefixes live: `$OMNIAGENT_AGENTS_CACHE` or the user cache dir (never inside the repo: CI copies it)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    try:
        import platformdirs
    except ImportError:  # outside the venv: the XDG default platformdirs would give on Linux
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "omniagent-tests" / "npm"
    return Path(platformdirs.user_cache_dir("omniagent-tests")) / "npm"


def pinned(path: Path = VERSIONS) -> dict[str, Package]:
    """The pinned packages by name, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: Package(name=name, **fields) for name, fields in data["packages"].items()}


def prefix(package: Package, cache: Path | None = None) -> Path:
    """The package's install prefix."""
    return (cache or cache_dir()) / f"{package.name}-{package.version}"


def entry(package: Package, cache: Path | None = None) -> Path:
    """The absolute path of the package's entry file (a `.bin` link or a script)."""
    return prefix(package, cache) / package.entry


def is_installed(package: Package, cache: Path | None = None) -> bool:
    """Whether the prefix carries our marker for exactly this spec and the entry exists."""
    root = prefix(package, cache)
    try:
        marker = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return marker.get("spec") == package.spec and (root / package.entry).exists()


def install(package: Package, cache: Path | None = None) -> Path:
    """Install `package` unless it already is; returns its entry path. Raises InstallError with npm's output."""
    cache = cache or cache_dir()
    final = prefix(package, cache)
    if is_installed(package, cache):
        return final / package.entry
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("npm is not on PATH (Node 20 + npm are needed for the real-agent tests)")
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=cache))
    try:
        command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(staging)]
        try:
            done = subprocess.run(
                [*command, package.spec], capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise InstallError(f"npm install {package.spec} took over {INSTALL_TIMEOUT} s") from exc
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
            raise InstallError(f"npm install {package.spec} failed (exit {done.returncode}):\n{tail}")
        if not (staging / package.entry).exists():
            raise InstallError(f"npm installed {package.spec} but {package.entry} is missing")
        (staging / MARKER).write_text(json.dumps({"spec": package.spec}), encoding="utf-8")
        if final.exists():  # a stale or unmarked prefix (an older install without our marker)
            shutil.rmtree(final)
        os.replace(staging, final)  # .bin links are relative, so the renamed tree still works
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return final / package.entry


def install_all(names: list[str] | None = None, cache: Path | None = None) -> dict[str, Path]:
    """Install the named packages (default: all), a few at once; returns name → entry path.

    Raises InstallError naming every package that failed.
    """
    packages = pinned()
    unknown = sorted(set(names or ()) - set(packages))
    if unknown:
        raise InstallError(f"not in {VERSIONS.name}: {', '.join(unknown)}")
    chosen = [packages[name] for name in (names or list(packages))]
    results: dict[str, Path] = {}
    failures: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        futures = {pool.submit(install, package, cache): package for package in chosen}
        for future in concurrent.futures.as_completed(futures):
            package = futures[future]
            try:
                results[package.name] = future.result()
            except InstallError as exc:
                failures.append(str(exc))
    if failures:
        raise InstallError("\n\n".join(failures))
    return {package.name: results[package.name] for package in chosen}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="packages to install (default: all in versions.json)")
    parser.add_argument("--list", action="store_true", help="show the pinned packages and whether each is installed")
    args = parser.parse_args(argv)
    cache = cache_dir()
    if args.list:
        for package in pinned().values():
            state = "installed" if is_installed(package, cache) else "missing"
            print(f"{package.name:16} {package.spec:40} {state:9} {entry(package, cache)}")
        return 0
    try:
        installed = install_all(args.names or None, cache)
    except InstallError as exc:
        print(f"install_agents: {exc}", file=sys.stderr)
        return 1
    for name, path in installed.items():
        print(f"{name:16} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
