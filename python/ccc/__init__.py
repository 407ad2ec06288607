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

``import_hlo`` and ``explain`` come with the HLO front end and the cost
model, which have not landed yet.
"""

from ._ccc import (
    FORMAT_VERSION,
    Compiled,
    Program,
    TopSpImages,
    compile,
    decode,
    diagnose,
    parse,
    sign,
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
    "Compiled",
    "Program",
    "TopSpImages",
    "compile",
    "decode",
    "diagnose",
    "parse",
    "sign",
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
