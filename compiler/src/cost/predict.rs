//! The prediction: a walk over the schedule ccc builds, step by step,
//! charging each step the α-β-γ (Hockney) cost of what the busiest
//! sampled member moves in it (`docs/cost-model.md` §1).
//!
//! Per step and member: α of the widest hop the member's transfers take
//! (inside a node, across nodes, across pods); β: the slowest of its
//! intra-node link loads (bytes times links crossed, per ring direction),
//! its bytes over its share of the node's network (shared by the node's
//! concurrent flows), and all its bytes through the DMA of the TOP_SPs its
//! channels run on; γ: the
//! elements it folds, at the reduction rate; the descriptors its busiest
//! TOP_SP posts; and a fan-in charge per extra incoming peer. A step costs
//! its most expensive sampled member (steps are synchronous); a phase is
//! the sum of its steps; the collective adds one launch cost.
//!
//! The walk's shortcuts, each giving the plain walk's numbers to the bit
//! (`predict_every_step` is the reference, `cost/tests.rs` compares):
//! steps that cost alike walked once (`StepClasses`), a direct step's
//! load named from its pattern (`direct.rs`), a phase's network flows
//! counted once a choice and only when a step needs them (`flows.rs`),
//! a prediction skipping a member whose load is an earlier one's
//! (`twins.rs`), block elements and descriptors read when every block is
//! alike (`DescTable::every_block`), and, for `Auto`, a prediction's
//! member 0 taking the loads its floor found (`First`;
//! `docs/cost-model-revisions.md`).

use crate::placement::hosted_channels;
use crate::schedule::{CollectivePlan, DescTable, EveryBlock, Phase, PhaseInstance, Schedule, Transfer};
use crate::valid::Shape;
use ccc_ir::enums::{AlgType, Neigh};
use ccc_ir::model::ModelParams;
use ccc_ir::spec::Leg;
use serde::Serialize;

/// Phases longer than this are costed on this many evenly spread steps,
/// scaled up (a ring's steps all cost the same).
const SAMPLED_STEPS: u32 = 16;

/// A rooted ring's chain of at most this many steps ([`walked_steps`])
/// has every step costed.
const CHAIN_WALKED_STEPS: u32 = 128;

/// The kind of link a transfer takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Hop {
    /// Inside a node (or a local copy).
    Intra,
    /// Between nodes of one pod.
    Inter,
    /// Between pods.
    Pod,
}

impl Hop {
    /// The hop a transfer between ranks of relation `neigh` takes.
    pub(crate) fn of(neigh: Neigh) -> Hop {
        match neigh {
            Neigh::PeerRmtv | Neigh::Gateway | Neigh::NextPeerRmtv => Hop::Inter,
            Neigh::PeerRmtv2 => Hop::Pod,
            Neigh::Local | Neigh::PeerLocal | Neigh::Next | Neigh::Prev => Hop::Intra,
        }
    }

    /// A step's latency over this hop, ns: its own α, and at least that of
    /// every narrower hop (a message to another node crosses its own node
    /// too), so that a wider hop never costs less than a narrower one,
    /// whatever a `model:` override sets.
    pub(crate) fn alpha_ns(self, p: &ModelParams) -> f64 {
        let intra = p.alpha_intra_ns;
        match self {
            Hop::Intra => intra,
            Hop::Inter => p.alpha_inter_ns.max(intra),
            Hop::Pod => p.alpha_pod_ns.max(p.alpha_inter_ns).max(intra),
        }
    }

    /// The name used in tables.
    pub const fn name(self) -> &'static str {
        match self {
            Hop::Intra => "intra",
            Hop::Inter => "inter",
            Hop::Pod => "pod",
        }
    }
}

/// The predicted cost of one phase.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseCost {
    /// Position in the collective's phases.
    pub index: usize,
    /// The pattern, as [`PhaseKind::name`](crate::schedule::PhaseKind::name) spells it (`ring_reduce_scatter`, ...).
    pub pattern: &'static str,
    /// The hierarchical leg, if any.
    pub leg: Option<Leg>,
    /// The algorithm.
    pub alg: AlgType,
    /// Steps.
    pub steps: u32,
    /// The widest hop any step takes.
    pub hop: Hop,
    /// Bytes the busiest sampled member sends over the phase.
    pub bytes: f64,
    /// Predicted start, from the collective's start (after launch), ns.
    pub start_ns: f64,
    /// Predicted duration, ns: the sum of the four terms below.
    pub time_ns: f64,
    /// Of which α: per-step latency, ns.
    pub alpha_ns: f64,
    /// Of which β: bytes over link rates, ns.
    pub beta_ns: f64,
    /// Of which γ: reductions, ns.
    pub gamma_ns: f64,
    /// Of which overheads: descriptors and fan-in, ns.
    pub overhead_ns: f64,
}

/// The predicted cost of one collective.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The fixed launch cost, ns (`launch_ns`, plus `launch_inter_ns` when
    /// the groups span nodes).
    pub launch_ns: f64,
    /// Per phase, in order.
    pub phases: Vec<PhaseCost>,
    /// Launch plus every phase, ns.
    pub total_ns: f64,
}

impl Prediction {
    /// The time of the phases of `leg` (`None`: a flat algorithm's), ns.
    pub fn leg_ns(&self, leg: Option<Leg>) -> f64 {
        // `+ 0.0`: an empty sum is -0.0, which would print as `-0.00`.
        self.phases.iter().filter(|p| p.leg == leg).map(|p| p.time_ns).sum::<f64>() + 0.0
    }
}

