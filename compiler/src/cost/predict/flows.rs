//! How many flows share a node's network in a phase (`docs/cost-model.md`
//! §1, Network): from the pattern where it names them, else from the
//! transfers the phase generates; and [`FlowMemo`], which counts a phase
//! once for every candidate of one `Auto` choice that runs it.

use super::Scratch;
use crate::algorithms;
use crate::schedule::{CollectivePlan, Phase, PhaseKind, Radices, Schedule, Scope, ScopePlacer, Transfer};

/// A floor's network flows walk at most this many members of a node per
/// phase (the others counted as not sending: see [`node_flows`]).
pub(super) const FLOOR_WALKED: u32 = 8;

/// The network flows of the phases already counted for one `Auto` choice:
/// one collective on one machine, so the plans its candidates build share
/// their groups, shape, op, sizes, root and peers and differ only in their
/// radices and phases. A phase's flows are what its first step's transfers
/// (or its pattern) say about node 0's members, and those depend on the
/// plan's radices and the phase's kind, scope and narrowing scopes only
/// (the generators read no other phase: `algorithms::transfers`), so a
/// phase with the same four is counted once, for its floor and for its
/// prediction. A phase whose sends the pattern names ([`Sends`]) is
/// keyed by what it sends, its scope and the plan's radices, so that a ring's
/// reduce-scatter and all-gather, or a mesh's direct phases, over one
/// scope are counted once. Both counts are kept: a floor may walk fewer members
/// ([`FLOOR_WALKED`]). It also lends its walks one [`Scratch`]. It is
/// kept for one collective on one machine: across the choices a program's
/// equal collectives make from the same candidates
/// ([`Candidates`](crate::cost::auto::Candidates)), never between
/// collectives.
#[derive(Default)]
pub(crate) struct FlowMemo {
    counts: FlowCounts,
    scratch: Scratch,
}

/// The counts of a [`FlowMemo`].
#[derive(Default)]
pub(super) struct FlowCounts(Vec<Counted>);

impl FlowMemo {
    /// Its counts and its scratch, to use at once.
    pub(super) fn split(&mut self) -> (&mut FlowCounts, &mut Scratch) {
        (&mut self.counts, &mut self.scratch)
    }

    /// The flows a floor of `phase` of `plan` shares the node's network
    /// with (counted once, as a floor's walk counts them): what `Auto`'s
    /// pre-floor divides the network's rate by.
    pub(crate) fn floor_flows(&mut self, schedule: &Schedule, plan: &CollectivePlan, phase: &Phase) -> f64 {
        let (counts, scratch) = self.split();
        counts.flows(schedule, plan, phase, &mut scratch.buf, true)
    }
}

/// What a phase sends off its node, as [`FlowMemo`] keys it: where
/// [`sends_off_from_pattern`] names it (one of its arms, whatever the
/// narrowing), or the phase's kind and narrowing scopes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Sends {
    /// Every member of a scope spanning nodes sends off it: a direct
    /// reduce-scatter, all-gather, all-reduce or all-to-all.
    Everyone,
    /// To the next member, and to the previous one when `both`: a ring
    /// reduce-scatter or all-gather (`both`: a Kangaring's), and the
    /// single-cycle ring, whose first step is a reduce-scatter step.
    Ring { both: bool },
    /// Any other phase.
    Kind(PhaseKind, Narrowing),
}

/// A phase's narrowing scopes as [`Sends::Kind`] keys them: packed into
/// one number when they fit (every short narrowing ccc composes), so that
/// keying a phase allocates nothing and compares one number; else listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Narrowing {
    /// A leading 1 bit, then each scope's `lo` and `hi` in
    /// [`NARROW_BITS`] bits each, in order (distinct lists, distinct
    /// numbers).
    Packed(u64),
    /// Scopes whose digits or number do not fit.
    Listed(Vec<Scope>),
}

/// Bits a [`Narrowing::Packed`] gives each of a scope's two digits.
const NARROW_BITS: u32 = 2;

