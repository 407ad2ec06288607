//! Which of `Auto`'s candidates lower: a candidate whose schedule exceeds
//! one of the three lowering limits that depend on the choice is not
//! legal for `Auto`, so it is dropped before it is costed
//! (`docs/cost-model.md` §4). The limits (`lower/mod.rs`) are the mesh
//! events per TOP_SP (`Limit::MeshEvents`: `mesh_event_max`, 50 on Sunda,
//! 108 elsewhere), the increments one mesh event counts
//! (`Limit::MeshEventTarget`: a u16) and the descriptors one step posts
//! in one direction on one TOP_SP (`Limit::TpIncrement`: `VAL_MASK`).
//!
//! **Mesh events.** Lowering gives every MESH record one event per peer
//! that sends to the rank in the record's phase, on every TOP_SP that
//! hosts one of the collective's channels (each hosts at least one, so
//! each gets the same events), and a TOP_SP's events add up over its
//! records (`lower/mod.rs`, `Limit::MeshEvents`). So a candidate needs, on
//! each TOP_SP it uses, the most any member of a group needs: the sum over
//! its mesh phases of the member's sending peers ([`phase_events`]). Every
//! mesh phase is one step (`algorithms`), and its senders follow from its
//! pattern: `k - 1` for every member of a direct reduce-scatter,
//! all-gather, all-reduce or all-to-all over a scope of `k`; `k - 1` for a
//! direct reduce's root and none for the others; one for a direct
//! broadcast's non-roots; at most one in an RDH or binomial round or a
//! point-to-point step. [`Bounds`] sums each phase's fewest and most over
//! the members, which settles it when the most fits (or when every phase
//! is the same for every member); only otherwise does [`events_needed`]
//! count member by member, naming
//! the senders of the phases that differ by generating their one step's
//! transfers, as lowering does. A test holds [`phase_events`] equal to
//! what lowering gives every mesh record (`compiler/tests/cost_legal.rs`).
//!
//! **Event targets and descriptors per step** ([`Peaks`]). Unlike the
//! events, these are maxima, not sums: a candidate exceeds them when one
//! phase does, whichever phases run beside it. A phase's [`step_bound`] is
//! cheap, from its pattern alone: the most blocks one member moves in one
//! direction in one step, times the most descriptors one block costs on
//! TOP_SP 0 ([`Unit`]), and the most blocks one peer sends a member in
//! the phase, times two halves and TOP_SP 0's channels. TOP_SP 0 hosts
//! the most channels, and the first of them, whose shares are the
//! largest, so it needs at least what any other TOP_SP does. The bound
//! settles it when it fits (every collective of a normal size); only a
//! phase whose bound exceeds a limit is counted exactly ([`phase_peaks`]):
//! a ring phase's largest step moves the heaviest piece, piece 0 of
//! member 0's universe (every piece is sent and received at some step,
//! both halves of it at one step even on Kangaring), and any other phase
//! is counted member by member from its generated transfers, as lowering
//! counts them. A test holds the count equal to lowering's verdict, over
//! a grid that reaches the limits (`compiler/tests/cost_legal.rs`).
//!
//! **A program.** A TOP_SP's table serves the whole program, so a candidate is held to
//! what the program's collectives before it leave
//! ([`Machine::mesh_event_room`](super::Machine::mesh_event_room); the
//! sum is kept by validation's `ProgramAuto`). A written algorithm is
//! not dropped but left to lowering to refuse; [`exceeded`] judges a
//! validated program's choices as lowering will, for `ccc check`.

use super::Machine;
use crate::algorithms::transfers;
use crate::lower::Limit;
use crate::placement::hosted_channels;
use crate::schedule::{BlockSet, CollectivePlan, DescTable, Halves, Phase, PhaseKind, RdhMode, Schedule, Transfer};
use crate::valid::{Shape, ValidCollective, ValidProgram};
use ccc_ir::arch::ArchParams;
use ccc_ir::enums::DevicePattern;
use ccc_ir::wire::tp::VAL_MASK;
use std::rc::Rc;

