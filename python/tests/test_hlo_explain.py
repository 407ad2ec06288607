"""`ccc.import_hlo` against `ccc sign MODULE.hlo --target T.ron`, its
errors located in the module, and `ccc.explain` against `ccc explain --json`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ccc
from conftest import ROOT

HLO = ROOT / "tests" / "hlo"
TARGETS = HLO / "targets"
# Every XLA-printed fixture that has collectives and imports
# (gspmd_matmul_8.lowered.hlo is lowered but not partitioned: it has none;
# the partly manual shard_maps' lowered text is refused, test below).
REFUSED = "partly_manual_8.lowered.hlo"
FIXTURES = sorted(
    p
    for p in HLO.glob("*.hlo")
    if p.name != "gspmd_matmul_8.lowered.hlo" and not (p.name.startswith("partly_manual") and ".lowered." in p.name)
)


def test_a_partly_manual_shard_map_is_refused_in_lowered_text(cli):
    """As `ccc import` refuses it: at its first collective, pointing to the
    compiled module (whose counts are each device's)."""
    text = (HLO / REFUSED).read_text()
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, (TARGETS / "cayman_8.ron").read_text())
    assert caught.value.kind == "Hlo"
    assert "manual over `x` but not over mesh axis `y`" in str(caught.value)
    assert "compiled module" in caught.value.help
    assert caught.value.line == text[: text.index(" psum.5 = ")].count("\n") + 1
    assert cli("check", HLO / REFUSED, "--target", TARGETS / "cayman_8.ron", ok=False).returncode == 2


def target_of(path: Path) -> Path:
    """The fixtures are named for their device count: `dp_train_step_8.compiled.hlo`."""
    n = re.search(r"_(\d+)\.(compiled|lowered)\.hlo$", path.name)
    assert n, path
    return TARGETS / f"cayman_{n.group(1)}.ron"


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_import_signs_as_the_cli_signs_the_module(path, cli):
    target = target_of(path)
    program = ccc.import_hlo(path.read_text(), target.read_text())
    assert isinstance(program, ccc.Program) and len(program) >= 1
    expected = cli("sign", path, "--target", target).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{32}", expected)
    assert ccc.sign(program) == expected


