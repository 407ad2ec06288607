//! Checking the algorithm choice: what serves the op, hier's legs, and the structure (node, pod alignment) each algorithm requires of the groups.
//!
//! A written algorithm is checked by [`Checker::algorithm`], which reports
//! every problem. `Auto` (and a `Hier((...))` with `Auto` legs) lists the
//! choices those same rules accept without running them once per
//! candidate: each structural fact is decided once per validation
//! ([`Checker::holds`]), a flat choice is two facts
//! ([`Checker::flat_listed`]), and a hierarchical combination's checks are
//! split into what every combination shares and each `Auto` leg's own
//! requirement ([`Checker::list_hier`]). Tests hold the listing equal to
//! the candidates that resolve when written out
//! (`validate/tests/algorithm.rs`).

use super::*;

impl Checker {
    /// Resolves `algorithm`, written for `op`; `structure` is the shape
    /// and groups when both are valid (structural requirements are checked
    /// only then). It reads nothing else of the collective, so `Auto`
    /// checks each choice without copying the collective.
    pub(super) fn algorithm(
        &mut self,
        op: OpType,
        algorithm: &Algorithm,
        structure: Option<(&Shape, &CheckedGroups)>,
    ) -> Option<ResolvedAlgorithm> {
        let serving = || {
            let mut algs: Vec<AlgType> =
                AlgType::ALL.iter().copied().filter(|&a| a != AlgType::Hier && algorithms::supports(a, op)).collect();
            if algorithms::supports(AlgType::Hier, op) && algorithms::hier_legs(op).is_some() {
                algs.push(AlgType::Hier);
            }
            algs
        };
        let alg = match algorithm {
            Algorithm::Auto => {
                // The choice needs the whole collective checked: it is
                // made at the end of `collective`, from these. Without a
                // valid shape and groups, their own problems are reported
                // and no choice is legal to list.
                let (shape, groups) = structure?;
                let candidates = self.auto_candidates(op, shape, groups);
                let first = candidates.first().copied();
                if first.is_none() {
                    self.push("algorithm", Problem::AutoNoChoice { op });
                }
                self.auto = Some((candidates, Vec::new()));
                return first;
            }
            Algorithm::Hier(legs) if auto_legs(op, legs).next().is_none() => {
                return self.hier(op, legs, structure, serving);
            }
            Algorithm::Hier(legs) => return self.leg_auto(op, legs, structure),
            flat => flat.alg_type()?,
        };
        if !algorithms::supports(alg, op) {
            let gate = (alg == AlgType::SingleCycleRing).then_some(Gate::SingleCycleRingAllReduceOnly);
            let choices = self.accepted(op, structure).unwrap_or_else(serving);
            self.push("algorithm", Problem::AlgorithmDoesNotServe { alg, op, choices, gate });
            return None;
        }
        let (shape, groups) = structure?;
        let req = algorithms::requirement(alg);
        if !self.holds(Fact::Whole(req), shape, groups) {
            self.report_whole(alg, req, shape, groups);
            return None;
        }
        if req != Requirement::None && !self.same_shapes(alg, shape, groups) {
            return None;
        }
        Some(ResolvedAlgorithm::Flat(alg))
    }

    /// The legal choices of `algorithm: Auto`: every flat algorithm that
    /// serves the op, then every combination of the seed's leg choices,
    /// each kept only when this checker's own rules accept it. The rules
    /// are not run per candidate: what they check of a flat choice is two
    /// facts ([`Checker::flat_listed`]), and of a combination what
    /// [`Checker::list_hier`] decides once for all of them.
    /// The algorithms a refusal names as accepted for `op`: those that
    /// serve it and whose structure the shape and groups meet (what `Auto`
    /// lists: a flat one by name, `Hier` once for every combination), where
    /// both are valid and any is; `None` otherwise (the caller names those
    /// that serve the op).
    fn accepted(&mut self, op: OpType, structure: Option<(&Shape, &CheckedGroups)>) -> Option<Vec<AlgType>> {
        let (shape, groups) = structure?;
        let mut algs: Vec<AlgType> = Vec::new();
        for candidate in self.auto_candidates(op, shape, groups) {
            let alg = match candidate {
                ResolvedAlgorithm::Flat(alg) => alg,
                ResolvedAlgorithm::Hier(_) => AlgType::Hier,
            };
            if !algs.contains(&alg) {
                algs.push(alg);
            }
        }
        (!algs.is_empty()).then_some(algs)
    }