/// The mesh events member `member` of a group of `plan` waits on in
/// `phase`, on every TOP_SP the collective uses: one per peer that sends
/// to it in the phase, as lowering counts them (`out` is scratch). None
/// for a phase that is not lowered to MESH records.
pub fn phase_events(shape: &Shape, plan: &CollectivePlan, phase: &Phase, member: u32, out: &mut Vec<Transfer>) -> u32 {
    match bounds(plan, phase) {
        Bounds { lo, hi } if lo == hi => lo,
        _ => senders(shape, plan, phase, member, out),
    }
}

/// The most mesh events any member of a group needs on a TOP_SP over
/// `phases` (each with its plan: a hierarchical combination's legs may be
/// planned apart), when that is more than `max`; `None` when it fits.
/// Cheap when the phases' own bounds settle it ([`Bounds::over`]).
pub fn events_over(shape: &Shape, phases: &[(&CollectivePlan, &Phase)], max: u32) -> Option<u32> {
    Bounds::of(phases.iter().copied()).over(max, || events_needed(shape, phases))
}

/// The fewest and the most mesh events a member of a group needs on a
/// TOP_SP over some phases: each phase's fewest and most over the
/// members, from its pattern alone, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// At most what every member needs.
    pub lo: u32,
    /// At least what any member needs.
    pub hi: u32,
}

impl Bounds {
    /// The bounds of `phases`, summed.
    pub fn of<'p>(phases: impl IntoIterator<Item = (&'p CollectivePlan, &'p Phase)>) -> Bounds {
        phases.into_iter().fold(Bounds::default(), |sum, (plan, phase)| sum + bounds(plan, phase))
    }

    /// The most events any member needs when more than `max`, `None` when
    /// it fits: settled by the bounds when the most fits or every member
    /// needs the same, else by `exact` (the count member by member,
    /// [`events_needed`]).
    pub fn over(self, max: u32, exact: impl FnOnce() -> u32) -> Option<u32> {
        if self.hi <= max {
            return None;
        }
        let needed = if self.lo == self.hi { self.hi } else { exact() };
        (needed > max).then_some(needed)
    }
}

impl Bounds {
    /// The mesh events to judge a candidate by against `max`: the bounds'
    /// most when it fits (at least what any member needs), else what the
    /// most-needing member needs (the bounds' when every member needs the
    /// same, else `exact`). More than `max` exactly when [`Bounds::over`]
    /// says it is over.
    pub fn need(self, max: u32, exact: impl FnOnce() -> u32) -> u32 {
        if self.hi <= max || self.lo == self.hi { self.hi } else { exact() }
    }
}

impl std::ops::Add for Bounds {
    type Output = Bounds;

    fn add(self, other: Bounds) -> Bounds {
        Bounds { lo: self.lo.saturating_add(other.lo), hi: self.hi.saturating_add(other.hi) }
    }
}

/// The most mesh events any member of a group needs on a TOP_SP over
/// `phases`, counted member by member where the phases' bounds do not
/// settle it.
pub fn events_needed(shape: &Shape, phases: &[(&CollectivePlan, &Phase)]) -> u32 {
    member_events(shape, phases).max().unwrap_or(0)
}

/// The mesh events each member of the groups needs over `phases` (of one
/// collective), by member: [`events_needed`] is their most.
pub fn events_by_member(shape: &Shape, phases: &[(&CollectivePlan, &Phase)]) -> Vec<u32> {
    member_events(shape, phases).collect()
}

/// The mesh events each member of the groups needs over `phases`, member
/// by member (none without a phase).
fn member_events<'a>(
    shape: &'a Shape,
    phases: &'a [(&'a CollectivePlan, &'a Phase)],
) -> impl Iterator<Item = u32> + 'a {
    let members = phases.first().map_or(0, |&(first, _)| first.groups.size());
    let mut out = Vec::new();
    (0..members).map(move |member| {
        phases
            .iter()
            .fold(0u32, |n, &(plan, phase)| n.saturating_add(phase_events(shape, plan, phase, member, &mut out)))
    })
}

