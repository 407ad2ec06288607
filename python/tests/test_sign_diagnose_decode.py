"""`ccc.sign`, `ccc.diagnose` and `ccc.decode` against `ccc sign`,
`ccc diagnose --json` and `ccc decode --format json`."""

from __future__ import annotations

import hashlib
import json

import pytest

import ccc
from conftest import EXAMPLES, ROOT, example_ids


@pytest.mark.parametrize("path", EXAMPLES, ids=example_ids(EXAMPLES))
def test_sign_is_the_cli_signature(path, cli):
    assert ccc.sign(path.read_text()) == cli("sign", path).stdout.strip()


def test_sign_and_diagnose_refuse_what_compile_refuses():
    # A Mesh over 128 ranks needs 254 mesh events per TOP_SP; Sunda has 50.
    # No rank could load it: no signature to give or compare.
    mesh = (
        "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 1048576, arch: Sunda,"
        " topology: (rank_n: 128, local_rank_n: 32), channels: 2, algorithm: Mesh)"
    )
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    for call in (lambda: ccc.sign(mesh), lambda: ccc.diagnose([mesh, ring])):
        with pytest.raises(ccc.LowerError) as e:
            call()
        assert e.value.kind == "Limit"
        assert (e.value.rank, e.value.collective) == (0, 0)
        assert "mesh events per TOP_SP is at most 50 on Sunda; this choice needs 254" in str(e.value)
        assert "choose Ring or a Hier algorithm with no Mesh leg" in e.value.help
    with pytest.raises(ccc.LowerError) as compiled:
        ccc.compile(mesh, ranks=[0], verify=False)
    assert compiled.value.kind == "Limit"
    # The same advice, in `help` both ways.
    assert compiled.value.help == e.value.help


def test_diagnose_two_specs_is_the_cli_report(cli_json, tmp_path):
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    other = ring.replace("count: 1048576", "count: 2097152").replace("reduce: Add", "reduce: Max")
    assert other != ring
    (tmp_path / "a.ron").write_text(ring)
    (tmp_path / "b.ron").write_text(other)
    expected = cli_json("diagnose", tmp_path / "a.ron", tmp_path / "b.ron", "--json")

    report = ccc.diagnose({"a.ron": ring, "b.ron": ccc.parse(other)})
    assert report == expected
    assert report["all_match"] is False
    fields = {f["field"] for d in report["differences"] for c in d["collectives"] for f in c["fields"]}
    assert {"count", "reduce"} <= fields


def test_diagnose_specs_that_differ_only_where_images_do_not_say(cli_json, tmp_path):
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    other = ring.replace("reduce: Add", "reduce: Max")
    (tmp_path / "a.ron").write_text(ring)
    (tmp_path / "b.ron").write_text(other)
    expected = cli_json("diagnose", tmp_path / "a.ron", tmp_path / "b.ron", "--json")
    report = ccc.diagnose({"a.ron": ring, "b.ron": other})
    assert report == expected
    assert report["differences"][0]["same_images"] is True

    # Compiles at hand vouch for their images only when they hold every
    # rank: rank 0 alone on both sides says nothing of the others.
    whole = ccc.diagnose([ccc.compile(ring, verify=False), ccc.compile(other, verify=False)])
    assert whole["differences"][0]["same_images"] is True
    alone = ccc.diagnose([ccc.compile(t, ranks=[0], verify=False) for t in (ring, other)])
    assert alone["differences"][0]["same_images"] is False


def test_diagnose_names_list_inputs_and_reads_compiles_and_manifests(tmp_path):
    text = (ROOT / "examples" / "allreduce_hier.ron").read_text()
    compiled = ccc.compile(text, ranks=[0], verify=False)
    report = ccc.diagnose([text, compiled, compiled.manifest, compiled.manifest_json()])
    assert report["all_match"] is True and report["input_n"] == 4
    assert report["groups"][0]["members"] == ["input 0", "input 1", "input 2", "input 3"]
    assert report["groups"][0]["digest"] == compiled.signature


