"""`ccc.compile`: the bytes of every shipped example equal the files the
CLI writes, the manifest is the CLI's `manifest.json` text, `ranks`,
`verify` and `memory_budget` do what they say, `write` behaves as
`ccc compile -o`, and each failure raises its exception with its fields."""

from __future__ import annotations

import json
import os
import sys

import pytest

import ccc
from conftest import EXAMPLES, INVALID, ROOT, example_ids

IMAGE_FILES = ("ctrl_spad", "slot_spad", "neff_configs")


def read_tree(out):
    """{relative path: bytes} of every file under `out`."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def images_as_files(compiled):
    """The images as the files `ccc compile -o` writes, by relative path."""
    files = {}
    for rank, topsps in compiled.images.items():
        for topsp, tp in topsps.items():
            assert (tp.rank, tp.topsp) == (rank, topsp)
            for name in IMAGE_FILES:
                files[f"rank-{rank}/topsp-{topsp}/{name}.bin"] = getattr(tp, name)
    return files


@pytest.mark.parametrize("path", EXAMPLES, ids=example_ids(EXAMPLES))
def test_every_example_gives_the_cli_bytes(path, cli, tmp_path):
    out = tmp_path / "out"
    cli("compile", path, "-o", out, "-q")
    written = read_tree(out)

    compiled = ccc.compile(path.read_text())
    manifest = written.pop("manifest.json")
    assert images_as_files(compiled) == written
    assert compiled.manifest_json().encode() == manifest
    assert compiled.manifest == json.loads(manifest)
    assert compiled.signature == cli("sign", path).stdout.strip()
    assert compiled.ranks == sorted(compiled.images)
    assert compiled.manifest["signature"] == compiled.signature


def test_ranks_emit_only_those_ranks_with_the_same_bytes():
    text = (ROOT / "examples" / "allreduce_hier.ron").read_text()
    world = ccc.compile(text)
    some = ccc.compile(ccc.parse(text), ranks=[17, 3, 17])
    assert some.ranks == [3, 17]
    assert list(some.images) == [3, 17]
    for rank in (3, 17):
        assert images_as_files(some)  # not empty
        for topsp, tp in some.images[rank].items():
            assert tp.ctrl_spad == world.images[rank][topsp].ctrl_spad
            assert tp.slot_spad == world.images[rank][topsp].slot_spad
            assert tp.neff_configs == world.images[rank][topsp].neff_configs
            assert len(tp.neff_configs) == 3592
    assert some.signature == world.signature


def test_the_proof_summary_and_verify_false():
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    proven = ccc.compile(text)
    proof = proven.proof
    assert proof["certified"] is False
    [post] = proof["postconditions"]
    assert post["collective"] == 0 and post["members"] == 8 and post["transfers"] > 0
    assert "every rank" in post["claim"]
    assert set(proof["protocol"]) == {"chains", "records", "steps", "signals"}
    # 8 ranks x 2 TOP_SPs x 3 images, each proven to decode back.
    assert proof["images_checked"] == 8 * 2 * 3
    # The ring's one group is symmetric, shown from its phases' structure.
    assert (proof["symmetric_groups"], proof["symmetric_by_phase"]) == (1, 1)
    rooted = ccc.compile((ROOT / "examples" / "reduce_ring.ron").read_text()).proof
    assert (rooted["symmetric_groups"], rooted["symmetric_by_phase"]) == (0, 0)
    assert proof["postcondition_seconds"] >= 0
    assert proven.manifest["proof"]["protocol"] == proof["protocol"]
    # The TypedDicts the stubs name, importable from ccc, hold every key.
    assert set(proof) == set(ccc.Proof.__annotations__)
    assert set(post) == set(ccc.Postcondition.__annotations__)
    assert set(proof["protocol"]) == set(ccc.Protocol.__annotations__)

    unproven = ccc.compile(text, verify=False)
    assert unproven.proof is None
    assert "proof" not in unproven.manifest
    assert images_as_files(unproven) == images_as_files(proven)
    assert "not verified" in repr(unproven) and "proven" in repr(proven)


def test_signature_fields_hash_to_the_signature():
    compiled = ccc.compile((ROOT / "examples" / "reduce_ring.ron").read_text(), ranks=[0])
    fields = compiled.signature_fields
    assert fields[0][0] == "format_version" and fields[0][1] == str(ccc.FORMAT_VERSION)
    assert compiled.manifest["signature_fields"] == [{"name": n, "value": v} for n, v in fields]


@pytest.mark.parametrize("path", INVALID, ids=example_ids(INVALID))
def test_every_invalid_example_raises_a_located_ccc_error(path, cli, tmp_path):
    with pytest.raises(ccc.CccError) as caught:
        ccc.compile(path.read_text(), ranks=[0])
    e = caught.value
    assert type(e) in (ccc.ParseError, ccc.ValidationError, ccc.BuildError, ccc.LowerError)
    # Located: by line and column, by field path, or by rank.
    assert e.line is not None or e.field is not None or e.rank is not None, e
    assert e.kind and str(e)
    # The CLI refuses it too, as bad input (exit 2).
    assert cli("compile", path, "-o", tmp_path / "out", "-q", ok=False).returncode == 2
    assert not (tmp_path / "out").exists()


def test_validation_error_lists_every_problem_by_field_path():
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.compile((ROOT / "examples" / "invalid" / "channels_33.ron").read_text())
    e = caught.value
    assert (e.kind, e.field, e.collective) == ("OutOfRange", "channels", 0)
    assert e.accepted == "1..=32"
    assert [p.field for p in e.problems] == ["channels"]

    with pytest.raises(ccc.ValidationError) as caught:
        ccc.compile((ROOT / "examples" / "invalid" / "several_problems.ron").read_text())
    problems = caught.value.problems
    assert len(problems) > 1
    assert all(isinstance(p, ccc.Problem) and p.message.startswith(p.field) for p in problems)
    assert caught.value.field == problems[0].field

    with pytest.raises(ccc.ValidationError) as caught:
        ccc.sign((ROOT / "examples" / "invalid" / "program_arch_mismatch.ron").read_text())
    [problem] = caught.value.problems
    assert problem.field == "collectives[1].arch" and problem.collective == 1
    assert problem.accepted and problem.accepted.startswith("Cayman")


def test_problems_past_the_first_256_are_counted_not_listed():
    # 4,096 copies of one pair: every copy after the first sends and
    # receives again, two problems each.
    pairs = ", ".join(["(0, 1)"] * 4096)
    spec = (
        "Collective(op: Permute, dtype: F32, count: 64, arch: Cayman,"
        f" topology: (rank_n: 16, local_rank_n: 8), channels: 1, algorithm: Ring, peers: [{pairs}])"
    )
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.sign(spec)
    e = caught.value
    assert str(e).startswith("8190 problems in the spec:")
    assert len(e.problems) == 257
    last = e.problems[-1]
    assert (last.kind, last.field) == ("Unlisted", "...")
    assert "7934 more problems, not listed (validation lists the first 256)" in last.message


def test_a_rank_outside_the_world_is_a_lower_error():
    with pytest.raises(ccc.LowerError) as caught:
        ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[8])
    e = caught.value
    assert (e.kind, e.rank) == ("NoSuchRank", 8)
    assert "8 ranks" in str(e)
    # What the message says would be accepted, as the Rust error's
    # `accepted()` gives it (it was None).
    assert e.accepted == "ranks 0 to 7"


def test_a_schedule_that_does_not_fit_the_device_is_a_lower_error_located_by_rank_and_step(cli, tmp_path):
    spec = (
        "Collective(op: AllGather, dtype: Bf16, count: 1048576, arch: Cayman,"
        " topology: (rank_n: 1024, local_rank_n: 16), channels: 1, algorithm: Mesh)"
    )
    with pytest.raises(ccc.LowerError) as caught:
        ccc.compile(spec, ranks=[0], verify=False)
    e = caught.value
    assert e.kind == "Limit"
    assert (e.rank, e.topsp, e.collective, e.step) == (0, 0, 0, 0)
    assert "mesh events per TOP_SP is at most 108 on Cayman; this schedule needs 1023" in str(e)
    # The CLI refuses the same spec with the same words.
    (tmp_path / "mesh.ron").write_text(spec)
    done = cli("compile", tmp_path / "mesh.ron", "-o", tmp_path / "out", "-q", "--no-verify", "--rank", "0", ok=False)
    assert done.returncode == 2
    assert "mesh events per TOP_SP is at most 108" in " ".join(done.stderr.split())


def test_a_rank_compiled_alone_is_refused_when_another_rank_does_not_fit(cli, tmp_path):
    # Sixty Mesh permutes pair ranks 0 and 1 on Sunda (50 mesh events per
    # TOP_SP), one pairs ranks 2 and 3: rank 2 fits, rank 0 does not, and
    # no world can load the program. Rank 2 alone without the proof was
    # compiled and written; it is refused now, naming rank 0.
    def permute(a, b):
        return (
            "Collective(op: PermuteReduce, dtype: F32, reduce: Add, count: 1024, arch: Sunda,"
            " topology: (rank_n: 8, local_rank_n: 8), channels: 1, algorithm: Mesh,"
            f" peers: [({a}, {b}), ({b}, {a})])"
        )

    spec = "Program(collectives: [" + ", ".join([permute(0, 1)] * 60 + [permute(2, 3)]) + "])"
    with pytest.raises(ccc.LowerError) as caught:
        ccc.compile(spec, ranks=[2], verify=False)
    e = caught.value
    assert (e.kind, e.rank, e.collective, e.topsp, e.step) == ("Limit", 0, 50, None, None)
    assert "mesh events per TOP_SP is at most 50 on Sunda; this choice needs 51" in str(e)
    assert e.help and "choose Ring" in e.help
    (tmp_path / "permutes.ron").write_text(spec)
    done = cli(
        "compile", tmp_path / "permutes.ron", "-o", tmp_path / "out", "-q", "--no-verify", "--rank", "2", ok=False
    )
    assert done.returncode == 2
    said = " ".join(done.stderr.replace("│", " ").split())
    assert "rank 0, collective 50: mesh events per TOP_SP is at most 50 on Sunda" in said, said
    assert "but rank 0 does not (it was not compiled, and no proof lowered it)" in said, said
    assert not (tmp_path / "out").exists()


def test_a_budget_too_small_is_a_memory_budget_error():
    # 64 KiB: one rank's output fits (9 KiB), not with the proof (156 KiB).
    with pytest.raises(ccc.MemoryBudgetError) as caught:
        ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), memory_budget=64 << 10)
    assert caught.value.accepted and caught.value.help
    # The ways out are the CLI's, a certificate among them (`proven_by`,
    # the CLI's --proven-by).
    assert "skipping the proof" in caught.value.accepted
    assert "taking the proof from an earlier compile's certificate" in caught.value.accepted
    assert "compiling only the ranks needed" in caught.value.accepted
    # `help` names the ways out this call has, as its arguments say them.
    assert caught.value.help == (
        "ranks=[...] with verify=False, ranks=[...] with proven_by=<an earlier verified compile of this spec>, "
        "a world of fewer ranks, or raise memory_budget"
    )
    # Ranks named already are not asked for again.
    with pytest.raises(ccc.MemoryBudgetError) as caught:
        ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0], memory_budget=64 << 10)
    assert caught.value.help == (
        "verify=False, proven_by=<an earlier verified compile of this spec>, a world of fewer ranks, or raise "
        "memory_budget"
    )
    # Without the proof, skipping it is no way out (help offered it).
    with pytest.raises(ccc.MemoryBudgetError) as caught:
        ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), memory_budget=64 << 10, verify=False)
    assert caught.value.help == "compile fewer ranks (ranks=[...]), a world of fewer ranks, or raise memory_budget"


def test_images_are_read_only_and_an_empty_rank_list_is_refused():
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    compiled = ccc.compile(text, ranks=[2])
    with pytest.raises(TypeError):
        compiled.images[3] = compiled.images[2]
    with pytest.raises(TypeError):
        del compiled.images[2][0]
    assert compiled.ranks == [2] and list(compiled.images[2]) == [0, 1]
    with pytest.raises(ValueError, match="ranks=None"):
        ccc.compile(text, ranks=[])
    # A negative or huge rank, or a negative budget, is a ValueError that
    # names the argument (not Python's bare OverflowError).
    with pytest.raises(ValueError, match=r"ranks\[1\] is -1, not a rank"):
        ccc.compile(text, ranks=[0, -1])
    with pytest.raises(ValueError, match=r"ranks\[0\] is 4294967296"):
        ccc.compile(text, ranks=[2**32])
    with pytest.raises(ValueError, match="memory_budget is -1"):
        ccc.compile(text, memory_budget=-1)
    # Past any machine integer too: still the argument's ValueError.
    with pytest.raises(ValueError, match=r"ranks\[0\] is 1180591620717411303424, not a rank"):
        ccc.compile(text, ranks=[2**70])
    with pytest.raises(ValueError, match=f"memory_budget is {2**200}; accepted"):
        ccc.compile(text, memory_budget=2**200)
    with pytest.raises(TypeError, match=r"ranks\[0\]: .*; accepted: an int"):
        ccc.compile(text, ranks=["0"])
    # A bool is no rank and no budget (True was rank 1 and a 1-byte
    # budget), nor is text or bytes a list of ranks (b"\x07" was rank 7).
    with pytest.raises(TypeError, match=r"ranks\[1\] is False, a bool"):
        ccc.compile(text, ranks=[0, False])
    with pytest.raises(TypeError, match="memory_budget is True, a bool"):
        ccc.compile(text, memory_budget=True)
    class Bytes(bytes):
        pass

    for given in [b"\x07", "01", bytearray(b"\x01"), memoryview(b"\x01"), Bytes(b"\x01"), 3]:
        with pytest.raises(TypeError, match=f"ranks is of type {type(given).__name__}; accepted: a list"):
            ccc.compile(text, ranks=given)

    # Anything else that iterates ints is read item by item.
    class OldStyle:
        def __getitem__(self, i):
            if i < 2:
                return i + 4
            raise IndexError

    import array

    assert ccc.compile(text, ranks=(1, 3)).ranks == [1, 3]
    assert ccc.compile(text, ranks=range(2)).ranks == [0, 1]
    assert ccc.compile(text, ranks=OldStyle()).ranks == [4, 5]
    assert ccc.compile(text, ranks=array.array("I", [2])).ranks == [2]

    # An integer type whose __index__ raises: what it raised, as the cause.
    class Broken:
        def __index__(self):
            raise ValueError("idx boom")

    with pytest.raises(ValueError, match="idx boom"):
        ccc.compile(text, ranks=[Broken()])

    # An integer type with only __index__ (no arithmetic of its own) is
    # read as its int, as from_dict reads one: a rank, a budget, a capacity.
    class Whole:
        def __init__(self, n):
            self.n = n

        def __index__(self):
            return self.n

    assert ccc.compile(text, ranks=[Whole(3)], memory_budget=Whole(1 << 30)).ranks == [3]
    assert ccc.AutoCache(Whole(4)).capacity == 4
    with pytest.raises(ValueError, match=r"ranks\[0\] is -1, not a rank"):
        ccc.compile(text, ranks=[Whole(-1)])


def test_compile_refuses_what_is_not_a_spec():
    with pytest.raises(TypeError):
        ccc.compile(42)
    with pytest.raises(ValueError, match="not a rank"):
        ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[-1])


def test_write_is_the_cli_output_and_keeps_user_files(cli, tmp_path):
    path = ROOT / "examples" / "allgather_mesh.ron"
    cli("compile", path, "-o", tmp_path / "cli", "-q")
    compiled = ccc.compile(path.read_text())
    out = tmp_path / "py"
    written = compiled.write(out)
    assert read_tree(out) == read_tree(tmp_path / "cli")
    assert written["files"] == len(read_tree(out)) and written["replaced"] is False
    assert set(written) == set(ccc.Written.__annotations__)

    # Over its own output, with a file of the user's inside: replaced, kept.
    (out / "notes.txt").write_text("mine")
    again = ccc.compile(path.read_text(), ranks=[0]).write(str(out))
    assert again["replaced"] is True and again["kept"] == ["notes.txt"] and again["unremoved"] == []
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "rank-1").exists()

    # A user's file where the output writes one of its own: refused,
    # named, and what to do said (help was None).
    (out / "rank-1").write_text("mine too")
    with pytest.raises(ccc.OutputError) as caught:
        compiled.write(out)
    assert (caught.value.kind, caught.value.field) == ("InTheWay", "rank-1")
    assert caught.value.help.startswith("ccc never overwrites a file it did not write: move that file elsewhere")
    assert (out / "rank-1").read_text() == "mine too"


def test_write_refuses_a_mount_point_inside_the_folder(tmp_path):
    import subprocess

    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    out = tmp_path / "out"
    compiled.write(out)
    (out / "data").mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "ccc-test", str(out / "data")], capture_output=True)
    if mount.returncode != 0:
        pytest.skip("mount -t tmpfs is not available here (needs root)")
    try:
        (out / "data" / "f").write_text("mine")
        before = read_tree(out)
        with pytest.raises(ccc.OutputError) as caught:
            compiled.write(out)
        assert (caught.value.kind, caught.value.field) == ("MountInside", "data")
        assert "data is a mount point (another file system, or a folder bound there) inside it" in str(caught.value)
        assert caught.value.help.startswith("nothing was written; unmount it")
        assert read_tree(out) == before
    finally:
        # Every test mount under tmp_path, wherever a write that failed to
        # refuse it moved it (into the old tree), deepest first.
        with open("/proc/self/mounts") as mounts:
            under = [f[1] for f in (line.split(" ") for line in mounts) if f[0] == "ccc-test" and f[1].startswith(str(tmp_path))]
        for path in sorted(under, key=len, reverse=True):
            subprocess.run(["umount", path], check=True)


def test_write_refuses_a_folder_that_is_not_ccc_output(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "main.py").write_text("print()")
    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    with pytest.raises(ccc.OutputError) as caught:
        compiled.write(tmp_path / "project")
    assert caught.value.kind == "NotOurs"
    # The help says what to do, not the reason again.
    assert caught.value.help.startswith("ccc replaces only a folder it wrote itself (its manifest.json")
    assert caught.value.help.endswith("write to another folder, or move that folder's contents elsewhere")
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["main.py"]
    with pytest.raises(ccc.OutputError) as caught:
        compiled.write(tmp_path / "project" / "main.py")
    assert caught.value.help == "write names a folder to write (it need not exist yet); pass a path that is not a file"


def test_write_takes_a_path_as_open_does(tmp_path):
    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    for name, given in [("s", str(tmp_path / "s")), ("b", bytes(tmp_path / "b")), ("p", tmp_path / "p")]:
        assert compiled.write(given)["files"] > 0, name
        assert (tmp_path / name / "manifest.json").is_file()
    with pytest.raises(TypeError, match=r"str, bytes or os.PathLike"):
        compiled.write(None)
    with pytest.raises(ValueError, match="'' names none"):
        compiled.write("")

    # A path object whose __fspath__ raises: what it raised.
    class Broken:
        def __fspath__(self):
            raise RuntimeError("fspath boom")

    with pytest.raises(RuntimeError, match="fspath boom"):
        compiled.write(Broken())

    # One whose __fspath__ gives bytes names its file as open() reads it,
    # for proven_by and diagnose too.
    class BytesPath:
        def __init__(self, path):
            self.path = path

        def __fspath__(self):
            return bytes(self.path)

    world = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text())
    world.write(BytesPath(tmp_path / "world"))
    assert (tmp_path / "world" / "manifest.json").is_file()
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    assert ccc.compile(text, ranks=[3], proven_by=BytesPath(tmp_path / "world")).ranks == [3]
    assert ccc.diagnose([BytesPath(tmp_path / "world"), text])["all_match"]


@pytest.mark.skipif(sys.platform != "linux", reason="symbolic links")
def test_write_to_a_link_to_nothing_says_so(tmp_path):
    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for given in [tmp_path / "dangling", tmp_path / "dangling" / "out"]:
        with pytest.raises(ccc.OutputError) as caught:
            compiled.write(given)
        assert "is a symbolic link to nothing" in caught.value.help, given
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling"]


@pytest.mark.skipif(sys.platform != "linux", reason="a file name of any bytes: Linux file systems")
def test_write_names_the_files_it_kept_as_open_takes_them(tmp_path):
    # A user's file whose name is not UTF-8 is kept, and named as
    # os.fsdecode names it (a lone surrogate for the byte), so that the
    # name opens it; it came back with U+FFFD, which names no file.
    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    out = tmp_path / "out"
    compiled.write(out)
    mine = os.fsdecode(b"mine\xfe.txt")
    (out / mine).write_text("mine")
    again = compiled.write(out)
    assert again["kept"] == [mine]
    assert (out / again["kept"][0]).read_text() == "mine"


def _program(algorithm: str, n: int = 40) -> str:
    one = (
        "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 1024, arch: Cayman,"
        f" topology: (rank_n: 32, local_rank_n: 16), channels: 4, algorithm: {algorithm})"
    )
    return "Program(collectives: [" + ", ".join([one] * n) + "])"


def test_auto_fits_a_program_into_the_ctrl_spad_and_a_program_that_cannot_fit_is_refused():
    # Each as validation chose it, one at a time, 40 small all-reduces
    # take more than the 64 CTRL SPAD slots: `Auto` fits them, and the
    # manifest says which moved, each from the cheapest of its
    # alternatives, which takes more slots or more mesh events.
    compiled = ccc.compile(_program("Auto"), verify=False)
    autos = [c["cost"]["auto"] for c in compiled.manifest["collectives"]]
    fitted = [a["fitted"] for a in autos if "fitted" in a]
    assert fitted and all(f["capacity"] == 64 and f["max_events"] == 108 for f in fitted)
    assert all(f["slots"] < f["cheapest_slots"] or f["events"] < f["cheapest_events"] for f in fitted)
    assert all(len(tp.ctrl_spad) <= 4096 for tp in compiled.images[0].values())
    # Written InterRdh, two slots each: refused at validation.
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.compile(_program("InterRdh"), verify=False)
    e = caught.value
    assert (e.kind, e.field, e.collective) == ("CtrlSpadFull", "collectives", None)
    assert e.accepted.startswith("at most 64 slots")
    assert "take 80 slots of the CTRL SPAD" in str(e)


def test_an_argument_of_the_wrong_type_is_named():
    """`verify`, `auto_cache`, `decode`'s `data` and `AutoCache`'s
    `capacity` said only "'int' object is not an instance of 'bool'" (or
    took `True` for 1): each names itself, the value's type and what is
    accepted; `decode` reads a `bytearray` as it reads `bytes`."""
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    cases = [
        (lambda: ccc.compile(text, verify=0), "verify is 0, a value of type `int`; accepted: True or False"),
        (lambda: ccc.compile(text, auto_cache={}), "auto_cache is {}, a value of type `dict`; accepted: a ccc.AutoCache, or None"),
        (lambda: ccc.sign(text, auto_cache=5), "auto_cache is 5, a value of type `int`; accepted: a ccc.AutoCache, or None"),
        (lambda: ccc.decode(memoryview(b"\0" * 8), "ctrl"), "data is a value of type `memoryview`; accepted: an image's bytes"),
        (lambda: ccc.AutoCache(True), "capacity is True, a bool; accepted: an int"),
        (lambda: ccc.AutoCache(2.5), "capacity: "),
    ]
    for call, said in cases:
        with pytest.raises(TypeError) as caught:
            call()
        assert str(caught.value).startswith(said), str(caught.value)
    # numpy's bool reads as a bool, as PyO3 reads one (a stand-in type: the
    # same module and name, without numpy installed).
    numpy_bool = type("bool_", (), {"__bool__": lambda self: False, "__module__": "numpy"})
    assert ccc.compile(text, ranks=[0], verify=numpy_bool()).proof is None
    compiled = ccc.compile(text, ranks=[0], verify=False, auto_cache=None)
    image = compiled.images[0][0].ctrl_spad
    assert ccc.decode(bytearray(image), "ctrl") == ccc.decode(image, "ctrl")
    assert ccc.sign(text, auto_cache=ccc.AutoCache(capacity=1)) == compiled.signature


def test_proven_by_takes_the_world_proof_from_an_earlier_compile(cli, tmp_path):
    """`proven_by` is the CLI's `--proven-by`: one rank compiled under the
    proof of an earlier verified compile gives the images a proven compile
    of it gives, certified, from a `Compiled`, its manifest (dict or JSON
    text) or its output folder or `manifest.json`; the CLI writes the same
    bytes under the same certificate."""
    text = (ROOT / "examples" / "allreduce_hier.ron").read_text()
    world = ccc.compile(text, ranks=[0])
    proven = ccc.compile(text, ranks=[5])
    world.write(tmp_path / "world")
    forms = {
        "Compiled": world,
        "dict": world.manifest,
        "JSON text": world.manifest_json(),
        "folder": tmp_path / "world",
        "manifest.json": tmp_path / "world" / "manifest.json",
    }
    assert not proven.proof["certified"]
    for form, certificate in forms.items():
        one = ccc.compile(text, ranks=[5], proven_by=certificate)
        assert one.proof["certified"] is True, form
        assert one.signature == proven.signature, form
        assert images_as_files(one) == images_as_files(proven), form
    (tmp_path / "hier.ron").write_text(text)
    args = ("compile", tmp_path / "hier.ron", "-o", tmp_path / "five", "-q", "--rank", "5")
    cli(*args, "--proven-by", tmp_path / "world")
    written = read_tree(tmp_path / "five")
    assert {k: v for k, v in written.items() if k.endswith(".bin")} == images_as_files(one)


def test_proven_by_refuses_what_does_not_vouch_for_the_schedule(tmp_path):
    text = (ROOT / "examples" / "allreduce_hier.ron").read_text()
    world = ccc.compile(text, ranks=[0])
    other = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    with pytest.raises(ccc.CertificateError) as caught:
        ccc.compile(text, ranks=[5], proven_by=other)
    assert caught.value.kind == "OtherSchedule"
    assert f"the certificate proved the schedule signed {other.signature}" in str(caught.value)
    unproven = ccc.compile(text, ranks=[0], verify=False)
    with pytest.raises(ccc.CertificateError) as caught:
        ccc.compile(text, ranks=[5], proven_by=unproven)
    assert caught.value.kind == "NotProven"
    assert caught.value.help.startswith("its compile ran with verify=False")
    # A signed field edited: the signature is no longer its digest.
    edited = world.manifest
    count = next(f for f in edited["signature_fields"] if f["name"] == "collectives[0].count")
    count["value"] = "8"
    with pytest.raises(ccc.CertificateError) as caught:
        ccc.compile(text, ranks=[5], proven_by=edited)
    assert caught.value.kind == "Corrupt"
    # A figure of the proof section edited: not what a proof reports.
    edited = world.manifest
    edited["proof"]["protocol"]["signals"] += 1
    with pytest.raises(ccc.CertificateError) as caught:
        ccc.compile(text, ranks=[5], proven_by=edited)
    assert caught.value.kind == "ProofMismatch" and caught.value.field == "proof.protocol.signals"
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, ranks=[5], proven_by={"signature": "0" * 32})
    assert caught.value.kind == "NotAManifest" and caught.value.field == "proven_by"
    assert "proven_by is not a ccc manifest: missing field" in str(caught.value)
    # A value JSON cannot carry is refused as any manifest that does not
    # read is, naming where it sits.
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, ranks=[5], proven_by=dict(world.manifest, proof={1, 2}))
    assert caught.value.kind == "NotAManifest" and caught.value.field == "proven_by"
    said = "proven_by is not a ccc manifest: proof: a value of type `set` is not one a manifest holds"
    assert str(caught.value).startswith(said)
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, ranks=[5], proven_by="Collective(op: AllReduce)")
    assert "proven_by is not JSON" in str(caught.value)
    # A path's errors name the file and proven_by; a str naming one is
    # read as JSON, as documented, and says how to read it as a path.
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, ranks=[5], proven_by=tmp_path / "nowhere" / "manifest.json")
    assert caught.value.kind == "Io" and caught.value.field == "proven_by"
    assert f"proven_by: cannot read {tmp_path / 'nowhere' / 'manifest.json'}" in str(caught.value)
    (tmp_path / "spec.ron").write_text(text)
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, ranks=[5], proven_by=tmp_path / "spec.ron")
    assert f"proven_by {tmp_path / 'spec.ron'} is not JSON: expected value at line 1 column 1" in str(caught.value)
    world.write(tmp_path / "world")
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, ranks=[5], proven_by=str(tmp_path / "world"))
    assert "pass pathlib.Path(" in caught.value.help
    # A mapping of another kind is read as its dict.
    import types

    one = ccc.compile(text, ranks=[5], proven_by=types.MappingProxyType(world.manifest))
    assert one.proof["certified"] is True
    with pytest.raises(TypeError, match="proven_by takes a ccc.Compiled"):
        ccc.compile(text, ranks=[5], proven_by=5)
    # As the CLI's --no-verify and --proven-by conflict.
    with pytest.raises(ValueError, match="verify=False skips the proof"):
        ccc.compile(text, ranks=[5], verify=False, proven_by=world)
