//! Distinct TOP_SP programs: a check that is a function of one TOP_SP
//! program (and of the compile's schedule and arch) runs once per distinct
//! program, not once per TOP_SP of the world.
//!
//! A world repeats its TOP_SP programs: the 65,536 TOP_SPs of an
//! 8,192-rank Hier all-reduce hold 8 distinct ones (one per TOP_SP index).
//! A [`Distinct`] table keeps the programs that passed a check, with what
//! the check leaves behind (the round trip's images), and answers whether
//! a program equal to one of them, by the check's own notion of equal
//! (what the check reads), passed. It keeps only successes: a program
//! that fails is checked, and its defect reported with its rank, every
//! time, so every verdict and message is the one the check itself gives,
//! whichever thread got to a program first, for any thread count or chunk
//! size.
//!
//! A program is filed under its [`fingerprint`], a cheap hash of what
//! every such check reads (op entries, `tp_inc_steps` runs, a few counts
//! of the EXEC block); a lookup compares the program whole with each kept
//! one of the same fingerprint. The fingerprint decides nothing: a
//! collision costs a comparison, never a verdict. The table is looked up,
//! never iterated, and holds at most a byte budget of programs (past it,
//! new programs are checked but not kept, as without a table).

use crate::lower::TopSpProgram;
use ccc_ir::wire::tp::{REPEAT_SHIFT, S2M_SHIFT};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::RwLock;

/// Whether two programs are the same for a check: equal in everything it
/// reads.
pub(crate) type Same = fn(&TopSpProgram, &TopSpProgram) -> bool;

/// The TOP_SP programs that passed one check, each with the value `V` it
/// left (see the module overview). Shared by every thread of a compile.
pub(crate) struct Distinct<V> {
    same: Same,
    /// The most bytes of programs (by [`TopSpProgram::footprint`]) and
    /// values (as [`Distinct::keep`] is told) the table holds.
    budget: usize,
    table: RwLock<Table<V>>,
}

/// A [`Distinct`]'s contents.
struct Table<V> {
    /// Indices into `kept` by fingerprint: looked up, never iterated.
    by_fingerprint: HashMap<u64, Vec<usize>, BuildHasherDefault<Fx>>,
    /// Each program kept, with its value.
    kept: Vec<(TopSpProgram, V)>,
    /// The bytes held, as counted against the budget.
    bytes: usize,
}

impl<V> Table<V> {
    /// The value kept for a program `same` as `tp`.
    fn find(&self, same: Same, tp: &TopSpProgram, fingerprint: u64) -> Option<&V> {
        let candidates = self.by_fingerprint.get(&fingerprint)?;
        candidates.iter().filter_map(|&i| self.kept.get(i)).find(|(p, _)| same(p, tp)).map(|(_, v)| v)
    }
}

impl<V> Distinct<V> {
    /// An empty table of programs equal by `same`, holding at most
    /// `budget` bytes.
    pub(crate) fn new(same: Same, budget: usize) -> Distinct<V> {
        let table = Table { by_fingerprint: HashMap::default(), kept: Vec::new(), bytes: 0 };
        Distinct { same, budget, table: RwLock::new(table) }
    }

    /// `read` of the value kept for a program the same as `tp` (whose
    /// [`fingerprint`] is `fingerprint`), or `None` when none passed. A
    /// poisoned lock reads as none.
    pub(crate) fn find<R>(&self, tp: &TopSpProgram, fingerprint: u64, read: impl FnOnce(&V) -> R) -> Option<R> {
        let table = self.table.read().ok()?;
        table.find(self.same, tp, fingerprint).map(read)
    }

    /// Keeps `tp`, which passed, with `value` (of `value_bytes`), unless
    /// one the same is kept already or the budget would be exceeded.
    pub(crate) fn keep(&self, tp: &TopSpProgram, fingerprint: u64, value: V, value_bytes: usize) {
        let Ok(mut table) = self.table.write() else { return };
        let bytes = tp.footprint() as usize + value_bytes;
        if table.bytes + bytes > self.budget || table.find(self.same, tp, fingerprint).is_some() {
            return;
        }
        table.bytes += bytes;
        let index = table.kept.len();
        table.kept.push((tp.clone(), value));
        table.by_fingerprint.entry(fingerprint).or_default().push(index);
    }
}

/// Where an op entry's six flags start in its fingerprint word.
const OP_FLAGS_SHIFT: u32 = 16;
/// Where an op entry's operand starts in its fingerprint word.
const OP_OPERAND_SHIFT: u32 = 32;
/// Where a mesh event's semaphore index starts in its fingerprint word
/// (after its 32-bit peer).
const MESH_SEMA_SHIFT: u32 = 32;
/// Where a mesh event's target starts in its fingerprint word.
const MESH_TARGET_SHIFT: u32 = 48;

/// A hash of `tp` over what every check through a [`Distinct`] reads, and
/// what encoding reads ([`crate::encode::EncodeInputs`]): the TOP_SP's
/// index, its record counts, its mesh events, barrier and basic block
/// (with the descriptors it posts in all), each segment's
/// END address, each record's op entry and `tp_inc_steps` runs. Equal programs (by any
/// of those checks' notion) fingerprint equal; most others differ in one
/// of these words (a rooted op's TOP_SPs differ only in their runs). One
/// word per op entry and per run: a TOP_SP of 24 records of one run is
/// about 50 multiplications.
pub(crate) fn fingerprint(tp: &TopSpProgram) -> u64 {
    hash(tp, true)
}