def test_diagnose_raises_the_first_refused_input_and_counts_the_others():
    """Inputs refused reading them (a spec that does not parse) and
    refused later (one that does not validate) are weighed alike: the
    first in input order is raised, naming how many others were refused,
    as `ccc diagnose` says each, then how many. (A parse error was raised
    before any validation one, whatever came first, and alone.)"""
    good = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    wide = good.replace("channels: 2", "channels: 33")
    typo = good.replace("dtype: F32", "dtype: F33")
    assert wide != good != typo
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.diagnose({"rank 0": wide, "rank 1": typo, "rank 2": good, "rank 3": typo})
    assert str(caught.value).startswith("rank 0 (and 2 other inputs refused too: rank 1, rank 3): ")
    assert caught.value.field == "channels"
    with pytest.raises(ccc.ParseError) as caught:
        ccc.diagnose([good, typo, wide])
    assert str(caught.value).startswith("input 1 (and 1 other input refused too: input 2): ")
    # Refused reading and refused later, interleaved: in input order.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.diagnose([typo, typo, wide, good, typo])
    assert str(caught.value).startswith("input 0 (and 3 other inputs refused too: input 1, input 2, input 4): ")
    # Ctrl-C while an input is read is no refusal of it: it is raised.

    class Interrupted(dict):
        def __getitem__(self, key):
            raise KeyboardInterrupt

        def keys(self):
            raise KeyboardInterrupt

        def items(self):
            raise KeyboardInterrupt

    for inputs in (["junk", Interrupted(a=1)], [Interrupted(a=1), "junk"]):
        with pytest.raises(KeyboardInterrupt):
            ccc.diagnose(inputs)
    # One refused: named alone, as before.
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.diagnose([good, wide])
    assert str(caught.value).startswith("input 1: 1 problem")


def test_diagnose_given_one_manifest_or_spec_dict_says_so():
    """One manifest (or a spec's dict) passed where a dict of inputs is
    taken is said to be one (it was read as inputs named by its keys: "a
    value of type int is not one"); a dict of inputs whose names are
    such keys is still read."""
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    compiled = ccc.compile(text)
    for given, what in [(compiled.manifest, "one manifest"), (ccc.parse(text).to_dict(), "one collective's dict")]:
        with pytest.raises(TypeError, match=f"this dict is {what} .*: diagnose\\(\\[a, b\\]\\)"):
            ccc.diagnose(given)
    assert ccc.diagnose({"count": compiled, "collectives": text})["all_match"]


def test_diagnose_refuses_an_edited_manifest_and_what_is_not_an_input():
    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    manifest = compiled.manifest
    manifest["signature"] = "0" * 32
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([compiled, manifest])
    assert caught.value.kind == "DigestMismatch"
    assert caught.value.accepted == compiled.signature

    # Edited and signed again: the digest holds, the fields are not ccc's.
    resigned = compiled.manifest
    fields = resigned["signature_fields"]
    fields[3], fields[4] = fields[4], fields[3]
    preimage = "ccc collective signature\n" + "".join(f"{f['name']}: {f['value']}\n" for f in fields)
    resigned["signature"] = hashlib.md5(preimage.encode()).hexdigest()
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([compiled, resigned])
    assert caught.value.kind == "EditedFields"
    assert caught.value.field == "signature_fields[3]"

    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose(["{ not json"])
    assert caught.value.kind == "NotAManifest" and caught.value.line == 1

    with pytest.raises(TypeError, match="or an os.PathLike"):
        ccc.diagnose([1.5])
    # Not a collection at all; a spec's dict, which a manifest's is not.
    with pytest.raises(TypeError, match="diagnose takes a list \\(or dict\\) of inputs to compare, not a `NoneType`"):
        ccc.diagnose(None)
    spec = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text())
    with pytest.raises(TypeError, match=r"pass ccc.Program.from_dict\(d\)"):
        ccc.diagnose([spec.to_dict(), compiled])
    # A manifest's dict that lost its signature is still a manifest's:
    # refused as one, not taken for a spec's dict.
    unsigned = compiled.manifest
    del unsigned["signature"]
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([unsigned, compiled])
    assert caught.value.kind == "NotAManifest" and "signature" in str(caught.value)
    with pytest.raises(TypeError, match="a value of type `bytes` is not one"):
        ccc.diagnose([b"/tmp"])
    # Named by its type and its input (it said "bytes" of anything).
    for bad, kind in [(None, "NoneType"), (5, "int"), (3.5, "float"), ([compiled], "list"), (object(), "object")]:
        with pytest.raises(TypeError) as caught:
            ccc.diagnose({"rank 0": compiled, "rank 3": bad})
        assert str(caught.value).startswith("rank 3: diagnose compares"), str(caught.value)
        assert str(caught.value).endswith(f"; a value of type `{kind}` is not one")
    with pytest.raises(TypeError, match=r"^input 1: .*; a value of type `int` is not one$"):
        ccc.diagnose([compiled, 7])
    # A str naming a file is text, as documented: said how to read the file.
    ring = str(ROOT / "examples" / "allreduce_ring.ron")
    with pytest.raises(ccc.ParseError) as caught:
        ccc.diagnose([compiled, ring])
    said = f"a str is read as RON text; to read the file or folder it names, pass pathlib.Path({ring!r})"
    assert caught.value.help == said
    assert str(caught.value).startswith("input 1: ") and str(caught.value).endswith(f"({said})")
    # Text naming nothing is told nothing of paths.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.diagnose([compiled, ring + ".missing"])
    assert caught.value.help is None or "pathlib" not in caught.value.help
    # A manifest dict holding what JSON cannot carry is named at its path,
    # under the input's name, not json's bare TypeError: refused as a
    # manifest that does not read is.
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose({"mine": dict(compiled.manifest, signature=b"0" * 32), "other": compiled})
    assert (caught.value.kind, caught.value.field) == ("NotAManifest", "signature")
    assert str(caught.value).startswith("mine: ") and "bytes where text belongs" in str(caught.value)
    # An empty gather is not "every rank matches".
    for empty in ([], {}):
        with pytest.raises(ValueError, match="no inputs"):
            ccc.diagnose(empty)
    # A manifest an editor saved with a byte-order mark is still one.
    report = ccc.diagnose([compiled, "\ufeff" + compiled.manifest_json()])
    assert report["all_match"] is True
    # One RON text is not a list of one-character inputs.
    with pytest.raises(TypeError, match="not one string"):
        ccc.diagnose((ROOT / "examples" / "allreduce_ring.ron").read_text())


