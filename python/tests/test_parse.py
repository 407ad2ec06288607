"""`ccc.parse`, `Program.from_dict`, `Program.to_ron`, `Program.to_dict`:
every shipped example reads, writes back and reads again to the same spec;
a bad spec raises `ccc.ParseError` located by line and column (text) or
by field path (dict)."""

from __future__ import annotations

import collections.abc

import pytest

import ccc
from conftest import EXAMPLES, ROOT, example_ids


@pytest.mark.parametrize("path", EXAMPLES, ids=example_ids(EXAMPLES))
def test_every_example_round_trips_through_ron_and_dict(path):
    program = ccc.parse(path.read_text())
    assert isinstance(program, ccc.Program)
    assert len(program) == len(program.collectives) >= 1
    again = ccc.parse(program.to_ron())
    assert again == program
    from_dict = ccc.Program.from_dict(program.to_dict())
    assert from_dict == program
    # The same spec signs the same, whichever way it was read.
    assert ccc.sign(from_dict) == ccc.sign(program)


def test_a_dict_written_by_hand_is_the_spec_the_ron_file_holds():
    ron = (ROOT / "examples" / "allreduce_hier.ron").read_text()
    by_hand = {
        "op": "AllReduce",
        "dtype": "Bf16",
        "reduce": "Add",
        "count": 4194304,
        "arch": "Cayman",
        "topology": {"rank_n": 32, "local_rank_n": 16},
        "channels": 4,
        "algorithm": {
            "Hier": {
                "intra_reduce_scatter": "Ring",
                "inter_all_reduce": "SingleCycleRing",
                "intra_all_gather": "Kangaring",
            }
        },
    }
    assert ccc.Program.from_dict(by_hand) == ccc.parse(ron)
    # A program of one is the same collectives, written as a program.
    program = ccc.Program.from_dict({"collectives": [by_hand]})
    assert program == ccc.parse(ron)
    assert program.to_dict() == {"collectives": [program.collectives[0]]}
    assert program.to_ron().lstrip().startswith("Program(")


def test_parse_error_locates_the_unknown_variant_and_says_what_is_accepted():
    text = (ROOT / "examples" / "invalid" / "unknown_op.ron").read_text()
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(text)
    e = caught.value
    assert (e.kind, e.line, e.column) == ("UnknownVariant", 3, 9)
    assert (e.end_line, e.end_column) == (3, 18)
    assert "`AllReduce`" in e.accepted and "`AllToAllV`" in e.accepted
    # What is accepted, not the message around the bad value ("Unexpected
    # variant" holds "expected" too).
    assert e.accepted.startswith("one of `AllGather`"), e.accepted
    assert "AllReduse" in str(e)
    assert isinstance(e, ValueError) and isinstance(e, ccc.CccError)


def test_parse_error_names_a_misspelt_field():
    text = (ROOT / "examples" / "invalid" / "misspelt_field.ron").read_text()
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(text)
    e = caught.value
    assert (e.kind, e.field, e.line, e.column) == ("UnknownField", "algoritm", 11, 5)
    assert "`algorithm`" in e.accepted
    assert e.accepted.startswith("one of `op`") and "algoritm" not in e.accepted, e.accepted


def test_parse_error_of_a_missing_comma_and_of_text_that_ends_early():
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse((ROOT / "examples" / "invalid" / "missing_comma.ron").read_text())
    assert caught.value.kind == "MissingComma"
    assert caught.value.line is not None
    # `Auto(Ring)` copied from a manifest: not a missing comma.
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text().replace("algorithm: Ring", "algorithm: Auto(Ring)")
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(text)
    assert caught.value.kind == "ChosenAuto"
    assert caught.value.field == "algorithm"
    assert "a spec writes `Auto`" in caught.value.help
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse("Collective(op: AllReduce,\n")
    assert caught.value.kind == "UnexpectedEof"
    # Marked at the text's last character, and the bracket left open named.
    assert (caught.value.line, caught.value.column) == (1, 25)
    assert "the text ends before `Collective(` at line 1, column 1 is closed" in str(caught.value)


