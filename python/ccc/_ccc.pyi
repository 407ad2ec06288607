"""Type stubs of the native module ``ccc._ccc`` (re-exported by ``ccc``)."""

from os import PathLike
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, SupportsIndex, Tuple, Union, final

from ._types import Explained
from ._types import ExplainedChoice
from ._types import ExplainedLeg
from ._types import ExplainedWritten
from ._types import Postcondition
from ._types import Proof
from ._types import Protocol
from ._types import Written

__all__ = [
    "Program",
    "Compiled",
    "AutoCache",
    "TopSpImages",
    "parse",
    "compile",
    "sign",
    "diagnose",
    "decode",
    "import_hlo",
    "explain",
    "_panic_for_test",
    "_time_rust_compile",
    "FORMAT_VERSION",
]

FORMAT_VERSION: int
"""The wire format version written into manifests and signatures."""

@final
class Program:
    """A spec: one collective, or a program of several in order. Immutable,
    hashable (equal programs hash alike) and picklable (as the dict
    ``to_dict`` gives, rebuilt by ``Program.from_dict``)."""

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Program:
        """A spec from a dict of the RON schema's fields (one collective, or
        ``{"collectives": [...]}``); enums by their RON names, a Hier algorithm
        as ``{"Hier": {...}}``, tuples as lists. Raises ``ccc.ParseError``
        naming the field path."""
    def to_ron(self) -> str:
        """The spec as RON text; ``ccc.parse(p.to_ron()) == p`` while the text
        is within the 16 MiB that ``parse`` and the CLI read (a program built
        with ``from_dict``, which has no such cap, may write more: its
        ``to_dict`` round-trips whatever its size)."""
    def to_dict(self) -> Dict[str, Any]:
        """The spec as a dict, in the form ``from_dict`` reads."""
    @property
    def collectives(self) -> List[Dict[str, Any]]:
        """Each collective as a dict."""
    def __len__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class TopSpImages:
    """The three images one TOP_SP of one rank loads, byte for byte the files
    ``ccc compile -o OUT`` writes under ``rank-R/topsp-T/``."""

    @property
    def rank(self) -> int: ...
    @property
    def topsp(self) -> int: ...
    @property
    def ctrl_spad(self) -> bytes:
        """``ctrl_spad.bin``: the scheduler slot chain."""
    @property
    def slot_spad(self) -> bytes:
        """``slot_spad.bin``: the DMA tail-pointer schedule."""
    @property
    def neff_configs(self) -> bytes:
        """``neff_configs.bin``: the 3592-byte EXEC config."""
    @property
    def record_n(self) -> int:
        """Records in the chain."""
    def __copy__(self) -> TopSpImages:
        """Itself: immutable."""
    def __deepcopy__(self, memo: Any, /) -> TopSpImages:
        """Itself: immutable (it does not pickle)."""

@final
class Compiled:
    """A compiled spec. Immutable and safe to share between threads."""

    @property
    def signature(self) -> str:
        """The collective signature: 32 lower-case hex digits."""
    @property
    def signature_fields(self) -> List[Tuple[str, str]]:
        """The signature's fields, ``(name, value)`` in preimage order."""
    @property
    def images(self) -> Mapping[int, Mapping[int, TopSpImages]]:
        """``images[rank][topsp]`` for the ranks compiled, ascending (read-only)."""
    @property
    def ranks(self) -> List[int]:
        """The ranks compiled, ascending."""
    @property
    def proof(self) -> Optional[Proof]:
        """What the proof established; ``None`` with ``verify=False``."""
    @property
    def manifest(self) -> Dict[str, Any]:
        """The manifest (what ``write`` puts in ``manifest.json``) as a dict."""
    def manifest_json(self) -> str:
        """The text of ``manifest.json``, exactly as ``write`` writes it."""
    def write(self, out_dir: Union[str, bytes, PathLike[str], PathLike[bytes]]) -> Written:
        """Writes the images and ``manifest.json`` into ``out_dir`` as
        ``ccc compile -o`` does: atomically, never losing a file ccc did not
        write. Raises ``ccc.OutputError`` (nothing written) when refused."""
    def __copy__(self) -> Compiled:
        """Itself: a ``Compiled`` is immutable."""
    def __deepcopy__(self, memo: Any, /) -> Compiled:
        """Itself: a ``Compiled`` is immutable (it does not pickle)."""

def parse(text: str) -> Program:
    """Reads a spec from RON text. Raises ``ccc.ParseError`` with ``line``,
    ``column``, ``kind`` and ``accepted``."""

@final
class AutoCache:
    """Keeps ``algorithm: Auto``'s answers between calls: pass the same one
    as ``auto_cache=`` to ``compile`` and ``sign``, and a collective equal
    to one seen before reuses its choice instead of searching again. The
    result is the one a call without it gives; only the time differs.
    Holds at most ``capacity`` collectives between calls, the least
    recently used dropped first (``0`` keeps nothing between calls).
    Threads may share one: their validations through it take turns."""

    def __new__(cls, capacity: SupportsIndex = 1024) -> AutoCache: ...
    @property
    def capacity(self) -> int:
        """The most collectives kept."""
    def __len__(self) -> int:
        """The distinct collectives whose answers are kept."""
    def clear(self) -> None:
        """Drops everything kept."""

