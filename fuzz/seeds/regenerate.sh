#!/usr/bin/env bash
# Rebuilds fuzz/seeds/ from the examples, the test fixtures and images and
# manifests compiled by ccc (docs/fuzzing.md). Run from the repository root:
#   fuzz/seeds/regenerate.sh [path/to/ccc]
# Each seed is named after where it came from; identical contents are kept
# once. The reference spec is ccc_backends::fuzz::REFERENCE_SPEC: the
# manifest target certifies mutants of its manifest against it.
set -euo pipefail
ccc=${1:-target/release/ccc}
[ -x "$ccc" ] || cargo build --release --bin ccc
seeds=fuzz/seeds
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rm -rf "$seeds"/{ron_spec,decode_ctrl,decode_slot,decode_neff,manifest,hlo}
mkdir -p "$seeds"/{ron_spec,decode_ctrl,decode_slot,decode_neff,manifest,hlo}

# One copy per content: the first name wins.
put() { # put TARGET NAME FILE
    local sum
    sum=$(md5sum <"$3" | cut -c1-32)
    if ! grep -qx "$1 $sum" "$work/sums" 2>/dev/null; then
        echo "$1 $sum" >>"$work/sums"
        cp "$3" "$seeds/$1/$2"
    fi
}

cat >"$work/reference.ron" <<'RON'
Collective(op: AllReduce, dtype: F32, reduce: Add, count: 4096, arch: Cayman,
    topology: (rank_n: 4, local_rank_n: 4), channels: 2, algorithm: Ring)
RON

# Specs: valid and invalid examples, the diagnose fixtures, the regressions,
# the cost fixtures.
put ron_spec reference.ron "$work/reference.ron"
for f in examples/*.ron; do put ron_spec "$(basename "$f")" "$f"; done
for f in examples/invalid/*.ron; do put ron_spec "invalid-$(basename "$f")" "$f"; done
for f in tests/fixtures/diagnose/*/*.ron; do
    put ron_spec "diagnose-$(basename "$(dirname "$f")")-$(basename "$f")" "$f"
done
for f in compiler/tests/regressions/*.ron; do put ron_spec "regression-$(basename "$f")" "$f"; done
# `algorithm: Auto` (whole and per leg, with a `model:` block): the cost fixtures.
for f in tests/fixtures/cost/*.ron; do put ron_spec "cost-$(basename "$f")" "$f"; done

# HLO modules: the fixtures, valid, invalid, handwritten and regressions (the hlo target
# imports each for the target of its device count, ccc_backends::fuzz::HLO_TARGETS).
for f in tests/hlo/*.hlo; do put hlo "$(basename "$f")" "$f"; done
for f in tests/hlo/invalid/*.hlo; do put hlo "invalid-$(basename "$f")" "$f"; done
for f in tests/hlo/handwritten/*.hlo; do put hlo "handwritten-$(basename "$f")" "$f"; done
for f in tests/hlo/regressions/*.hlo; do put hlo "regression-$(basename "$f")" "$f"; done

# Images: the decode fixtures, then rank 0's images of every example.
for f in tests/fixtures/decode/*.bin; do
    name=$(basename "$f")
    case "$name" in
        slot_spad*) put decode_slot "fixture-$name" "$f" ;;
        neff_configs*) put decode_neff "fixture-$name" "$f" ;;
        *) put decode_ctrl "fixture-$name" "$f" ;;
    esac
done
"$ccc" compile "$work/reference.ron" -o "$work/out/reference" >/dev/null
for f in examples/*.ron; do
    "$ccc" compile "$f" --rank 0 -o "$work/out/$(basename "$f" .ron)" >/dev/null
done
for dir in "$work"/out/*; do
    ex=$(basename "$dir")
    for t in "$dir"/rank-0/topsp-*; do
        tp=$(basename "$t")
        put decode_ctrl "$ex-$tp.bin" "$t/ctrl_spad.bin"
        put decode_slot "$ex-$tp.bin" "$t/slot_spad.bin"
        put decode_neff "$ex-$tp.bin" "$t/neff_configs.bin"
    done
    put manifest "$ex.json" "$dir/manifest.json"
done
# The reference manifest without a proof section (compiled with --no-verify).
"$ccc" compile "$work/reference.ron" --no-verify -o "$work/noverify" >/dev/null
put manifest reference-no-verify.json "$work/noverify/manifest.json"

for t in ron_spec decode_ctrl decode_slot decode_neff manifest hlo; do
    echo "$t: $(ls "$seeds/$t" | wc -l) seeds, $(du -sk "$seeds/$t" | cut -f1) KiB"
done
