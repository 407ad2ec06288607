//! Why a compile fails: [`CompileError`] wraps each pass's error, and the
//! two the pipeline raises itself, [`MemoryError`] (refused before
//! world-sized work) and [`CertificateError`] (a `--proven-by` manifest
//! that does not vouch for this schedule).

use crate::build::BuildError;
use crate::encode::ImageError;
use crate::lower::LowerError;
use crate::parse::ParseError;
use crate::validate::ValidationErrors;
use crate::verify::VerifyError;

/// Any pass's failure.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompileError {
    /// The text is not a spec.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The spec breaks rules.
    #[error(transparent)]
    Validate(#[from] ValidationErrors),
    /// The algorithms could not be composed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A rank does not fit the device.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The proof failed, or could not be attempted.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// An image does not fit its region.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// A certificate that does not vouch for this schedule.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// The compile would hold more memory than its budget.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A rank the compile did not lower exceeds a device limit: the ranks
    /// named lower, but the world they belong to cannot load the program.
    #[error(transparent)]
    Unlowered(#[from] UnloweredError),
    /// The caller set [`Options::cancel`](super::Options::cancel) before
    /// the compile finished; nothing was returned.
    #[error("the compile was cancelled before it finished (its cancel flag was set); nothing was emitted")]
    Cancelled,
}

impl CompileError {
    /// What would be accepted instead, as the message says it (the text
    /// after `accepted: `): a parse error's ([`ParseError::accepted`]),
    /// a validation's when it has one problem (each problem has its own:
    /// [`crate::validate::ValidationError::accepted`]), any other's whose
    /// message says (a rank not in the world); `None` where the message
    /// names none (a device limit, which says what to change instead; a
    /// proof that failed; a cancelled compile).
    pub fn accepted(&self) -> Option<String> {
        match self {
            CompileError::Parse(e) => e.accepted(),
            CompileError::Validate(e) => match e.0.as_slice() {
                [one] => one.accepted(),
                _ => None,
            },
            e => crate::accepted::accepted_after(&e.to_string()),
        }
    }
}

/// A compile whose estimated memory exceeds [`Options::memory_budget`](super::Options::memory_budget),
/// refused before any world-sized work. The estimate is made from a few
/// representative ranks lowered and encoded first: the proof holds each
/// rank's symmetry watch, a chunk of ranks lowered at a time and, for a
/// group it executes in full, a symbolic buffer of members x blocks
/// cells; the ranks emitted hold their records and images (a chunk's,
/// when none is kept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryError {
    /// Bytes the compile would hold at once, by estimate: `proof + emit`.
    pub needed: u64,
    /// The budget ([`Options::memory_budget`](super::Options::memory_budget)).
    pub budget: u64,
    /// Of `needed`, the proof's: every rank's watch, a chunk of lowered
    /// ranks, the symbolic buffers (0 without a proof).
    pub proof: u64,
    /// Of `needed`, the emitted ranks': their records and images (the
    /// chunk in flight's, when [`Options::emit`](super::Options::emit) is
    /// off).
    pub emit: u64,
    /// Ranks to emit.
    pub ranks: u64,
    /// Ranks in the world.
    pub rank_n: u32,
    /// Whether the compile proves (not with the proof skipped or taken
    /// from a certificate): only then are those ways out.
    pub proving: bool,
    /// Whether the compile keeps the ranks it lowers
    /// ([`Options::emit`](super::Options::emit); `verify` does not): only
    /// then is emitting fewer a way out.
    pub emitting: bool,
}

/// A device limit exceeded at a rank the compile did not lower: named
/// ranks ([`Options::ranks`](super::Options::ranks)) compiled without the
/// proof ([`Options::verify`](super::Options::verify) off) lower alone,
/// but every rank of the world must load the program, and
/// [`exceeded_built`](crate::cost::auto::legal::exceeded_built) finds one
/// that cannot (the compile of every rank, and `ccc check`, refuse it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}collective {}: {}; the ranks compiled fit, but {} does not (it was not compiled, and no proof lowered \
     it), and every rank must load the program; {}",
    .exceeded.rank.map(|r| format!("rank {r}, ")).unwrap_or_default(),
    .exceeded.collective,
    .exceeded.describe(*.arch),
    .exceeded.rank.map_or_else(|| "a rank".to_owned(), |r| format!("rank {r}")),
    .exceeded.refusal.limit.advice(*.arch)
)]
pub struct UnloweredError {
    /// The limit, the collective, and (for the mesh events) the rank.
    pub exceeded: crate::cost::auto::legal::Exceeded,
    /// The architecture.
    pub arch: ccc_ir::arch::Arch,
}

/// A way to compile within the memory budget (see [`MemoryError::ways_out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WayOut {
    /// A spec with fewer ranks.
    FewerRanks,
    /// Emit fewer ranks per compile (name them in [`Options::ranks`](super::Options::ranks)).
    EmitFewerRanks,
    /// Compile the ranks named without the proof ([`Options::verify`](super::Options::verify) off).
    SkipProof,
    /// Take the proof from an earlier compile's certificate
    /// ([`Options::certificate`](super::Options::certificate)).
    Certificate,
}

impl WayOut {
    /// The way out, in words (a front end names its own flags).
    pub const fn describe(self) -> &'static str {
        match self {
            WayOut::FewerRanks => "a world of fewer ranks",
            WayOut::EmitFewerRanks => "emitting fewer ranks per compile",
            WayOut::SkipProof => "compiling only the ranks needed and skipping the proof",
            WayOut::Certificate => {
                "compiling only the ranks needed and taking the proof from an earlier compile's certificate"
            }
        }
    }
}