def compile(
    program_or_text: Union[Program, str],
    ranks: Optional[Iterable[SupportsIndex]] = None,
    verify: bool = True,
    memory_budget: Optional[SupportsIndex] = None,
    auto_cache: Optional[AutoCache] = None,
    proven_by: Union[Compiled, Mapping[str, Any], str, "PathLike[str]", None] = None,
) -> Compiled:
    """Validates, builds, lowers, encodes, proves and signs a spec; emits
    images for ``ranks`` (all when ``None``; an empty list, or a rank below 0
    or past 2^32 - 1, is a ``ValueError``); ``Auto``'s answers kept in ``auto_cache``.
    ``memory_budget`` (bytes, default 2 GiB) counts the ``bytes`` and
    objects the result keeps per TOP_SP besides ccc's own images.
    ``proven_by``, an earlier verified compile of the same spec (a
    ``Compiled``, its manifest as a dict or JSON text, or an ``os.PathLike``
    naming its ``manifest.json`` or output folder), stands in for the
    world's proof (``ccc compile --proven-by``): ``CertificateError`` when it
    does not vouch for this schedule, ``InputError`` when it is no manifest,
    ``ValueError`` with ``verify=False``. The GIL
    is released while ccc works. Raises a subclass of ``ccc.CccError``
    (``MemoryError`` if Python cannot allocate the images' ``bytes``)."""

def sign(program_or_text: Union[Program, str], auto_cache: Optional[AutoCache] = None) -> str:
    """The collective signature: 32 lower-case hex digits (``ccc sign``).
    ``LowerError`` (kind ``Limit``) for a program whose choices exceed a
    lowering limit at any rank, as ``ccc check`` and a compile of every
    rank refuse it (one of some ranks with ``verify=False`` judges those
    alone)."""

_DiagnoseInput = Union[Program, str, Compiled, Mapping[str, Any], "PathLike[str]"]

def diagnose(inputs: Union[Sequence[_DiagnoseInput], Mapping[str, _DiagnoseInput]]) -> Dict[str, Any]:
    """Compares signatures and explains every difference: the report of
    ``ccc diagnose --json`` as a dict. An input is a ``Program``, RON text, a
    ``Compiled``, a manifest (dict or JSON text) or an ``os.PathLike``: a
    ``ccc compile -o`` output folder (compared by its images when intact; one
    holding a file changed since ccc wrote it is listed under ``edited``, a
    key present only then, and is no match) or a spec or manifest file. A
    list names its inputs ``input 0``, ... (a path by itself); a dict by its
    keys. Of the inputs refused, the first in input order is raised, its
    message naming it and the others refused. Programs ``import_hlo`` made
    are compared instruction by instruction too (the ``hlo`` key, as
    ``ccc diagnose A.hlo B.hlo --target T --json`` gives it)."""

def decode(data: Union[bytes, bytearray], region: str) -> Union[List[Any], Dict[str, Any]]:
    """Decodes an image of ``region`` (``ctrl``, ``slot``, ``neff``) into
    what ``ccc decode --format json`` prints. Raises ``ccc.DecodeError``
    with the byte ``offset``; of ``kind`` ``TooLarge``, unread, for an
    image larger than its region on any arch (as ``ccc decode`` caps it)."""

def import_hlo(text: str, target: Union[str, Mapping[str, Any]], algorithm: Optional[str] = None) -> Program:
    """Imports the collectives of an XLA HLO module (as XLA prints it) as a
    ``Program`` for ``target``: the target file's RON text, or a dict of its
    fields (``{"arch": "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}}``
    with optional ``channels``, ``algorithm``, ``algorithms``, ``devices``,
    ``barrier``, ``send_credits``, ``model``). ``algorithm`` (``"Ring"``,
    ``"Hier((...))"``, ``"Auto"``) overrides the target's for every
    collective, as ``--algorithm`` does. What of the module is not compiled
    as it runs (collectives in a ``conditional``'s branches, device-to-device
    sends) is said in a ``UserWarning``. Raises ``ccc.ParseError``: ``kind``
    ``"Hlo"`` with ``line``/``column`` in the module and ``help``; ``"Target"``
    or ``"Algorithm"`` with ``field`` (and ``line``/``column`` of RON text)."""

def explain(program_or_text: Union[Program, str]) -> List[Explained]:
    """Every legal choice of every collective, predicted by the cost model:
    what ``ccc explain --json`` prints, one dict per collective. Raises
    ``ccc.ParseError`` or ``ccc.ValidationError``."""

def _panic_for_test(message: str) -> None: ...
def _time_rust_compile(
    program: Union[Program, str], ranks: Optional[Sequence[int]], verify: bool, iterations: int
) -> List[float]: ...
