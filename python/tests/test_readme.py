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


def test_the_package_readme_use_snippet_runs(tmp_path):
    """python/README.md's "Use" block runs as written (from the repository
    root, writing into a fresh folder instead of out/), and its signature
    comment is what compiling the example gives."""
    readme = (ROOT / "python" / "README.md").read_text()
    block = readme.split("## Use\n")[1].split("```python\n")[1].split("```")[0]
    assert 'compiled.write("out/")' in block
    block = block.replace('compiled.write("out/")', f"compiled.write({str(tmp_path / 'out')!r})")
    names: dict = {}
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(block, "python/README.md", "exec"), names)
    finally:
        os.chdir(here)
    shown = next(line for line in block.splitlines() if line.startswith("compiled.signature"))
    assert repr(names["compiled"].signature) == shown.split("#")[1].strip()
    assert (tmp_path / "out" / "manifest.json").is_file()
