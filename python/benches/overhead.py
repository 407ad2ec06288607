"""Per-call overhead of the Python binding against the Rust call it makes.

For one rank of a small and a large collective, times `ccc.compile(program,
ranks=[0], ...)` from Python and, in the same process and build, the Rust
call the binding makes (validate and compile the same spec, no Python
objects; `ccc._ccc._time_rust_compile` times it in Rust), and reports the
medians, the binding's own cost (the difference) and the ratio.

    ./test                      # builds the extension into target/py-venv
    target/py-venv/bin/python python/benches/overhead.py [--iterations N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import ccc

ROOT = Path(__file__).resolve().parents[2]

RING = """Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16777216, arch: Cayman,
    topology: (rank_n: {ranks}, local_rank_n: 16), channels: 1, algorithm: Ring)"""

CASES = [
    # (name, spec text, verify)
    ("small: allreduce_ring.ron (8 ranks), rank 0", (ROOT / "examples" / "allreduce_ring.ron").read_text(), False),
    ("small: allreduce_ring.ron, rank 0, verified", (ROOT / "examples" / "allreduce_ring.ron").read_text(), True),
    # Rank 0's images cost the same at any world size (compile cost grows
    # with the records a rank emits): a large world is large in its proof.
    ("large: ring all-reduce, 65536 ranks, verified", RING.format(ranks=65536), True),
]


def python_times(program: ccc.Program, verify: bool, n: int) -> list:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        compiled = ccc.compile(program, ranks=[0], verify=verify)
        times.append(time.perf_counter() - t)
        del compiled
    return times


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200, help="calls per round (default 200)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    args = parser.parse_args()
    print(f"{'case':<46} {'rust':>10} {'python':>10} {'overhead':>10} {'ratio':>7}")
    for name, text, verify in CASES:
        program = ccc.parse(text)
        n = args.iterations if "large" not in name else max(args.iterations // 10, 5)
        rust, python = [], []
        python_times(program, verify, 3)  # warm up
        for _ in range(args.rounds):  # alternate, so drift hits both alike
            rust += ccc._ccc._time_rust_compile(program, [0], verify, n)
            python += python_times(program, verify, n)
        r, p = statistics.median(rust), statistics.median(python)
        print(f"{name:<46} {fmt(r):>10} {fmt(p):>10} {fmt(p - r):>10} {p / r:>6.2f}x")


if __name__ == "__main__":
    main()
