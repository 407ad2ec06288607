//! Part 2 of the protocol proof: one rank's records of one collective
//! against the step graph, step by step. Every record posts exactly the
//! descriptors the rank's transfers need at each step, on each TOP_SP;
//! each mesh event waits for exactly the increments its peer sends during
//! the phase; every phase that runs to its end notifies the host once per
//! TOP_SP.
//!
//! Steps in a row of one phase whose needs are the same are checked as
//! one run: each TOP_SP's `tp_inc_steps` entries are consumed a whole
//! entry (or the rest of the run) at a time, and the defect reported is
//! the one a check of each step alone finds first (lowest step, then
//! lowest TOP_SP), with its place and message.
//!
//! Where the phase lists the member's transfers as runs of steps
//! (`Schedule::phase_runs`: the ring chains) and every block costs the
//! same on every TOP_SP (`DescTable::position_free`), a run's steps are
//! taken at once: along a run only the blocks' positions move, by the
//! same shift each step, and stay in range (checked at its last step),
//! so every step of it posts the descriptors its first does (a count
//! that depends on how many blocks move, not which) and receives the
//! same increments from the same peers. Where blocks below `big_below`
//! hold one element more (a count that does not divide), a run is taken
//! in pieces: each of its block sets only moves up along the run, so how
//! many of its blocks are big only falls, at a few steps found by
//! bisection (`tracks::turns`); between two such steps of any of its
//! sets, every step posts what the piece's first does. Its steps then
//! join the run of equal needs exactly as they would one by one, and are
//! checked as above, with the same defect, place and message. Otherwise
//! each step is listed from the generator, unlabelled: the needs count blocks,
//! halves and members (`DescTable::step`, `increments`), never a
//! transfer's `neigh`, so it is left a placeholder rather than named by
//! two rank look-ups per transfer (see `verify::transfers`).
//!
//! **Folded first.** A rank checked against its own step graph is first
//! walked without checking step by step: each step's counts (a run's at
//! once, as above) are folded per TOP_SP and phase as lowering folds
//! them, and each record's `tp_inc_steps` compared whole with its phase's
//! fold. Records equal to the folds post exactly the counts step by step,
//! one record per phase covering its steps (the argument by which a
//! symmetric group's records are checked whole against member 0's folded
//! counts), so the step-by-step check would find nothing, and its figures
//! (steps, signals, notifications) are counted at once. Records that
//! differ, a mesh phase (its events need the steps) or a count too wide to
//! fold leave the rank to the step-by-step check, which finds and names
//! the defect as before. This saves the matching of every step against
//! the records' cursors, not the listing.
//!
//! **Not shared between ranks.** Each rank not checked from member 0's
//! needs walks its own steps: nothing shows two such members need the same
//! without walking both. Under recursive halving with a prologue, moving
//! participants by XOR with `c < r` keeps the pairing, but not the counts:
//! an all-reduce's balanced pieces (`floor(j k / p2)` blocks) differ in
//! size with the low bits of `j` (its parity at 3,072 = 1.5 x 2,048) at
//! the last halving round, and blocks below `big_below` cost more, so
//! the counts of `j` and `j ^ c` agree only for some `c`, which only the
//! walk (or a watch of the same cost) would show. On the
//! 3,072-rank InterRdh all-reduce the walk costs about 540 instructions a
//! step, 126 of them generating the step's transfers.
//!
//! What the check of every rank of a collective shares, its channels on
//! each TOP_SP and their descriptor tables, is made once per schedule
//! ([`Setup`], kept by the prover), not once per rank: a function of the
//! schedule alone, it is the same whichever rank it is made for.