    fn auto_candidates(&mut self, op: OpType, shape: &Shape, groups: &CheckedGroups) -> Vec<ResolvedAlgorithm> {
        let flats = AlgType::ALL.iter().copied().filter(|&a| a != AlgType::Hier && algorithms::supports(a, op));
        let hier = algorithms::hier_legs(op).filter(|_| algorithms::supports(AlgType::Hier, op));
        let set = LegChoices::Seed;
        let combos: usize = hier.unwrap_or(&[]).iter().map(|&leg| algorithms::leg_choices_in(leg, set).len()).product();
        let mut legal = Vec::with_capacity(flats.clone().count() + combos);
        // `Algorithm::flat` names every flat algorithm, as `algorithm`
        // resolves it.
        for alg in flats.filter(|&alg| Algorithm::flat(alg).is_some()) {
            if self.flat_listed(alg, shape, groups) {
                legal.push(ResolvedAlgorithm::Flat(alg));
            }
        }
        if let Some(legs) = hier {
            let facts = std::mem::take(&mut self.facts);
            let mut scratch = Checker { facts, listing: true, ..Checker::new(self.index) };
            scratch.list_hier(op, &HierLegs::default(), legs, set, shape, groups, &mut legal);
            self.facts = scratch.facts;
        }
        legal
    }

    /// Whether `algorithm` accepts flat `alg` (which serves the op) without
    /// a problem: its requirement holds over whole groups and, unless it
    /// has none, every group has one shape (what `algorithm` checks after
    /// `supports`, in that order).
    fn flat_listed(&mut self, alg: AlgType, shape: &Shape, groups: &CheckedGroups) -> bool {
        let req = algorithms::requirement(alg);
        self.holds(Fact::Whole(req), shape, groups)
            && (req == Requirement::None || self.holds(Fact::SameShapes, shape, groups))
    }