/// What one member moves in one step. Each per-side array is indexed
/// by [`SENT`] and [`HEARD`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct StepLoad {
    /// Bytes per side and hop kind: [intra, inter, pod]. Intra-node bytes
    /// are link loads: bytes times the links they cross, on the busier of
    /// the node ring's two directions (see [`load::ring_hops`]).
    hops: [[f64; 3]; 2],
    /// Intra-node link loads per side and direction (clockwise,
    /// counter-clockwise, either way: [`load::ring_hops`]).
    ring: [[f64; 3]; 2],
    /// Bytes per side, whatever the link (the DMA moves them all).
    moved: [f64; 2],
    /// The widest hop taken.
    hop: Option<Hop>,
    /// Elements folded.
    folded: f64,
    /// Descriptors posted on the busiest TOP_SP, per side.
    desc: [u64; 2],
    /// Distinct senders to this member.
    sender_n: usize,
}

/// The side of a [`StepLoad`] that counts what the member sends.
const SENT: usize = 0;
/// The side of a [`StepLoad`] that counts what the member hears.
const HEARD: usize = 1;

impl StepLoad {
    /// The bytes its busier side moves off the node (to other nodes and
    /// pods), what the network term charges.
    fn off_node(&self) -> f64 {
        let [out, inn] = self.hops;
        (out[1] + out[2]).max(inn[1] + inn[2])
    }

    /// Adds to `side` one transfer of `bytes` (and `desc` descriptors) over
    /// a `hop`; inside a node, in ring direction `dir` across `links`.
    fn add_side(&mut self, side: usize, hop: Hop, dir: usize, links: f64, bytes: f64, desc: u64) {
        self.moved[side] += bytes;
        if hop == Hop::Intra {
            self.ring[side][dir] += bytes * links;
        } else {
            self.hops[side][hop as usize] += bytes;
        }
        self.desc[side] = self.desc[side].saturating_add(desc);
    }
}