def test_target_as_a_dict_is_the_target_file():
    text = (HLO / "dp_train_step_8.compiled.hlo").read_text()
    from_ron = ccc.import_hlo(text, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))")
    from_dict = ccc.import_hlo(text, {"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}})
    assert from_dict == from_ron
    assert from_ron == ccc.import_hlo(text, (TARGETS / "cayman_8.ron").read_text())


def test_algorithm_overrides_the_target_as_the_cli_flag_does(cli):
    path = HLO / "dp_train_step_8.compiled.hlo"
    target = TARGETS / "cayman_8.ron"
    ring = ccc.import_hlo(path.read_text(), target.read_text(), algorithm="Ring")
    assert {c["algorithm"] for c in ring.collectives} == {"Ring"}
    expected = cli("sign", path, "--target", target, "--algorithm", "Ring").stdout.strip()
    assert ccc.sign(ring) == expected
    # The default (Auto) is a different program.
    assert ccc.import_hlo(path.read_text(), target.read_text()) != ring


def test_the_imported_program_compiles():
    path = HLO / "dp_train_step_8.compiled.hlo"
    program = ccc.import_hlo(path.read_text(), (TARGETS / "cayman_8.ron").read_text())
    compiled = ccc.compile(program, ranks=[0])
    assert compiled.signature == ccc.sign(program)


def test_a_problem_of_an_imported_collective_names_its_instruction_and_line(cli):
    path = HLO / "fsdp_gather_scatter_64.compiled.hlo"
    text = path.read_text()
    target = TARGETS / "cayman_64.ron"
    # SingleCycleRing serves all-reduce only: both collectives are refused.
    program = ccc.import_hlo(text, target.read_text(), algorithm="SingleCycleRing")
    # Where each instruction is defined, read from the text here.
    lines = text.splitlines()
    where = {}
    for name in ("all_gather.3", "reduce_scatter.8"):
        (at,) = [i + 1 for i, l in enumerate(lines) if re.match(rf"\s*(ROOT )?%?{re.escape(name)} = ", l)]
        where[name] = at
    for call in (ccc.sign, ccc.compile, ccc.explain):
        with pytest.raises(ccc.ValidationError) as e:
            call(program)
        problems = e.value.problems
        assert [(p.instruction, p.line, p.field) for p in problems] == [
            ("all_gather.3", where["all_gather.3"], "collectives[0].algorithm"),
            ("reduce_scatter.8", where["reduce_scatter.8"], "collectives[1].algorithm"),
        ]
        assert (e.value.line, e.value.collective, e.value.field) == (where["all_gather.3"], 0, "collectives[0].algorithm")
        assert f"line {where['all_gather.3']}: `all_gather.3` (collectives[0].algorithm): SingleCycleRing" in str(e.value)
        assert str(e.value).startswith("2 problems in the imported module:")
    # The CLI names the same instructions at the same lines.
    done = cli("sign", path, "--target", target, "--algorithm", "SingleCycleRing", ok=False)
    said = " ".join(w for w in done.stderr.split() if w != "│")
    assert done.returncode == 2
    for name, at in where.items():
        assert f"{path.name}:{at}: `{name}`" in said, said
    # A program read back from its dict is no longer the module's: by index.
    with pytest.raises(ccc.ValidationError) as e:
        ccc.sign(ccc.Program.from_dict(program.to_dict()))
    assert e.value.line is None and e.value.problems[0].instruction is None
    assert "collectives[0].algorithm: SingleCycleRing" in str(e.value)


def test_a_malformed_module_raises_at_its_line_and_column():
    # Line 11 names a device group member `x`; the error points at the
    # replica_groups value, which starts after `replica_groups=`.
    line = "  ROOT ar = f32[64]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,x}}, to_apply=add"
    text = "\n".join(
        [
            "HloModule bad",
            "",
            "add {",
            "  a = f32[] parameter(0)",
            "  b = f32[] parameter(1)",
            "  ROOT s = f32[] add(a, b)",
            "}",
            "",
            "ENTRY main {",
            "  p = f32[64]{0} parameter(0)",
            line,
            "}",
        ]
    )
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))")
    e = caught.value
    assert e.kind == "Hlo"
    assert e.line == 11
    assert e.column == line.index("{{0,1,2,3}") + 1
    assert "{{0,1,2,3},{4,5,6,x}}" in str(e)
    assert e.help
    assert e.accepted and not e.accepted.startswith("accepted:")


def test_a_module_where_a_spec_belongs_says_to_import_it():
    # It raised RON's "expected struct `Collective` but found `HloModule`".
    text = (HLO / "dp_train_step_8.compiled.hlo").read_text()
    for call in (ccc.sign, ccc.parse, ccc.explain, lambda t: ccc.diagnose([t, t])):
        with pytest.raises(ccc.ParseError) as caught:
            call(text)
        e = caught.value
        assert (e.kind, e.line, e.column) == ("Hlo", 1, 1), call
        assert "ccc.import_hlo(module, target)" in str(e) and e.accepted
    # At the `HloModule` line, below a comment before it.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.sign("// a rank's module\n// as dumped\n" + text)
    assert caught.value.line == 3


def test_a_truncated_module_raises_where_it_ends():
    text = "HloModule cut\n\nENTRY main {\n  p = f32[64"
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))")
    assert caught.value.kind == "Hlo"
    assert (caught.value.line, caught.value.column) == (4, len("  p = f32[64") + 1)


