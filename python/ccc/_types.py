"""The dicts ``ccc`` returns, as ``TypedDict`` classes a type checker reads
and a program may import (``from ccc import Proof``): ``Compiled.proof``,
``Compiled.write`` and ``explain``. At run time they are plain dicts."""

import typing
from typing import List, Tuple

__all__ = [
    "Postcondition",
    "Protocol",
    "Proof",
    "Written",
    "ExplainedLeg",
    "ExplainedChoice",
    "ExplainedWritten",
    "Explained",
]


class Postcondition(typing.TypedDict):
    collective: int
    claim: str
    groups: int
    members: int
    steps: int
    halves: int
    transfers: int


class Protocol(typing.TypedDict):
    chains: int
    records: int
    steps: int
    signals: int


class Proof(typing.TypedDict):
    """What the proof established, and the seconds each part took."""

    certified: bool
    postconditions: List[Postcondition]
    protocol: Protocol
    symmetric_groups: int
    symmetric_by_phase: int
    images_checked: int
    lowering_seconds: float
    postcondition_seconds: float
    protocol_seconds: float
    roundtrip_seconds: float


class Written(typing.TypedDict):
    """What ``Compiled.write`` did."""

    files: int
    bytes: int
    replaced: bool
    kept: List[str]
    left: List[str]
    unremoved: List[Tuple[str, str]]
    """Files of ccc's own it could not remove (an old image made
    immutable), each with the OS error; the next write beside them
    removes them once it can."""
    swept: List[str]
    atomic: bool


class ExplainedLeg(typing.TypedDict):
    leg: str
    """The leg's field name (``intra_reduce_scatter``, ...), or ``flat``."""
    algorithm: str
    time_us: float
    bound_us: float


class ExplainedChoice(typing.TypedDict):
    algorithm: str
    """As the signature writes it."""
    time_us: float
    """Predicted time, microseconds."""
    algbw_gbps: float
    """nccom-test's algbw, GB/s (10^9 B/s)."""
    busbw_gbps: float
    """nccom-test's busbw, GB/s."""
    bound_us: float
    """The lower bound, microseconds."""
    ratio: float
    """Predicted over bound."""
    winner: bool
    """The choice the spec compiles to."""
    why: str
    """Why it lost (empty for the winner)."""
    legs: List[ExplainedLeg]
    ctrl_spad_slots: int
    """The CTRL SPAD slots it takes on each TOP_SP it uses."""
    mesh_events: int
    """The mesh events it takes on each TOP_SP it uses."""


class ExplainedWritten(ExplainedChoice, total=False):
    does_not_lower: str
    """Only on a written choice that exceeds a device limit: which, as a
    sentence (``verify`` and ``compile`` refuse it)."""


class Explained(typing.TypedDict):
    index: int
    """The collective's position in the program."""
    op: str
    bytes: int
    """nccom-test's size, bytes."""
    written: str
    """``Auto``, or the algorithm as written."""
    chosen: str
    """The algorithm the spec compiles to."""
    choices: List[ExplainedWritten]
    """Every legal choice, cheapest first."""