impl Narrowing {
    /// `narrow` packed, when every digit fits in [`NARROW_BITS`] bits and
    /// the whole, with its leading bit, in 64.
    pub(super) fn packed(narrow: &[Scope]) -> Option<u64> {
        let per_scope = 2 * NARROW_BITS;
        if narrow.len() >= (u64::BITS / per_scope) as usize {
            return None;
        }
        let fits = |d: u8| u32::from(d) < 1 << NARROW_BITS;
        narrow.iter().try_fold(1u64, |at, s| {
            (fits(s.lo) && fits(s.hi)).then(|| at << per_scope | u64::from(s.lo) << NARROW_BITS | u64::from(s.hi))
        })
    }

    /// The key of `narrow`.
    pub(super) fn of(narrow: &[Scope]) -> Narrowing {
        Narrowing::packed(narrow).map_or_else(|| Narrowing::Listed(narrow.to_vec()), Narrowing::Packed)
    }

    /// Whether this is the key of `narrow` (`packed`: its packing, worked
    /// out once by the caller).
    pub(super) fn is(&self, narrow: &[Scope], packed: Option<u64>) -> bool {
        match (self, packed) {
            (Narrowing::Packed(a), Some(b)) => *a == b,
            (Narrowing::Listed(a), None) => a == narrow,
            _ => false,
        }
    }
}

impl Sends {
    pub(super) fn of(phase: &Phase) -> Sends {
        Sends::named(phase.kind).unwrap_or_else(|| Sends::Kind(phase.kind, Narrowing::of(&phase.narrow)))
    }

    /// Whether `phase` sends as this says: the key [`Sends::of`] gives
    /// it, without building it.
    #[cfg(test)]
    pub(super) fn is(&self, phase: &Phase) -> bool {
        self.is_named(phase, Sends::named(phase.kind).as_ref(), Narrowing::packed(&phase.narrow))
    }

    /// Whether `phase` sends as this says (the tests' `Sends::is`), with
    /// `phase`'s [`Sends::named`] and packed narrowing given (worked out
    /// once for every key a look-up compares).
    fn is_named(&self, phase: &Phase, named: Option<&Sends>, packed: Option<u64>) -> bool {
        match (named, self) {
            (Some(named), _) => self == named,
            (None, Sends::Kind(kind, narrow)) => *kind == phase.kind && narrow.is(&phase.narrow, packed),
            (None, _) => false,
        }
    }

    /// The key of a phase of `kind` whose sends the pattern names, the
    /// one place the grouping of kinds is written (`of` and `is` both
    /// read it); `None` for any other kind.
    fn named(kind: PhaseKind) -> Option<Sends> {
        use PhaseKind as K;
        match kind {
            K::DirectReduceScatter | K::DirectAllGather | K::DirectAllReduce | K::DirectAllToAll => {
                Some(Sends::Everyone)
            }
            K::RingReduceScatter { bidir } | K::RingAllGather { bidir } => Some(Sends::Ring { both: bidir }),
            K::RingAllReduceFused => Some(Sends::Ring { both: false }),
            _ => None,
        }
    }
}

/// One phase's counts, as [`FlowMemo`] keys them.
struct Counted {
    radices: Radices,
    sends: Sends,
    scope: Scope,
    /// The prediction's count.
    whole: Option<f64>,
    /// The floor's count.
    floor: Option<f64>,
}