    /// Appends to `legal` every combination of the `auto` legs' choices in
    /// `set` over `base` (the other legs as written) that [`Checker::hier`]
    /// accepts without a problem, in [`combinations`]' order. Each check
    /// is decided once, not per combination: the legs' own checks
    /// ([`Checker::hier_chosen`]) give the same problems for every
    /// combination (an `Auto` leg's choice is always in its set, so only
    /// the written legs can have one), so the first combination's decide
    /// for all; the composition's requirement, one shape and the written
    /// legs' requirements are facts shared by all; what is left is each
    /// `Auto` leg's own requirement, which filters its choices. The legal
    /// combinations are the product of the filtered sets, named in the
    /// same nesting (the first leg outermost). Problems go to this
    /// (scratch) checker's errors and are not reported.
    #[allow(clippy::too_many_arguments)]
    fn list_hier(
        &mut self,
        op: OpType,
        base: &HierLegs,
        auto: &[Leg],
        set: LegChoices,
        shape: &Shape,
        groups: &CheckedGroups,
        legal: &mut Vec<ResolvedAlgorithm>,
    ) {
        let Some(legs) = algorithms::hier_legs(op).filter(|_| algorithms::supports(AlgType::Hier, op)) else {
            return;
        };
        let Some(first) = combinations(base, auto, set).next() else { return };
        let Some(chosen) = self.hier_chosen(op, legs, &first) else { return };
        if !self.holds(Fact::Whole(algorithms::requirement(AlgType::Hier)), shape, groups)
            || !self.holds(Fact::SameShapes, shape, groups)
        {
            return;
        }
        let written = Leg::ALL.into_iter().zip(chosen).filter(|(leg, _)| !auto.contains(leg));
        for (leg, alg) in written.filter_map(|(leg, alg)| Some((leg, alg?))) {
            if !self.holds(Fact::Leg { intra: leg.is_intra(), req: algorithms::requirement(alg) }, shape, groups) {
                return;
            }
        }
        // Every combination resolves as the first does, but for its Auto
        // legs' choices: each Auto leg's place in that resolution, its set,
        // and which of its choices meet the leg's requirement (bit `j` for
        // the set's `j`-th choice).
        let Some(template) = resolve_hier(legs, &chosen) else { return };
        let mut sets: [(usize, &[AlgType], u32); Leg::ALL.len()] = [(0, &[], 0); Leg::ALL.len()];
        for (slot, &leg) in sets.iter_mut().zip(auto) {
            let Some(at) = template.iter().position(|&(l, _)| l == leg) else { return };
            let choices = algorithms::leg_choices_in(leg, set);
            let mut met = 0u32;
            for (j, &alg) in choices.iter().enumerate() {
                let fact = Fact::Leg { intra: leg.is_intra(), req: algorithms::requirement(alg) };
                if self.holds(fact, shape, groups) {
                    met |= 1 << j;
                }
            }
            *slot = (at, choices, met);
        }
        let sets = sets.get(..auto.len()).unwrap_or(&[]);
        let n: usize = sets.iter().map(|(_, choices, _)| choices.len()).product();
        // As `combinations` names them: the last leg's choice varies fastest.
        'combos: for i in 0..n {
            let mut resolved = template;
            let mut rest = i;
            for &(at, choices, met) in sets.iter().rev() {
                let j = rest % choices.len().max(1);
                rest /= choices.len().max(1);
                match choices.get(j) {
                    Some(&alg) if met & (1 << j) != 0 && resolved.set_algorithm(at, alg) => {}
                    _ => continue 'combos,
                }
            }
            legal.push(ResolvedAlgorithm::Hier(resolved));
        }
    }

    /// A `Hier((...))` with `Auto` legs: every combination of the Auto
    /// legs' legal sets (the set `choices` selects; legs in run order, the
    /// first outermost, each leg's choices in its set's order), the other
    /// legs as written, each kept only when this checker's own rules accept
    /// it ([`Checker::list_hier`]). The choice is made at the end of
    /// `collective`, like `Auto`'s.
    fn leg_auto(
        &mut self,
        op: OpType,
        given: &HierLegs,
        structure: Option<(&Shape, &CheckedGroups)>,
    ) -> Option<ResolvedAlgorithm> {
        let auto: Vec<Leg> = auto_legs(op, given).collect();
        let combos = || combinations(given, &auto, given.choices);
        let mut legal = Vec::new();
        // Without a valid shape and groups no combination resolves.
        if let Some((shape, groups)) = structure {
            let facts = std::mem::take(&mut self.facts);
            let mut scratch = Checker { facts, listing: true, ..Checker::new(self.index) };
            scratch.list_hier(op, given, &auto, given.choices, shape, groups, &mut legal);
            self.facts = scratch.facts;
        }
        let Some(first) = legal.first().copied() else {
            // Nothing legal: the first combination's problems are the
            // written legs' own (or the topology's), reported as for a
            // written Hier; `AutoNoChoice` when there are none.
            let before = self.found();
            if let Some(legs) = combos().next() {
                self.algorithm(op, &Algorithm::Hier(legs), structure);
            }
            if self.found() == before && structure.is_some() {
                self.push("algorithm", Problem::AutoNoChoice { op });
            }
            return None;
        };
        self.auto = Some((legal, auto));
        Some(first)
    }

    /// Do all groups have one node/pod shape? Reports the first that does
    /// not (unless listing).
    fn same_shapes(&mut self, alg: AlgType, shape: &Shape, groups: &CheckedGroups) -> bool {
        if self.holds(Fact::SameShapes, shape, groups) {
            return true;
        }
        if self.listing {
            return false;
        }
        let shapes: Vec<(GroupRef, [u32; 3])> =
            groups.members.iter().map(|(g, m)| (*g, algorithms::group_shape(m, shape))).collect();
        // The usual shape: most groups', the first's of equal counts (the
        // odd one out is named, not the groups that agree).
        let mut counts: std::collections::BTreeMap<[u32; 3], (u32, usize)> = std::collections::BTreeMap::new();
        for (i, (_, s)) in shapes.iter().enumerate() {
            counts.entry(*s).or_insert((0, i)).0 += 1;
        }
        let Some((&expected, &(usual, first))) =
            counts.iter().max_by_key(|(_, (n, first))| (*n, std::cmp::Reverse(*first)))
        else {
            return true;
        };
        match shapes.iter().find(|(_, s)| *s != expected) {
            None => true,
            Some(&(group, found)) => {
                let reference = shapes.get(first).map_or(GroupRef::World, |(g, _)| *g);
                let total = shapes.len() as u32;
                let problem = Problem::UnevenGroupShapes { alg, group, found, expected, reference, usual, total };
                self.push("groups", problem);
                false
            }
        }
    }

    /// Whether the groups meet `fact`, found once per validation: from the
    /// shape's arithmetic for the world group ([`world_holds`]), else by
    /// checking every group's members.
    fn holds(&mut self, fact: Fact, shape: &Shape, groups: &CheckedGroups) -> bool {
        let slot = &mut self.facts[fact.slot()];
        *slot
            .get_or_insert_with(|| world_holds(fact, shape, groups).unwrap_or_else(|| groups_hold(fact, shape, groups)))
    }

    /// Reports the first group that does not meet `req` (`alg`'s, over
    /// whole groups), and how many more do not; nothing when listing.
    fn report_whole(&mut self, alg: AlgType, req: Requirement, shape: &Shape, groups: &CheckedGroups) {
        if self.listing {
            return;
        }
        let mut unmet = groups.members.iter().filter_map(|(g, m)| unmet(req, m, shape).map(|u| (*g, u)));
        if let Some((group, u)) = unmet.next() {
            let more = unmet.count();
            self.push("algorithm", u.problem(alg, None, group, more, shape));
        }
    }

    fn hier(
        &mut self,
        op: OpType,
        given: &HierLegs,
        structure: Option<(&Shape, &CheckedGroups)>,
        serving: impl Fn() -> Vec<AlgType>,
    ) -> Option<ResolvedAlgorithm> {
        let legs = match algorithms::hier_legs(op) {
            Some(legs) if algorithms::supports(AlgType::Hier, op) => legs,
            _ => {
                // What fits this topology, as for a flat algorithm.
                let choices = self.accepted(op, structure).unwrap_or_else(serving);
                let problem = Problem::AlgorithmDoesNotServe { alg: AlgType::Hier, op, choices, gate: None };
                self.push("algorithm", problem);
                return None;
            }
        };
        let chosen = self.hier_chosen(op, legs, given)?;
        let before = self.found();
        let (shape, groups) = structure?;
        // The composition itself: every group listed node by node.
        let req = algorithms::requirement(AlgType::Hier);
        if !self.holds(Fact::Whole(req), shape, groups) {
            self.report_whole(AlgType::Hier, req, shape, groups);
            return None;
        }
        // Each leg's own requirement, over the leg's members: one node's
        // members for an intra leg, one member per node for an inter leg.
        // Groups are node-aligned here, so the first of each is representative.
        for (leg, alg) in Leg::ALL.into_iter().zip(chosen).filter_map(|(leg, alg)| Some((leg, alg?))) {
            let req = algorithms::requirement(alg);
            if self.holds(Fact::Leg { intra: leg.is_intra(), req }, shape, groups) {
                continue;
            }
            if self.listing {
                return None;
            }
            let mut unmet_legs = groups
                .members
                .iter()
                .filter_map(|(g, m)| unmet(req, &leg_members(m, leg.is_intra(), shape), shape).map(|u| (*g, u)));
            if let Some((group, u)) = unmet_legs.next() {
                let more = unmet_legs.count();
                self.push(format!("algorithm.{leg}"), u.problem(alg, Some(leg), group, more, shape));
            }
        }
        if self.found() != before || !self.same_shapes(AlgType::Hier, shape, groups) {
            return None;
        }
        // `hier_legs` names each leg once (`algorithms::tests`), so this
        // always resolves.
        Some(ResolvedAlgorithm::Hier(resolve_hier(legs, &chosen)?))
    }

    /// Each leg's choice, in `Leg::ALL`'s order, when every leg `given`
    /// names is one `op` uses (`legs`), every leg it uses is named, and
    /// each choice is in its leg's set; otherwise `None`, with the
    /// problems pushed.
    fn hier_chosen(
        &mut self,
        op: OpType,
        legs: &'static [Leg],
        given: &HierLegs,
    ) -> Option<[Option<AlgType>; Leg::ALL.len()]> {
        let before = self.found();
        // Each leg's choice, in `Leg::ALL`'s order.
        let mut chosen: [Option<AlgType>; Leg::ALL.len()] = [None; Leg::ALL.len()];
        for (slot, leg) in chosen.iter_mut().zip(Leg::ALL) {
            // Named only when a problem is pushed (`Auto` checks many
            // combinations that have none).
            let field = || format!("algorithm.{leg}");
            // A used leg's `Auto` never reaches here (`leg_auto` expands it);
            // an unused one is refused as unused whatever it says.
            match (legs.contains(&leg), given.get(leg).map(|c| c.fixed().unwrap_or(AlgType::Hier))) {
                (true, None) => self.push(field(), Problem::HierLegMissing { op, leg, legs, choices: given.choices }),
                (false, Some(_)) => self.push(field(), Problem::HierLegUnused { op, leg, legs }),
                (false, None) => {}
                (true, Some(choice)) => {
                    let choices = algorithms::leg_choices_in(leg, given.choices);
                    if choices.contains(&choice) {
                        *slot = Some(choice);
                    } else {
                        let wide = algorithms::leg_choices_in(leg, LegChoices::Wide);
                        let gate = match choice {
                            _ if wide.contains(&choice) => Some(Gate::WideLegChoice),
                            AlgType::Kangaring if !leg.is_intra() => Some(Gate::KangaringIntraOnly),
                            AlgType::SingleCycleRing if leg.op() != OpType::AllReduce => {
                                Some(Gate::SingleCycleRingAllReduceOnly)
                            }
                            AlgType::Hier => Some(Gate::HierDoesNotNest),
                            _ => None,
                        };
                        self.push(field(), Problem::HierLegChoice { leg, choice, choices, gate });
                    }
                }
            }
        }
        (self.found() == before).then_some(chosen)
    }
}

