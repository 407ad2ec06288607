//! Everything a program that compiles collectives needs, in one import:
//! `use ccc_compiler::prelude::*;`.
//!
//! - the spec types, to build a spec in code ([`Collective::new`] and its
//!   chained setters, [`Topology::new`], [`HierLegs::new`]) or read one
//!   ([`parse`]);
//! - [`AlgType`], the one name of an algorithm, flat
//!   (`.algorithm(AlgType::Ring)`) or a Hier leg
//!   (`HierLegs::new().intra_reduce_scatter(AlgType::Ring)`);
//! - the passes a caller runs: [`validate`] (every problem at once) and
//!   [`compile`] (build, prove, lower, encode, sign), or [`compile_source`]
//!   from RON text to images in one call;
//! - what they return: [`ValidProgram`], [`Compiled`] (signature and
//!   per-rank, per-TOP_SP images) and [`CompileError`], which every pass's
//!   error converts into;
//! - what a spec or a compile's options name besides: [`Rank`] (the ranks
//!   [`Options::ranks`] asks for), [`LegAlgorithm`] (a Hier leg left to
//!   the cost model: `LegAlgorithm::Auto`), [`ModelOverrides`] (a spec's
//!   `model:` block) and [`LegChoices`] (`choices: Wide`).
//!
//! ```
//! use ccc_compiler::prelude::*;
//!
//! let spec = Collective::new(OpType::AllGather, DType::F32, 1024, Arch::Cayman, Topology::new(2, 1))
//!     .algorithm(AlgType::Ring);
//! let compiled = compile(&validate(&spec.into())?, &Options::default())?;
//! assert_eq!(compiled.images.len(), 2);
//!
//! // One rank of a hierarchical all-reduce whose inter-node leg the cost
//! // model chooses, with a slower network than the arch's, unproven: what
//! // a framework lowering rank 5's graph asks for.
//! let legs = HierLegs::new()
//!     .intra_reduce_scatter(AlgType::Ring)
//!     .inter_all_reduce(LegAlgorithm::Auto)
//!     .intra_all_gather(AlgType::Ring);
//! let spec = Collective::new(OpType::AllReduce, DType::Bf16, 1 << 20, Arch::Cayman, Topology::new(32, 16))
//!     .reduce(ReduceOp::Add)
//!     .algorithm(legs)
//!     .model(ModelOverrides { node_inter_mbps: Some(100_000), ..ModelOverrides::default() });
//! let options = Options { ranks: vec![Rank(5)], verify: false, ..Options::default() };
//! let compiled = compile(&validate(&spec.into())?, &options)?;
//! assert_eq!(compiled.images.len(), 1);
//! # Ok::<(), CompileError>(())
//! ```

pub use crate::parse::parse;
pub use crate::pipeline::{
    CallerHolds, Cancel, CompileError, Compiled, Options, Progress, ProgressFn, Stage, compile, compile_source,
};
pub use crate::valid::ValidProgram;
pub use crate::validate::{AutoCache, validate, validate_cached};
pub use crate::verify::ProverOptions;
pub use ccc_ir::arch::Arch;
pub use ccc_ir::enums::{AlgType, OpType};
pub use ccc_ir::id::Rank;
pub use ccc_ir::model::ModelOverrides;
pub use ccc_ir::spec::{
    Algorithm, Barrier, Collective, DType, HierLegs, Leg, LegAlgorithm, LegChoices, Program, ReduceOp, Topology,
};
