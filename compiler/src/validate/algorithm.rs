//! Checking the algorithm choice: what serves the op, hier's legs, and the structure (node, pod alignment) each algorithm requires of the groups.

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
                structure?;
                let candidates = self.auto_candidates(op, structure);
                let first = candidates.first().cloned();
                if first.is_none() {
                    self.push("algorithm", Problem::AutoNoChoice { op });
                }
                self.auto = Some((candidates, Vec::new()));
                return first;
            }
            Algorithm::Hier(legs) if auto_legs(op, legs).is_empty() => return self.hier(op, legs, structure, serving),
            Algorithm::Hier(legs) => return self.leg_auto(op, legs, structure),
            flat => flat.alg_type()?,
        };
        if !algorithms::supports(alg, op) {
            let gate = (alg == AlgType::SingleCycleRing).then_some(Gate::SingleCycleRingAllReduceOnly);
            self.push("algorithm", Problem::AlgorithmDoesNotServe { alg, op, choices: serving(), gate });
            return None;
        }
        let (shape, groups) = structure?;
        let req = algorithms::requirement(alg);
        if !self.met.contains(&Met::Whole(req)) {
            let mut unmet = groups.members.iter().filter_map(|(g, m)| unmet(req, m, shape).map(|u| (*g, u)));
            if let Some((group, u)) = unmet.next() {
                let more = unmet.count();
                self.push("algorithm", u.problem(alg, None, group, more, shape));
                return None;
            }
            self.met.push(Met::Whole(req));
        }
        if req != Requirement::None && !self.same_shapes(alg, shape, groups) {
            return None;
        }
        Some(ResolvedAlgorithm::Flat(alg))
    }

    /// The legal choices of `algorithm: Auto`: every flat algorithm that
    /// serves the op, then every combination of the seed's leg choices,
    /// each kept only when this checker's own rules accept it.
    fn auto_candidates(&self, op: OpType, structure: Option<(&Shape, &CheckedGroups)>) -> Vec<ResolvedAlgorithm> {
        let mut written: Vec<Algorithm> = AlgType::ALL
            .iter()
            .filter(|&&a| a != AlgType::Hier && algorithms::supports(a, op))
            .filter_map(|&a| Algorithm::flat(a))
            .collect();
        if let (Some(legs), true) = (algorithms::hier_legs(op), algorithms::supports(AlgType::Hier, op)) {
            let mut combos = vec![HierLegs::default()];
            for &leg in legs {
                let choices = algorithms::leg_choices_in(leg, LegChoices::Seed);
                combos = combos
                    .into_iter()
                    .flat_map(|h| choices.iter().map(move |&alg| with_leg(h.clone(), leg, alg)))
                    .collect();
            }
            written.extend(combos.into_iter().map(Algorithm::Hier));
        }
        let mut legal = Vec::new();
        let mut met = Vec::new();
        for algorithm in written {
            let mut scratch = Checker { index: self.index, errors: Vec::new(), auto: None, met };
            if let Some(resolved) = scratch.algorithm(op, &algorithm, structure)
                && scratch.errors.is_empty()
            {
                legal.push(resolved);
            }
            met = scratch.met;
        }
        legal
    }

    /// A `Hier((...))` with `Auto` legs: every combination of the Auto
    /// legs' legal sets (the set `choices` selects; legs in run order, the
    /// first outermost, each leg's choices in its set's order), the other
    /// legs as written, each kept only when this checker's own rules accept
    /// it. The choice is made at the end of `collective`, like `Auto`'s.
    fn leg_auto(
        &mut self,
        op: OpType,
        given: &HierLegs,
        structure: Option<(&Shape, &CheckedGroups)>,
    ) -> Option<ResolvedAlgorithm> {
        let auto = auto_legs(op, given);
        let mut combos = vec![given.clone()];
        for &leg in &auto {
            let choices = algorithms::leg_choices_in(leg, given.choices);
            combos = combos
                .into_iter()
                .flat_map(|h| choices.iter().map(move |&alg| with_leg(h.clone(), leg, alg)))
                .collect();
        }
        let mut legal = Vec::new();
        for legs in &combos {
            let met = std::mem::take(&mut self.met);
            let mut scratch = Checker { index: self.index, errors: Vec::new(), auto: None, met };
            if let Some(resolved) = scratch.algorithm(op, &Algorithm::Hier(legs.clone()), structure)
                && scratch.errors.is_empty()
            {
                legal.push(resolved);
            }
            self.met = scratch.met;
        }
        let Some(first) = legal.first().cloned() else {
            // Nothing legal: the first combination's problems are the
            // written legs' own (or the topology's), reported as for a
            // written Hier; `AutoNoChoice` when there are none.
            let before = self.errors.len();
            if let Some(legs) = combos.first() {
                self.algorithm(op, &Algorithm::Hier(legs.clone()), structure);
            }
            if self.errors.len() == before && structure.is_some() {
                self.push("algorithm", Problem::AutoNoChoice { op });
            }
            return None;
        };
        self.auto = Some((legal, auto));
        Some(first)
    }

    /// Do all groups have one node/pod shape? Reports the first that does not.
    fn same_shapes(&mut self, alg: AlgType, shape: &Shape, groups: &CheckedGroups) -> bool {
        if self.met.contains(&Met::SameShapes) {
            return true;
        }
        let mut shapes = groups.members.iter().map(|(g, m)| (*g, algorithms::group_shape(m, shape)));
        let Some((_, expected)) = shapes.next() else { return true };
        match shapes.find(|(_, found)| *found != expected) {
            None => {
                self.met.push(Met::SameShapes);
                true
            }
            Some((group, found)) => {
                self.push("groups", Problem::UnevenGroupShapes { alg, group, found, expected });
                false
            }
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
                let problem = Problem::AlgorithmDoesNotServe { alg: AlgType::Hier, op, choices: serving(), gate: None };
                self.push("algorithm", problem);
                return None;
            }
        };
        let before = self.errors.len();
        let mut chosen = Vec::new();
        for leg in Leg::ALL {
            // Named only when a problem is pushed (`Auto` checks many
            // combinations that have none).
            let field = || format!("algorithm.{leg}");
            // A used leg's `Auto` never reaches here (`leg_auto` expands it);
            // an unused one is refused as unused whatever it says.
            match (legs.contains(&leg), given.get(leg).map(|c| c.fixed().unwrap_or(AlgType::Hier))) {
                (true, None) => self.push(field(), Problem::HierLegMissing { op, leg, legs }),
                (false, Some(_)) => self.push(field(), Problem::HierLegUnused { op, leg, legs }),
                (false, None) => {}
                (true, Some(choice)) => {
                    let choices = algorithms::leg_choices_in(leg, given.choices);
                    let wide = algorithms::leg_choices_in(leg, LegChoices::Wide);
                    if choices.contains(&choice) {
                        chosen.push((leg, choice));
                    } else {
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
        if self.errors.len() != before {
            return None;
        }
        let (shape, groups) = structure?;
        // The composition itself: every group listed node by node.
        let req = algorithms::requirement(AlgType::Hier);
        if !self.met.contains(&Met::Whole(req)) {
            let mut unmet_groups = groups.members.iter().filter_map(|(g, m)| unmet(req, m, shape).map(|u| (*g, u)));
            if let Some((group, u)) = unmet_groups.next() {
                let more = unmet_groups.count();
                self.push("algorithm", u.problem(AlgType::Hier, None, group, more, shape));
                return None;
            }
            self.met.push(Met::Whole(req));
        }
        // Each leg's own requirement, over the leg's members: one node's
        // members for an intra leg, one member per node for an inter leg.
        // Groups are node-aligned here, so the first of each is representative.
        for &(leg, alg) in &chosen {
            let req = algorithms::requirement(alg);
            let met = Met::Leg { intra: leg.is_intra(), req };
            if self.met.contains(&met) {
                continue;
            }
            let before_leg = self.errors.len();
            let mut unmet_legs = groups.members.iter().filter_map(|(g, m)| {
                let per_node =
                    m.iter().take_while(|&&r| shape.node(r) == m.first().map_or(0, |&f| shape.node(f))).count();
                let leg_members: Vec<u32> = if leg.is_intra() {
                    m.iter().take(per_node).copied().collect()
                } else {
                    m.iter().step_by(per_node.max(1)).copied().collect()
                };
                unmet(req, &leg_members, shape).map(|u| (*g, u))
            });
            if let Some((group, u)) = unmet_legs.next() {
                let more = unmet_legs.count();
                self.push(format!("algorithm.{leg}"), u.problem(alg, Some(leg), group, more, shape));
            }
            if self.errors.len() == before_leg {
                self.met.push(met);
            }
        }
        if self.errors.len() != before || !self.same_shapes(AlgType::Hier, shape, groups) {
            return None;
        }
        // `chosen` follows `Leg::ALL`; the resolution follows the op's leg order.
        let resolved = legs.iter().filter_map(|&leg| chosen.iter().find(|(l, _)| *l == leg).copied()).collect();
        Some(ResolvedAlgorithm::Hier(resolved))
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
            Unmet::Aligned(level, fault) => Problem::NotAligned { alg, leg, level, group, fault, also },
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
fn auto_legs(op: OpType, legs: &HierLegs) -> Vec<Leg> {
    let used = algorithms::hier_legs(op).unwrap_or(&[]);
    used.iter().copied().filter(|&leg| legs.get(leg) == Some(ccc_ir::spec::LegAlgorithm::Auto)).collect()
}

/// `legs` with `leg` set to `alg`.
fn with_leg(legs: HierLegs, leg: Leg, alg: AlgType) -> HierLegs {
    legs.with(leg, alg)
}