/// A hierarchical choice resolved: each of the op's legs (`legs`, in run
/// order) with its choice in `chosen` (in `Leg::ALL`'s order); `None`
/// when `legs` names a leg twice, which `hier_legs` never does.
fn resolve_hier(legs: &[Leg], chosen: &[Option<AlgType>; Leg::ALL.len()]) -> Option<LegAlgorithms> {
    let mut resolved = LegAlgorithms::EMPTY;
    for &leg in legs {
        if let Some(alg) = Leg::ALL.iter().zip(chosen).find(|&(&l, _)| l == leg).and_then(|(_, &alg)| alg) {
            resolved = resolved.with(leg, alg)?;
        }
    }
    Some(resolved)
}

/// Whether every group meets `fact`, checked member by member.
pub(super) fn groups_hold(fact: Fact, shape: &Shape, groups: &CheckedGroups) -> bool {
    let members = groups.members.iter().map(|(_, m)| m);
    match fact {
        Fact::Whole(req) => members.clone().all(|m| unmet(req, m, shape).is_none()),
        Fact::Leg { intra, req } => members.clone().all(|m| unmet(req, &leg_members(m, intra, shape), shape).is_none()),
        Fact::SameShapes => {
            let mut shapes = members.clone().map(|m| algorithms::group_shape(m, shape));
            // One group (or none) has one shape, whatever it is.
            match (groups.members.len() > 1, shapes.next()) {
                (true, Some(first)) => shapes.all(|s| s == first),
                _ => true,
            }
        }
    }
}