def test_a_bad_target_or_algorithm_raises_naming_it():
    text = (HLO / "dp_train_step_8.compiled.hlo").read_text()
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, "(arch: Cayman,\n topology: (rank_n: 8, local_rank_x: 8))")
    assert caught.value.kind == "Target"
    # The field's path, as a dict target's is (it was `target` alone), and
    # the name meant.
    assert caught.value.field == "target.topology.local_rank_x"
    assert caught.value.help == "did you mean `local_rank_n`?"
    assert caught.value.line == 2
    # What is accepted is RON's list, as a dict target's is, not the
    # sentence on how a target reads.
    assert caught.value.accepted == "one of `rank_n`, `local_rank_n`, or `pod_n`", caught.value.accepted
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, "(arch: Caymen, topology: (rank_n: 8, local_rank_n: 8))")
    assert caught.value.accepted == "one of `Sunda`, `Cayman`, `Mariana`, or `MarianaPlus`", caught.value.accepted
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, {"arch": "Cayman", "topology": {"rank_n": "eight", "local_rank_n": 8}})
    assert caught.value.kind == "Target"
    assert caught.value.field == "target.topology.rank_n"
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))", algorithm="Rign")
    assert caught.value.kind == "Algorithm"
    assert "Ring" in caught.value.accepted
    assert caught.value.help == "did you mean `Ring`?"
    assert caught.value.field == "algorithm"
    with pytest.raises(TypeError):
        ccc.import_hlo(text, 8)
    # A devices map that is not one to one is the target's, in either form,
    # naming the devices at fault.
    swapped = "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8),\n devices: {0: 1, 1: 1})"
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, swapped)
    assert (caught.value.kind, caught.value.line) == ("Target", 2)
    assert "devices 0 and 1 are both given rank 1" in str(caught.value)
    as_dict = {"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}, "devices": {"0": 1, "1": 1}}
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, as_dict)
    assert (caught.value.kind, caught.value.field) == ("Target", "target.devices")
    # An empty dict names the first field it lacks, where it belongs, once.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, {})
    assert caught.value.field == "target.arch" and "target..:" not in str(caught.value)
    # A value no collective could take is the target's too, found before
    # anything is imported: every problem said, the first one's field.
    for bad in [
        "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), channels: 99, model: (hops_max: 0))",
        {"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}, "channels": 99, "model": {"hops_max": 0}},
    ]:
        with pytest.raises(ccc.ParseError) as caught:
            ccc.import_hlo(text, bad)
        assert (caught.value.kind, caught.value.field) == ("Target", "target.channels")
        assert caught.value.accepted == "1..=32"
        assert "target.model.hops_max: 0 is out of range" in str(caught.value)
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 3))")
    assert (caught.value.kind, caught.value.field) == ("Target", "target.topology.local_rank_n")


EXPLAINED = [ROOT / "examples" / "allreduce_hier.ron", ROOT / "examples" / "allreduce_ring.ron"]


@pytest.mark.parametrize("path", EXPLAINED, ids=[p.stem for p in EXPLAINED])
def test_explain_is_the_cli_json(path, cli_json):
    expected = cli_json("explain", path, "--json")
    got = ccc.explain(path.read_text())
    assert got == expected
    assert ccc.explain(ccc.parse(path.read_text())) == expected


def test_explain_rows_have_one_winner_and_every_number():
    (collective,) = ccc.explain((ROOT / "examples" / "allreduce_hier.ron").read_text())
    choices = collective["choices"]
    assert len(choices) > 1
    assert [c["winner"] for c in choices].count(True) == 1
    # Cheapest first, compared in whole nanoseconds as the CLI sorts.
    times = [round(c["time_us"] * 1000) for c in choices]
    assert times == sorted(times)
    for c in choices:
        assert c["time_us"] > 0 and c["algbw_gbps"] > 0 and c["busbw_gbps"] > 0
        assert c["ratio"] >= 1.0 - 1e-9
        assert c["legs"]
        assert (c["why"] == "") == c["winner"]


def test_explain_of_an_imported_module_is_the_cli_json(cli_json):
    path = HLO / "tp_train_step_16.compiled.hlo"
    target = TARGETS / "cayman_16.ron"
    expected = cli_json("explain", path, "--target", target, "--json")
    assert ccc.explain(ccc.import_hlo(path.read_text(), target.read_text())) == expected


def test_explain_of_a_bad_spec_raises():
    text = (ROOT / "examples" / "allreduce_ring.ron").read_text()
    with pytest.raises(ccc.ParseError):
        ccc.explain(text.replace("AllReduce", "AllReduse"))
    with pytest.raises(TypeError):
        ccc.explain(42)