/// The fewest and the most mesh events a member needs in `phase`, from
/// its pattern alone (equal when every member needs the same).
fn bounds(plan: &CollectivePlan, phase: &Phase) -> Bounds {
    use PhaseKind as K;
    if phase.alg.pattern() != Some(DevicePattern::Mesh) {
        return Bounds::default();
    }
    // Every member's scope has this size.
    let others = phase.scope.size(&plan.radices).saturating_sub(1);
    let (lo, hi) = match phase.kind {
        K::DirectReduceScatter | K::DirectAllGather | K::DirectAllReduce | K::DirectAllToAll => (others, others),
        K::DirectBroadcast { .. }
        | K::PointToPoint
        | K::RdhPrologue { .. }
        | K::RdhHalving { .. }
        | K::RdhDoubling { .. }
        | K::RdhEpilogue { .. }
        | K::BinomialBroadcast { .. }
        | K::BinomialReduce { .. } => (0, others.min(1)),
        // A direct reduce's root hears from every other member; no mesh
        // algorithm composes ring phases, but were one to, its senders
        // are still members of its scope.
        _ => (0, others),
    };
    Bounds { lo, hi }
}

/// The peers that send to `member` in any step of `phase`, counted from
/// the transfers lowering posts (`out` is scratch).
fn senders(shape: &Shape, plan: &CollectivePlan, phase: &Phase, member: u32, out: &mut Vec<Transfer>) -> u32 {
    let inst = plan.instance(phase, member);
    out.clear();
    for t in 0..phase.step_n {
        transfers::<false>(plan, shape, 0, phase, inst, t, out);
    }
    let mut from: Vec<u32> = out.iter().filter(|t| t.to == member && t.from != member).map(|t| t.from).collect();
    from.sort_unstable();
    from.dedup();
    from.len() as u32
}

/// Why a candidate would not lower: the limit it exceeds and what it
/// needs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The limit.
    pub limit: Limit,
    /// What the candidate needs: mesh events per TOP_SP, increments per
    /// mesh event, or descriptors per step.
    pub needed: u64,
}

impl Refusal {
    /// The most the limit allows on an arch of `params`.
    pub fn max(self, params: &ArchParams) -> u64 {
        match self.limit {
            Limit::MeshEvents => u64::from(params.mesh_event_max),
            Limit::MeshEventTarget => TARGET_MAX,
            _ => DESCRIPTORS_MAX,
        }
    }

    /// The refusal in words, as `explain` and `sweep` say it: `LIMIT is at
    /// most MAX on ARCH; this choice needs N`. A TOP_SP's mesh
    /// events add up over the program, so those `spent` by the collectives
    /// before it are counted in, as lowering counts them.
    pub fn describe(self, arch: ccc_ir::arch::Arch, spent: u32) -> String {
        let spent = if self.limit == Limit::MeshEvents { spent } else { 0 };
        let needed = self.needed + u64::from(spent);
        let before =
            if spent > 0 { format!(" ({spent} of them taken by the collectives before it)") } else { String::new() };
        format!("{} is at most {} on {arch}; this choice needs {needed}{before}", self.limit, self.max(arch.params()))
    }

    /// Whether `self` is the one to name rather than `other` when nothing
    /// is left: the limits in the order they are judged (mesh events,
    /// increments per event, descriptors per step), then the fewest
    /// needed.
    pub fn before(self, other: Refusal) -> bool {
        (self.order(), self.needed) < (other.order(), other.needed)
    }

    /// Where its limit stands in the order the limits are judged (mesh
    /// events 0, increments per event 1, descriptors per step 2): below
    /// [`LIMITS_JUDGED`].
    pub fn order(self) -> usize {
        match self.limit {
            Limit::MeshEvents => 0,
            Limit::MeshEventTarget => 1,
            _ => 2,
        }
    }
}

