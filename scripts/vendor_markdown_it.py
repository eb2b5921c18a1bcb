"""Fetch the web page's Markdown renderer, markdown-it, from npm and check it against its pinned hashes.

    python scripts/vendor_markdown_it.py          # `npm pack markdown-it@VERSION`, check, write the vendored files
    python scripts/vendor_markdown_it.py --check  # exit 1 unless the vendored files are exactly the pinned ones

The hub's page (`src/omniagent/faces/hub/web/static/`) renders agents' Markdown with markdown-it's browser ES module
build (`dist/browser/markdown-it.esm.min.mjs`: one self-contained file, its dependencies bundled), shipped as it is
published, beside its LICENSE: nothing is built at install time and the page loads nothing from elsewhere. npm checks
the tarball against the registry's integrity hash; this script then checks both files against the SHA-256 pinned
here, so an upgrade is a deliberate edit of VERSION and the two hashes (read them from a fresh `npm pack`).
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "src" / "omniagent" / "faces" / "hub" / "web" / "static" / "vendor"
VERSION = "15.0.3"
# file in the package tarball → (its name in VENDOR, its SHA-256)
FILES = {
    "package/dist/browser/markdown-it.esm.min.mjs": (
        "markdown-it.esm.min.mjs",
        "d5432491790141da046b1197353705db03264f40b5727f3b4b591f5aba193e30",
    ),
    "package/LICENSE": ("markdown-it-LICENSE.txt", "792c48c5a849a15fdf9e37e8bcf9e6d1dd13b32b46c642a748a0a46a9919d473"),
}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check() -> list[str]:
    """What differs between the vendored files and the pinned ones (empty: they are the pinned ones)."""
    problems = []
    for name, digest in FILES.values():
        path = VENDOR / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif _sha256(path.read_bytes()) != digest:
            problems.append(f"{name}: not markdown-it {VERSION} as pinned (sha256 differs)")
    return problems


def fetch() -> None:
    """`npm pack` the pinned version into a temporary folder, check each file's hash, and write it to VENDOR."""
    with tempfile.TemporaryDirectory() as temp:
        packed = subprocess.run(
            ["npm", "pack", f"markdown-it@{VERSION}", "--silent"], cwd=temp, capture_output=True, text=True
        )
        if packed.returncode != 0:
            raise SystemExit(f"npm pack failed: {packed.stderr.strip()}")
        tarball = Path(temp) / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            for member, (name, digest) in FILES.items():
                extracted = archive.extractfile(member)
                if extracted is None:
                    raise SystemExit(f"{member} is not in markdown-it {VERSION}'s tarball")
                data = extracted.read()
                if _sha256(data) != digest:
                    raise SystemExit(f"{member} of markdown-it {VERSION} has sha256 {_sha256(data)}, not {digest}")
                VENDOR.mkdir(parents=True, exist_ok=True)
                (VENDOR / name).write_bytes(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the vendored files (no network)")
    if not parser.parse_args().check:
        fetch()
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
