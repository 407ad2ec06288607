//! A hierarchical all-reduce on 2 nodes x 16 ranks, compiled as a library call.

use ccc_compiler::prelude::*;
use std::io::Write;

/// Builds the spec in code, proves and compiles it, prints what each rank loads.
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    // examples/allreduce_hier.ron, built in code: one import, no file read.
    let spec = Collective::new(OpType::AllReduce, DType::Bf16, 4_194_304, Arch::Cayman, Topology::new(32, 16))
        .reduce(ReduceOp::Add)
        .channels(4)
        .algorithm(
            HierLegs::new() // a flat choice is `.algorithm(AlgType::Ring)`: one name either way
                .intra_reduce_scatter(AlgType::Ring)
                .inter_all_reduce(AlgType::SingleCycleRing)
                .intra_all_gather(AlgType::Kangaring),
        );
    let valid = validate(&spec.into())?; // every problem at once
    let compiled = compile(&valid, &Options::default())?; // build, prove, lower, encode, sign
    let mut out = std::io::stdout().lock();
    writeln!(out, "signature {}", compiled.signature.digest)?;
    for rank in &compiled.images {
        // Per TOP_SP: tp.ctrl_spad, tp.slot_spad, tp.neff_configs, the bytes it loads.
        let bytes: usize =
            rank.topsps.iter().map(|tp| tp.ctrl_spad.len() + tp.slot_spad.len() + tp.neff_configs.len()).sum();
        writeln!(out, "{}: {} TOP_SPs, {bytes} bytes", rank.rank, rank.topsps.len())?;
    }

    // The same spec from RON text (a file's contents, or `include_str!`).
    let text = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 4194304, arch: Cayman,
                 topology: (rank_n: 32, local_rank_n: 16), channels: 4,
                 algorithm: Hier((intra_reduce_scatter: Ring, inter_all_reduce: SingleCycleRing,
                                  intra_all_gather: Kangaring)))";
    let (_, _, from_text) = compile_source(text, &Options::default())?;
    assert_eq!(from_text.signature.digest, compiled.signature.digest);
    Ok(())
}
