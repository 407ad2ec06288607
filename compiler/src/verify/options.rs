//! How the provers run ([`ProverOptions`]): tuning only, a result never
//! depends on it.

/// How the provers run. Tuning only: a result never depends on it.
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
    /// baseline the tests compare with.
    pub symmetry: bool,
}

impl Default for ProverOptions {
    fn default() -> Self {
        ProverOptions { parallel_from: 4096, symmetry: true }
    }
}