def test_a_number_its_field_cannot_hold_names_the_field():
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    assert "channels: 2," in text
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(text.replace("channels: 2,", "channels: -2,"))
    e = caught.value
    assert (e.kind, e.field) == ("IntegerOutOfBounds", "channels")
    assert e.help == "`channels` takes a whole number from 1 to 32: no fraction"
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(text.replace("channels: 2,", "channels: 2.5,"))
    assert (caught.value.kind, caught.value.field) == ("Fraction", "channels")
    assert caught.value.accepted == "a whole number"


def test_from_dict_names_a_value_json_cannot_carry():
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    cases = [
        (dict(good, count=2**64), "count", "out of range"),
        (dict(good, count=float("nan")), "count", "not a finite number"),
        (dict(good, topology=dict(good["topology"], rank_n=b"8")), "topology.rank_n", "bytes where text belongs"),
        ({"collectives": [good, dict(good, count=-(2**70))]}, "collectives[1].count", "out of range"),
        (dict(good, topology={1.5: 8}), "topology", "is not text"),
        # A whole-number key is its digits (as a `devices` map's are):
        # here, a field no topology has.
        (dict(good, topology={1: 8}), "topology.1", "unknown field `1`"),
        (dict(good, op="All\ud800Reduce"), "op", "lone surrogate"),
        (dict(good, topology={"\ud800": 8}), "topology", "lone surrogate"),
        (dict(good, root=2**70), "root", "no field of a spec holds a whole number past 2^64 - 1"),
    ]
    for spec, field, words in cases:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(spec)
        assert caught.value.field == field, (field, str(caught.value))
        assert words in str(caught.value)
    # A list that holds itself, or one nested far past any spec's depth,
    # is refused, not followed until the stack runs out.
    itself = []
    itself.append(itself)
    deep = [1]
    for _ in range(100_000):
        deep = [deep]
    for groups in (itself, deep):
        with pytest.raises(ccc.ParseError, match="nested more than 64 deep"):
            ccc.Program.from_dict(dict(good, groups=groups))
    # The largest count a spec holds still reads as one.
    assert ccc.Program.from_dict(dict(good, count=2**64 - 1)).collectives[0]["count"] == 2**64 - 1


def test_missing_field_has_help():
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse((ROOT / "examples" / "invalid" / "missing_field.ron").read_text())
    e = caught.value
    assert e.kind == "MissingField"
    assert e.help and "every collective needs" in e.help