/// The limits that depend on the choice: mesh events, increments per
/// mesh event, descriptors per step ([`Refusal::order`]).
pub const LIMITS_JUDGED: usize = 3;

/// Why `phases` (each with its plan, the collective built alone on an
/// arch of `params`) would not lower, judged as `Auto` judges a whole
/// schedule: the mesh events first (at most `room`: what the collectives
/// before it leave), then the per-step needs; `None` when
/// no limit that depends on the choice is exceeded.
pub fn refusal(shape: &Shape, params: &ArchParams, room: u32, phases: &[(&CollectivePlan, &Phase)]) -> Option<Refusal> {
    if let Some(n) = events_over(shape, phases, room) {
        return Some(Refusal { limit: Limit::MeshEvents, needed: u64::from(n) });
    }
    let &(plan, _) = phases.first()?;
    let (limit, needed) = peaks(shape, params, Unit::of(params, plan), phases).over()?;
    Some(Refusal { limit, needed })
}

/// A limit of lowering that depends on the algorithm, exceeded by a
/// program that validates ([`exceeded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// The collective at which it is exceeded, by index.
    pub collective: u32,
    /// For the mesh events, the first rank (in rank order) whose TOP_SPs
    /// need more than the arch has (`compile`, which lowers a few sample
    /// ranks first, may name a later one that does too); `None` for the
    /// per-step limits, whose count is a group's busiest member's.
    pub rank: Option<u32>,
    /// The limit, and what the collective needs of it (at that rank).
    pub refusal: Refusal,
    /// For the mesh events, those the collectives before it take at that
    /// rank (0 for the other limits).
    pub spent: u32,
}

impl Exceeded {
    /// In words, as `explain` says a written choice's: `LIMIT is at most
    /// MAX on ARCH; this choice needs N (S of them taken by the
    /// collectives before it)`.
    pub fn describe(self, arch: ccc_ir::arch::Arch) -> String {
        self.refusal.describe(arch, self.spent)
    }

    /// The refusal `check`, `sign` and `diagnose` give (the CLI and the
    /// Python binding alike): `rank R, collective C: ... (compile and
    /// verify refuse it)`, the rank where the mesh events run out.
    pub fn refusal_text(self, arch: ccc_ir::arch::Arch) -> String {
        let rank = self.rank.map(|r| format!("rank {r}, ")).unwrap_or_default();
        format!("{rank}collective {}: {} (compile and verify refuse it)", self.collective, self.describe(arch))
    }
}

/// The first limit of lowering that depends on the algorithm which
/// `program`'s choices, as validation resolved them, exceed; `None` when
/// lowering refuses none of them for it. Validation leaves these limits
/// of a written algorithm to lowering (`explain` costs such a choice and
/// says it does not lower), so `ccc check` asks this to refuse what
/// `compile` would. Judged as lowering judges: the mesh events rank by
/// rank, summed over the collectives (the first rank that runs out, at
/// the collective where it does), then each collective's per-step needs,
/// in program order. Cheap unless the phases' own bounds come near a
/// limit: the events are counted rank by rank only when the most any
/// member of each collective may need, summed, is over.
pub fn exceeded(program: &ValidProgram) -> Option<Exceeded> {
    let machine = Machine::of(program);
    // Each collective built alone, an equal one's taken again (a program
    // of repeats builds once: a permute of a million ranks takes a while).
    let cs = &program.collectives;
    let mut built: Vec<Rc<Option<Schedule>>> = Vec::with_capacity(cs.len());
    for (i, c) in cs.iter().enumerate() {
        built.push(match equal_before(cs, i).and_then(|j| built.get(j)) {
            Some(schedule) => Rc::clone(schedule),
            None => Rc::new(super::build_alone(c, machine, &c.algorithm)),
        });
    }
    let plans: Vec<Option<&CollectivePlan>> =
        built.iter().map(|s| s.as_ref().as_ref().and_then(|s| s.collectives.first())).collect();
    exceeded_in(program, &plans)
}