use super::found::{Place, ProtocolProof, defect, hosted, mismatch};
use super::profile::{Folded, Profile};
use super::tracks::turns;
use crate::algorithms::{StepRun, covers};
use crate::lower::{RankProgram, Record};
use crate::placement::topsps_for;
use crate::schedule::{BlockSet, CollectivePlan, DescTable, Phase, PhaseInstance, Schedule, Transfer};
use crate::valid::GroupMember;
use crate::verify::defect::{Defect, DefectKind};
use crate::verify::symmetry::Orbit;
use ccc_ir::enums::DevicePattern;
use ccc_ir::id::{Rank, TopSp};
use ccc_ir::wire::tp::{Folder, TpIncStep};

/// What the step graph has a member do at one step: per TOP_SP of the
/// collective, the `(m2s, s2m)` descriptors it must post; and per transfer
/// it receives, the sending member and the semaphore increments.
#[derive(Clone, Default, PartialEq, Eq)]
struct Needs {
    counts: Vec<(u64, u64)>,
    receives: Vec<(u32, u64)>,
}

/// A symmetric group's member 0: its needs, and its transfers with the
/// action that moves them.
pub(super) type Member0<'a> = (&'a Profile, &'a Orbit);

/// One rank's check of one collective, step by step.
pub(super) struct StepCheck<'a> {
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    /// What every rank's check of the collective shares.
    setup: &'a Setup<'a>,
    /// Where the rank sits in the collective's groups.
    at: GroupMember,
    /// Per TOP_SP, where the records stand.
    cursors: Vec<Cursor<'a>>,
    /// Increments received from each peer during the current mesh phase.
    incoming: Vec<(u32, u64)>,
    needs: Needs,
    proof: &'a mut ProtocolProof,
    /// Per TOP_SP, records run to their end.
    notified: &'a mut [u64],
}