def test_from_dict_errors_name_the_field_path():
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()

    bad = dict(good, topology={"rank_n": 8, "local_rank_n": 8, "pods": 1})
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict({"collectives": [good, bad]})
    e = caught.value
    # The path of the offending key itself.
    assert (e.kind, e.field) == ("UnknownField", "collectives[1].topology.pods")
    assert "`pod_n`" in e.accepted
    assert e.line is None

    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, dtype="Bf17"))
    assert (caught.value.kind, caught.value.field) == ("UnknownVariant", "dtype")
    assert "`Bf16`" in caught.value.accepted

    missing = {k: v for k, v in good.items() if k != "channels"}
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(missing)
    assert caught.value.kind == "MissingField"
    assert "channels" in str(caught.value)

    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, count="many"))
    assert caught.value.field == "count"

    # What `parse` says of the same values in RON: kind, accepted, and the
    # field's range in help (an override's is 10^12, not u64's).
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    cases = [
        ("count", -1, "IntegerOutOfBounds"),
        ("count", 2**64, "IntegerOutOfBounds"),
        ("count", 1.5, "Fraction"),
        ("count", '"many"', "Syntax"),
        ("channels", -1, "IntegerOutOfBounds"),
    ]
    for key, value, kind in cases:
        as_python = value.strip('"') if isinstance(value, str) else value
        with pytest.raises(ccc.ParseError) as from_dict:
            ccc.Program.from_dict(dict(good, **{key: as_python}))
        written = {"count": "count: 1048576", "channels": "channels: 2"}[key]
        with pytest.raises(ccc.ParseError) as from_ron:
            ccc.parse(ring.replace(written, f"{key}: {value}"))
        d, r = from_dict.value, from_ron.value
        assert (d.kind, d.accepted, d.help) == (kind, r.accepted, r.help), (key, value, d, r)
        assert r.help and r.help.startswith(f"`{key}` takes a whole number")
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, model={"alpha_inter_ns": -1}))
    assert "`alpha_inter_ns` takes a whole number" in caught.value.help and str(2**64 - 1) not in caught.value.help

    # RON's `Hier((...))` as a string: the message shows the dict form,
    # which then reads (as to_dict writes it); `accepted` stays the list.
    ron = "Hier((intra_reduce_scatter: Ring, inter_all_reduce: Ring, intra_all_gather: Ring))"
    legs = {"intra_reduce_scatter": "Ring", "inter_all_reduce": "Ring", "intra_all_gather": "Ring"}
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, algorithm=ron))
    e = caught.value
    assert (e.kind, e.field) == ("UnknownVariant", "algorithm")
    assert 'in a dict a Hier algorithm is {"Hier": {"intra_reduce_scatter": "Ring"' in str(e)
    assert e.accepted.startswith("one of `Ring`") and "in a dict" not in e.accepted
    hier = ccc.Program.from_dict(dict(good, algorithm={"Hier": legs}))
    assert hier.to_dict()["algorithm"] == {"Hier": legs}
    assert hier == ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text().replace("algorithm: Ring", f"algorithm: {ron}"))
    # So does a target's dict.
    hlo = (ROOT / "tests" / "hlo" / "dp_train_step_8.compiled.hlo").read_text()
    target = {"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}, "algorithms": {"AllReduce": ron}}
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(hlo, target)
    assert (caught.value.kind, caught.value.field) == ("Target", "target.algorithms")
    assert 'in a dict a Hier algorithm is {"Hier"' in str(caught.value)
    assert "in a dict" not in caught.value.accepted


def test_parse_errors_name_the_field_path_and_collective():
    ring = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    program = lambda second: f"Program(collectives: [{ring}, {second}])"  # noqa: E731
    cases = [
        (program(ring.replace("count: 1048576", "count: true")), "collectives[1].count", 1),
        (program(ring.replace("local_rank_n: 8", "local_rank_n: 8, podn: 1")), "collectives[1].topology.podn", 1),
        (program(ring.replace("count: 1048576", "count: 1.5")), "collectives[1].count", 1),
        # A lone collective is collective 0, as validation names it.
        (ring.replace("algorithm: Ring", "algorithm: Rng"), "algorithm", 0),
    ]
    for text, field, collective in cases:
        assert text != ring
        with pytest.raises(ccc.ParseError) as caught:
            ccc.parse(text)
        assert (caught.value.field, caught.value.collective) == (field, collective), str(caught.value)
        assert caught.value.line is not None
    # from_dict: a missing field is named where it belongs, not its parent.
    good = ccc.parse(ring).to_dict()
    del good["topology"]["local_rank_n"]
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict({"collectives": [ccc.parse(ring).to_dict(), good]})
    assert (caught.value.field, caught.value.collective) == ("collectives[1].topology.local_rank_n", 1)


def test_from_dict_refuses_what_is_not_json_by_its_path():
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    # What json.dumps refuses without a path is named where it stands.
    for value, kind in [(object(), "object"), ({0, 1}, "set"), (1j, "complex")]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(dict(good, groups=[[0, 1, 2, 3], value]))
        assert caught.value.field == "groups[1]"
        assert f"a value of type `{kind}` is not one a spec holds" in str(caught.value)
    # A type of another module is named with it: numpy's `bool` (no
    # __index__) is `numpy.bool`, not the Python bool the message accepts.
    numpy_bool = type("bool", (), {"__module__": "numpy"})
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, count=numpy_bool()))
    assert "a value of type `numpy.bool` is not one a spec holds" in str(caught.value)

    # An integer type whose __index__ raises: refused with what it raised.
    class Broken:
        def __index__(self):
            raise ValueError("idx boom")

    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, count=Broken()))
    assert caught.value.field == "count" and "its __index__ raised ValueError: idx boom" in str(caught.value)
    # Text or a list is not a dict: a TypeError that says what reads it.
    with pytest.raises(TypeError, match="RON text is read by ccc.parse"):
        ccc.Program.from_dict((ROOT / "examples" / "allreduce_ring.ron").read_text())
    with pytest.raises(TypeError, match=r"\{\"collectives\": \[\.\.\.\]\}"):
        ccc.Program.from_dict([good])
    # A mapping is read as the dict of its items.
    import collections
    import types

    for mapping in (types.MappingProxyType(good), collections.UserDict(good)):
        assert ccc.Program.from_dict(mapping) == ccc.Program.from_dict(good)
    # ... at any depth, inside a list or tuple too.
    for kind in (types.MappingProxyType, collections.UserDict):
        nested = {"collectives": (kind(dict(good, topology=kind(good["topology"]))),)}
        assert ccc.Program.from_dict(nested) == ccc.Program.from_dict(good)
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, topology=types.MappingProxyType(dict(good["topology"], rank_n="x"))))
    assert caught.value.field == "topology.rank_n"