def test_a_devices_map_takes_whole_number_keys_as_the_target_file_does():
    text = (HLO / "dp_train_step_8.compiled.hlo").read_text()
    reversed_ron = "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), devices: {%s})" % ", ".join(
        f"{d}: {7 - d}" for d in range(8)
    )
    as_ints = {"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}, "devices": {d: 7 - d for d in range(8)}}
    as_text = dict(as_ints, devices={str(d): 7 - d for d in range(8)})
    from_ron = ccc.import_hlo(text, reversed_ron)
    assert ccc.import_hlo(text, as_ints) == from_ron == ccc.import_hlo(text, as_text)
    # A bool is not a device id; one past any key is named as such.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, dict(as_ints, devices={True: 1}))
    assert (caught.value.kind, caught.value.field) == ("Target", "target.devices")
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, dict(as_ints, devices={2**70: 1}))
    assert (caught.value.kind, caught.value.field) == ("Target", "target.devices")
    assert "out of range" in str(caught.value)
    # A negative key is named as a key (JSON carried it as text), and the
    # help names the map, not a placeholder; so does a negative rank.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, dict(as_ints, devices={**as_ints["devices"], -1: 0}))
    assert "target.devices: key -1 is not a device id" in str(caught.value)
    assert caught.value.help == "`devices` takes a whole number: not negative, no fraction"
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, dict(as_ints, devices={**as_ints["devices"], 9: -1}))
    assert caught.value.field == "target.devices.9"
    assert caught.value.help == "`devices` takes a whole number: not negative, no fraction"
    # An int key and its digits as text are one key in JSON: given both,
    # the map is refused, not read with the last one kept; in a target
    # file, a key written twice is refused alike.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, dict(as_ints, devices={**as_ints["devices"], "0": 1}))
    assert (caught.value.kind, caught.value.field) == ("Target", "target.devices")
    assert 'the key "0" is given twice' in str(caught.value)
    twice = reversed_ron.replace("devices: {", "devices: {0: 0, ")
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, twice)
    assert "the key 0 is written twice" in str(caught.value)
    # An integer key of another type (numpy's) reads as its int; a key
    # JSON would not write for a number ("00", "+1") is refused.
    class Whole:
        def __init__(self, n):
            self.n = n

        def __index__(self):
            return self.n

    assert ccc.import_hlo(text, dict(as_ints, devices={Whole(d): 7 - d for d in range(8)})) == from_ron
    for key in ("00", "+1"):
        with pytest.raises(ccc.ParseError) as caught:
            ccc.import_hlo(text, dict(as_ints, devices={key: 0}))
        assert (caught.value.field, f'"{key}"' in str(caught.value)) == ("target.devices", True)
    # A struct written as a list is refused, as in a spec.
    with pytest.raises(ccc.ParseError) as caught:
        ccc.import_hlo(text, dict(as_ints, topology=[8, 8]))
    assert (caught.value.kind, caught.value.field) == ("Target", "target.topology")
    assert "a list where a dict belongs" in str(caught.value)


def test_text_no_utf8_can_hold_is_a_parse_error_naming_the_argument():
    # A lone surrogate in the module, the target's text or the algorithm
    # is a ParseError naming which, not Python's UnicodeEncodeError.
    text = (HLO / "dp_train_step_8.compiled.hlo").read_text()
    target = "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))"
    for call, field in [
        (lambda: ccc.import_hlo(text + "\ud800", target), "text"),
        (lambda: ccc.import_hlo(text, target + "//\ud800"), "target"),
        (lambda: ccc.import_hlo(text, target, algorithm="Ri\ud800ng"), "algorithm"),
        (lambda: ccc.decode(b"", "\ud800"), "region"),
    ]:
        with pytest.raises(ccc.ParseError) as caught:
            call()
        assert (caught.value.kind, caught.value.field) == ("NotUtf8", field)
        assert "lone surrogate" in str(caught.value)
    for call in (lambda: ccc.import_hlo(8, target), lambda: ccc.import_hlo(text, target, algorithm=8)):
        with pytest.raises(TypeError):
            call()


