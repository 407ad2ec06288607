"""A framework's lowering pass: for one rank, compile each collective of a
training step as the graph reaches it, keep the bytes to load, and check
that ranks agree by signature — the way a JAX or PyTorch/XLA pass would
call ccc in-process."""

from __future__ import annotations

import ccc
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
