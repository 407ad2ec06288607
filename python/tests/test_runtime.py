"""The binding's behaviour around the calls: the GIL is released while ccc
compiles, Ctrl-C stops a compile under way, concurrent compiles agree with
serial ones, a Rust panic reaches Python as an exception, and exceptions
keep their fields through pickling."""

from __future__ import annotations

import pickle
import signal
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


def test_a_panic_in_rust_is_an_internal_error_and_python_goes_on(capfd):
    with pytest.raises(ccc.InternalError) as caught:
        ccc._ccc._panic_for_test("boom")
    assert caught.value.kind == "Panic"
    assert "boom" in str(caught.value)
    # Where it happened is in the error, and nothing is printed (the
    # default hook printed `thread '<unnamed>' panicked at ...`).
    assert "panicked at python/src/lib.rs:" in str(caught.value)
    assert capfd.readouterr().err == ""
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


# A world whose compile of one rank takes a second or more: the proof
# streams every one of its 262,144 ranks, a chunk at a time.
HUGE = """Collective(op: AllReduce, dtype: F32, reduce: Add, count: 67108864, arch: Cayman,
    topology: (rank_n: 262144, local_rank_n: 16), channels: 1,
    algorithm: Hier((intra_reduce_scatter: Ring, inter_all_reduce: InterRdh, intra_all_gather: Ring)))"""


def interrupted_well_before(full, call):
    """Runs `call`, which runs to its end in `full` seconds, with a SIGINT
    raised a twentieth of the way in: it must raise KeyboardInterrupt in
    well under half that time."""
    assert full > 0.2, "the call was too quick to interrupt"
    timer = threading.Timer(full / 20, lambda: signal.raise_signal(signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        call()
    interrupted = time.perf_counter() - start
    timer.join()
    assert interrupted < full / 2, (interrupted, full)


def test_ctrl_c_stops_a_compile_under_way():
    """A SIGINT raised while a compile runs is a KeyboardInterrupt as soon
    as the compile reaches its next chunk of ranks, not once it is done:
    the interrupted call returns in well under half the time the whole
    compile takes, measured here first. (Before, the signal waited for the
    compile to finish.) The compile after it works as before."""
    program = ccc.parse(HUGE)
    start = time.perf_counter()
    whole = ccc.compile(program, ranks=[0])
    interrupted_well_before(time.perf_counter() - start, lambda: ccc.compile(program, ranks=[0]))
    again = ccc.compile(program, ranks=[0])
    assert again.signature == whole.signature
    assert [t.ctrl_spad for t in again.images[0].values()] == [t.ctrl_spad for t in whole.images[0].values()]


def test_ctrl_c_stops_a_write_before_it_replaces_the_folder(tmp_path):
    """A SIGINT raised while `Compiled.write` fills its new output is a
    KeyboardInterrupt before that output takes the folder's place: the
    folder still holds the output it held, whole, and nothing is left
    beside it. (Before, the write ran to its end, the folder replaced, and
    the interrupt came after, its result lost.) A write after it works.

    The signal is raised once the write's work folder appears beside the
    folder (the write is filling it), not at a time: a write that ran to
    its end would have replaced the folder, which the checks below see,
    whatever the machine's speed."""
    world = """Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: {count}, arch: Cayman,
        topology: (rank_n: 8192, local_rank_n: 16), channels: 1, algorithm: Ring)"""
    old = ccc.compile(world.format(count=1 << 20), verify=False)
    new = ccc.compile(world.format(count=1 << 21), verify=False)
    out = tmp_path / "out"
    old.write(out)
    stop = threading.Event()

    def interrupt_once_filling():
        while not stop.is_set():
            if any(p.name.startswith(".out.ccc-tmp-") for p in tmp_path.iterdir()):
                signal.raise_signal(signal.SIGINT)
                return
            time.sleep(0.001)

    watcher = threading.Thread(target=interrupt_once_filling)
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            new.write(out)
    finally:
        stop.set()
        watcher.join()
    assert (out / "manifest.json").read_text() == old.manifest_json()
    assert ccc.diagnose([out, old])["all_match"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert new.write(out)["replaced"]
    assert (out / "manifest.json").read_text() == new.manifest_json()


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


def _compile_in_child(text):
    """Run in a forked worker: a proven compile of every rank, and a
    diagnose of two specs (it lowers their images on the pool too)."""
    compiled = ccc.compile(text)
    return compiled.signature, compiled.proof is not None, ccc.diagnose([text, text])["all_match"]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_process_forked_after_a_compile_compiles():
    """multiprocessing's fork start method (Linux's default before Python
    3.14): the child has none of the parent's rayon threads, and a proven
    compile there waited for them forever. It now runs on a pool of its
    own, giving the parent's bytes, in a child and a grandchild alike."""
    import multiprocessing

    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    # The parent proves first, so that its global pool exists when it forks.
    here = ccc.compile(text)
    assert here.proof is not None
    fork = multiprocessing.get_context("fork")
    with fork.Pool(1) as pool:
        signature, proven, matched = pool.apply_async(_compile_in_child, (text,)).get(timeout=120)
    assert (signature, proven, matched) == (here.signature, True, True)
    # The child forks in turn (its pool is its own pid's: the grandchild,
    # which has none of its threads, builds another).
    with fork.Pool(1) as pool:
        assert pool.apply_async(_fork_again, (text,)).get(timeout=120) == here.signature


def _fork_again(text):
    import os

    ccc.compile(text)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(write, ccc.compile(text).signature.encode())
        os._exit(0)
    os.close(write)
    got = os.read(read, 64).decode()
    os.waitpid(child, 0)
    return got


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_fork_while_a_thread_holds_an_auto_cache_does_not_hang_the_child():
    """A thread searching through an AutoCache holds its lock; a fork then
    copies the lock held, by a thread the child does not have, and the
    child's next call through that cache waited forever. It now searches
    without the cache there (the same signature)."""
    import os

    # 60 distinct all-reduces on 1,024 ranks, each searched: about 20 ms a
    # call holding the lock.
    one = dict(ccc.parse((ROOT / "examples" / "allreduce_hier.ron").read_text()).to_dict(), algorithm="Auto")
    one["topology"] = {"rank_n": 1024, "local_rank_n": 64}
    auto = ccc.Program.from_dict({"collectives": [dict(one, count=4096 * (i + 1)) for i in range(60)]})
    expected = ccc.sign(auto)
    # Capacity 0 keeps nothing: every call searches, holding the lock.
    cache = ccc.AutoCache(capacity=0)
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            ccc.sign(auto, auto_cache=cache)

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        for i in range(5):
            time.sleep(0.01)
            read, write = os.pipe()
            child = os.fork()
            if child == 0:
                signal.alarm(60)  # a hang ends the child, failing below
                os.write(write, ccc.sign(auto, auto_cache=cache).encode())
                # Read (once: a held lock is waited on 5 s), it answers,
                # or says it cannot be read here; it waited for ever.
                try:
                    if i == 0:
                        len(cache)
                except RuntimeError as e:
                    if "make a new ccc.AutoCache in this process" not in str(e):
                        os._exit(3)
                os._exit(0)
            os.close(write)
            got = os.read(read, 64).decode()
            _, status = os.waitpid(child, 0)
            os.close(read)
            assert (got, status) == (expected, 0)
    finally:
        stop.set()
        worker.join()
