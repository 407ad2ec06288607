//! The figures a proof reports, computed from the schedule without
//! proving it: what a certificate's proof section must say (see
//! `pipeline/certificate.rs`).
//!
//! Most are products of the schedule's shape (groups, members, steps,
//! halves, chains, records, (rank, TOP_SP, step) points). Two count
//! transfers: a collective's `transfers` (receives matched, per half that
//! moves) and the protocol's `signals` (semaphore increments, blocks x
//! halves x channels per receive). Both are sums over every member of
//! what it receives; a member's receives are listed from the schedule
//! (no lowering, no buffers). A group whose member 0's transfers, moved,
//! are those of a sample of its members counts member 0's times the group
//! size, as the symmetric proof does; every other group is listed member
//! by member, on every core. A small group is always listed in full.

use super::postcondition::{halves, moves};
use super::symmetry::{sampled, walk_moved_by_phase};
use super::transfers::{AsBuilt, walk};
use crate::schedule::{CollectivePlan, Schedule, Transfer};
use ccc_ir::enums::HalfChunk;
use rayon::prelude::*;

/// Member-steps of a group below which its receives are listed member by
/// member, whatever its symmetry: a few milliseconds of listing.
const LIST_ALL_BELOW: u64 = 1 << 20;

/// What a proof of a schedule reports beyond its shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Figures {
    /// Per collective: the halves run separately and the transfers matched.
    pub(crate) collectives: Vec<(u32, u64)>,
    /// Semaphore increments matched, over every rank and collective.
    pub(crate) signals: u64,
}

/// The figures of `schedule` (see the module overview).
pub(crate) fn figures(schedule: &Schedule) -> Figures {
    let mut signals = 0u64;
    let collectives = schedule
        .collectives
        .iter()
        .map(|plan| {
            let halves = halves(plan);
            let mut transfers = 0u64;
            for g in 0..plan.groups.group_n() {
                let c = group_counts(schedule, plan, g, halves);
                transfers += c.received.iter().sum::<u64>();
                signals += c.increments * u64::from(plan.channels);
            }
            (halves.len() as u32, transfers)
        })
        .collect();
    Figures { collectives, signals }
}

/// What the members of one group receive.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Receives moving each half (of [`halves`]).
    received: [u64; 2],
    /// Blocks x halves received.
    increments: u64,
}

impl Counts {
    fn add(mut self, other: Counts) -> Counts {
        self.received[0] += other.received[0];
        self.received[1] += other.received[1];
        self.increments += other.increments;
        self
    }

    fn count(&mut self, member: u32, list: &[Transfer], halves: &[HalfChunk]) {
        for tr in list.iter().filter(|tr| tr.to == member) {
            for (i, &h) in halves.iter().enumerate() {
                self.received[i] += u64::from(moves(tr, h));
            }
            self.increments += u64::from(tr.src.count) * u64::from(tr.halves.count());
        }
    }
}

fn group_counts(schedule: &Schedule, plan: &CollectivePlan, group: u32, halves: &[HalfChunk]) -> Counts {
    let n = plan.groups.size();
    let times_n =
        |c: Counts| Counts { received: c.received.map(|r| r * u64::from(n)), increments: c.increments * u64::from(n) };
    if u64::from(n) * u64::from(plan.step_n) >= LIST_ALL_BELOW {
        // Member 0's transfers counted as they are walked where the phases
        // show the group symmetric, not held (the same counts as the base
        // `sampled` holds).
        let mut c = Counts::default();
        if walk_moved_by_phase(schedule, plan, group, |list| c.count(0, list, halves)) {
            return times_n(c);
        }
        if let Some(base) = sampled(schedule, plan, group) {
            let mut c = Counts::default();
            c.count(0, base.transfers(), halves);
            return times_n(c);
        }
    }
    (0..n)
        .into_par_iter()
        .with_min_len(64)
        .map(|m| {
            let mut c = Counts::default();
            walk(schedule, plan, group, m, &AsBuilt, |_, list| {
                c.count(m, list, halves);
                true
            });
            c
        })
        .reduce(Counts::default, Counts::add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::lower::lower;
    use crate::testing::Case;
    use crate::verify::{ProverOptions, prove};
    use ccc_ir::enums::AlgType;
    use ccc_ir::id::Rank;

    /// The figures are those the proofs report, on every flat pairing and
    /// Hier composition, even and uneven, one channel and several.
    #[test]
    fn figures_are_what_the_proofs_report() {
        let mut cases = Vec::new();
        for (op, alg) in Case::flat_pairs() {
            for (n, channels) in [(2u32, 1u8), (5, 3), (8, 2), (12, 9)] {
                let Some(mut case) = Case::for_alg(op, alg, n) else { continue };
                case.channels = channels;
                cases.push(case);
            }
        }
        for (op, choice) in Case::hier_choices() {
            let mut case = Case::hier(op, &choice, 24, 4);
            case.pod_n = 2;
            case.channels = 4;
            cases.push(case);
        }
        for case in cases {
            let schedule = build(&case.valid()).unwrap();
            let programs: Vec<_> = (0..case.rank_n).map(|r| lower(&schedule, Rank(r)).unwrap()).collect();
            let proof = prove(&schedule, &programs, &[], &ProverOptions::default()).unwrap();
            let (post, proto) = (proof.postcondition, proof.protocol);
            let f = figures(&schedule);
            let want: Vec<(u32, u64)> = post.iter().map(|p| (p.halves, p.transfers)).collect();
            assert_eq!(f.collectives, want, "{case:?}");
            assert_eq!(f.signals, proto.signals, "{case:?}");
        }
    }

    /// A group large enough to be counted from member 0 gives the figure
    /// the proof reports.
    #[test]
    fn a_large_ring_is_counted_from_member_0() {
        let case = Case::flat(ccc_ir::enums::OpType::AllReduce, AlgType::Ring, 1024, 16);
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        assert!(u64::from(plan.groups.size()) * u64::from(plan.step_n) >= LIST_ALL_BELOW);
        assert!(sampled(&schedule, plan, 0).is_some());
        let symmetry = crate::verify::symmetry::Symmetry::find(&schedule);
        let options = ProverOptions::default();
        let post = crate::verify::postcondition::prove(&schedule, &AsBuilt, &options, &symmetry, &|_| {});
        let post = post.unwrap().collectives;
        assert_eq!(figures(&schedule).collectives, vec![(1, post[0].transfers)]);
        assert_eq!(post[0].transfers, 2 * 1023 * 1024);
    }
}
