"""The exceptions ccc raises: each carries the Rust error's structured fields.

Every exception is a ``CccError``; its attributes say what was wrong and
where (absent ones are ``None``):

- ``kind``: the Rust variant that failed (``UnknownVariant``, ``OutOfRange``,
  ``Limit``, ``UnmatchedSend``, ...);
- ``field``: the field path (``collectives[1].topology.local_rank_n``);
- ``collective``, ``rank``, ``topsp``, ``step``, ``record``: where in the
  schedule;
- ``line``, ``column`` (and ``end_line``, ``end_column``): where in RON text,
  1-based; for a ``ValidationError`` of a ``Program`` that ``import_hlo``
  made, the line of the first problem's HLO instruction;
- ``offset``: the byte offset in an image (``decode``);
- ``accepted``: what would be accepted instead, when ccc can say;
- ``help``: a hint on how to fix it;
- ``problems``: for ``ValidationError``, every ``Problem`` found (the
  top-level fields are the first problem's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

__all__ = [
    "Problem",
    "CccError",
    "ParseError",
    "ValidationError",
    "BuildError",
    "LowerError",
    "ImageError",
    "ProofError",
    "ProofTooLargeError",
    "MemoryBudgetError",
    "CertificateError",
    "OutputError",
    "DecodeError",
    "InputError",
    "InternalError",
]


@dataclass(frozen=True)
class Problem:
    """One problem of a spec, as validation reports it."""

    kind: str
    """The Rust ``Problem`` variant (``OutOfRange``, ``NotADivisor``, ...)."""
    field: str
    """The field path as the spec was written (``collectives[1].channels``)."""
    collective: Optional[int]
    """The collective's index; ``None`` for the program itself."""
    message: str
    """The whole message, path first."""
    accepted: Optional[str]
    """What would be accepted, when the message says."""
    line: Optional[int] = None
    """For a collective of a ``Program`` that ``import_hlo`` made: the line of
    the HLO instruction it came from (the message names it too)."""
    instruction: Optional[str] = None
    """For a collective of a ``Program`` that ``import_hlo`` made: that HLO
    instruction's name (``all-gather.3``)."""


class CccError(Exception):
    """A failure of ccc: bad input, a schedule that does not fit, a defect."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        field: Optional[str] = None,
        collective: Optional[int] = None,
        rank: Optional[int] = None,
        topsp: Optional[int] = None,
        step: Optional[int] = None,
        record: Optional[int] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        end_line: Optional[int] = None,
        end_column: Optional[int] = None,
        offset: Optional[int] = None,
        accepted: Optional[str] = None,
        help: Optional[str] = None,
        problems: Tuple[Problem, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.field = field
        self.collective = collective
        self.rank = rank
        self.topsp = topsp
        self.step = step
        self.record = record
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column
        self.offset = offset
        self.accepted = accepted
        self.help = help
        self.problems = tuple(problems)

    def __reduce__(self):  # keep the fields through pickling (multiprocessing)
        fields = {k: v for k, v in self.__dict__.items() if k != "message"}
        return (_rebuild, (type(self), self.message, fields))


def _rebuild(cls, message, fields):
    return cls(message, **fields)


class ParseError(CccError, ValueError):
    """The text (or dict) is not a spec: ``line``/``column`` or ``field`` say where."""


class ValidationError(CccError, ValueError):
    """The spec breaks rules; ``problems`` lists every one, by field path."""


class BuildError(CccError):
    """The algorithms could not be composed into a schedule."""


class LowerError(CccError):
    """A rank does not fit the device (``rank``, ``topsp``, ``step``), or does not exist.

    Compiling some ``ranks`` with ``verify=False`` still judges the others
    against the limits that depend on the algorithm: one that does not fit
    is named by ``rank`` and ``collective`` (``topsp`` and ``step`` None);
    ``rank`` is None too for a per-step limit, counted at a group's busiest
    member.
    """


class ImageError(CccError):
    """An image does not fit its region (``rank``, ``topsp``)."""


class ProofError(CccError):
    """The proof found a defect: ccc refuses to emit a schedule it cannot prove.

    This is a defect in ccc (the CLI's exit 1); report it with the spec.
    """


class ProofTooLargeError(CccError):
    """The proof's symbolic buffers would be too large; compile with ``verify=False``."""


class MemoryBudgetError(CccError):
    """The compile would hold more than ``memory_budget``; ``accepted`` lists the ways out."""


class CertificateError(CccError):
    """A certificate (an earlier compile's manifest) does not vouch for this schedule."""


class OutputError(CccError):
    """``Compiled.write`` refused the folder (nothing was written) or the file system failed."""


class DecodeError(CccError, ValueError):
    """Bytes that are not an image of the region: ``offset`` says where."""


class InputError(CccError, ValueError):
    """A ``diagnose`` input that is not a manifest, or a manifest that was edited."""


class InternalError(CccError):
    """A panic inside ccc, surfaced instead of aborting the interpreter: a defect."""
