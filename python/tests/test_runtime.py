"""The binding's behaviour around the calls: the GIL is released while ccc
compiles, concurrent compiles agree with serial ones, a Rust panic reaches
Python as an exception, and exceptions keep their fields through pickling."""

from __future__ import annotations

import pickle
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import ccc
from conftest import ROOT

# A world large enough that one verified compile takes a while: a rooted
# op, not symmetric, so its proof visits every member (a 1,024-rank ring
# all-reduce, symmetric by its phases, proves in milliseconds).
LARGE = """Collective(op: Broadcast, dtype: Bf16, count: 16777216, arch: Cayman,
    topology: (rank_n: 1024, local_rank_n: 16), channels: 4, algorithm: Ring, root: 7)"""


def test_a_panic_in_rust_is_an_internal_error_and_python_goes_on():
    with pytest.raises(ccc.InternalError) as caught:
        ccc._ccc._panic_for_test("boom")
    assert caught.value.kind == "Panic"
    assert "boom" in str(caught.value)
    assert "defect" in caught.value.help
    # The interpreter and the module still work.
    assert len(ccc.sign((ROOT / "examples" / "allreduce_ring.ron").read_text())) == 32


def test_the_gil_is_released_while_compiling():
    """Python code runs in another thread while a compile is under way: the
    main thread's loop iterations, stamped with the clock, fall inside the
    compile's own start and end (held, the GIL would let none run there)."""
    program = ccc.parse(LARGE)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        ccc.compile(program)
        span["end"] = time.perf_counter()

    stamps = []
    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    margin = 2 * sys.getswitchinterval()
    assert span["end"] - span["start"] > 4 * margin, "the compile was too quick to show anything"
    inside = [t for t in stamps if span["start"] + margin < t < span["end"] - margin]
    assert len(inside) > 100


def test_concurrent_compiles_agree_with_serial_ones():
    text = (ROOT / "examples" / "allreduce_hier.ron").read_text()
    program = ccc.parse(text)
    serial = {r: ccc.compile(program, ranks=[r], verify=False).images[r] for r in range(8)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda r: (r, ccc.compile(program, ranks=[r], verify=False)), range(8)))
    for rank, compiled in results:
        assert {t: tp.ctrl_spad + tp.slot_spad for t, tp in compiled.images[rank].items()} == {
            t: tp.ctrl_spad + tp.slot_spad for t, tp in serial[rank].items()
        }
    # One Compiled read from many threads at once.
    shared = ccc.compile(program, ranks=[0, 1])
    with ThreadPoolExecutor(max_workers=4) as pool:
        signatures = set(pool.map(lambda _: shared.manifest["signature"], range(16)))
    assert signatures == {shared.signature}


def test_exceptions_keep_their_fields_through_pickling():
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.compile((ROOT / "examples" / "invalid" / "several_problems.ron").read_text())
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is ccc.ValidationError
    assert again.problems == caught.value.problems and str(again) == str(caught.value)


def test_the_stubs_name_what_the_native_module_has():
    # Every class, function and constant `_ccc.pyi` declares exists in the
    # native module and the other way round (a TypedDict declared only in
    # the stubs once failed `from ccc import Proof`); the dicts' TypedDicts
    # are `ccc._types`', re-exported.
    import ast

    import ccc._ccc as native
    import ccc._types as types

    stub = ast.parse((ROOT / "python" / "ccc" / "_ccc.pyi").read_text())
    declared = set()
    for node in stub.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"]:
            assert ast.literal_eval(node.value) == native.__all__
    assert declared == set(native.__all__)
    reexported = {a.name for n in stub.body if isinstance(n, ast.ImportFrom) and n.module == "_types" for a in n.names}
    typed = {
        name
        for name, v in vars(types).items()
        if isinstance(v, type) and name != "TypedDict" and v.__module__ == types.__name__
    }
    assert reexported == typed and typed <= set(ccc.__all__)