def test_diagnose_reads_output_folders_and_files_as_the_cli_does(cli, cli_json, tmp_path):
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    (tmp_path / "a.ron").write_text(ring)
    (tmp_path / "b.ron").write_text(ring.replace("reduce: Add", "reduce: Max"))
    for name in "ab":
        cli("compile", tmp_path / f"{name}.ron", "-o", tmp_path / name, "-q")
    folders = {f"{name}/manifest.json": tmp_path / name for name in "ab"}

    # Folders whose files are their manifests' are compared by their images.
    expected = cli_json("diagnose", tmp_path / "a", tmp_path / "b", "--json")
    report = ccc.diagnose(folders)
    assert report == expected
    assert report["differences"][0]["same_images"] is True

    # An image edited in place: the folder no longer vouches for its images.
    image = tmp_path / "b" / "rank-0" / "topsp-0" / "ctrl_spad.bin"
    data = bytearray(image.read_bytes())
    data[0] ^= 1
    image.write_bytes(bytes(data))
    expected = cli_json("diagnose", tmp_path / "a", tmp_path / "b", "--json")
    report = ccc.diagnose(folders)
    assert report == expected
    assert report["differences"][0]["same_images"] is False

    # Files: a spec and a manifest, named in a list by their paths.
    spec, manifest = tmp_path / "a.ron", tmp_path / "a" / "manifest.json"
    report = ccc.diagnose([spec, manifest])
    assert report["all_match"] is True
    assert report["groups"][0]["members"] == [str(spec), str(manifest)]
    # A str is text, never a file name.
    with pytest.raises(ccc.ParseError):
        ccc.diagnose([str(spec), str(manifest)])

    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([tmp_path, spec])
    assert caught.value.kind == "NoManifest" and str(tmp_path) in str(caught.value)
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([tmp_path / "missing.ron", spec])
    assert caught.value.kind == "Io" and "missing.ron" in str(caught.value)
    (tmp_path / "latin1.ron").write_bytes(b"// caf\xe9\n" + ring.encode())
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([tmp_path / "latin1.ron", spec])
    assert caught.value.kind == "NotUtf8"
    # A manifest dict that is not one: no line or column (they pointed
    # into the JSON ccc wrote of the dict); manifest text keeps its own.
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([{"x": 1}, spec])
    assert caught.value.kind == "NotAManifest" and "missing field `signature`" in str(caught.value)
    assert (caught.value.line, caught.value.column) == (None, None) and "at line" not in str(caught.value)
    # A mapping of another kind is read as its dict, as the stub says.
    import collections
    import types

    ring_text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    manifest = ccc.compile(ring_text, ranks=[0]).manifest
    for kind in (types.MappingProxyType, collections.UserDict):
        assert ccc.diagnose([kind(manifest), ring_text])["all_match"]
    # One holding a value JSON cannot carry is named a manifest's, not a
    # spec's.
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose([{"x": 2**70}, spec])
    assert "no field of a manifest holds a whole number past 2^64 - 1" in str(caught.value)
    with pytest.raises(ccc.InputError) as caught:
        ccc.diagnose(['{"x": 1}', spec])
    assert (caught.value.line, caught.value.column) == (1, 8)