def test_from_dict_refuses_a_struct_written_as_a_list():
    # Serde would fill a struct's fields from a list by position; a spec's
    # RON refuses that ("a struct's fields are written by name"), and so
    # does from_dict, at the field's path, naming the fields to write.
    good = ccc.parse((ROOT / "examples" / "allreduce_hier.ron").read_text()).to_dict()
    cases = [
        (dict(good, topology=[32, 16]), "topology", "rank_n, local_rank_n"),
        (dict(good, algorithm="Auto", model=[1, 2, 3]), "model", "launch_ns"),
        (dict(good, algorithm={"Hier": ["Ring", "SingleCycleRing", None, None, "Kangaring"]}), "algorithm", "intra_"),
        ({"collectives": [["AllReduce", "F32", "Add", 1024, "Cayman", [8, 8, 1], 2, "Ring"]]}, "collectives[0]", "op"),
    ]
    for bad, field, names in cases:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(bad)
        assert caught.value.field is not None and caught.value.field.startswith(field), str(caught.value)
        assert "a list where a dict belongs" in str(caught.value), str(caught.value)
        assert names in str(caught.value), str(caught.value)
    # The same spec with its structs as dicts reads as the RON does.
    assert ccc.Program.from_dict(good) == ccc.parse((ROOT / "examples" / "allreduce_hier.ron").read_text())
    # A tuple given more items than it holds is refused, not cut short.
    permute = ccc.parse((ROOT / "examples" / "permute_ring.ron").read_text()).to_dict()
    pairs = permute["peers"]
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(permute, peers=[[*pairs[0], 7], *pairs[1:]]))
    assert caught.value.field == "peers[0]"
    assert "a peer pair is two member indices, [source, target]; this one has 3 of them" in str(caught.value)
    assert caught.value.accepted == "[source, target]"
    # Too few, or not a list: said as a pair, too.
    for pair, said in (([pairs[0][0]], "this one has 1 of them"), (3, "found integer `3`")):
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(dict(permute, peers=[pair, *pairs[1:]]))
        assert caught.value.field == "peers[0]" and said in str(caught.value), str(caught.value)


def test_from_dict_reads_an_integer_of_any_type_as_its_int():
    # numpy's integers are not ints but have __index__: read as the int
    # operator.index gives, as the other arguments read them.
    class Whole:
        def __init__(self, n):
            self.n = n

        def __index__(self):
            return self.n

    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    as_whole = dict(good, count=Whole(good["count"]), topology={k: Whole(v) for k, v in good["topology"].items()})
    assert ccc.Program.from_dict(as_whole) == ccc.Program.from_dict(good)
    # Something with neither is named where it stands, with what reads.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, count=object()))
    assert (caught.value.field, caught.value.collective) == ("count", 0)
    assert "__index__" in str(caught.value)
    # A value JSON cannot carry names its collective as any other error
    # does: by its index in a program.
    program = {"collectives": [good, dict(good, count=2**64)]}
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(program)
    assert (caught.value.field, caught.value.collective) == ("collectives[1].count", 1)