/// Whether the world group (members `0..rank_n`, rank `i` member `i`)
/// meets `fact`, from the shape's arithmetic: its members come node by
/// node, `local_rank_n` on each of `node_n` nodes, and pod by pod,
/// `nodes_per_pod` nodes on each of `pod_n` pods. So every requirement but
/// `WithinNode` and `PodAligned` holds; the whole group (and its inter
/// leg, one member per node) lies in one node only when there is one node
/// and spans two pods only when there are two; an intra leg (one node's
/// members) always lies in one node and one pod; one group has one shape.
/// `None` for explicit groups. A unit test holds it equal to
/// [`groups_hold`] over shapes.
pub(super) fn world_holds(fact: Fact, shape: &Shape, groups: &CheckedGroups) -> Option<bool> {
    let [(GroupRef::World, m)] = groups.members.as_slice() else { return None };
    if u32::try_from(m.len()).ok() != Some(shape.rank_n) {
        return None;
    }
    let (one_node, one_pod) = (shape.node_n == 1, shape.pod_n == 1);
    Some(match fact {
        Fact::SameShapes => true,
        Fact::Leg { intra: true, req } => req != Requirement::PodAligned,
        Fact::Whole(req) | Fact::Leg { intra: false, req } => match req {
            Requirement::None | Requirement::NodeAligned => true,
            Requirement::WithinNode => one_node,
            Requirement::PodAligned => !one_pod,
        },
    })
}

/// The members of `m` (a node-aligned group) that run `leg`: the first
/// node's for an intra leg, the first of each node's for an inter leg.
fn leg_members(m: &[u32], intra: bool, shape: &Shape) -> Vec<u32> {
    let per_node = m.iter().take_while(|&&r| shape.node(r) == m.first().map_or(0, |&f| shape.node(f))).count();
    if intra {
        m.iter().take(per_node).copied().collect()
    } else {
        m.iter().step_by(per_node.max(1)).copied().collect()
    }
}