impl<'a> StepCheck<'a> {
    pub(super) fn new(
        schedule: &'a Schedule,
        setup: &'a Setup<'a>,
        program: &'a RankProgram,
        at: GroupMember,
        proof: &'a mut ProtocolProof,
        notified: &'a mut [u64],
    ) -> StepCheck<'a> {
        let plan = setup.plan;
        let used = setup.hosted.len();
        let cursors = program.topsps[..used]
            .iter()
            .map(|tp| {
                let records =
                    tp.segments.iter().find(|s| s.collective == plan.index).map_or(&[][..], |s| &s.records[..]);
                Cursor { records, record: 0, entry: 0, done: 0 }
            })
            .collect();
        StepCheck { schedule, plan, setup, at, cursors, incoming: Vec::new(), needs: Needs::default(), proof, notified }
    }

    /// The whole collective: from member 0's needs when the rank's
    /// transfers are member 0's moved (`member0`), else from its own step
    /// graph. The first defect.
    pub(super) fn collective(mut self, member0: Option<Member0<'_>>) -> Result<(), Box<Defect>> {
        match member0 {
            Some((profile, orbit)) => {
                if self.folded_match(profile, orbit) {
                    return Ok(());
                }
                self.by_profile(profile, orbit)
            }
            None => {
                if self.walk_folded() {
                    return Ok(());
                }
                self.by_walk()
            }
        }
    }

    /// Records that are exactly the rank's own step graph's counts, folded
    /// as lowering folds them, post them step by step (see the module
    /// overview): the walk lists and counts each step's transfers (a run's
    /// steps at once where [`StepCheck::by_walk`] takes them so) and folds
    /// them, checking nothing step by step, and counts what the
    /// step-by-step check would. `false`, with nothing counted, when the
    /// records differ (the step-by-step check then finds and names the
    /// defect), the collective has a mesh phase (its events need the
    /// steps) or a count is too wide to fold.
    fn walk_folded(&mut self) -> bool {
        let (schedule, plan, at, setup) = (self.schedule, self.plan, self.at, self.setup);
        let (group, member) = (at.group(), at.index());
        if setup.mesh || self.cursors.iter().any(|c| c.records.len() != plan.phases.len()) {
            return false;
        }
        let (tables, alike) = (&setup.tables, &setup.alike);
        let (mut transfers, mut runs, mut counts) = (Vec::new(), Vec::new(), Vec::new());
        let mut received = 0u64;
        let mut placer = plan.placer(member);
        let mut folders: Vec<Folder> = self.cursors.iter().map(|_| Folder::new()).collect();
        for (index, phase) in plan.phases.iter().enumerate() {
            let inst = placer.place(phase);
            let mut fold = |transfers: &[Transfer], len: u32| {
                count_step(tables, alike, member, transfers, &mut counts);
                received += transfers.iter().filter(|tr| tr.to == member).map(increments).sum::<u64>() * u64::from(len);
                folders.iter_mut().zip(&counts).all(|(folder, &(m2s, s2m))| {
                    let (Ok(m2s), Ok(s2m)) = (u32::try_from(m2s), u32::try_from(s2m)) else { return false };
                    folder.push_n(m2s, s2m, u64::from(len));
                    true
                })
            };
            let listing = Listing { schedule, setup, group };
            let folded = listing.each(phase, inst, &mut runs, &mut transfers, |transfers, _, len| {
                if fold(transfers, len) { Ok(()) } else { Err(()) }
            });
            if folded.is_err() {
                return false;
            }
            let same = |(cursor, folder): (&Cursor<'_>, &mut Folder)| {
                cursor.records.get(index).is_some_and(|r| r.tp == std::mem::take(folder).runs())
            };
            if !self.cursors.iter().zip(&mut folders).all(same) {
                return false;
            }
        }
        self.count_decided(received * setup.channels);
        true
    }

    /// Records that are exactly the profile's folded counts post them step
    /// by step: what the step-by-step check would find, counted at once.
    fn folded_match(&mut self, profile: &Profile, orbit: &Orbit) -> bool {
        let used = self.cursors.len();
        let own: Option<Folded>;
        let folded = match &profile.folded {
            Some(folded) => folded,
            None => {
                own = profile.fold_for(self.plan, orbit, self.at.index(), used);
                match &own {
                    Some(folded) => folded,
                    None => return false,
                }
            }
        };
        let same = |c: &Cursor<'_>, f: &Vec<Vec<TpIncStep>>| {
            c.records.len() == f.len() && c.records.iter().zip(f).all(|(r, tp)| r.tp == *tp)
        };
        if !self.cursors.iter().zip(folded).all(|(c, f)| same(c, f)) {
            return false;
        }
        self.count_decided(profile.signals);
        true
    }

    /// Counts what the step-by-step check would have counted of a
    /// collective whose records were decided whole: every used TOP_SP's
    /// steps, `signals` semaphore increments, and one notification per
    /// phase with steps on each used TOP_SP.
    fn count_decided(&mut self, signals: u64) {
        let used = self.cursors.len();
        self.proof.steps += used as u64 * u64::from(self.plan.step_n);
        self.proof.signals += signals;
        let phases = self.plan.phases.iter().filter(|p| p.step_n > 0).count() as u64;
        for n in self.notified.iter_mut().take(used) {
            *n += phases;
        }
    }

    /// Step by step, the needs from member 0's moved to this member.
    fn by_profile(mut self, profile: &Profile, orbit: &Orbit) -> Result<(), Box<Defect>> {
        let (used, member) = (self.cursors.len(), self.at.index());
        for step in 0..self.plan.step_n {
            let Some((phase, _)) = self.plan.phase_at(step) else { break };
            profile.counts(orbit, step, member, used, &mut self.needs.counts);
            self.needs.receives.clear();
            let received = orbit.step(step).iter().filter(|tr| tr.to == 0);
            let action = &orbit.action;
            self.needs.receives.extend(received.map(|tr| (action.add(tr.from, member), increments(tr))));
            self.run(step, 1, phase)?;
        }
        Ok(())
    }

    /// Step by step, the needs from the rank's own step graph. Steps in a
    /// row of one phase that need the same are checked as one run (see
    /// [`StepCheck::run`]). Where the phase lists the member's transfers
    /// as runs of steps ([`Schedule::phase_runs`]) and every block costs
    /// the same, each run's steps need the same and are taken at once
    /// (see the module overview).
    fn by_walk(mut self) -> Result<(), Box<Defect>> {
        let (schedule, plan, at, setup) = (self.schedule, self.plan, self.at, self.setup);
        let (group, member) = (at.group(), at.index());
        let mut pending = Pending::default();
        let (mut transfers, mut runs) = (Vec::new(), Vec::new());
        let mut placer = plan.placer(member);
        for (index, phase) in plan.phases.iter().enumerate() {
            let inst = placer.place(phase);
            let listing = Listing { schedule, setup, group };
            listing.each(phase, inst, &mut runs, &mut transfers, |transfers, t, len| {
                self.needs_of(&setup.tables, &setup.alike, transfers);
                self.feed(&mut pending, phase.first_step + t, len, index)
            })?;
        }
        match pending.at {
            Some((first, len, p)) => {
                self.needs = pending.needs;
                self.run(first, len, p)
            }
            None => Ok(()),
        }
    }

    /// [`StepCheck::needs`] of a step listing `transfers`, counted on
    /// `tables` (`alike`: the TOP_SP whose counts each takes).
    fn needs_of(&mut self, tables: &[DescTable<'_>], alike: &[usize], transfers: &[Transfer]) {
        let member = self.at.index();
        count_step(tables, alike, member, transfers, &mut self.needs.counts);
        self.needs.receives.clear();
        let received = transfers.iter().filter(|tr| tr.to == member);
        self.needs.receives.extend(received.map(|tr| (tr.from, increments(tr))));
    }

    /// Steps `first..first + len` of phase `phase`, each needing
    /// [`StepCheck::needs`]: joined to the run not checked yet when they
    /// follow it in the phase and need the same, else that run is checked
    /// and they start the next; a phase's last step ends its run (the
    /// phase's end is checked after it).
    fn feed(&mut self, pending: &mut Pending, first: u32, len: u32, phase: usize) -> Result<(), Box<Defect>> {
        match &mut pending.at {
            Some((f, l, p)) if *p == phase && *f + *l == first && self.needs == pending.needs => *l += len,
            _ => {
                if let Some((f, l, p)) = pending.at.take() {
                    std::mem::swap(&mut self.needs, &mut pending.needs);
                    self.run(f, l, p)?;
                    std::mem::swap(&mut self.needs, &mut pending.needs);
                }
                pending.at = Some((first, len, phase));
                std::mem::swap(&mut self.needs, &mut pending.needs);
            }
        }
        let last = self.plan.phases.get(phase).is_some_and(|p| first + len == p.first_step + p.step_n);
        match pending.at.take() {
            Some((f, l, p)) if last => {
                std::mem::swap(&mut self.needs, &mut pending.needs);
                self.run(f, l, p)
            }
            other => {
                pending.at = other;
                Ok(())
            }
        }
    }

    /// Steps `first..first + len` of phase `phase_index`, each needing
    /// [`StepCheck::needs`]: the records' posts against them, as step by
    /// step: the first defect is the one the lowest step shows, on the
    /// lowest TOP_SP there, and its place and message are those a check of
    /// that step alone gives.
    fn run(&mut self, first: u32, len: u32, phase_index: usize) -> Result<(), Box<Defect>> {
        let (plan, rank) = (self.plan, self.at.rank());
        let place = |t: usize, record, step| Place {
            collective: plan.index,
            rank,
            topsp: TopSp(t as u8),
            record,
            step: Some(step),
        };
        // Per TOP_SP, the first step of the run its records fail, and how.
        let mut failed: Option<(u32, Box<Defect>)> = None;
        for (t, (cursor, &(m2s, s2m))) in self.cursors.iter_mut().zip(&self.needs.counts).enumerate() {
            let mut done = 0;
            while done < len {
                let step = first + done;
                if failed.as_ref().is_some_and(|(at, _)| *at <= done) {
                    break;
                }
                let found = match cursor.take(len - done) {
                    None => {
                        let kind = mismatch("steps its records cover", u64::from(step), u64::from(plan.step_n));
                        Err(defect(place(t, None, step), kind))
                    }
                    Some((record, ..)) if record as usize != phase_index => {
                        let kind =
                            mismatch("phase of the record running this step", u64::from(record), phase_index as u64);
                        Err(defect(place(t, Some(record), step), kind))
                    }
                    Some((record, posted_m2s, posted_s2m, steps)) => {
                        let queues = [("M2S", posted_m2s, m2s), ("S2M", posted_s2m, s2m)];
                        match queues.into_iter().find(|&(_, posted, needed)| u64::from(posted) != needed) {
                            Some((queue, posted, needed)) => {
                                let kind = DefectKind::CountMismatch { queue, posted: u64::from(posted), needed };
                                Err(defect(place(t, Some(record), step), kind))
                            }
                            None => Ok(steps),
                        }
                    }
                };
                match found {
                    Ok(steps) => done += steps,
                    Err(d) => {
                        failed = Some((done, d));
                        break;
                    }
                }
            }
            self.proof.steps += u64::from(done);
        }
        // The receives are checked after the first step's posts.
        if let Some((0, d)) = failed {
            return Err(d);
        }
        let phase = &plan.phases[phase_index];
        let mesh = phase.alg.pattern() == Some(DevicePattern::Mesh);
        for &(from, increments) in &self.needs.receives {
            self.proof.signals += increments * self.setup.channels * u64::from(len);
            if mesh && from != self.at.index() {
                let Some(Rank(peer)) = plan.rank(self.at.group(), from) else {
                    let kind =
                        DefectKind::OutOfRange { what: "sending member", value: from, limit: plan.groups.size() };
                    return Err(defect(place(0, None, first), kind));
                };
                let increments = increments * u64::from(len);
                match self.incoming.iter_mut().find(|(p, _)| *p == peer) {
                    Some(e) => e.1 += increments,
                    None => self.incoming.push((peer, increments)),
                }
            }
        }
        if let Some((_, d)) = failed {
            return Err(d);
        }
        if first + len == phase.first_step + phase.step_n {
            for t in 0..self.cursors.len() {
                self.notified[t] += 1;
                if mesh {
                    let record = self.cursors[t].records.get(phase_index);
                    let channels = self.setup.hosted[t].len() as u64;
                    check_events(
                        record,
                        &self.incoming,
                        channels,
                        place(t, Some(phase_index as u32), first + len - 1),
                    )?;
                }
            }
            self.incoming.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
impl StepCheck<'_> {
    /// The folded walk alone: whether it decided the rank's records (see
    /// [`StepCheck::walk_folded`]).
    pub(super) fn folded_alone(mut self) -> bool {
        self.walk_folded()
    }

    /// The step-by-step check against the rank's own step graph alone.
    pub(super) fn step_by_step(self) -> Result<(), Box<Defect>> {
        self.by_walk()
    }
}

/// How a rank's phases are listed, shared by [`StepCheck::walk_folded`]
/// and [`StepCheck::by_walk`]: a run of steps at once where the phase's
/// runs cover it, stay in range and every block holds the same elements
/// (`position_free`), a run in pieces where blocks below a position hold
/// one more, else step by step.
struct Listing<'p> {
    schedule: &'p Schedule,
    setup: &'p Setup<'p>,
    group: u32,
}

impl Listing<'_> {
    /// Calls `f(transfers, t, len)` for each listing of `phase` placed as
    /// `inst`: the member's transfers at phase step `t`, the same for the
    /// `len` steps from it. The first error, if any.
    fn each<E>(
        &self,
        phase: &Phase,
        inst: PhaseInstance,
        runs: &mut Vec<StepRun>,
        transfers: &mut Vec<Transfer>,
        mut f: impl FnMut(&[Transfer], u32, u32) -> Result<(), E>,
    ) -> Result<(), E> {
        let Listing { schedule, setup, group } = *self;
        let (plan, block_n) = (setup.plan, setup.block_n);
        let by_runs = (setup.position_free || setup.big_below.is_some())
            && !setup.one_step_at_a_time()
            && schedule.phase_runs(plan, group, phase, inst, runs)
            && covers(runs, phase.step_n)
            && runs.iter().all(|run| run.in_range(block_n));
        if by_runs && setup.position_free {
            return runs.iter().try_for_each(|run| f(&run.transfers, run.first, run.len));
        }
        if let (true, Some(big_below)) = (by_runs, setup.big_below) {
            let mut cuts = Vec::new();
            for run in runs.iter() {
                cuts.clear();
                cuts.push(0);
                for set in run.transfers.iter().flat_map(|tr| [tr.src, tr.dst]) {
                    // In range at the run's last step (`in_range`): no sum
                    // below wraps.
                    let at = |i: u32| BlockSet { start: set.start + i * run.shift, ..set }.count_below(big_below);
                    turns(at, run.len, &mut cuts);
                }
                cuts.sort_unstable();
                cuts.dedup();
                for (i, &cut) in cuts.iter().enumerate() {
                    let end = cuts.get(i + 1).copied().unwrap_or(run.len);
                    transfers.clear();
                    run.at(run.first + cut, transfers);
                    f(transfers, run.first + cut, end - cut)?;
                }
            }
            return Ok(());
        }
        for t in 0..phase.step_n {
            transfers.clear();
            crate::algorithms::transfers::<false>(plan, &schedule.shape, group, phase, inst, t, transfers);
            f(transfers, t, 1)?;
        }
        Ok(())
    }
}