def test_import_hlo_names_a_bad_target_value_by_its_path():
    hlo = (ROOT / "tests" / "hlo" / "dp_train_step_8.compiled.hlo").read_text()
    target = {"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}}
    cases = [
        (dict(target, arch=b"Cayman"), "target.arch", "bytes where text belongs"),
        (dict(target, channels=2**70), "target.channels", "out of range"),
        (dict(target, channels=float("nan")), "target.channels", "not a finite number"),
        (dict(target, devices={0, 1}), "target.devices", "a value of type `set` is not one a target holds"),
        (dict(target, channels=2**70), "target.channels", "no field of a target holds a whole number past"),
        # A field left out is named where it belongs; a key that does not
        # read names its map, and the message the key.
        ({"topology": target["topology"]}, "target.arch", "missing field `arch`"),
        (dict(target, devices={"x": 0}), "target.devices", '"x"'),
        (dict(target, algorithms={"AllReduse": "Ring"}), "target.algorithms", "AllReduse"),
    ]
    for bad, field, words in cases:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.import_hlo(hlo, bad)
        assert (caught.value.kind, caught.value.field) == ("Target", field), str(caught.value)
        assert words in str(caught.value)


def test_program_equality_and_repr():
    a = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text())
    b = ccc.parse((ROOT / "examples" / "reduce_ring.ron").read_text())
    assert a != b and a == a and a != "text"
    # Another type is asked in turn, as Python's own types do.
    from unittest import mock

    assert a == mock.ANY and mock.ANY == a and not (a != mock.ANY)
    assert "AllReduce" in repr(a)


def test_a_program_pickles_copies_and_hashes_as_its_collectives():
    import copy
    import pickle

    ring = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text())
    program = ccc.parse((ROOT / "examples" / "program_training_step.ron").read_text())
    for p in (ring, program):
        for twin in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
            assert twin == p and hash(twin) == hash(p)
            assert twin.to_ron() == p.to_ron()
    assert ring != program
    # Equal programs, however made, are one key.
    from_dict = ccc.Program.from_dict(ring.to_dict())
    assert {ring: 1, from_dict: 2} == {ring: 2}
    assert ccc.sign(pickle.loads(pickle.dumps(ring))) == ccc.sign(ring)


def test_a_field_written_with_its_default_equals_it_left_out():
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    assert "send_credits" not in text and "barrier" not in text and "model" not in text
    ring = ccc.parse(text)
    for written in ("send_credits: 2", "barrier: Host", "model: ()", "send_credits: 2, barrier: Host, model: ()"):
        spelt = ccc.parse(text.replace("algorithm: Ring,", f"algorithm: Ring, {written},"))
        assert spelt.to_ron() != ring.to_ron(), written
        assert spelt == ring and hash(spelt) == hash(ring), written
        assert ccc.sign(spelt) == ccc.sign(ring), written
        assert {ring: 1, spelt: 2} == {ring: 2}, written
    # A value other than the default is another program.
    for other in ("send_credits: 3", "barrier: Device", "model: (launch_ns: 1)"):
        assert ccc.parse(text.replace("algorithm: Ring,", f"algorithm: Ring, {other},")) != ring, other


def test_a_large_program_reads_back_from_its_ron_and_its_pickle():
    import copy
    import pickle

    # An all-to-all-v's counts matrix: 2.4 MB of RON as written. One number
    # a line, to_ron's text was 18 MB, past the 16 MiB a spec text may be,
    # so neither it nor a pickle (then made of it) read back.
    n = 1104
    rows = ",".join("[" + ",".join(["1"] * n) + "]" for _ in range(n))
    p = ccc.parse(
        f"Collective(op: AllToAllV, dtype: Bf16, count: {n}, arch: Cayman, "
        f"topology: (rank_n: {n}, local_rank_n: 16), channels: 1, algorithm: Mesh, counts: [{rows}])"
    )
    text = p.to_ron()
    assert len(text) < 4 * len(rows)
    assert ccc.parse(text) == p
    for twin in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert twin == p