def test_the_stubs_name_every_key_explain_gives():
    # The TypedDicts of `ccc._types` (which the stubs re-export, and a
    # program may import) against what `explain` returns: the keys of
    # every collective and every choice, no more and no fewer.
    fields = {
        name: set(getattr(ccc, name).__annotations__)
        for name in ("Explained", "ExplainedChoice", "ExplainedLeg", "ExplainedWritten")
    }
    fields["ExplainedWritten"] -= fields["ExplainedChoice"]
    explained = ccc.explain((ROOT / "examples" / "allreduce_hier.ron").read_text())
    for collective in explained:
        assert set(collective) == fields["Explained"]
        for choice in collective["choices"]:
            assert set(choice) - {"does_not_lower"} == fields["ExplainedChoice"]
            for leg in choice["legs"]:
                assert set(leg) == fields["ExplainedLeg"]
    assert fields["ExplainedWritten"] == {"does_not_lower"}


def test_what_is_not_compiled_is_a_warning(cli):
    """A pipeline's device-to-device send/recv is not compiled: `import_hlo`
    says so in a `UserWarning` with the CLI's words (it said nothing), and
    a module without one warns of nothing."""
    path = HLO / "handwritten" / "gpu_async_send_8.hlo"
    target = (TARGETS / "cayman_8.ron").read_text()
    with pytest.warns(UserWarning) as caught:
        program = ccc.import_hlo(path.read_text(), target)
    assert len(program) == 4
    words = "2 device-to-device sends and recvs (the first `recv`, line 32) are not compiled"
    assert [str(w.message) for w in caught] == [f"{words}: ccc compiles collectives, not these transfers"]
    assert caught[0].filename == __file__
    stderr = cli("check", path, "--target", TARGETS / "cayman_8.ron").stderr
    assert words in stderr
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ccc.import_hlo((HLO / "dp_train_step_8.compiled.hlo").read_text(), target)


def test_a_device_count_taken_from_the_target_is_a_warning():
    """Lowered text naming no device count, with a collective over all
    devices: taken as the target's ranks, which `import_hlo` says."""
    module = """HloModule lowered_step

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %step (g: f32[512]) -> f32[512] {
  %g = f32[512]{0} parameter(0)
  ROOT %grads = f32[512]{0} all-reduce(%g), replica_groups={}, to_apply=%sum
}
"""
    with pytest.warns(UserWarning) as caught:
        program = ccc.import_hlo(module, {"arch": "Cayman", "topology": {"rank_n": 16, "local_rank_n": 16}})
    assert len(program) == 1 and program.collectives[0]["topology"]["rank_n"] == 16
    (said,) = [str(w.message) for w in caught]
    assert said.startswith("the module names no device count (no replica_count or num_partitions in its header)")
    assert "`grads` (line 11) over all devices, taken as the target's 16 ranks" in said


def test_diagnose_of_imported_modules_names_the_differing_instructions(cli_json, tmp_path):
    """Programs `import_hlo` made are compared instruction by instruction
    too, as `ccc diagnose A.hlo B.hlo --target T --json` compares the
    modules: the same `hlo` section, the modules named as the inputs are
    (it was missing: a caller learnt which fields differed, not which
    instructions)."""
    source = HLO / "mixed_dtypes_8.lowered.hlo"
    text = source.read_text()
    edited = tmp_path / "rank1.hlo"
    edited.write_text(text.replace("replica_groups={{0,1,2,3,4,5,6,7}}", "replica_groups={{0,1,2,3},{4,5,6,7}}", 1))
    target = TARGETS / "cayman_8.ron"
    a = ccc.import_hlo(text, target.read_text())
    b = ccc.import_hlo(edited.read_text(), target.read_text())
    report = ccc.diagnose({"rank 0": a, "rank 1": b})
    expected = cli_json("diagnose", source, edited, "--target", target, "--json")
    assert report["hlo"]["reference"] == ["rank 0"]
    assert [g["modules"] for g in report["hlo"]["groups"]] == [["rank 1"]]
    strip = lambda hlo: [{k: v for k, v in g.items() if k != "modules"} for g in hlo["groups"]]
    assert strip(report["hlo"]) == strip(expected["hlo"])
    assert report["hlo"]["groups"][0]["differences"][0]["instruction"] == "psum.20"
    assert report["all_match"] is False
    # Modules that agree, or an input that is no imported module: no
    # `hlo` key, as the CLI writes none.
    assert "hlo" not in ccc.diagnose([a, a])
    assert "hlo" not in ccc.diagnose([a, ccc.parse(a.to_ron())])
