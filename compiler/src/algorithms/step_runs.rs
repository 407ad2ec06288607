//! A member's transfers over a phase as runs of steps, where the phase's
//! generator has a closed form: the pipelined ring chains (RingBroadcast,
//! RingReduce). The provers walk such a phase a run at a time instead of
//! asking the generator at every step (`verify`'s path run and protocol
//! step check).
//!
//! A run is steps `first..first + len` of the phase in which the
//! member's transfers at step `first + i` are its transfers at `first`
//! (generated, as at any step) with every block set's start moved by
//! `i * shift` positions: the same peers, halves, folds, counts and
//! strides, the pieces one further each step. A run whose first step
//! lists nothing lists nothing throughout (an idle run).
//!
//! **Why the chain's runs are its steps.** Chain position `j` sends
//! piece `t - j` on steps `j..j+k` (unless it is the last) and receives
//! piece `t - j + 1` on steps `j-1..j-1+k` (unless it is the first),
//! both pieces in `0..k` inside their windows ([`super::ring`]). Cut the
//! phase at the four places where a window opens or closes: inside each
//! cut, the same windows are open at every step, so the generator pushes
//! the same transfers in the same order, and each piece index grows by
//! one a step without wrapping, so piece `q`'s blocks (from
//! `universe.start + q * universe.stride`, stride `universe.stride * k`)
//! start `universe.stride` further: the shift. The tests hold this equal,
//! place by place, to the generator on every pairing and on random specs
//! the validator accepts.

use super::ring::{chain_edges, chain_position};
use crate::schedule::{BlockSet, CollectivePlan, Phase, PhaseInstance, PhaseKind, Schedule, Transfer};

/// Steps `first..first + len` of a phase in which a member's transfers
/// at step `first + i` are `transfers` (its transfers at `first`) with
/// every block set's start moved by `i * shift` (see the module
/// overview).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StepRun {
    /// The run's first step, within the phase.
    pub(crate) first: u32,
    /// Its steps.
    pub(crate) len: u32,
    /// Positions every block set moves per step.
    pub(crate) shift: u32,
    /// The member's transfers at `first`, in the generator's order.
    pub(crate) transfers: Vec<Transfer>,
}

impl StepRun {
    /// Whether phase step `t` lies in the run (the tests' lookup).
    #[cfg(test)]
    pub(crate) fn holds(&self, t: u32) -> bool {
        t >= self.first && t - self.first < self.len
    }

    /// Whether every block set of the run stays below `block_n` at each
    /// of its steps: the starts only grow along a run, so its last step
    /// decides. The position there is computed in 64 bits, saturating, so
    /// a set that would wrap is out of range.
    pub(crate) fn in_range(&self, block_n: u32) -> bool {
        let d = u64::from(self.len.saturating_sub(1)) * u64::from(self.shift);
        let below = |b: BlockSet| b.last().is_none_or(|l| l.saturating_add(d) < u64::from(block_n));
        self.transfers.iter().all(|tr| below(tr.src) && below(tr.dst))
    }

    /// Appends the member's transfers at phase step `t` (in the run).
    pub(crate) fn at(&self, t: u32, out: &mut Vec<Transfer>) {
        out.extend(self.transfers.iter().map(|tr| self.moved(tr, t)));
    }

    /// `tr`, one of the run's transfers at its first step, as it is at
    /// phase step `t` (in the run).
    pub(crate) fn moved(&self, tr: &Transfer, t: u32) -> Transfer {
        moved_along(tr, self.first, self.shift, t)
    }
}

/// `tr`, a transfer at step `first` of a run moving by `shift` a step, as
/// it is at step `t` of the run.
pub(crate) fn moved_along(tr: &Transfer, first: u32, shift: u32, t: u32) -> Transfer {
    let d = t.wrapping_sub(first).wrapping_mul(shift);
    let moved = |b: BlockSet| BlockSet { start: b.start.wrapping_add(d), ..b };
    Transfer { src: moved(tr.src), dst: moved(tr.dst), ..*tr }
}

/// Whether `runs` cover steps `0..step_n` in order, each at least one step.
pub(crate) fn covers(runs: &[StepRun], step_n: u32) -> bool {
    let mut next = 0u32;
    for r in runs {
        if r.first != next || r.len == 0 {
            return false;
        }
        let Some(end) = next.checked_add(r.len) else { return false };
        next = end;
    }
    next == step_n
}

