"""A framework's lowering pass: for one rank, compile each collective of a
training step as the graph reaches it, keep the bytes to load, and check
that ranks agree by signature — the way a JAX or PyTorch/XLA pass would
call ccc in-process."""

from __future__ import annotations

import json

import ccc
import pytest
from conftest import ROOT

MY_RANK = 5


def lower_for_rank(collectives, rank):
    """What a lowering pass does: one compile per collective, one rank."""
    loaded = []
    for spec in collectives:
        compiled = ccc.compile(ccc.Program.from_dict(spec), ranks=[rank])
        [(only_rank, topsps)] = compiled.images.items()
        assert only_rank == rank
        loaded.append((compiled.signature, {t: (tp.ctrl_spad, tp.slot_spad, tp.neff_configs) for t, tp in topsps.items()}))
    return loaded


def test_a_lowering_pass_compiles_each_collective_for_its_rank():
    step = ccc.parse((ROOT / "examples" / "program_training_step.ron").read_text())
    assert len(step) > 1
    loaded = lower_for_rank(step.collectives, MY_RANK)
    assert len(loaded) == len(step)

    for (signature, images), spec in zip(loaded, step.collectives):
        # Every rank of the world gets the same signature for the same collective...
        assert signature == ccc.sign(ccc.Program.from_dict(spec))
        # ...and this rank's bytes are those of a whole-world compile.
        world = ccc.compile(ccc.Program.from_dict(spec), verify=False)
        assert images == {
            t: (tp.ctrl_spad, tp.slot_spad, tp.neff_configs) for t, tp in world.images[MY_RANK].items()
        }


def test_a_pass_that_built_a_different_collective_is_told_why():
    step = ccc.parse((ROOT / "examples" / "program_training_step.ron").read_text())
    mine = step.to_dict()
    theirs = step.to_dict()
    theirs["collectives"][0]["count"] += 32  # still a multiple of the 32 ranks
    report = ccc.diagnose({"rank 0": ccc.Program.from_dict(theirs), "rank 5": ccc.Program.from_dict(mine)})
    assert report["all_match"] is False
    [difference] = report["differences"]
    assert difference["first"]["majority_index"] == 0
    assert any(f["field"] == "count" for c in difference["collectives"] for f in c["fields"])


def auto_step():
    """The training step's collectives with every algorithm left to `Auto`,
    each of the first two twice (a model's layers repeat)."""
    step = ccc.parse((ROOT / "examples" / "program_training_step.ron").read_text()).to_dict()
    collectives = []
    for spec in step["collectives"]:
        spec = dict(spec, algorithm="Auto")
        collectives.append(spec)
    return collectives[:2] + collectives + collectives[:2]


def test_a_lowering_pass_through_an_auto_cache_gets_what_it_gets_without():
    collectives = auto_step()
    cache = ccc.AutoCache()
    assert (len(cache), cache.capacity) == (0, 1024)
    for spec in collectives:
        program = ccc.Program.from_dict(spec)
        cached = ccc.compile(program, ranks=[MY_RANK], auto_cache=cache)
        alone = ccc.compile(program, ranks=[MY_RANK])
        assert cached.signature == alone.signature
        assert cached.manifest == alone.manifest
        assert cached.images[MY_RANK].keys() == alone.images[MY_RANK].keys()
        for t, tp in cached.images[MY_RANK].items():
            assert (tp.ctrl_spad, tp.slot_spad, tp.neff_configs) == (
                alone.images[MY_RANK][t].ctrl_spad,
                alone.images[MY_RANK][t].slot_spad,
                alone.images[MY_RANK][t].neff_configs,
            )
        assert ccc.sign(program, auto_cache=cache) == alone.signature
    # One entry per distinct collective: the repeats found theirs.
    distinct = {json.dumps(spec, sort_keys=True) for spec in collectives}
    assert len(cache) == len(distinct) < len(collectives)
    assert repr(cache) == f"AutoCache(capacity=1024, collectives={len(distinct)})"
    cache.clear()
    assert len(cache) == 0


def test_an_auto_cache_keeps_at_most_its_capacity():
    small = ccc.AutoCache(capacity=1)
    nothing = ccc.AutoCache(capacity=0)
    for spec in auto_step():
        program = ccc.Program.from_dict(spec)
        expected = ccc.sign(program)
        assert ccc.sign(program, auto_cache=small) == expected
        assert ccc.sign(program, auto_cache=nothing) == expected
        assert len(small) == 1 and len(nothing) == 0
    with pytest.raises(OverflowError, match="capacity -1 is out of range; accepted: a number of collectives from 0"):
        ccc.AutoCache(capacity=-1)
    with pytest.raises(TypeError):
        ccc.compile(ccc.Program.from_dict(auto_step()[0]), auto_cache={})


def test_an_auto_cache_pickles_empty_and_a_compiled_says_what_pickles():
    import copy
    import pickle

    cache = ccc.AutoCache(capacity=7)
    program = ccc.Program.from_dict(auto_step()[0])
    ccc.sign(program, auto_cache=cache)
    assert len(cache) == 1
    for twin in (pickle.loads(pickle.dumps(cache)), copy.deepcopy(cache)):
        assert (twin.capacity, len(twin)) == (7, 0)
        assert ccc.sign(program, auto_cache=twin) == ccc.sign(program)
    compiled = ccc.compile(program, ranks=[MY_RANK])
    with pytest.raises(TypeError, match="send its program"):
        pickle.dumps(compiled)
    # What it names does pickle, and compiles to the same bytes.
    again = ccc.compile(pickle.loads(pickle.dumps(program)), ranks=[MY_RANK])
    assert again.manifest_json() == compiled.manifest_json()
    images = compiled.images[MY_RANK][0]
    with pytest.raises(TypeError, match="send its bytes"):
        pickle.dumps(images)
    # Immutable: a copy, shallow or deep, is the object itself (a structure
    # holding one copies with it, as one holding a tuple does).
    for value in (compiled, images):
        assert copy.copy(value) is value and copy.deepcopy(value) is value
    held = copy.deepcopy({"compiled": compiled, "images": [images]})
    assert held["compiled"] is compiled and held["images"][0] is images


def test_auto_cache_help_shows_its_default_capacity():
    import inspect

    parameter = inspect.signature(ccc.AutoCache).parameters["capacity"]
    assert parameter.default == 1024 == ccc.AutoCache().capacity


def test_text_past_the_cli_caps_is_refused():
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(" " * (16 * 2**20 + 1))
    assert caught.value.kind == "TooLarge"
    assert caught.value.accepted == "a spec of at most 16777216 bytes"
    # At the cap, the text is read (and is not a spec).
    with pytest.raises(ccc.ParseError) as caught:
        ccc.parse(" " * (16 * 2**20))
    assert caught.value.kind != "TooLarge"
