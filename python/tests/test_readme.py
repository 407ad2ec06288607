"""The README's "From Python" snippet runs, from the repository root, and
prints the signature its comment shows."""

from __future__ import annotations

import contextlib
import io
import os

from conftest import ROOT


def test_the_readme_python_snippet_runs_and_prints_what_it_says():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## From Python\n")[1]
    block = section.split("```python\n")[1].split("```")[0]
    printed = io.StringIO()
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(here)
    shown = next(line for line in block.splitlines() if "print(compiled.signature)" in line)
    assert printed.getvalue().strip() == shown.split("#")[1].strip()
