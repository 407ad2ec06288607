"""ccc: a collective schedule compiler for Trainium-class accelerators.

Parse or build a spec, compile it into the bytes each rank's TOP_SPs load,
sign, diagnose and decode, in-process::

    import ccc

    program = ccc.parse(open("examples/allreduce_ring.ron").read())
    compiled = ccc.compile(program, ranks=[0])
    compiled.signature                  # 32 hex digits
    compiled.images[0][0].ctrl_spad     # bytes of rank 0, TOP_SP 0

The GIL is released while ccc compiles; every object is immutable and safe
to share between threads. Errors are subclasses of ``ccc.CccError`` that
carry the Rust error's fields (see ``ccc._errors``).

``import_hlo`` reads an XLA HLO module into a ``Program`` for a target
machine; ``explain`` gives every legal algorithm of every collective with
its predicted time, as ``ccc explain --json`` does. An ``AutoCache``
passed to ``compile`` and ``sign`` keeps ``algorithm: Auto``'s choices for
the calls after, so that a lowering pass meeting a collective again does
not search the cost model again.
"""

from ._ccc import (
    FORMAT_VERSION,
    AutoCache,
    Compiled,
    Program,
    TopSpImages,
    compile,
    decode,
    diagnose,
    explain,
    import_hlo,
    parse,
    sign,
)
from ._types import (
    Explained,
    ExplainedChoice,
    ExplainedLeg,
    ExplainedWritten,
    Postcondition,
    Proof,
    Protocol,
    Written,
)
from ._errors import (
    BuildError,
    CccError,
    CertificateError,
    DecodeError,
    ImageError,
    InputError,
    InternalError,
    LowerError,
    MemoryBudgetError,
    OutputError,
    ParseError,
    Problem,
    ProofError,
    ProofTooLargeError,
    ValidationError,
)

__all__ = [
    "FORMAT_VERSION",
    "AutoCache",
    "Compiled",
    "Program",
    "TopSpImages",
    "compile",
    "decode",
    "diagnose",
    "explain",
    "import_hlo",
    "parse",
    "sign",
    "Explained",
    "ExplainedChoice",
    "ExplainedLeg",
    "ExplainedWritten",
    "Postcondition",
    "Proof",
    "Protocol",
    "Written",
    "BuildError",
    "CccError",
    "CertificateError",
    "DecodeError",
    "ImageError",
    "InputError",
    "InternalError",
    "LowerError",
    "MemoryBudgetError",
    "OutputError",
    "ParseError",
    "Problem",
    "ProofError",
    "ProofTooLargeError",
    "ValidationError",
]