/// What the check of every rank of one collective shares, set up once
/// per schedule: the collective's channels on each of its TOP_SPs, their
/// descriptor tables, and for each table the TOP_SP whose counts it takes
/// (a TOP_SP whose table counts as an earlier one's does takes that one's
/// counts: the collective's channels split alike over them).
pub(crate) struct Setup<'p> {
    plan: &'p CollectivePlan,
    /// The collective's channels on each of its TOP_SPs.
    hosted: Vec<Vec<u8>>,
    /// Their count over every TOP_SP.
    channels: u64,
    tables: Vec<DescTable<'p>>,
    alike: Vec<usize>,
    /// Every block costs the same on every TOP_SP.
    position_free: bool,
    /// Unless `position_free`: when blocks hold the same elements but
    /// for one more below this position (every member's alike).
    big_below: Option<u32>,
    /// Lists every step from the generator, runs or not: the tests'
    /// reference for the listing in runs and pieces.
    #[cfg(test)]
    pub(super) one_step_at_a_time: bool,
    block_n: u32,
    /// The collective has a mesh phase.
    mesh: bool,
}

impl<'p> Setup<'p> {
    /// The setup of `plan`, a collective of `schedule`.
    pub(crate) fn new(schedule: &Schedule, plan: &'p CollectivePlan) -> Setup<'p> {
        let used = topsps_for(schedule.arch.params(), plan.channels);
        let hosted: Vec<Vec<u8>> = (0..used).map(|t| hosted(schedule, plan, t)).collect();
        let channels = hosted.iter().map(|h| h.len() as u64).sum();
        let tables: Vec<DescTable<'_>> = hosted.iter().map(|h| DescTable::new(plan, h)).collect();
        let alike =
            (0..tables.len()).map(|t| (0..t).find(|&u| tables[u].counts_alike(&tables[t])).unwrap_or(t)).collect();
        Setup {
            plan,
            channels,
            position_free: tables.iter().all(DescTable::position_free),
            big_below: tables.first().and_then(DescTable::big_below),
            #[cfg(test)]
            one_step_at_a_time: false,
            block_n: plan.layout().block_n(),
            mesh: plan.phases.iter().any(|p| p.alg.pattern() == Some(DevicePattern::Mesh)),
            hosted,
            tables,
            alike,
        }
    }

    /// Whether [`Listing`] lists every step from the generator (the
    /// tests' reference), not a run of them at once.
    fn one_step_at_a_time(&self) -> bool {
        #[cfg(test)]
        return self.one_step_at_a_time;
        #[cfg(not(test))]
        false
    }

    /// Whether this is the setup of `plan`.
    pub(super) fn is_of(&self, plan: &CollectivePlan) -> bool {
        std::ptr::eq(self.plan, plan)
    }
}

/// The `(m2s, s2m)` member `member` posts on each TOP_SP for a step
/// listing `transfers`, counted on `tables` (`alike`: the TOP_SP whose
/// counts each takes), into `out`.
fn count_step(
    tables: &[DescTable<'_>],
    alike: &[usize],
    member: u32,
    transfers: &[Transfer],
    out: &mut Vec<(u64, u64)>,
) {
    out.clear();
    for (t, &u) in alike.iter().enumerate() {
        let counts = if u == t { tables[t].step(member, transfers) } else { out[u] };
        out.push(counts);
    }
}

/// The run not checked yet: its first step, length and phase, and what
/// each of its steps needs.
#[derive(Default)]
struct Pending {
    at: Option<(u32, u32, usize)>,
    needs: Needs,
}

/// The semaphore increments a transfer delivers per channel: blocks x
/// halves.
fn increments(tr: &Transfer) -> u64 {
    u64::from(tr.src.count) * u64::from(tr.halves.count())
}

/// A mesh record's events must wait, per peer, for exactly the increments
/// the step graph has that peer send the rank during the phase, on each of
/// the TOP_SP's `channels` (and for nothing from a peer that sends none).
fn check_events(record: Option<&Record>, incoming: &[(u32, u64)], channels: u64, at: Place) -> Result<(), Box<Defect>> {
    let Some(record) = record else { return Ok(()) };
    for &(peer, sent) in incoming {
        let sent = sent * channels;
        let target = record.events.iter().find(|e| e.peer == peer).map_or(0, |e| u64::from(e.target));
        if target != sent {
            return Err(defect(at, DefectKind::EventMismatch { peer: Rank(peer), target, arrived: sent }));
        }
    }
    if let Some(e) = record.events.iter().find(|e| !incoming.iter().any(|&(p, _)| p == e.peer)) {
        let kind = DefectKind::EventMismatch { peer: Rank(e.peer), target: u64::from(e.target), arrived: 0 };
        return Err(defect(at, kind));
    }
    Ok(())
}

/// A (rank, TOP_SP)'s position in its records' `tp_inc_steps`.
struct Cursor<'a> {
    records: &'a [Record],
    record: usize,
    entry: usize,
    done: u16,
}

impl Cursor<'_> {
    /// The next steps' `(record, m2s, s2m, steps)`: as many steps as the
    /// current `tp_inc_steps` entry still covers, at most `most` (at least
    /// 1), each posting `m2s` and `s2m` in `record`.
    fn take(&mut self, most: u32) -> Option<(u32, u32, u32, u32)> {
        loop {
            let record = self.records.get(self.record)?;
            match record.tp.get(self.entry) {
                Some(&TpIncStep { m2s, s2m, repeat }) if self.done < repeat => {
                    let steps = u32::from(repeat - self.done).min(most.max(1));
                    self.done += steps as u16;
                    return Some((self.record as u32, m2s, s2m, steps));
                }
                Some(_) => {
                    self.entry += 1;
                    self.done = 0;
                }
                None => {
                    self.record += 1;
                    self.entry = 0;
                    self.done = 0;
                }
            }
        }
    }
}