def test_a_spec_error_in_diagnose_is_raised_as_such():
    with pytest.raises(ccc.ValidationError):
        ccc.diagnose([(ROOT / "examples" / "invalid" / "channels_zero.ron").read_text()])


@pytest.mark.parametrize("region", ["ctrl_spad", "slot_spad", "neff_configs"])
def test_decode_is_the_cli_json(region, cli, cli_json, tmp_path):
    path = ROOT / "examples" / "allreduce_hier.ron"
    cli("compile", path, "-o", tmp_path, "-q", "--rank", "5")
    image = tmp_path / "rank-5" / "topsp-1" / f"{region}.bin"
    expected = cli_json("decode", image, "--format", "json")
    compiled = ccc.compile(path.read_text(), ranks=[5])
    data = getattr(compiled.images[5][1], region)
    assert data == image.read_bytes()
    assert ccc.decode(data, region) == expected
    assert ccc.decode(data, region.split("_")[0]) == expected


def test_decode_errors_say_where_and_what_is_accepted():
    compiled = ccc.compile((ROOT / "examples" / "allreduce_ring.ron").read_text(), ranks=[0])
    neff = compiled.images[0][0].neff_configs
    with pytest.raises(ccc.DecodeError) as caught:
        ccc.decode(neff[:-1], "neff")
    # At the end of the shorter: where the image and the block part.
    assert caught.value.kind == "BadLength" and caught.value.offset == 3591
    assert "3592" in caught.value.accepted
    # The message says what is wrong, as the CLI's does.
    assert "image is 3591 bytes, not exactly 3592 bytes" in str(caught.value)
    with pytest.raises(ccc.DecodeError) as caught:
        ccc.decode(b"\xff" * 3592, "neff")
    assert ", expected " in str(caught.value), str(caught.value)
    # An image larger than its region on any arch is refused unread, as
    # `ccc decode` refuses the file.
    for region, size in [("ctrl", 1 << 20), ("slot", 1 << 20), ("neff", 3593)]:
        with pytest.raises(ccc.DecodeError) as caught:
            ccc.decode(bytes(size), region)
        assert caught.value.kind == "TooLarge", (region, str(caught.value))

    ctrl = compiled.images[0][0].ctrl_spad
    with pytest.raises(ccc.DecodeError) as caught:
        ccc.decode(ctrl + b"\x00" * 3, "ctrl")
    assert caught.value.offset == len(ctrl)
    assert caught.value.accepted == "a multiple of 8 bytes"
    assert "not a multiple of 8 bytes" in str(caught.value)

    for region in ["slot", "neff"]:
        with pytest.raises(ccc.DecodeError) as caught:
            ccc.decode(b"", region)
        assert caught.value.kind == "Empty"

    # Reserved bits set: the field, and the value with them clear.
    flipped = bytearray(neff)
    reserved = 140  # `reserved +140` of docs/wire-format.md: zero
    flipped[reserved] = 0x80
    with pytest.raises(ccc.DecodeError) as caught:
        ccc.decode(bytes(flipped), "neff")
    assert (caught.value.kind, caught.value.offset) == ("ReservedBits", reserved)
    assert caught.value.field is not None
    assert caught.value.accepted == "0x00: the reserved bits 0xff clear"
    # A word of no kind names the four kinds.
    word = bytearray(ctrl)
    word[0:8] = b"\x00" * 7 + b"\x10"
    with pytest.raises(ccc.DecodeError) as caught:
        ccc.decode(bytes(word), "ctrl")
    assert caught.value.kind == "UnknownWord"
    assert caught.value.accepted == "an op entry, an END mark, a CONTINUE mark or an empty word"