impl FlowCounts {
    /// [`node_flows`] of `phase` of `plan`, counted once per key.
    pub(super) fn flows(
        &mut self,
        schedule: &Schedule,
        plan: &CollectivePlan,
        phase: &Phase,
        buf: &mut Vec<Transfer>,
        floor: bool,
    ) -> f64 {
        // A phase without steps walks the transfers of the step after it
        // (`Schedule::transfers` finds the phase running at that step):
        // not keyed by its own fields.
        if phase.step_n == 0 {
            return node_flows(schedule, plan, phase, buf, floor).flows;
        }
        // The phase's own key parts worked out once, the cheapest compared
        // first (every plan of one collective usually has the same radices).
        let (named, packed) = (Sends::named(phase.kind), Narrowing::packed(&phase.narrow));
        let same = |c: &Counted| {
            c.scope == phase.scope && c.sends.is_named(phase, named.as_ref(), packed) && c.radices == plan.radices
        };
        let at = match self.0.iter().position(same) {
            Some(at) => at,
            None => {
                let (radices, sends, scope) = (plan.radices, Sends::of(phase), phase.scope);
                self.0.push(Counted { radices, sends, scope, whole: None, floor: None });
                self.0.len() - 1
            }
        };
        let Some(counted) = self.0.get_mut(at) else { return node_flows(schedule, plan, phase, buf, floor).flows };
        if let Some(flows) = if floor { counted.floor } else { counted.whole } {
            return flows;
        }
        let n = node_flows(schedule, plan, phase, buf, floor);
        // A floor and a prediction walk the same members, hence count the
        // same, when no more than [`FLOOR_WALKED`] must be walked, but where
        // a prediction takes the busiest node's count ([`node_flows`]).
        let same_walk = !n.busiest && if floor { !n.skipped } else { n.walked <= FLOOR_WALKED };
        if floor || same_walk {
            counted.floor = Some(n.flows);
        }
        if !floor || same_walk {
            counted.whole = Some(n.flows);
        }
        n.flows
    }
}

/// What [`node_flows`] counted, and how.
pub(super) struct NodeFlows {
    /// The flows (at least 1).
    pub(super) flows: f64,
    /// Members whose sends were walked.
    pub(super) walked: u32,
    /// Whether a floor counted some member as not sending rather than
    /// walk it.
    pub(super) skipped: bool,
    /// Whether a prediction of this phase takes the busiest node's count
    /// ([`node_flows`]): a floor's and a prediction's then differ.
    pub(super) busiest: bool,
}

/// How many flows leave one node at once in `phase`: the members of the
/// costed group (`Groups::modelled`) on member 0's node that send off-node at the phase's first step,
/// times the groups that share that node. At least 1.
///
/// Most patterns' sends are known from the pattern without generating
/// their transfers ([`sends_off_from_pattern`]); the others are walked:
/// an RDH member's from the partner its round pairs it with
/// ([`sends_off_from_partner`]), the rest from the transfers generated
/// ([`sends_off_walked`]). A `floor` walks at most [`FLOOR_WALKED`] of
/// them and counts the rest as not sending (fewer flows: a larger share
/// of the network each).
pub(super) fn node_flows(
    schedule: &Schedule,
    plan: &CollectivePlan,
    phase: &Phase,
    buf: &mut Vec<Transfer>,
    floor: bool,
) -> NodeFlows {
    let counted = count_flows(schedule, plan, phase, buf, floor, true);
    // A halving over a scope that is not a power of two (its prologue
    // and epilogue), a binomial tree or a peer map sends from some nodes
    // and not others: member 0's node may send nothing where another's
    // every member sends (or receives). A prediction takes the busiest
    // node's flows there (at least member 0's, so a floor's count stays
    // under it).
    if !uneven_sends(plan, phase) {
        return counted;
    }
    let flows = if floor { counted.flows } else { counted.flows.max(busiest_node_flows(schedule, plan, phase, buf)) };
    NodeFlows { flows, busiest: true, ..counted }
}

/// The most members whose sends [`busiest_node_flows`] asks, one by one.
const BUSIEST_SCAN_MAX: u32 = 4096;

/// Whether some nodes may send in `phase` and others not, so that member
/// 0's node need not be the busiest ([`node_flows`]): a halving or
/// doubling over a scope that is not a power of two (its prologue and
/// epilogue) or a binomial tree (whose rounds send from the nodes that
/// hold the data so far, counted from the root), in a group of at most
/// [`BUSIEST_SCAN_MAX`] members; or a peer map's point-to-point step
/// (whose pairs may leave one node and not another), of any size (its
/// flows are counted from its pairs).
pub(super) fn uneven_sends(plan: &CollectivePlan, phase: &Phase) -> bool {
    use crate::schedule::PhaseKind as K;
    let tree = matches!(phase.kind, K::BinomialBroadcast { .. } | K::BinomialReduce { .. });
    let peers = matches!(phase.kind, K::PointToPoint);
    peers || plan.groups.size() <= BUSIEST_SCAN_MAX && (tree || super::uneven_rdh(plan, phase))
}