def test_text_no_utf8_can_hold_is_a_parse_error():
    # A lone surrogate: a str Python holds but no UTF-8 text can.
    for call in (ccc.parse, ccc.sign):
        with pytest.raises(ccc.ParseError) as caught:
            call("Collective(\ud800)")
        assert caught.value.kind == "NotUtf8", call
        assert "lone surrogate" in str(caught.value)
    with pytest.raises(TypeError, match="parse reads RON text"):
        ccc.parse(42)


def test_a_file_name_given_as_text_says_how_to_read_the_file():
    """A str is RON text, as documented; one naming a spec file (there, or
    one line ending `.ron`) is refused saying how to pass the file's text,
    and a pathlib.Path says so too (it said "found `examples`", and a bare
    TypeError)."""
    for name in [str(ROOT / "examples" / "allreduce_ring.ron"), "no_such_spec.ron"]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.compile(name)
        assert caught.value.help == (
            f'a str is read as RON text; to compile the file it names, pass its text: pathlib.Path("{name}").read_text()'
        )
        assert caught.value.help in str(caught.value)
    with pytest.raises(TypeError, match=r"got PosixPath: to compile the spec file it names, pass its text"):
        ccc.sign(ROOT / "examples" / "allreduce_ring.ron")
    # Text that is not a file name says nothing of files.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.compile("Collective(op: X)")
    assert caught.value.help is None or "pathlib" not in caught.value.help


def test_a_name_given_parentheses_names_its_field():
    """`op: Permute()` names its field and collective, as its sibling
    mistakes do (both were None: RON had finished the field's value)."""
    base = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    assert "algorithm: Ring" in base
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(f"Program(collectives: [{base}, {base.replace('algorithm: Ring', 'algorithm: Ring()')}])")
    assert (caught.value.kind, caught.value.field, caught.value.collective) == (
        "NameTakesNoValue",
        "collectives[1].algorithm",
        1,
    )


def test_from_dict_refuses_a_name_written_as_a_dict():
    """`{"Mesh": None}` is refused as RON refuses `Mesh()`: a name is its
    text alone (it was read as `"Mesh"`). A leg written `{"Hier": ...}`
    says a leg cannot be Hier, as RON does."""
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    for field, name in [("algorithm", "Mesh"), ("algorithm", "Auto"), ("dtype", "F32"), ("op", "AllReduce")]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(dict(good, **{field: {name: None}}))
        e = caught.value
        assert (e.kind, e.field) == ("NameTakesNoValue", field), str(e)
        assert f'`{name}` is a name, written as the text "{name}"' in str(e)
        assert e.accepted == f'"{name}"'
    legs = {"intra_reduce_scatter": {"Hier": {}}, "inter_all_reduce": "Ring", "intra_all_gather": "Ring"}
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, algorithm={"Hier": legs}))
    e = caught.value
    assert (e.kind, e.field) == ("HierInLeg", "algorithm.Hier.intra_reduce_scatter"), str(e)
    assert "a leg cannot itself be Hier" in str(e)
    # The text forms still read.
    assert ccc.Program.from_dict(dict(good, algorithm="Mesh")).to_dict()["algorithm"] == "Mesh"


def test_from_dict_names_the_name_a_misspelling_means():
    """A dict's misspelt field or name gets `parse`'s "did you mean" help."""
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    misspelt = dict(good, chanels=good["channels"])
    del misspelt["channels"]
    for spec, field, meant in [
        (misspelt, "chanels", "channels"),
        (dict(good, op="AllReduse"), "op", "AllReduce"),
        (dict(good, model={"lunch_ns": 1}), "model.lunch_ns", "launch_ns"),
    ]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(spec)
        assert (caught.value.field, caught.value.help) == (field, f"did you mean `{meant}`?"), str(caught.value)
    # Nothing near: no guess.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.Program.from_dict(dict(good, op="Gather"))
    assert caught.value.help is None


