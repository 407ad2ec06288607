//! How the provers run ([`ProverOptions`]): tuning only, a proof's
//! verdict never depends on it (only whether a proof can run at all).

/// How the provers run. Tuning only: what a proof finds never depends on
/// it, save that with [`ProverOptions::symmetry`] off every group runs in
/// full, so a world whose groups pass the prover's cells is refused as
/// too large to prove (`VerifyError::TooLarge`) where, on, it is proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProverOptions {
    /// Members per step from which the full postcondition run lists each
    /// step's per-member work on every core; below it, waking the threads
    /// at every step costs more than it saves.
    pub parallel_from: u32,
    /// Stand member 0 for every member of a symmetric group (see
    /// `verify::symmetry`), and prove other groups by their contributions'
    /// paths where that argument holds (`postcondition/paths.rs`). Off, every group runs in
    /// full and every rank is checked against its own step graph: the
    /// baseline the tests compare with (slow, and refused as too large to
    /// prove past the prover's cells).
    pub symmetry: bool,
}

impl Default for ProverOptions {
    fn default() -> Self {
        ProverOptions { parallel_from: 4096, symmetry: true }
    }
}