/// [`exceeded`], judged on `schedule`, `program` built already (`sign`,
/// `diagnose`): each collective's plan is the one building it alone gives.
pub fn exceeded_built(program: &ValidProgram, schedule: &Schedule) -> Option<Exceeded> {
    let plans: Vec<Option<&CollectivePlan>> = schedule.collectives.iter().map(Some).collect();
    exceeded_in(program, &plans)
}

/// The first collective before collective `i` of `cs` equal to it (the
/// same algorithm and inputs): its plan, and so its needs, are the same.
fn equal_before(cs: &[ValidCollective], i: usize) -> Option<usize> {
    let c = cs.get(i)?;
    cs.iter().take(i).position(|e| e.algorithm == c.algorithm && super::fit::same_inputs(e, c))
}

/// [`exceeded`] over each collective's plan (`None`: it does not plan).
fn exceeded_in(program: &ValidProgram, plans: &[Option<&CollectivePlan>]) -> Option<Exceeded> {
    let (shape, params) = (program.topology(), program.arch().params());
    let max = u32::from(params.mesh_event_max);
    let cs = &program.collectives;
    fn phases_of(plan: &CollectivePlan) -> Vec<(&CollectivePlan, &Phase)> {
        plan.phases.iter().map(|p| (plan, p)).collect()
    }
    let most = plans.iter().flatten().fold(0u32, |sum, plan| sum.saturating_add(Bounds::of(phases_of(plan)).hi));
    if most > max {
        // Rank by rank: one count for each collective not equal to one
        // before it.
        let mut events: Vec<Rc<Vec<u32>>> = Vec::with_capacity(cs.len());
        for (i, (c, plan)) in cs.iter().zip(plans).enumerate() {
            events.push(match equal_before(cs, i).and_then(|j| events.get(j)) {
                Some(e) => Rc::clone(e),
                None => {
                    Rc::new(plan.map_or_else(Vec::new, |plan| {
                        super::fit::by_rank(c, events_by_member(&shape, &phases_of(plan)))
                    }))
                }
            });
        }
        let mut total = Vec::new();
        for e in &events {
            super::fit::add(&mut total, e);
        }
        if let Some(rank) = total.iter().position(|&t| t > max) {
            let mut spent = 0u32;
            for (i, e) in events.iter().enumerate() {
                let needed = e.get(rank).copied().unwrap_or(0);
                if spent.saturating_add(needed) > max {
                    let refusal = Refusal { limit: Limit::MeshEvents, needed: u64::from(needed) };
                    return Some(Exceeded { collective: i as u32, rank: Some(rank as u32), refusal, spent });
                }
                spent = spent.saturating_add(needed);
            }
        }
    }
    plans.iter().enumerate().find_map(|(i, plan)| {
        let plan = (*plan)?;
        let phases = phases_of(plan);
        phases.first()?;
        let (limit, needed) = peaks(&shape, params, Unit::of(params, plan), &phases).over()?;
        Some(Exceeded { collective: i as u32, rank: None, refusal: Refusal { limit, needed }, spent: 0 })
    })
}

/// The most increments one mesh event counts: its target is a u16
/// (`Limit::MeshEventTarget`).
pub const TARGET_MAX: u64 = u16::MAX as u64;

/// The most descriptors one `tp_inc_steps` increment posts
/// (`Limit::TpIncrement`).
pub const DESCRIPTORS_MAX: u64 = VAL_MASK as u64;

/// The TOP_SP that needs the most of every per-step limit: it hosts the
/// most channels, and the first, largest shares of them.
const HEAVIEST_TOPSP: u8 = 0;

/// The most a member of a group needs in one step under the two per-step
/// limits, over some phases: an upper bound ([`step_bound`]) or lowering's
/// count ([`phase_peaks`]). Phases combine by the larger of each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Peaks {
    /// The most descriptors one member posts in one direction, in one
    /// step, on one TOP_SP.
    pub descriptors: u64,
    /// The most increments one mesh event of one member counts, on one
    /// TOP_SP.
    pub target: u64,
}