/// The flows through the busiest node's network in `phase`: per node, the
/// costed group's members on it that send off it at the phase's first
/// step (or, for a peer map's point-to-point step, whichever is more of
/// those and of the members that receive from off it: the pairs of a map
/// need not leave a node as often as they enter it), times the groups that
/// share it; the most over the nodes (at least 1). Every member is asked,
/// from the pattern, its partner or its transfers.
fn busiest_node_flows(schedule: &Schedule, plan: &CollectivePlan, phase: &Phase, buf: &mut Vec<Transfer>) -> f64 {
    let shape = &schedule.shape;
    let g = plan.groups.modelled();
    let node = |m: u32| plan.rank(g, m).map(|r| shape.node(r.0));
    // By node: (members on it, members sending off it, members receiving
    // from off it).
    let mut nodes: std::collections::BTreeMap<u32, (u32, u32, u32)> = std::collections::BTreeMap::new();
    for n in (0..plan.groups.size()).filter_map(node) {
        nodes.entry(n).or_default().0 += 1;
    }
    if matches!(phase.kind, PhaseKind::PointToPoint) {
        // A peer map's step sends each pair, a member sending in one pair
        // at most and receiving in one at most (`mesh::point_to_point`):
        // a pair across nodes leaves its source's and enters its
        // target's, counted from the pairs at any size.
        for &(s, t) in &plan.peers.pairs {
            let (Some(a), Some(b)) = (node(s), node(t)) else { continue };
            if a != b {
                nodes.entry(a).or_default().1 += 1;
                nodes.entry(b).or_default().2 += 1;
            }
        }
    } else {
        let mut spans = SpanMemo::default();
        for m in 0..plan.groups.size() {
            let Some(n) = node(m) else { continue };
            let off = sends_off_from_pattern(schedule, plan, phase, m, &mut spans)
                .or_else(|| sends_off_from_partner(schedule, plan, phase, m, &mut spans))
                .unwrap_or_else(|| sends_off_walked(schedule, plan, phase, m, buf));
            nodes.entry(n).or_default().1 += u32::from(off);
        }
    }
    let per_node = |&(on, off, into): &(u32, u32, u32)| {
        f64::from(off.max(into).max(1)) * f64::from((shape.local_rank_n / on.max(1)).max(1))
    };
    nodes.values().map(per_node).fold(1.0, f64::max)
}