impl Schedule {
    /// The transfers of `phase`, for the member `inst` was placed around
    /// (in `group`), as runs covering the phase's steps in order, into
    /// `out` (cleared); `false` (and `out` empty) when the phase has no
    /// closed form here (see the module overview).
    pub(crate) fn phase_runs(
        &self,
        plan: &CollectivePlan,
        group: u32,
        phase: &Phase,
        inst: PhaseInstance,
        out: &mut Vec<StepRun>,
    ) -> bool {
        out.clear();
        let (p, k) = (inst.scope.pos, inst.scope.k);
        let j = match phase.kind {
            PhaseKind::RingBroadcast { root } => chain_position(p, k, root, false),
            PhaseKind::RingReduce { root } => chain_position(p, k, root, true),
            _ => return false,
        };
        let n = phase.step_n;
        let mut cuts: Vec<u32> = chain_edges(j, k)
            .into_iter()
            .filter(|&t| t > 0 && t < i64::from(n))
            // In 1..n, a u32.
            .map(|t| t as u32)
            .collect();
        cuts.push(0);
        cuts.push(n);
        cuts.sort_unstable();
        cuts.dedup();
        for w in cuts.windows(2) {
            let (first, end) = (w[0], w[1]);
            let mut transfers = Vec::new();
            self.phase_transfers(plan, group, phase, inst, first, &mut transfers);
            out.push(StepRun { first, len: end - first, shift: inst.universe.stride, transfers });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::testing::Case;
    use ccc_ir::enums::OpType;

    /// Every member's runs of every phase that has them cover its steps
    /// in order and list, at every step, exactly what the generator does;
    /// how many (member, phase) pairs had runs.
    fn runs_are_the_steps(schedule: &Schedule) -> u32 {
        let mut listed = 0;
        let (mut runs, mut from_runs, mut generated) = (Vec::new(), Vec::new(), Vec::new());
        for plan in &schedule.collectives {
            for group in 0..plan.groups.group_n() {
                for m in 0..plan.groups.size() {
                    for phase in &plan.phases {
                        let inst = plan.instance(phase, m);
                        if !schedule.phase_runs(plan, group, phase, inst, &mut runs) {
                            assert!(runs.is_empty());
                            continue;
                        }
                        listed += 1;
                        let mut next = 0;
                        for run in &runs {
                            assert_eq!(run.first, next, "{:?} member {m}: runs out of order", phase.kind);
                            assert!(run.len > 0);
                            next += run.len;
                        }
                        assert_eq!(next, phase.step_n, "{:?} member {m}: runs do not cover the phase", phase.kind);
                        for t in 0..phase.step_n {
                            let Some(run) = runs.iter().find(|r| r.holds(t)) else { unreachable!() };
                            from_runs.clear();
                            run.at(t, &mut from_runs);
                            generated.clear();
                            schedule.phase_transfers(plan, group, phase, inst, t, &mut generated);
                            assert_eq!(from_runs, generated, "{:?} member {m} of group {group}, step {t}", phase.kind);
                        }
                    }
                }
            }
        }
        listed
    }

    /// Every pairing the tests know, on several group sizes: where a
    /// phase has runs they are its steps; the rooted rings have them.
    #[test]
    fn runs_list_what_the_generator_lists() {
        let mut listed = 0;
        for case in Case::pairings(&[1, 2, 3, 5, 8, 12]) {
            listed += runs_are_the_steps(&build(&case.valid()).unwrap());
        }
        assert!(listed > 50, "{listed}");
        for op in [OpType::Broadcast, OpType::Reduce] {
            let case = Case::flat(op, ccc_ir::enums::AlgType::Ring, 7, 3);
            assert_eq!(runs_are_the_steps(&build(&case.valid()).unwrap()), 7, "{op:?}");
        }
    }

    /// Random specs the validator accepts (every op and algorithm, roots,
    /// replica groups, uneven shapes): the runs list, place by place, what
    /// the generator lists; and enough of the draws have runs for that to
    /// say something.
    #[test]
    fn runs_never_differ_from_the_generator() {
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config { cases: 512, ..Config::default() });
        let (built, with_runs) = (std::cell::Cell::new(0u32), std::cell::Cell::new(0u32));
        let outcome = runner.run(&crate::lower::tests::any_draw(1..9, 1..9), |draw| {
            let program = ccc_ir::spec::Program::from(draw.spec());
            if let Ok(schedule) =
                crate::validate::validate(&program).map_err(drop).and_then(|v| build(&v).map_err(drop))
            {
                built.set(built.get() + 1);
                with_runs.set(with_runs.get() + u32::from(runs_are_the_steps(&schedule) > 0));
            }
            Ok(())
        });
        outcome.unwrap();
        assert!(built.get() > 150 && with_runs.get() > 10, "{} built, {} with runs", built.get(), with_runs.get());
    }
}