impl Peaks {
    /// The larger of each.
    pub fn max(self, other: Peaks) -> Peaks {
        Peaks { descriptors: self.descriptors.max(other.descriptors), target: self.target.max(other.target) }
    }

    /// Whether both fit their limits.
    pub fn fits(self) -> bool {
        self.over().is_none()
    }

    /// The first limit exceeded (the event target, then the descriptors)
    /// with what is needed; `None` when both fit.
    pub fn over(self) -> Option<(Limit, u64)> {
        if self.target > TARGET_MAX {
            Some((Limit::MeshEventTarget, self.target))
        } else if self.descriptors > DESCRIPTORS_MAX {
            Some((Limit::TpIncrement, self.descriptors))
        } else {
            None
        }
    }
}

/// What the per-step bounds of every candidate of one collective share:
/// the layout, channels and dtype are the collective's, whatever the
/// algorithm.
#[derive(Clone, Copy, Debug)]
pub struct Unit {
    /// The most descriptors one block (both halves) costs on the heaviest
    /// TOP_SP.
    block: u64,
    /// The channels the heaviest TOP_SP hosts.
    hosted: u64,
}

impl Unit {
    /// The unit of `plan`'s collective on an arch of `params`.
    pub fn of(params: &ArchParams, plan: &CollectivePlan) -> Unit {
        let channels = hosted_channels(params, plan.channels, HEAVIEST_TOPSP);
        let table = DescTable::new(plan, &channels);
        // Block 0 is the largest where sizes follow positions; AllToAllV's
        // largest is its largest count, input block j of member i.
        let (member, b) = plan
            .counts
            .iter()
            .flat_map(|rows| rows.iter().enumerate())
            .flat_map(|(i, row)| row.iter().enumerate().map(move |(j, &n)| (n, i as u32, j as u32)))
            .max()
            .map_or((0, 0), |(_, i, j)| (i, j));
        Unit { block: table.count(member, BlockSet::one(b), Halves::Both), hosted: channels.len() as u64 }
    }

    /// Whether no phase of `plan` can exceed either per-step limit,
    /// whatever its pattern (so [`step_bounds`] need not look at one): of
    /// a group of `n`, no member moves more than `n (n - 1)` blocks in one
    /// direction in one step (or 2, a local copy beside), and no peer
    /// sends it more than `n` blocks in a step, over at most the plan's
    /// steps. True of every collective of an ordinary size.
    pub fn quiet(self, plan: &CollectivePlan) -> bool {
        let n = u64::from(plan.groups.size());
        let moved = n.saturating_mul(n.saturating_sub(1)).max(2);
        let halves = u64::from(Halves::Both.count());
        let target = n.max(1).saturating_mul(halves * self.hosted).saturating_mul(u64::from(plan.step_n));
        moved.saturating_mul(self.block) <= DESCRIPTORS_MAX && target <= TARGET_MAX
    }
}

/// The per-step needs of `phases` (each with its plan), settled: each
/// phase's [`step_bound`] where it fits, else lowering's count of what
/// does not fit ([`phase_peaks`]). So the result exceeds a limit exactly
/// when lowering would refuse one of the phases for it, and then it is
/// the count.
pub fn peaks(shape: &Shape, params: &ArchParams, unit: Unit, phases: &[(&CollectivePlan, &Phase)]) -> Peaks {
    let mut out = Vec::new();
    phases.iter().fold(Peaks::default(), |most, &(plan, phase)| {
        let b = step_bound(unit, plan, phase);
        most.max(if b.fits() { b } else { settle(shape, params, plan, phase, b, &mut out) })
    })
}