/// [`node_flows`], the members after the first taking its answers by
/// arithmetic when they all share its position (`alike`), or one by one
/// (the reference `cost/predict/tests.rs` holds the shortcut to).
pub(super) fn count_flows(
    schedule: &Schedule,
    plan: &CollectivePlan,
    phase: &Phase,
    buf: &mut Vec<Transfer>,
    floor: bool,
    alike: bool,
) -> NodeFlows {
    let shape = &schedule.shape;
    let n = plan.groups.size();
    // The node of the modelled group's member `i` (`None`: no such
    // member; `Groups::modelled`).
    let g = plan.groups.modelled();
    let node = |i: u32| plan.rank(g, i).map(|r| shape.node(r.0));
    let node0 = node(0);
    let mut on_node = 0u32;
    let mut flows = 0u32;
    let mut spans = SpanMemo::default();
    let (mut walked, mut skipped) = (0, false);
    // World groups hold rank `i` at index `i`: node 0's members are the
    // first `local_rank_n`, found without placing every member.
    let world = !plan.groups.is_explicit();
    let scanned = if world { 0..n.min(shape.local_rank_n) } else { 0..n };
    let scanned_n = scanned.end;
    // On world groups (member `i` is rank `i`), a scope whose stride is a
    // whole number of nodes, at least `L`, puts node 0's members `0..L`
    // all at position `(m / stride) % k = 0`, every position on its own
    // node (`base + q * stride` is on node `base / L + q * stride / L`):
    // which positions share a node, hence the pattern's and the RDH
    // pairing's answer, is the same for all of them (an inter leg's
    // phases). When the first one's answer is named or paired, the others
    // take it (as the loop would, one by one), counted rather than
    // visited, the floor's walk budget applied as the loop applies it.
    let stride = phase.scope.placer(&plan.radices).around(0).stride;
    let all_alike = alike && world && stride >= shape.local_rank_n && stride.is_multiple_of(shape.local_rank_n.max(1));
    for m in scanned.filter(|&i| world || node(i) == node0) {
        on_node += 1;
        let named = sends_off_from_pattern(schedule, plan, phase, m, &mut spans);
        let mut paired = None;
        let off = match named {
            Some(off) => off,
            None if floor && walked >= FLOOR_WALKED => {
                skipped = true;
                // A member is unnamed only in a phase whose pattern names no
                // member as sending off its node (`sends_off_from_pattern`),
                // and past the budget none is walked: no member left adds a
                // flow. On world groups every member left is on node 0, so
                // they are counted on it without being asked.
                if alike && world {
                    on_node += scanned_n.saturating_sub(m + 1);
                    break;
                }
                false
            }
            None => {
                // Counted as walked even when the partner is named, so a
                // floor counts the same members either way.
                walked += 1;
                paired = sends_off_from_partner(schedule, plan, phase, m, &mut spans);
                paired.unwrap_or_else(|| sends_off_walked(schedule, plan, phase, m, buf))
            }
        };
        flows += u32::from(off);
        if all_alike && m == 0 {
            let rest = scanned_n.saturating_sub(1);
            let off = u32::from(named.or(paired).unwrap_or(false));
            let counted = match (named, paired) {
                (Some(_), _) => rest,
                (None, Some(_)) if floor => {
                    let w = rest.min(FLOOR_WALKED.saturating_sub(walked));
                    (walked, skipped) = (walked + w, skipped || rest > w);
                    w
                }
                (None, Some(_)) => {
                    walked += rest;
                    rest
                }
                // Walked from the transfers: member by member.
                (None, None) => continue,
            };
            on_node += rest;
            flows += off * counted;
            break;
        }
    }
    let groups_on_node = (shape.local_rank_n / on_node.max(1)).max(1);
    // In f64, where the product cannot overflow; it is the integer product
    // exactly (each factor is at most a node's ranks, at most 2^20, so the
    // product is below 2^53).
    NodeFlows { flows: f64::from(flows.max(1)) * f64::from(groups_on_node), walked, skipped, busiest: false }
}

/// Whether member `m` of the costed group sends off its node at `phase`'s first
/// step, from the transfers the phase generates.
pub(super) fn sends_off_walked(
    schedule: &Schedule,
    plan: &CollectivePlan,
    phase: &Phase,
    m: u32,
    buf: &mut Vec<Transfer>,
) -> bool {
    let shape = &schedule.shape;
    buf.clear();
    let g = plan.groups.modelled();
    schedule.transfers(plan, g, m, phase.first_step, buf);
    let node = |i: u32| plan.rank(g, i).map(|r| shape.node(r.0));
    buf.iter().any(|t| t.from == m && node(t.to) != node(m))
}

/// Whether member `m` of the costed group sends off its node at `phase`'s first
/// step, from the partner an RDH phase pairs it with
/// ([`algorithms::rdh_sends_to`]): what [`sends_off_walked`] finds,
/// without generating the step; `None` for any other phase. `spans`
/// keeps the phase scope's placer between members (as
/// [`sends_off_from_pattern`] keeps it).
pub(super) fn sends_off_from_partner(
    schedule: &Schedule,
    plan: &CollectivePlan,
    phase: &Phase,
    m: u32,
    spans: &mut SpanMemo,
) -> Option<bool> {
    // A phase without steps walks the step after it.
    if phase.step_n == 0 {
        return None;
    }
    let scope = spans.placer(phase.scope, plan.radices).around(m);
    let Some(to) = algorithms::rdh_sends_to(phase.kind, scope.k, scope.pos)? else { return Some(false) };
    let g = plan.groups.modelled();
    let node = |i: u32| plan.rank(g, i).map(|r| schedule.shape.node(r.0));
    Some(node(scope.base + to * scope.stride) != node(m))
}