def test_an_empty_ctrl_spad_ccc_emits_decodes_as_no_chain(cli_json, tmp_path):
    # Groups of one rank: nothing to run, so rank 0's CTRL SPAD is empty.
    spec = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    spec = spec.replace("algorithm: Ring,", "algorithm: Ring, groups: [[0],[1],[2],[3],[4],[5],[6],[7]],")
    assert "groups:" in spec
    compiled = ccc.compile(spec, ranks=[0])
    ctrl = compiled.images[0][0].ctrl_spad
    assert ctrl == b""
    (tmp_path / "ctrl_spad.bin").write_bytes(ctrl)
    assert ccc.decode(ctrl, "ctrl") == [] == cli_json("decode", tmp_path / "ctrl_spad.bin", "--format", "json")

    with pytest.raises(ccc.DecodeError) as caught:
        ccc.decode(ctrl, "ctrl_spad.bin")
    assert caught.value.kind == "UnknownRegion" and "neff" in caught.value.accepted


def test_a_bad_input_is_named_in_the_error():
    # A line and column say nothing without the input they are in: a
    # spec that does not parse, or parses and breaks a rule, is named.
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    with pytest.raises(ccc.ParseError) as caught:
        ccc.diagnose({"rank 0": ring, "rank 5": "garbage("})
    assert str(caught.value).startswith("rank 5: ")
    assert caught.value.message.startswith("rank 5: ")
    with pytest.raises(ccc.ValidationError) as caught:
        ccc.diagnose([ring, ring.replace("channels: 2", "channels: 99")])
    assert str(caught.value).startswith("input 1: ")
    assert caught.value.field == "channels"
    # A name that is not text is refused as such.
    with pytest.raises(TypeError, match="diagnose key"):
        ccc.diagnose({1: ring})
    with pytest.raises(ccc.ParseError) as caught:
        ccc.diagnose({"\ud800": ring})
    assert caught.value.kind == "NotUtf8"


def test_a_folder_whose_files_changed_is_no_match(tmp_path):
    # An image edited after its compile: the signatures agree, but a rank
    # loading it would not run what its manifest signs.
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    for name in ("a", "b"):
        ccc.compile(ring).write(tmp_path / name)
    image = tmp_path / "b" / "rank-3" / "topsp-0" / "slot_spad.bin"
    data = bytearray(image.read_bytes())
    data[24] ^= 5
    image.write_bytes(bytes(data))
    report = ccc.diagnose({"a": tmp_path / "a", "b": tmp_path / "b"})
    assert report["all_match"] is False
    assert len(report["groups"]) == 1
    assert report["edited"][0]["input"] == "b"
    assert "rank-3/topsp-0/slot_spad.bin was edited" in report["edited"][0]["why"]
    data[24] ^= 5
    image.write_bytes(bytes(data))
    assert ccc.diagnose({"a": tmp_path / "a", "b": tmp_path / "b"})["all_match"] is True


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    # Opening a FIFO for reading waits for a writer, where a Ctrl-C cannot
    # reach the call: refused, as no file the binding reads.
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    calls = [lambda: ccc.compile(text, ranks=[0], proven_by=fifo), lambda: ccc.diagnose([fifo, text])]
    for call in calls:
        raised = []

        def run():
            try:
                call()
            except ccc.InputError as e:
                raised.append(e)

        worker = threading.Thread(target=run)
        worker.start()
        worker.join(10)
        if worker.is_alive():
            with open(fifo, "w"):  # let the blocked open return
                pass
            worker.join()
            pytest.fail("the call waited on the FIFO")
        assert raised and raised[0].kind == "Io", raised
        assert f"{fifo} is not a regular file (a FIFO, socket or device)" in str(raised[0])


def test_a_decode_error_helps_as_the_clis_does(cli, tmp_path):
    """`DecodeError.help` says what the region's image is, as the first
    line of `ccc decode`'s help does (it was None)."""
    for region, data in [("ctrl", b"\x00" * 7), ("slot", b"\x00" * 5), ("neff", b"\x00" * 3591)]:
        with pytest.raises(ccc.DecodeError) as caught:
            ccc.decode(data, region)
        image = tmp_path / f"{region}.bin"
        image.write_bytes(data)
        done = cli("decode", image, "--region", region, "--format", "json", ok=False)
        assert done.returncode == 2, done.stderr
        assert caught.value.help == json.loads(done.stdout)["error"]["help"], (region, caught.value.help)


def test_a_lone_surrogate_in_proven_by_is_refused_as_other_text_is():
    """Text holding a lone surrogate given as `proven_by` is a `ParseError`
    of kind `NotUtf8` naming it, as every text argument's is (it was a
    TypeError saying a `str` is not text)."""
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    with pytest.raises(ccc.ParseError) as caught:
        ccc.compile(text, proven_by="\ud800")
    assert (caught.value.kind, caught.value.field) == ("NotUtf8", "proven_by"), str(caught.value)