/// How a group fails a [`Requirement`].
enum Unmet {
    /// Members on two nodes.
    Nodes { a: u32, b: u32 },
    /// Not aligned at a level.
    Aligned(Level, AlignFault),
}

impl Unmet {
    fn problem(self, alg: AlgType, leg: Option<Leg>, group: GroupRef, also: usize, shape: &Shape) -> Problem {
        match self {
            Unmet::Nodes { a, b } => Problem::NotWithinNode {
                alg,
                leg,
                group,
                a,
                node_a: shape.node(a),
                b,
                node_b: shape.node(b),
                local_rank_n: shape.local_rank_n,
                also,
            },
            Unmet::Aligned(level, fault) => {
                let units = match level {
                    Level::Node => shape.node_n,
                    Level::Pod => shape.pod_n,
                };
                Problem::NotAligned { alg, leg, level, group, fault, also, units }
            }
        }
    }
}

/// Does `members` (global ranks, valid for `shape`) meet `req`?
fn unmet(req: Requirement, members: &[u32], shape: &Shape) -> Option<Unmet> {
    match req {
        Requirement::None => None,
        Requirement::WithinNode => {
            let &a = members.first()?;
            let &b = members.iter().find(|&&r| shape.node(r) != shape.node(a))?;
            Some(Unmet::Nodes { a, b })
        }
        Requirement::NodeAligned => aligned(members, |r| shape.node(r)).err().map(|f| Unmet::Aligned(Level::Node, f)),
        Requirement::PodAligned => match aligned(members, |r| shape.pod(r)) {
            Err(f) => Some(Unmet::Aligned(Level::Pod, f)),
            Ok(1) => Some(Unmet::Aligned(
                Level::Pod,
                AlignFault::SingleUnit { unit: members.first().map_or(0, |&r| shape.pod(r)) },
            )),
            Ok(_) => None,
        },
    }
}

/// Checks that `members` come in consecutive runs of the same unit, no unit
/// visited twice, every run the same length; returns the number of runs.
pub(super) fn aligned(members: &[u32], unit: impl Fn(u32) -> u32) -> Result<usize, AlignFault> {
    // (unit, run length), in order.
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut visited = std::collections::BTreeSet::new();
    for &rank in members {
        let u = unit(rank);
        match runs.last_mut() {
            Some((last, len)) if *last == u => *len += 1,
            _ => {
                if !visited.insert(u) {
                    return Err(AlignFault::Revisited { rank, unit: u });
                }
                runs.push((u, 1));
            }
        }
    }
    let Some(&(first, first_len)) = runs.first() else { return Ok(0) };
    match runs.iter().find(|&&(_, len)| len != first_len) {
        Some(&(other, other_len)) => Err(AlignFault::Uneven { first, first_len, other, other_len }),
        None => Ok(runs.len()),
    }
}

/// The legs of `op` that `legs` leaves to the model (`leg: Auto`), in run order.
pub(crate) fn auto_legs(op: OpType, legs: &HierLegs) -> impl Iterator<Item = Leg> + '_ {
    let used = algorithms::hier_legs(op).unwrap_or(&[]);
    used.iter().copied().filter(|&leg| legs.get(leg) == Some(ccc_ir::spec::LegAlgorithm::Auto))
}

/// Every combination of `legs`' choices in `set` over `base` (the other
/// legs as `base` has them): the first leg outermost, each leg's choices
/// in its set's order; `base` alone when `legs` is empty. Named one by
/// one from the combination's index, without listing them first.
pub(crate) fn combinations(base: &HierLegs, legs: &[Leg], set: LegChoices) -> impl Iterator<Item = HierLegs> {
    let sets: Vec<(Leg, &'static [AlgType])> =
        legs.iter().map(|&leg| (leg, algorithms::leg_choices_in(leg, set))).collect();
    let n: usize = sets.iter().map(|(_, choices)| choices.len()).product();
    let base = base.clone();
    (0..n).map(move |i| {
        let mut rest = i;
        sets.iter().rev().fold(base.clone(), |legs, &(leg, choices)| {
            let Some(&alg) = choices.get(rest % choices.len().max(1)) else { return legs };
            rest /= choices.len().max(1);
            legs.with(leg, alg)
        })
    })
}