/// What [`sends_off_from_pattern`] keeps between the members it is asked
/// about: the last phase scope it placed, with its [`ScopePlacer`] (the members
/// of one phase share it), and the last scope instance, `(base, stride,
/// k)`, with whether its members span more than one node (the members of
/// one node usually share their scope).
#[derive(Default)]
pub(super) struct SpanMemo {
    placer: Option<(Scope, Radices, ScopePlacer)>,
    spans: Option<((u32, u32, u32), bool)>,
}

impl SpanMemo {
    /// `scope`'s placer under `radices`, kept for the next member.
    fn placer(&mut self, scope: Scope, radices: Radices) -> ScopePlacer {
        match self.placer {
            Some((s, r, placer)) if s == scope && r == radices => placer,
            _ => {
                let placer = scope.placer(&radices);
                self.placer = Some((scope, radices, placer));
                placer
            }
        }
    }
}

/// Whether member `m` of the costed group sends off its node at `phase`'s first
/// step, from the pattern (`algorithms/`), or `None` for a pattern it is
/// not known for (a point-to-point's peers, a chain's or a tree's rounds:
/// walked).
///
/// Every pattern but the point-to-point moves data between members of
/// its scope only, so a member whose scope lies on one node sends
/// nothing off it. Otherwise: a direct reduce-scatter, all-gather,
/// all-reduce or all-to-all sends to every other member of the scope; a
/// direct broadcast's root to every other member, the others nothing; a
/// direct reduce's members to the root, which sends nothing; a ring
/// reduce-scatter or all-gather sends to the next member at every step
/// (and a Kangaring's second half to the previous one); the single-cycle
/// ring's first step is a reduce-scatter step. (The arms that name a
/// phase's sends from its kind and scope alone are [`Sends`]' keys: keep
/// them in step.) So in a phase where some member is left unnamed, no
/// member is named as sending off its node (only as sending nothing, its
/// scope on one node): `count_flows` relies on it, and
/// `cost/predict/tests.rs` checks it.
pub(super) fn sends_off_from_pattern(
    schedule: &Schedule,
    plan: &CollectivePlan,
    phase: &Phase,
    m: u32,
    spans: &mut SpanMemo,
) -> Option<bool> {
    use PhaseKind as K;
    // A match, not the derived `==`: asked once a member of node 0.
    if matches!(phase.kind, K::PointToPoint) {
        return None;
    }
    let shape = &schedule.shape;
    // The scope alone (`instance` also narrows the block universe).
    let scope = spans.placer(phase.scope, plan.radices).around(m);
    let g = plan.groups.modelled();
    let node_of = |q: u32| plan.rank(g, scope.member(q)).map(|r| shape.node(r.0));
    let key = (scope.base, scope.stride, scope.k);
    let spans_nodes = match spans.spans {
        Some((k, v)) if k == key => v,
        _ => {
            let first = node_of(0);
            // World groups hold rank `i` at index `i`: a scope's members
            // rise with `q`, and so do their nodes, so the scope spans
            // nodes when its last member's node is not its first's.
            let v = if plan.groups.is_explicit() {
                (1..scope.k).any(|q| node_of(q) != first)
            } else {
                node_of(scope.k.saturating_sub(1)) != first
            };
            spans.spans = Some((key, v));
            v
        }
    };
    if !spans_nodes {
        return Some(false);
    }
    // The member's node and its ring neighbours', each placed only when
    // the pattern asks.
    let me = || node_of(scope.pos);
    let (next, prev) = (|| node_of(scope.pos + 1), || node_of(scope.pos + scope.k - 1));
    Some(match phase.kind {
        K::DirectReduceScatter | K::DirectAllGather | K::DirectAllReduce | K::DirectAllToAll => true,
        K::DirectBroadcast { root } => scope.pos == root,
        K::DirectReduce { root } => scope.pos != root && node_of(root) != me(),
        K::RingReduceScatter { bidir } | K::RingAllGather { bidir } => {
            let me = me();
            next() != me || (bidir && prev() != me)
        }
        K::RingAllReduceFused => next() != me(),
        _ => return None,
    })
}