def test_what_a_callers_object_raised_is_the_refusals_cause():
    """A mapping or an integer type of the caller's that raises while read
    is refused naming its path, with what it raised as `__cause__`."""
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()

    class Raising(collections.abc.Mapping):
        def __getitem__(self, key):
            raise RuntimeError("mapping boom")

        def __iter__(self):
            return iter(["launch_ns"])

        def __len__(self):
            return 1

    class Broken:
        def __index__(self):
            raise ValueError("idx boom")

    for spec, field, raised in [
        (dict(good, model=Raising()), "model", RuntimeError),
        (dict(good, count=Broken()), "count", ValueError),
    ]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(spec)
        assert caught.value.field == field
        assert isinstance(caught.value.__cause__, raised), repr(caught.value.__cause__)
    # A `proven_by` manifest given as such a mapping: the same.
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    with pytest.raises(ccc.InputError) as caught:
        ccc.compile(text, proven_by=Raising())
    assert "mapping boom" in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError), repr(caught.value.__cause__)


def test_ctrl_c_and_exit_raised_while_a_dict_is_read_go_on_as_raised():
    """A `KeyboardInterrupt` or `SystemExit` raised by the caller's object
    while ccc reads it (an `__index__`, a mapping's `items`) is no refusal
    of the value: it is raised as it was, not turned into a `ParseError`
    or `InputError` (`except Exception` would have swallowed Ctrl-C)."""
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()

    for raised in (KeyboardInterrupt, SystemExit):

        class Index:
            def __index__(self):
                raise raised()

        class Items(collections.abc.Mapping):
            def __getitem__(self, key):
                raise raised()

            def __iter__(self):
                return iter(["launch_ns"])

            def __len__(self):
                return 1

        with pytest.raises(raised):
            ccc.Program.from_dict(dict(good, count=Index()))
        with pytest.raises(raised):
            ccc.Program.from_dict(dict(good, model=Items()))
        with pytest.raises(raised):
            ccc.compile(text, proven_by=Items())


def test_a_dict_changed_while_it_is_read_is_no_panic():
    """An `__index__` that changes the dict being read (a key added) once
    made PyO3's dict iterator panic (`PanicException`, which `except
    Exception` misses): the dict's items are taken whole first."""
    spec = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()

    class Grow:
        def __index__(self):
            spec["barrier"] = "Host"
            return 2

    spec["channels"] = Grow()
    program = ccc.Program.from_dict(spec)
    assert program.to_dict()["channels"] == 2


def test_from_dict_says_what_a_field_takes_in_a_dicts_words():
    """A value of the wrong type is refused with what its field takes, as a
    dict writes it: a name's field lists its names, a struct is a dict of
    its fields, a Hier a dict of legs (serde said `string or map`,
    `struct Topology`, `newtype variant`, `a sequence`)."""
    good = ccc.parse((ROOT / "examples" / "allreduce_ring.ron").read_text()).to_dict()
    hier = '{"Hier": {"intra_reduce_scatter": "Ring", "inter_all_reduce": "Ring", "intra_all_gather": "Ring"}}'
    for field, value, accepted in [
        ("op", 5, "one of AllGather, AllReduce, "),
        ("reduce", [1], "one of Add, Fma, Max, Min, Average, as text"),
        ("algorithm", 5, "a name as text (Ring, Mesh, "),
        ("algorithm", "Hier", hier),
        ("algorithm", {"Hier": 5}, 'a dict of legs, {"intra_reduce_scatter": "Ring", '),
        ("topology", None, 'a dict: {"rank_n": 32, "local_rank_n": 16}'),
        ("model", 5, "a dict of the cost model's overrides"),
        ("groups", 5, "a list"),
    ]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.Program.from_dict(dict(good, **{field: value}))
        e = caught.value
        assert e.accepted.startswith(accepted), (field, value, e.accepted)
        for jargon in ("string or map", "struct ", "variant", "sequence"):
            assert jargon not in str(e) and jargon not in e.accepted, (field, value, str(e))
