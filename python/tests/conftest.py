"""Shared fixtures: the repository's paths, the shipped examples, and the
`ccc` command-line tool the Python results are compared with.

The CLI is `$CCC_CLI` when set, else the binary cargo builds into
`target/debug/ccc` (`./test` runs `cargo test --workspace` first, which
builds it); when absent it is built here with `cargo build --bin ccc`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.ron"))
INVALID = sorted((ROOT / "examples" / "invalid").glob("*.ron"))


def _cli() -> Path:
    given = os.environ.get("CCC_CLI")
    if given:
        return Path(given)
    built = ROOT / "target" / "debug" / "ccc"
    if not built.exists():
        subprocess.run(["cargo", "build", "--quiet", "--bin", "ccc"], cwd=ROOT, check=True)
    return built


@pytest.fixture(scope="session")
def cli():
    """Runs the `ccc` CLI with the arguments given; the CompletedProcess."""
    binary = _cli()

    def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([str(binary), *map(str, args)], cwd=ROOT, capture_output=True, text=True)
        if ok:
            assert done.returncode == 0, f"ccc {' '.join(map(str, args))}: {done.stderr}"
        return done

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """Runs the CLI and reads its stdout as JSON."""

    def run(*args: str) -> object:
        done = cli(*args, ok=False)
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    return run


def example_ids(paths: List[Path]) -> List[str]:
    return [p.stem for p in paths]
