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
//!   error converts into.
//!
//! ```
//! use ccc_compiler::prelude::*;
//!
//! let spec = Collective::new(OpType::AllGather, DType::F32, 1024, Arch::Cayman, Topology::new(2, 1))
//!     .algorithm(AlgType::Ring);
//! let compiled = compile(&validate(&spec.into())?, &Options::default())?;
//! assert_eq!(compiled.images.len(), 2);
//! # Ok::<(), CompileError>(())
//! ```

pub use crate::parse::parse;
pub use crate::pipeline::{CompileError, Compiled, Options, compile, compile_source};
pub use crate::valid::ValidProgram;
pub use crate::validate::{AutoCache, validate, validate_cached};
pub use ccc_ir::arch::Arch;
pub use ccc_ir::enums::{AlgType, OpType};
pub use ccc_ir::spec::{Algorithm, Barrier, Collective, DType, HierLegs, Leg, Program, ReduceOp, Topology};