/// The upper bounds of `phases` (each with its plan), from their
/// patterns alone; none (they fit) for the phases of a plan that is
/// [`Unit::quiet`].
pub fn step_bounds<'p>(unit: Unit, phases: impl IntoIterator<Item = (&'p CollectivePlan, &'p Phase)>) -> Peaks {
    phases.into_iter().fold(Peaks::default(), |most, (plan, phase)| {
        if unit.quiet(plan) { most } else { most.max(step_bound(unit, plan, phase)) }
    })
}

/// An upper bound on what any member needs in one step of `phase`, from
/// its pattern alone: the most blocks one member moves in one direction
/// in one step, and the most one peer sends it in the phase, each at the
/// most a block costs (`pattern_blocks`).
pub fn step_bound(unit: Unit, plan: &CollectivePlan, phase: &Phase) -> Peaks {
    let (moved, from_peer) = pattern_blocks(plan, phase);
    Peaks { descriptors: moved.saturating_mul(unit.block), target: event_target(phase, from_peer, unit.hosted) }
}

/// The increments one mesh event of `phase` counts when one peer sends
/// `blocks` blocks in each of its steps, on a TOP_SP hosting `hosted`
/// channels: one per half per block per channel (none unless the phase
/// is lowered to MESH records).
fn event_target(phase: &Phase, blocks: u64, hosted: u64) -> u64 {
    if phase.alg.pattern() != Some(DevicePattern::Mesh) {
        return 0;
    }
    let halves = u64::from(Halves::Both.count());
    blocks.saturating_mul(halves * hosted).saturating_mul(u64::from(phase.step_n))
}

/// From `phase`'s pattern: the most blocks one member moves in one
/// direction in one step, and the most one peer sends it in one step
/// (both halves of each). The second is the most some member receives
/// from one peer for every pattern but a point-to-point one (which may
/// pair a member with itself) once the scope has two members.
fn pattern_blocks(plan: &CollectivePlan, phase: &Phase) -> (u64, u64) {
    use PhaseKind as K;
    let k = u64::from(phase.scope.size(&plan.radices));
    let others = k.saturating_sub(1);
    // The blocks every member's universe holds: each narrowing keeps one
    // piece of its scope's size, as `CollectivePlan::instance` cuts it.
    let universe = phase.narrow.iter().fold(plan.groups.size(), |n, s| n / s.size(&plan.radices).max(1));
    let universe = u64::from(universe);
    let piece = universe / k.max(1);
    if k <= 1 && phase.kind != K::PointToPoint {
        // No peer; an all-to-all still copies its own block.
        return (1, 0);
    }
    match phase.kind {
        K::RingReduceScatter { .. }
        | K::RingAllGather { .. }
        | K::RingAllReduceFused
        | K::RingBroadcast { .. }
        | K::RingReduce { .. } => (piece, piece),
        // Step 0 also copies the member's own block locally.
        K::RingAllToAll => (2, 1),
        K::DirectReduceScatter | K::DirectAllGather => (others * piece, piece),
        K::DirectAllReduce | K::DirectBroadcast { .. } | K::DirectReduce { .. } => (others * universe, universe),
        K::DirectAllToAll => (k, 1),
        // A member may be its own pair's source and target.
        K::PointToPoint => (2, 1),
        K::RdhPrologue { mode: RdhMode::GatherPiece } | K::RdhEpilogue { mode: RdhMode::ScatterPiece } => (1, 1),
        K::RdhHalving { round, balanced } | K::RdhDoubling { round, balanced } => {
            // A round pairs participants `d` apart, each sending and
            // receiving the blocks of `d` participants: of the first `d`
            // at most, who speak for two members each while below `r`
            // (`algorithms/rdh.rs`); balanced, `ceil(d k / p2)`.
            let p2 = if k == 0 { 0 } else { 1u64 << (63 - k.leading_zeros()) };
            let d = match phase.kind {
                K::RdhHalving { .. } => p2.checked_shr(u32::from(round) + 1).unwrap_or(0),
                _ => 1u64.checked_shl(u32::from(round)).unwrap_or(0),
            };
            let blocks = if balanced { d.saturating_mul(k).div_ceil(p2.max(1)) } else { d + d.min(k - p2) };
            (blocks, blocks)
        }
        K::RdhPrologue { .. } | K::RdhEpilogue { .. } | K::BinomialBroadcast { .. } | K::BinomialReduce { .. } => {
            (universe, universe)
        }
    }
}