/// [`fingerprint`] without the `tp_inc_steps` runs: a hash of what the
/// round trip compares with a TOP_SP's `ctrl_spad` and `neff_configs`,
/// and of part of what the chain check reads (a rooted op's TOP_SPs of
/// one index mostly share it: `verify/roundtrip.rs`,
/// `verify/protocol/chain.rs`).
pub(crate) fn fingerprint_without_runs(tp: &TopSpProgram) -> u64 {
    hash(tp, false)
}

/// [`fingerprint`], with each record's runs when `runs`.
fn hash(tp: &TopSpProgram, runs: bool) -> u64 {
    let mut h = Fx::default();
    let neff = &tp.neff;
    h.add(u64::from(neff.topsp_index) | u64::from(neff.op_num) << 8 | (neff.mesh_events.len() as u64) << 40);
    // A mesh point-to-point's ranks differ only in their peers, which live
    // here and in the barrier: without them, every rank's programs shared
    // one fingerprint, and each lookup compared against every kept one.
    for e in &neff.mesh_events {
        h.add(
            u64::from(e.peer) | u64::from(e.sema_index) << MESH_SEMA_SHIFT | u64::from(e.target) << MESH_TARGET_SHIFT,
        );
        h.add(e.bytes);
    }
    neff.barrier.hash(&mut h);
    // The descriptors the TOP_SP posts in all (`pring_total_desc_num`), a
    // sum over its runs: a rooted op's TOP_SPs of one index differ in it
    // where their op entries agree. Without it, a program of rooted
    // collectives filed every rank's programs under one fingerprint
    // without runs, and each lookup of the round trip's parts compared
    // against every kept one (18x the time for 4.5x the records).
    neff.basic_block.hash(&mut h);
    h.add(tp.segments.len() as u64);
    for segment in &tp.segments {
        h.add(segment.compl_addr);
        h.add(segment.records.len() as u64);
        for r in &segment.records {
            let op = &r.op;
            let flags = u64::from(op.trigger_next)
                | u64::from(op.reporter) << 1
                | u64::from(op.ring_wait_complete) << 2
                | u64::from(op.ring_send_complete) << 3
                | u64::from(op.safe_mode) << 4
                | u64::from(op.unique_tensors) << 5;
            h.add(
                u64::from(op.algo_type)
                    | u64::from(op.algo_sub_type) << 8
                    | flags << OP_FLAGS_SHIFT
                    | u64::from(op.operand) << OP_OPERAND_SHIFT,
            );
            if !runs {
                continue;
            }
            h.add(r.tp.len() as u64);
            for run in r.tp.iter() {
                h.add(u64::from(run.m2s) | u64::from(run.s2m) << S2M_SHIFT | u64::from(run.repeat) << REPEAT_SHIFT);
            }
        }
    }
    h.finish()
}

/// A multiply-rotate hash of each word written (rustc's FxHash): no
/// defence against chosen collisions, which would only cost comparisons,
/// but a few cycles a word where SipHash costs tens.
#[derive(Default)]
pub(crate) struct Fx(u64);

impl Fx {
    /// The multiplier (FxHash's, 2^64 / the golden ratio, made odd).
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    /// The rotation before each word is mixed in.
    const ROTATE: u32 = 5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(Self::ROTATE) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::lower::lower;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::id::Rank;

    /// TOP_SP 0 of rank 0 of an 8-rank ring all-reduce.
    fn program() -> TopSpProgram {
        let schedule = build(&Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4).valid()).unwrap();
        lower(&schedule, Rank(0)).unwrap().topsps.swap_remove(0)
    }

    /// A program kept is found by an equal one; one that differs in a
    /// single run is not, even filed under the kept one's fingerprint: the
    /// fingerprint only narrows the search, equality decides.
    #[test]
    fn only_an_equal_program_finds_what_was_kept() {
        let table: Distinct<u32> = Distinct::new(|a, b| a == b, 1 << 20);
        let kept = program();
        let print = fingerprint(&kept);
        assert_eq!(table.find(&kept, print, |&v| v), None);
        table.keep(&kept, print, 7, 0);
        assert_eq!(table.find(&kept.clone(), print, |&v| v), Some(7));
        let mut other = kept.clone();
        other.segments[0].records[0].tp[0].m2s += 1;
        assert_ne!(fingerprint(&other), print, "a run's count is in the fingerprint");
        assert_eq!(table.find(&other, print, |&v| v), None);
        assert_eq!(table.find(&other, fingerprint(&other), |&v| v), None);
    }

    /// Programs whose op entries agree but whose TOP_SPs post different
    /// descriptors in all (a rooted op's ranks) are filed apart even
    /// without their runs: the round trip's table of parts finds each
    /// among its own, not among every rank's.
    #[test]
    fn the_descriptors_posted_in_all_are_in_the_fingerprint() {
        let kept = program();
        let mut other = kept.clone();
        other.neff.basic_block.pring_total_desc_num += 1;
        assert_ne!(fingerprint_without_runs(&other), fingerprint_without_runs(&kept));
        assert_ne!(fingerprint(&other), fingerprint(&kept));
        assert_eq!(fingerprint_without_runs(&kept.clone()), fingerprint_without_runs(&kept));
    }

    /// A program beyond the byte budget is not kept, so it is checked
    /// again, as without a table.
    #[test]
    fn past_its_budget_a_table_keeps_nothing_more() {
        let kept = program();
        let table: Distinct<()> = Distinct::new(|a, b| a == b, kept.footprint() as usize + 10);
        table.keep(&kept, fingerprint(&kept), (), 11);
        assert_eq!(table.find(&kept, fingerprint(&kept), |_| ()), None);
        table.keep(&kept, fingerprint(&kept), (), 10);
        assert_eq!(table.find(&kept, fingerprint(&kept), |_| ()), Some(()));
    }
}
