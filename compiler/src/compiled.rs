//! What a compile returns: [`Compiled`], the typed value between the
//! pipeline and what writes or reports it (the manifest, the CLI, the
//! Python package). It lives below both the pipeline and the manifest so
//! that the pipeline can read a manifest back as a certificate without
//! the two importing each other.

use crate::encode::RankImages;
use crate::lower::RankProgram;
use crate::schedule::Schedule;
use crate::sign::Signature;
use crate::verify::Proof;

/// A compiled program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The schedule every rank shares.
    pub schedule: Schedule,
    /// The collective signature.
    pub signature: Signature,
    /// The lowered programs of the ranks asked for, in rank order.
    pub programs: Vec<RankProgram>,
    /// Their images, in the same order.
    pub images: Vec<RankImages>,
    /// The proof, unless skipped.
    pub proof: Option<Proof>,
}