/// Predicts collective `plan` of `schedule` under `params`: of each of
/// its costed groups ([`Groups::costed`](crate::valid::Groups::costed)),
/// its phases walked, and the slowest's prediction (the groups run at
/// once; the first of the slowest wins a tie).
pub fn predict(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> Prediction {
    predict_slowest(schedule, plan, params, Reference::default())
}

/// How a reference walk departs from [`predict()`]'s (the tests' slower
/// walks the shortcuts are checked against); the default departs in
/// nothing.
#[derive(Clone, Copy, Default)]
struct Reference {
    /// Walk every sampled step, even those that cost alike.
    every_step: bool,
    /// Cost every member of the group, not the sampled ones.
    every_member: bool,
    /// The steps walked a phase where not [`walked_steps`]'s.
    step_cap: Option<u32>,
}

/// [`predict()`] walking every sampled step, even those that cost alike
/// (`StepClasses`): the reference the shortcut is tested against.
#[cfg(test)]
pub(crate) fn predict_every_step(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> Prediction {
    predict_slowest(schedule, plan, params, Reference { every_step: true, ..Reference::default() })
}

/// [`predict_every_step`] costing every member of the group, not the
/// sampled ones: the reference the sampling is tested against (a step
/// costs its most expensive member; the sampled members must include one
/// as expensive at every sampled step).
#[cfg(test)]
pub(crate) fn predict_every_member(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> Prediction {
    predict_slowest(schedule, plan, params, Reference { every_step: true, every_member: true, step_cap: None })
}

/// [`predict_every_member`] walking every step of every phase, none
/// sampled: what the sampled steps stand for.
#[cfg(test)]
pub(crate) fn predict_every_member_and_step(
    schedule: &Schedule,
    plan: &CollectivePlan,
    params: &ModelParams,
) -> Prediction {
    let every = Reference { every_step: true, every_member: true, step_cap: Some(u32::MAX) };
    predict_slowest(schedule, plan, params, every)
}

/// The slowest of `plan`'s costed groups' predictions, each walked as
/// `how` says, all with the launch cost of the group spread widest (the
/// first costed: the collective launches once).
fn predict_slowest(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams, how: Reference) -> Prediction {
    let launch = launch_ns(schedule, plan, params);
    let mut slowest: Option<Prediction> = None;
    for &g in plan.groups.costed() {
        let other;
        let costed = if g == plan.groups.modelled() {
            plan
        } else {
            other = CollectivePlan { groups: plan.groups.costing(g), ..plan.clone() };
            &other
        };
        let mut cx = PlanCx::new(schedule, costed, params);
        if how.every_member {
            cx.members = (0..costed.groups.size()).collect();
        }
        let walk = Walk::new(schedule, costed, params, &cx);
        let p = predict_walking(Walk { walk_every_step: how.every_step, step_cap: how.step_cap, ..walk }, launch);
        if slowest.as_ref().is_none_or(|s| p.total_ns > s.total_ns) {
            slowest = Some(p);
        }
    }
    slowest.unwrap_or(Prediction { launch_ns: launch, total_ns: launch, phases: Vec::new() })
}

fn predict_walking(mut walk: Walk<'_>, launch: f64) -> Prediction {
    let plan = walk.plan;
    let mut phases = Vec::with_capacity(plan.phases.len());
    let mut at = 0.0;
    for (index, phase) in plan.phases.iter().enumerate() {
        let cost = walk.phase(index, phase, at);
        at += cost.time_ns;
        phases.push(cost);
    }
    Prediction { launch_ns: launch, total_ns: launch + at, phases }
}

/// A collective's fixed launch cost, ns: `launch_ns`, plus
/// `launch_inter_ns` when its groups span nodes.
pub(crate) fn launch_ns(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> f64 {
    let spans = super::nodes_spanned(schedule, plan) > 1;
    params.launch_ns + if spans { params.launch_inter_ns } else { 0.0 }
}

/// The time of each phase of a plan, or a floor under it, costed phase
/// by phase on one walk (its descriptor table and sampled members built
/// once for all the ranges asked): what `Auto` uses to cost a
/// hierarchical leg once for every combination it appears in.
///
/// A time is exactly what [`predict()`] gives the phase (a phase's cost
/// does not depend on the phases before it). A floor is no more than
/// that, and cheaper: a phase's time is the sum over its sampled steps of
/// its most expensive sampled member's cost; the floor costs member 0
/// (always sampled) alone, so each step's term is at most the step's, and
/// counts the network flows the pattern names
/// ([`sends_off_from_pattern`](flows::sends_off_from_pattern)) but at most
/// [`FLOOR_WALKED`](flows::FLOOR_WALKED) of the others, so each flow's
/// share of the network is at least the prediction's.
/// `Auto` predicts only the choices whose floor could still win
/// (`docs/cost-model.md` §4).
pub(crate) struct PhaseCoster<'a>(Walk<'a>);

impl<'a> PhaseCoster<'a> {
    /// Costs `plan`'s phases: their predicted times, or floors under them
    /// when `floor`; `cx` is [`PlanCx::new`] of `plan`.
    pub(crate) fn new(
        schedule: &'a Schedule,
        plan: &'a CollectivePlan,
        params: &'a ModelParams,
        cx: &'a PlanCx<'a>,
        floor: bool,
    ) -> Self {
        PhaseCoster(Walk { floor, ..Walk::new(schedule, plan, params, cx) })
    }

    /// This coster, taking each phase's network flows from `memo` (and
    /// counting them into it, its scratch buffers too): the same numbers,
    /// counted once for every candidate of one choice ([`FlowMemo`]). Its
    /// `cx` may then be that of any plan of the same collective (see
    /// [`PlanCx`]).
    pub(crate) fn with_memo(self, memo: &'a mut FlowMemo) -> Self {
        PhaseCoster(Walk { memo: Some(memo), ..self.0 })
    }

    /// This floor's coster, keeping in `out` the load of the first costed
    /// member (member 0) at every step it walks from the transfers
    /// ([`FirstLoads`]), for the prediction of the same phases to take.
    pub(crate) fn recording(self, out: &'a mut FirstLoads) -> Self {
        PhaseCoster(Walk { first: First::Record(out), ..self.0 })
    }

    /// This prediction's coster, taking the first costed member's loads
    /// from `loads`, which a floor of the same phases of the same plan
    /// recorded ([`PhaseCoster::recording`]).
    pub(crate) fn replaying(self, loads: &'a [FirstLoad]) -> Self {
        PhaseCoster(Walk { first: First::Replay(loads, 0), ..self.0 })
    }

    /// This coster as the reference the shortcuts are tested against:
    /// every sampled step walked, every transfer generated, every phase's
    /// flows counted up front.
    #[cfg(test)]
    pub(crate) fn every_step(self) -> Self {
        PhaseCoster(Walk { walk_every_step: true, ..self.0 })
    }

    /// The phases at `indices`, each costed alone, appended to `out` in
    /// run order (`Auto` keeps every leg's in one vector).
    pub(crate) fn times(&mut self, indices: std::ops::Range<usize>, out: &mut Vec<f64>) {
        self.0.times(indices, out);
    }

    /// Every phase, each costed alone, in run order (the tests compare
    /// phase by phase; a sum is [`PhaseCoster::total`]).
    #[cfg(test)]
    pub(crate) fn every_time(&mut self) -> Vec<f64> {
        let mut out = Vec::new();
        self.0.times(0..self.0.plan.phases.len(), &mut out);
        out
    }

    /// The sum of the phases' times (the tests' `every_time`), added in
    /// run order as [`predict()`] adds them.
    pub(crate) fn total(&mut self) -> f64 {
        let plan = self.0.plan;
        let mut at = 0.0;
        for (index, phase) in plan.phases.iter().enumerate() {
            at += self.0.phase(index, phase, 0.0).time_ns;
        }
        at
    }
}

/// What walking a plan reads that every plan of one collective shares,
/// whichever algorithm composed it: the descriptor table (the layout reads
/// the op, group size, count, counts, dtype and channels only), the
/// sampled members (the group size and root) and the DMA rate (the arch
/// and channels). `Auto` makes it once for all its candidates
/// (`cost/tests.rs` checks that a candidate costs the same on another's).
pub(crate) struct PlanCx<'a> {
    table: DescTable<'a>,
    /// The table's [`DescTable::every_block`], read once.
    every: Option<EveryBlock>,
    /// The members costed ([`costed_members`]).
    members: Vec<u32>,
    /// Every member, where a phase may need them all: a shape that is not
    /// regular, of at most [`EVERY_MEMBER_MAX`] members ([`uneven_rdh`]);
    /// else empty.
    all: Vec<u32>,
    dma: f64,
}

impl<'a> PlanCx<'a> {
    /// The context of `plan` of `schedule`.
    pub(crate) fn new(schedule: &Schedule, plan: &'a CollectivePlan, params: &ModelParams) -> Self {
        let arch = schedule.arch.params();
        let busiest = hosted_channels(arch, plan.channels, 0);
        let lanes = f64::from(plan.channels.min(arch.topsp_n).max(1));
        let table = DescTable::new(plan, &busiest);
        let members = costed_members(&schedule.shape, plan);
        let n = plan.groups.size();
        let all = if !regular(&schedule.shape, plan) && n <= EVERY_MEMBER_MAX { (0..n).collect() } else { Vec::new() };
        PlanCx { every: table.every_block(), table, members, all, dma: params.dma * lanes }
    }

    /// The DMA rate a walk on this context charges, bytes/s (`Auto`'s
    /// pre-floor reads it).
    pub(crate) fn dma(&self) -> f64 {
        self.dma
    }
}

/// Buffers a walk fills and empties at every step, kept across walks
/// where they share a [`FlowMemo`].
#[derive(Default)]
pub(crate) struct Scratch {
    /// A step's transfers.
    buf: Vec<Transfer>,
    /// A step's distinct senders.
    senders: Vec<u32>,
    /// The costed members placed around the phase walked.
    insts: Vec<PhaseInstance>,
    /// Which of them a prediction skips in that phase, as a bit mask by
    /// position: their load is an earlier one's ([`twins`]).
    twins: u32,
    /// Whether that phase's loads are named from its pattern
    /// (`direct::names`), asked once a phase.
    direct: bool,
}

/// What costing a plan's phases shares: the plan and its [`PlanCx`].
struct Walk<'a> {
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    params: &'a ModelParams,
    cx: &'a PlanCx<'a>,
    /// The cap on the links an intra-node transfer crosses, as
    /// [`LoadCx::cap`] reads it, worked out once for the walk.
    cap: Cap,
    /// Scratch when no memo lends its own.
    own: Scratch,
    /// The phase whose placement [`Scratch::insts`] holds for this walk's
    /// costed members, if any: a phase placed as it ([`Phase::placed_as`],
    /// as recursive halving's rounds are) takes that placement instead of
    /// placing the members again.
    placed: Option<&'a Phase>,
    /// Where the first costed member's loads are kept or taken from.
    first: First<'a>,
    /// Cost a floor, not the prediction ([`PhaseCoster`]).
    floor: bool,
    /// Where the phases' network flows are kept across walks, if anywhere.
    memo: Option<&'a mut FlowMemo>,
    /// Walk every sampled step, even those that cost alike, and generate
    /// every transfer, even a direct step's (the reference the shortcuts
    /// are tested against).
    walk_every_step: bool,
    /// How many steps of a phase are walked, where not
    /// [`walked_steps`]'s (the tests' reference walks them all).
    step_cap: Option<u32>,
}

impl<'a> Walk<'a> {
    fn new(schedule: &'a Schedule, plan: &'a CollectivePlan, params: &'a ModelParams, cx: &'a PlanCx<'a>) -> Walk<'a> {
        let cap = Cap::of(params.hops_max);
        let own = Scratch::default();
        let first = First::Neither;
        Walk {
            schedule,
            plan,
            params,
            cx,
            cap,
            own,
            placed: None,
            first,
            floor: false,
            memo: None,
            walk_every_step: false,
            step_cap: None,
        }
    }

    /// The times of the phases at `indices`, each costed alone, appended
    /// to `out`.
    fn times(&mut self, indices: std::ops::Range<usize>, out: &mut Vec<f64>) {
        let plan = self.plan;
        let phases = plan.phases.get(indices.clone()).unwrap_or_default();
        out.reserve(phases.len());
        for (phase, index) in phases.iter().zip(indices) {
            out.push(self.phase(index, phase, 0.0).time_ns);
        }
    }

    /// The cost of phase `index`, starting at `start_ns`.
    fn phase(&mut self, index: usize, phase: &'a Phase, start_ns: f64) -> PhaseCost {
        // The network's rate is counted when a step first needs it
        // ([`Walk::step`]); the reference counts it up front.
        let mut network = None;
        if self.walk_every_step {
            let flows = node_flows(self.schedule, self.plan, phase, &mut self.own.buf, self.floor).flows;
            network = Some(self.params.node_inter / flows);
        }
        let walked = self.step_cap.unwrap_or_else(|| walked_steps(phase));
        let (picked, weight) = sampled_steps(phase.step_n, walked);
        let classes = if self.walk_every_step { StepClasses::None } else { self.classes(phase) };
        // The first walked step of each class, weighted, reused for the
        // others: its products with the weight are the ones every step of
        // the class would compute, so adding them is adding the step's.
        let mut walked: [Option<Weighted>; 2] = [None, None];
        let (mut terms, mut bytes, mut hop) = (Terms::default(), 0.0f64, Hop::Intra);
        // The costed members are placed once for the phase, at its first
        // walked step.
        let mut placed = false;
        let mut picked = picked.peekable();
        while let Some(t) = picked.next() {
            let class = classes.of(t);
            let w = match class.and_then(|c| walked[c]) {
                Some(w) => w,
                None => {
                    let w = self.step((index, phase), t, &mut network, &mut placed).weighted(weight);
                    if let Some(c) = class {
                        walked[c] = Some(w);
                    }
                    w
                }
            };
            // The sampled steps right after it of its class add the same
            // `w`: counted first, then added in a tight loop, the very
            // additions in the very order the step-by-step loop makes.
            let run = match (class, classes) {
                (None, _) => 0,
                (Some(_), StepClasses::One) => picked.by_ref().count(),
                (Some(c), _) => std::iter::from_fn(|| picked.next_if(|&u| classes.of(u) == Some(c))).count(),
            };
            for _ in 0..=run {
                hop = hop.max(w.hop);
                terms.plus(&w.terms);
                bytes += w.sent;
            }
        }
        PhaseCost {
            index,
            pattern: phase.kind.name(),
            leg: phase.leg,
            alg: phase.alg,
            steps: phase.step_n,
            hop,
            bytes,
            start_ns,
            time_ns: terms.total(),
            alpha_ns: terms.alpha,
            beta_ns: terms.beta,
            gamma_ns: terms.gamma,
            overhead_ns: terms.overhead,
        }
    }
}

impl<'a> Walk<'a> {
    /// Step `t` of `phase` costed for every sampled member: its most
    /// expensive member's terms, the most any member sends, the widest hop.
    /// The members are placed around the phase ([`Scratch::insts`]) unless
    /// `placed` says they already are.
    ///
    /// `network` is this flow's share of the node's network, bytes/s,
    /// once counted: it is counted ([`node_flows`]) when a member first
    /// moves bytes off its node. Until then the network term is 0,
    /// as it is at any positive rate (see [`no_flows_needed`]).
    fn step(
        &mut self,
        (index, phase): (usize, &'a Phase),
        t: u32,
        network: &mut Option<f64>,
        placed: &mut bool,
    ) -> StepCost {
        let mut cost = StepCost { worst: Terms::default(), sent: 0.0, hop: Hop::Intra };
        let (schedule, plan, table, params) = (self.schedule, self.plan, &self.cx.table, self.params);
        let named = !self.walk_every_step;
        // The reference works out every block's elements and descriptors.
        let every = if named { self.cx.every } else { None };
        let cx = LoadCx { schedule, plan, table, cap: self.cap, named, floor: self.floor, every };
        // A floor costs member 0 (the first sampled member) alone.
        // A halving or doubling over a scope that is not a power of two
        // costs every member where the shape allows ([`PlanCx::all`]).
        let every = !self.floor && !self.cx.all.is_empty() && uneven_rdh(plan, phase);
        let members = if every { &self.cx.all } else { &self.cx.members };
        let costed = if self.floor { &members[..members.len().min(1)] } else { &members[..] };
        let (memo, floor) = (self.memo.as_deref_mut(), self.floor);
        let (mut memo, scratch) = match memo {
            Some(memo) => {
                let (memo, scratch) = memo.split();
                (Some(memo), scratch)
            }
            None => (None, &mut self.own),
        };
        if !*placed {
            // The reference places every phase afresh.
            // (Placed for the same members: the sample's, or every one.)
            let alike = named
                && self.placed.is_some_and(|before| phase.placed_as(before))
                && scratch.insts.len() == costed.len();
            if !alike {
                scratch.insts.clear();
                scratch.insts.extend(costed.iter().map(|&m| plan.instance(phase, m)));
            }
            // A prediction costs no member whose load is an earlier one's
            // (the reference costs every one).
            let look = named && !floor && twins::may_have_twins(plan, table, phase);
            scratch.twins = if look { twins::of(&schedule.shape, costed, &scratch.insts) } else { 0 };
            scratch.direct = named && direct::names(plan, phase);
            self.placed = Some(phase);
            *placed = true;
        }
        for (i, (&m, &inst)) in costed.iter().zip(&scratch.insts).enumerate() {
            if twins::is_set(scratch.twins, i) {
                continue;
            }
            let named = scratch.direct.then(|| direct::load(&cx, phase, m, inst)).flatten();
            // The first costed member's load from the transfers, as the
            // floor of this very step found it (`First`).
            let load = match named {
                Some(load) => load,
                None => match if i == 0 { self.first.take(index, t) } else { None } {
                    Some(load) => load,
                    None => {
                        let load = step_load(&cx, m, phase, inst, t, &mut scratch.buf, &mut scratch.senders);
                        if i == 0 {
                            self.first.keep(index, t, &load);
                        }
                        load
                    }
                },
            };
            let network = match *network {
                Some(rate) => rate,
                None if no_flows_needed(&load, params) => params.node_inter,
                None => {
                    let flows = match memo.as_deref_mut() {
                        Some(memo) => memo.flows(schedule, plan, phase, &mut scratch.buf, floor),
                        None => node_flows(schedule, plan, phase, &mut scratch.buf, floor).flows,
                    };
                    *network.insert(params.node_inter / flows)
                }
            };
            let rates = Rates { link: params.link_intra, network, dma: self.cx.dma };
            let terms = step_terms(&load, params, &rates);
            if terms.total() > cost.worst.total() {
                cost.worst = terms;
            }
            cost.sent = cost.sent.max(load.moved[SENT]);
            cost.hop = cost.hop.max(load.hop.unwrap_or(Hop::Intra));
        }
        cost
    }

    /// Which steps of `phase` cost alike (see [`StepClasses`]).
    ///
    /// A ring reduce-scatter or all-gather step (one or both directions)
    /// has every member send one piece to a ring neighbour and receive one
    /// from the other, the same neighbours, halves and folds at every
    /// step; only which piece moves changes. When every block of every
    /// member holds the same elements ([`DescTable::position_free`]), a
    /// piece's bytes and descriptors do not depend on which piece it is,
    /// so every step's load is the same for every member. The single-cycle
    /// ring runs `k - 1` reduce-scatter steps, then all-gather steps: two
    /// classes, split where its scope size says (the same `k` for every
    /// sampled member, or no classes).
    fn classes(&self, phase: &Phase) -> StepClasses {
        use crate::schedule::PhaseKind as K;
        if !self.cx.table.position_free() {
            return StepClasses::None;
        }
        match phase.kind {
            K::RingReduceScatter { .. } | K::RingAllGather { .. } => StepClasses::One,
            // Every member's scope has the size its placer gives
            // (`ScopePlacer::around` keeps it), so one placement says it.
            K::RingAllReduceFused => {
                StepClasses::Split(phase.scope.placer(&self.plan.radices).around(0).k.saturating_sub(1))
            }
            _ => StepClasses::None,
        }
    }
}

/// Whether `load`'s network term is the same whatever the phase's flows,
/// so that they need not be counted: it moves no byte off its node, and
/// the network's rate shared by any number of flows is positive (the
/// network term is then `0 / rate = 0`; a flow count is a `u32`).
fn no_flows_needed(load: &StepLoad, params: &ModelParams) -> bool {
    load.off_node() == 0.0 && params.node_inter / f64::from(u32::MAX) > 0.0
}

/// One step's cost over the sampled members.
#[derive(Clone, Copy)]
struct StepCost {
    /// The terms of its most expensive member.
    worst: Terms,
    /// The most bytes a member sends.
    sent: f64,
    /// The widest hop a member takes.
    hop: Hop,
}

impl StepCost {
    /// This step's share of its phase, each sampled step standing for
    /// `weight` steps.
    fn weighted(&self, weight: f64) -> Weighted {
        let w = &self.worst;
        let terms = Terms {
            alpha: w.alpha * weight,
            beta: w.beta * weight,
            gamma: w.gamma * weight,
            overhead: w.overhead * weight,
        };
        Weighted { terms, sent: self.sent * weight, hop: self.hop }
    }
}

/// A [`StepCost`] times its weight: what the phase adds for the step.
#[derive(Clone, Copy)]
struct Weighted {
    terms: Terms,
    sent: f64,
    hop: Hop,
}

/// The load of a floor's costed member (member 0, the first sampled
/// member, which a prediction costs first too) at one step it walked from
/// the transfers: phase `index` of the plan, step `t`.
#[derive(Clone, Copy)]
pub(crate) struct FirstLoad {
    index: usize,
    t: u32,
    load: StepLoad,
}

/// A floor's [`FirstLoad`]s, in the order it walked them.
pub(crate) type FirstLoads = Vec<FirstLoad>;

/// Where a walk keeps or finds its first costed member's loads. A floor
/// and a prediction of the same phases of one plan walk the same steps
/// (the sampled ones, one a class of steps that cost alike) in the same
/// order, and a load from the transfers (`step_load`) reads neither the
/// network nor whether it is a floor, so the prediction's first member
/// has, at every such step, the load the floor found: it takes it instead
/// of generating the step again. Each kept load names its phase and step,
/// and one that does not match is not taken (the step is walked).
/// Direct steps' loads are not kept: a floor may count peers that a
/// prediction visits (`direct::Sides::add_all`).
enum First<'a> {
    Neither,
    Record(&'a mut FirstLoads),
    /// The loads, and how many steps have been walked.
    Replay(&'a [FirstLoad], usize),
}

impl First<'_> {
    /// The load kept for phase `index`'s step `t`, when replaying one.
    fn take(&mut self, index: usize, t: u32) -> Option<StepLoad> {
        let First::Replay(loads, at) = self else { return None };
        let kept = loads.get(*at).filter(|k| k.index == index && k.t == t).map(|k| k.load);
        *at += 1;
        kept
    }

    /// Keeps `load`, phase `index`'s step `t`, when recording.
    fn keep(&mut self, index: usize, t: u32, load: &StepLoad) {
        if let First::Record(out) = self {
            out.push(FirstLoad { index, t, load: *load });
        }
    }
}

/// Which steps of a phase cost exactly alike, so that only the first
/// sampled step of each class is walked and its [`StepCost`] reused: the
/// same values added in the same order, so the phase's time is the one
/// walking every sampled step gives, to the bit (`cost/tests.rs` checks it
/// over random specs).
#[derive(Clone, Copy)]
enum StepClasses {
    /// Every step is walked.
    None,
    /// Every step costs alike.
    One,
    /// The steps before this one cost alike, and the steps from it.
    Split(u32),
}

impl StepClasses {
    /// The class of step `t` (`None`: walk it).
    fn of(self, t: u32) -> Option<usize> {
        match self {
            StepClasses::None => None,
            StepClasses::One => Some(0),
            StepClasses::Split(at) => Some(usize::from(t >= at)),
        }
    }
}

/// Groups of at most this many members whose shape is irregular
/// ([`regular`]) have every member costed where the sample does not take
/// each role at its dearest ([`costed_members`], [`uneven_rdh`]).
const EVERY_MEMBER_MAX: u32 = 512;

/// The group members costed in every phase: on a shape whose roles sit
/// anywhere (explicit groups, a root, a peer map, per-pair counts), every
/// member up to [`EVERY_MEMBER_MAX`] of them; else the sample
/// ([`sample_members`]), which takes every role at its dearest on the
/// world group in rank order but in a halving over a scope that is not a
/// power of two ([`uneven_rdh`]).
fn costed_members(shape: &Shape, plan: &CollectivePlan) -> Vec<u32> {
    let n = plan.groups.size();
    if placed_anywhere(plan) && n <= EVERY_MEMBER_MAX {
        return (0..n).collect();
    }
    sample_members(shape, plan)
}

/// Whether `plan`'s roles may sit at any member: explicit groups (their
/// members anywhere), a root (which chain edge crosses a node depends on
/// it), a peer map (which pair is the widest depends on the map) or
/// per-pair counts (the busiest member is any one).
fn placed_anywhere(plan: &CollectivePlan) -> bool {
    plan.groups.is_explicit() || plan.root.is_some() || !plan.peers.pairs.is_empty() || plan.counts.is_some()
}

/// Whether every member of `plan`'s groups takes one of a few roles, each
/// at the same cost wherever it sits but for the node and pod boundaries
/// at the ends of the group: the world group in rank order, a power of
/// two of ranks on nodes of a power of two, no root, peer map or per-pair
/// counts (`cost/tests.rs` compares every member against the sample).
fn regular(shape: &Shape, plan: &CollectivePlan) -> bool {
    plan.groups.size().is_power_of_two() && shape.local_rank_n.is_power_of_two() && !placed_anywhere(plan)
}

/// Whether `phase` is a recursive halving or doubling phase (its
/// prologue, epilogue and binomial trees too) over a scope that is not a
/// power of two: its participants speak for one or two members and pair
/// across a node depending on how the extra members fold in, so on the
/// world group too the sample may miss the dearest (100 ranks of 20 a
/// node were predicted at under half their cost).
fn uneven_rdh(plan: &CollectivePlan, phase: &Phase) -> bool {
    phase.kind.is_rdh() && !plan.instance(phase, 0).scope.k.is_power_of_two()
}

/// The sampled members: the first two, the middle, the last, and the
/// root, which take every role of every pattern ccc builds on a regular
/// shape ([`regular`]: an RDH prologue's giver and taker, a rank outside
/// it, a tree's root); and, for larger irregular ones, those whose place
/// makes a role dearer than where the others sit ([`boundary_members`],
/// [`peer_members`], [`count_members`]) and a chain's ends (the members
/// after and before the root).
fn sample_members(shape: &Shape, plan: &CollectivePlan) -> Vec<u32> {
    let n = plan.groups.size().max(1);
    let mut m = vec![0, 1, n / 2, n - 1];
    if let Some(root) = plan.root {
        m.extend([root, (root + 1) % n, (root + n - 1) % n]);
    }
    boundary_members(shape, plan, &mut m);
    peer_members(shape, plan, &mut m);
    count_members(plan, &mut m);
    m.retain(|&x| x < n);
    m.sort_unstable();
    m.dedup();
    m
}

/// The members on both sides of the node (and pod) boundaries a role
/// is dearest at, where the first two, the middle and the last do not
/// stand for them.
///
/// A chain (a rooted ring: a reduce ends at its root, a broadcast starts
/// there) is pipelined: at step `t` the members `t - k + 1` to `t` along
/// it forward, so which of them cross a node depends on where the chain's
/// first and last crossing are; those are the boundaries nearest the root
/// on either side, two each way (one of the nearest may be the edge the
/// chain leaves out). On explicit groups, whose members may sit anywhere,
/// the first boundary in member order stands for a ring's crossing (every
/// member moves at every step). A world group's ring crosses at the last
/// member to the first, sampled already.
///
/// Each scan stops at the boundaries it wants; a node (a pod) holds at
/// most `local_rank_n` members in a row, so a scan is a node's (a pod's)
/// length, not the group's.
fn boundary_members(shape: &Shape, plan: &CollectivePlan, out: &mut Vec<u32>) {
    let n = plan.groups.size();
    let (root, explicit) = (plan.root.filter(|&r| r < n), plan.groups.is_explicit());
    if n < 3 || (root.is_none() && !explicit) {
        return;
    }
    let g = plan.groups.modelled();
    let place = |i: u32| plan.rank(g, i % n).map(|r| (shape.node(r.0), shape.pod(r.0)));
    for pods in [false, true] {
        if (pods && shape.pod_n <= 1) || shape.node_n <= 1 {
            continue;
        }
        let crosses = |&i: &u32| match (place(i), place(i + 1)) {
            (Some(a), Some(b)) if pods => a.1 != b.1,
            (Some(a), Some(b)) => a.0 != b.0,
            _ => false,
        };
        // Rooted: two boundaries ahead of the root and two behind it;
        // unrooted: the first in member order.
        let (from, ahead, behind) = match root {
            Some(r) => (r, 2, 2),
            None => (0, 1, 0),
        };
        let forward = (0..n - 1).map(|d| (from + d) % n).filter(crosses).take(ahead);
        let backward = (1..n).map(|d| (from + n - d) % n).filter(crosses).take(behind);
        out.extend(forward.chain(backward).flat_map(|i| [i, (i + 1) % n]));
    }
}

/// A peer map's (a permute's, a send's) costliest pairs: of each hop
/// (inside a node, across nodes, across pods) the first pair, inside a
/// node the one over the most links; their senders and receivers. Every
/// pair moves the same bytes, so the others of a hop cost no more; which
/// hop costs the most depends on the model (a pair over 4 links inside a
/// node may cost more than one across the network), so each is costed.
fn peer_members(shape: &Shape, plan: &CollectivePlan, out: &mut Vec<u32>) {
    let mut worst: [Option<(u32, (u32, u32))>; 3] = [None; 3];
    let g = plan.groups.modelled();
    for &(s, t) in &plan.peers.pairs {
        let (Some(a), Some(b)) = (plan.rank(g, s), plan.rank(g, t)) else { continue };
        let hop = Hop::of(crate::schedule::relation(shape, a, b));
        let links = if hop == Hop::Intra { load::ring_hops(shape.local_rank_n, a.0, b.0).1 as u32 } else { 0 };
        let slot = &mut worst[hop as usize];
        if slot.is_none_or(|(w, _)| links > w) {
            *slot = Some((links, (s, t)));
        }
    }
    for (_, (s, t)) in worst.into_iter().flatten() {
        out.extend([s, t]);
    }
}

/// An all-to-all with per-pair counts (AllToAllV): the member that sends
/// the most elements and the one that hears the most (the first on a tie).
fn count_members(plan: &CollectivePlan, out: &mut Vec<u32>) {
    let Some(counts) = &plan.counts else { return };
    // The position of the first largest sum.
    let first_most =
        |sums: Vec<u128>| sums.into_iter().enumerate().max_by_key(|&(i, v)| (v, std::cmp::Reverse(i))).map(|(i, _)| i);
    let rows = first_most(counts.iter().map(|row| row.iter().map(|&c| u128::from(c)).sum()).collect());
    let width = counts.iter().map(Vec::len).max().unwrap_or(0);
    let columns = first_most(
        (0..width).map(|j| counts.iter().map(|row| u128::from(row.get(j).copied().unwrap_or(0))).sum()).collect(),
    );
    out.extend([rows, columns].into_iter().flatten().filter_map(|i| u32::try_from(i).ok()));
}

/// The steps of a phase that are walked, in order, and the weight of each
/// (every step up to `sampled` of them, else that many evenly spread).
fn sampled_steps(step_n: u32, sampled: u32) -> (impl Iterator<Item = u32>, f64) {
    let sampled = sampled.max(1);
    let all = step_n <= sampled;
    let picked = (0..step_n.min(sampled))
        .map(move |i| if all { i } else { (u64::from(i) * u64::from(step_n) / u64::from(sampled)) as u32 });
    (picked, if all { 1.0 } else { f64::from(step_n) / f64::from(sampled) })
}

/// How many of `phase`'s steps are walked ([`sampled_steps`]): a rooted
/// ring's chain fills and drains, so which of its members cross a node
/// changes from step to step, and a chain of up to 65 members (at most
/// [`CHAIN_WALKED_STEPS`] steps) has every step walked; every other
/// pattern's steps cost alike or nearly, and a longer chain's are many
/// (each walked for every member of an irregular group): [`SAMPLED_STEPS`].
fn walked_steps(phase: &Phase) -> u32 {
    use crate::schedule::PhaseKind as K;
    match phase.kind {
        K::RingBroadcast { .. } | K::RingReduce { .. } if phase.step_n <= CHAIN_WALKED_STEPS => CHAIN_WALKED_STEPS,
        _ => SAMPLED_STEPS,
    }
}

/// The four terms of a step's (or a phase's) cost, ns.
#[derive(Clone, Copy, Debug, Default)]
struct Terms {
    alpha: f64,
    beta: f64,
    gamma: f64,
    overhead: f64,
}

impl Terms {
    fn total(&self) -> f64 {
        self.alpha + self.beta + self.gamma + self.overhead
    }
    fn plus(&mut self, other: &Terms) {
        self.alpha += other.alpha;
        self.beta += other.beta;
        self.gamma += other.gamma;
        self.overhead += other.overhead;
    }
}

/// The rates a step's bytes move at, bytes/s.
struct Rates {
    /// One direction of one intra-node link.
    link: f64,
    /// This flow's share of the node's network.
    network: f64,
    /// The DMA of the TOP_SPs the channels run on.
    dma: f64,
}

fn step_terms(load: &StepLoad, p: &ModelParams, rates: &Rates) -> Terms {
    let Some(hop) = load.hop else { return Terms::default() };
    let alpha = hop.alpha_ns(p);
    // The links run concurrently: the step waits for the slowest.
    // The links run concurrently; the DMA moves every byte. The step waits
    // for the slowest of the three.
    let [out, inn] = load.hops;
    let link = ModelParams::ns_at(out[0].max(inn[0]), rates.link);
    let network = ModelParams::ns_at(load.off_node(), rates.network);
    let dma = ModelParams::ns_at(load.moved[SENT].max(load.moved[HEARD]), rates.dma);
    let beta = link.max(network).max(dma);
    let gamma = if load.folded > 0.0 { load.folded / p.reduce_elems * 1e9 } else { 0.0 };
    let desc = load.desc[SENT].max(load.desc[HEARD]) as f64 * p.desc_ns;
    let fanin = load.sender_n.saturating_sub(1) as f64 * p.fanin_ns;
    Terms { alpha, beta, gamma, overhead: desc + fanin }
}

/// The cap on the links an intra-node transfer crosses
/// (`hops_max`, at least 1), and the same as a whole number when it is one
/// (a cap a `model:` override sets always is): what every step's loads read,
/// worked out once a walk.
#[derive(Clone, Copy)]
struct Cap {
    links: f64,
    whole: Option<u64>,
}

impl Cap {
    fn of(hops_max: f64) -> Cap {
        Cap { links: hops_max.max(1.0), whole: direct::whole_cap(hops_max) }
    }
}

mod direct;
mod flows;
mod load;
mod twins;
pub(crate) use flows::FlowMemo;
#[cfg(test)]
use flows::count_flows;
use flows::node_flows;
#[cfg(test)]
use flows::{SpanMemo, sends_off_from_partner, sends_off_from_pattern, sends_off_walked};
use load::{LoadCx, step_load};
pub(crate) use load::{ring_hops, ring_load};

#[cfg(test)]
mod tests;