impl MemoryError {
    /// The ways out, the likeliest first: when the proof alone fits, emit
    /// fewer ranks; when it does not, skip it or take it from a
    /// certificate (both compile only the ranks named), or use fewer ranks.
    /// (Fewer than `budget::PROBE_FROM` ranks compiled without a proof of
    /// their own, skipped or from a certificate, are not estimated, so
    /// naming them is a way out even where one rank's estimate is over.)
    pub fn ways_out(&self) -> Vec<WayOut> {
        let mut ways = Vec::new();
        let one_rank = self.emit / self.ranks.max(1);
        if self.proof.saturating_add(one_rank) <= self.budget || !self.proving {
            if self.ranks > 1 && self.emitting {
                ways.push(WayOut::EmitFewerRanks);
            }
        } else if self.emitting {
            // Both compile only the ranks named: nothing for `verify`.
            ways.extend([WayOut::SkipProof, WayOut::Certificate]);
        }
        ways.push(WayOut::FewerRanks);
        ways
    }
}

impl MemoryError {
    /// The error in words with the ways out a front end offers, `ways`
    /// (`Display` gives it with every one of [`ways_out`](Self::ways_out)).
    pub fn with_ways(&self, ways: &[WayOut]) -> String {
        struct With<'a>(&'a MemoryError, &'a [WayOut]);
        impl std::fmt::Display for With<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.write(f, self.1)
            }
        }
        With(self, ways).to_string()
    }

    fn write(&self, f: &mut std::fmt::Formatter<'_>, ways: &[WayOut]) -> std::fmt::Result {
        write!(
            f,
            "{} {} of {} ranks needs an estimated {} ({}{} for the ranks {}), more than the memory budget of {}; \
             {}",
            if self.emitting { "compiling" } else { "proving" },
            self.ranks,
            self.rank_n,
            Bytes(self.needed),
            // Without a proof of its own (a certificate stands for it),
            // what it holds is the check that each distinct image decodes
            // back to its records; with none at all, nothing.
            match (self.proving, self.proof) {
                (true, proof) => format!("{} for the proof over every rank, ", Bytes(proof)),
                (false, 0) => String::new(),
                (false, proof) => format!("{} for the round-trip check of the distinct images, ", Bytes(proof)),
            },
            Bytes(self.emit),
            if self.emitting { "emitted" } else { "lowered at a time" },
            Bytes(self.budget),
            WaysOut(ways)
        )
    }
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.write(f, &self.ways_out())
    }
}

impl std::error::Error for MemoryError {}

/// A byte count, in the largest binary unit that keeps it above 1.
struct Bytes(u64);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{}", ccc_ir::noun::count(self.0, "byte"));
        }
        // The estimates saturate: past a u64 of bytes, not a figure.
        if self.0 == u64::MAX {
            return f.write_str("more than 16 EiB (the estimate passes what 64 bits count)");
        }
        let (mut value, mut unit) = (self.0 as f64 / 1024.0, 0);
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
    }
}

/// Ways out, as a sentence.
struct WaysOut<'a>(&'a [WayOut]);

impl std::fmt::Display for WaysOut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ways out: ")?;
        for (i, way) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == self.0.len() { ", or " } else { ", " })?;
            }
            f.write_str(way.describe())?;
        }
        Ok(())
    }
}

/// Why a manifest does not certify a schedule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertificateError {
    /// A manifest of another layout.
    #[error("the certificate's manifest_schema is {certificate}, this ccc reads {ours}")]
    Schema {
        /// The certificate's.
        certificate: u32,
        /// This ccc's.
        ours: u32,
    },
    /// The proof section is not what a proof of this schedule reports.
    #[error(
        "the certificate's proof section does not fit this schedule: {field} is {found}, a proof of it reports {expected}"
    )]
    ProofMismatch {
        /// The figure that differs, by its path in the manifest
        /// (`proof.postconditions[0].transfers`, `proof.protocol.signals`).
        field: String,
        /// What the certificate says.
        found: String,
        /// What a proof of this schedule reports.
        expected: String,
    },
    /// The manifest's compile skipped the proof: it has no proof section.
    #[error("the certificate's compile did not prove its schedule: it has no proof section")]
    NotProven,
    /// The manifest was written by another format version.
    #[error("the certificate is of format version {certificate}, this ccc writes {ours}")]
    FormatVersion {
        /// The certificate's.
        certificate: u32,
        /// This ccc's.
        ours: u32,
    },
    /// The manifest's signature is not the MD5 of its own fields.
    #[error(
        "the certificate's signature {signature} is not the digest of its signature fields ({digest}): it was edited"
    )]
    Corrupt {
        /// The signature it claims.
        signature: String,
        /// The digest of its fields.
        digest: String,
    },
    /// The manifest proved another schedule.
    #[error("the certificate proved the schedule signed {certificate}, but this spec signs {ours}")]
    OtherSchedule {
        /// The certificate's signature.
        certificate: String,
        /// This spec's.
        ours: String,
    },
}

#[cfg(test)]
mod tests {
    /// A saturated estimate is not said as a figure (it read `16777216.0
    /// TiB`).
    #[test]
    fn bytes_are_said_in_units_and_a_saturated_count_as_such() {
        assert_eq!(super::Bytes(1).to_string(), "1 byte");
        assert_eq!(super::Bytes(3 << 29).to_string(), "1.5 GiB");
        assert_eq!(super::Bytes(u64::MAX - 1).to_string(), "16777216.0 TiB");
        assert_eq!(super::Bytes(u64::MAX).to_string(), "more than 16 EiB (the estimate passes what 64 bits count)");
    }
}