/// What the members of a group need in one step of `phase` on an arch of
/// `params`, counted as lowering counts it on the heaviest TOP_SP (`out`
/// is scratch): the most descriptors one member posts in one direction
/// in one step, and the most increments one of its mesh events counts
/// (none unless the phase is lowered to MESH records).
pub fn phase_peaks(
    shape: &Shape,
    params: &ArchParams,
    plan: &CollectivePlan,
    phase: &Phase,
    out: &mut Vec<Transfer>,
) -> Peaks {
    settle(shape, params, plan, phase, Peaks { descriptors: u64::MAX, target: u64::MAX }, out)
}

/// `bound`, each part that exceeds its limit replaced by lowering's count
/// ([`phase_peaks`]). A ring phase's largest step moves piece 0 of member
/// 0's universe, the heaviest: every piece is moved at some step, and
/// both halves of one piece at one step even in two directions. A one-step
/// mesh phase's largest event counts what [`pattern_blocks`] names. The
/// rest is counted member by member from the phase's transfers.
fn settle(
    shape: &Shape,
    params: &ArchParams,
    plan: &CollectivePlan,
    phase: &Phase,
    bound: Peaks,
    out: &mut Vec<Transfer>,
) -> Peaks {
    use PhaseKind as K;
    let channels = hosted_channels(params, plan.channels, HEAVIEST_TOPSP);
    let table = DescTable::new(plan, &channels);
    let hosted = channels.len() as u64;
    let mesh = phase.alg.pattern() == Some(DevicePattern::Mesh);
    let mut exact = bound;
    let mut count_descriptors = bound.descriptors > DESCRIPTORS_MAX;
    let mut count_target = bound.target > TARGET_MAX;
    if count_target && (!mesh || phase.step_n == 1 && phase.kind != K::PointToPoint) {
        exact.target = event_target(phase, pattern_blocks(plan, phase).1, hosted);
        count_target = false;
    }
    let ring = matches!(
        phase.kind,
        K::RingReduceScatter { .. }
            | K::RingAllGather { .. }
            | K::RingAllReduceFused
            | K::RingBroadcast { .. }
            | K::RingReduce { .. }
    );
    if count_descriptors && ring && phase.step_n > 0 {
        let inst = plan.instance(phase, 0);
        exact.descriptors = table.count(0, inst.universe.piece(inst.scope.k.max(1), 0), Halves::Both);
        count_descriptors = false;
    }
    if !count_descriptors && !count_target {
        return exact;
    }
    let (mut descriptors, mut target) = (0u64, 0u64);
    let mut targets: Vec<(u32, u64)> = Vec::new();
    for member in 0..plan.groups.size() {
        let inst = plan.instance(phase, member);
        targets.clear();
        for t in 0..phase.step_n {
            out.clear();
            transfers::<false>(plan, shape, 0, phase, inst, t, out);
            if count_descriptors {
                let (m2s, s2m) = table.step(member, out);
                descriptors = descriptors.max(m2s).max(s2m);
            }
            if !count_target {
                continue;
            }
            for tr in out.iter().filter(|tr| tr.to == member && tr.from != member) {
                let n = u64::from(tr.dst.count) * u64::from(tr.halves.count()) * hosted;
                match targets.iter_mut().find(|(peer, _)| *peer == tr.from) {
                    Some((_, sum)) => *sum = sum.saturating_add(n),
                    None => targets.push((tr.from, n)),
                }
            }
        }
        target = targets.iter().fold(target, |most, &(_, n)| most.max(n));
    }
    if count_descriptors {
        exact.descriptors = descriptors;
    }
    if count_target {
        exact.target = target;
    }
    exact
}
