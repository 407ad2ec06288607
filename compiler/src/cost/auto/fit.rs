//! Fitting a program's `Auto` choices into the CTRL SPAD.
//!
//! Every collective of a program has records on TOP_SP 0 (one per phase,
//! on every TOP_SP it uses, whatever the rank: `docs/algorithms.md` §1.5),
//! and each collective's chain starts at a fresh 64-byte slot of the
//! TOP_SP's CTRL SPAD image (`ctrl_spad::slots`: 7 records a slot). The
//! CTRL SPAD holds 64 slots, so the slots of a program's collectives add
//! up against one limit that no collective sees alone: 40 small
//! all-reduces on 32 ranks, each choosing the cheapest alone, took 74
//! slots, and lowering refused the program.
//!
//! [`fit`] runs after validation has made every choice. When the
//! program's collectives fit (almost always) it changes nothing. When
//! they do not, or when written collectives after an `Auto` one need
//! more of a TOP_SP's mesh events than the choices left them
//! (`held_after_auto`: validation holds an `Auto` collective to what the
//! ones before it leave, not to what later written ones need; a
//! collective partly left to `Auto` that found no choice in what the
//! `Auto` ones before it left chose in what the written ones leave, and
//! its place after an `Auto` one calls for this check as a written one's
//! does, though it is fitted as an `Auto` one), it
//! chooses again for every `Auto` collective at once,
//! among each one's legal alternatives (every choice that lowers on its
//! own within a whole TOP_SP's mesh events, not only those the
//! collectives before it left it; `options`): the choices whose predicted
//! times sum the least over the program among those whose slots, with
//! the written collectives', fit, and whose mesh events (each
//! collective's most over its members, summed, the bound validation
//! holds `Auto` collectives to) fit what the written ones leave of a
//! TOP_SP's at their busiest rank. The search is exact (a knapsack over the slots and events
//! left, at most 64 and 108, in program order); **tie-break:** of equal
//! sums, the earliest collective takes the alternative first in (its
//! prediction, its tie-break order), then the next. A collective it moves
//! records the cheapest alternative it left and both one's slots and mesh
//! events ([`Fitted`]), and every alternative's prediction (each was
//! compared).
//! A program whose slots do not fit even so, or that holds no `Auto`
//! collective to move, is refused ([`Overflow`]: validation's
//! `CtrlSpadFull`), naming the slots and the collectives taking the
//! most, before anything is lowered; one whose slots fit but whose mesh
//! events cannot is left to lowering, which names the rank that runs
//! out, unless validation let a collective choose past what the `Auto`
//! ones before it left: its refusal then stands (`events_over`).
//!
//! The choice now depends on the whole program, not only on the
//! collectives before: `diagnose` says so when two ranks' choices differ.

use super::{Machine, display, evaluate_choice, events_of, whole_ns};
use crate::build::plan_as;
use crate::valid::{Alternative, Fitted, ValidCollective, ValidProgram};
use ccc_ir::enums::OpType;
use ccc_ir::noun;
use ccc_ir::spec::DType;
use ccc_ir::wire::ctrl_spad;
use std::collections::BTreeMap;

/// The CTRL SPAD slots per TOP_SP `program`'s arch has.
pub fn capacity(program: &ValidProgram) -> u32 {
    let bytes = program.arch().params().ctrl_spad_size as usize;
    u32::try_from(bytes / ctrl_spad::SLOT_BYTES).unwrap_or(u32::MAX)
}

/// The slots a collective of `phases` phases takes on each TOP_SP it uses
/// (one record per phase).
pub fn slots(phases: usize) -> u32 {
    u32::try_from(ctrl_spad::slots(phases)).unwrap_or(u32::MAX)
}

/// Fits `program`'s `Auto` choices into the CTRL SPAD (see the module
/// doc): unchanged when it fits or holds no `Auto` collective.
///
/// # Errors
///
/// [`Overflow`] when the program's collectives do not fit, even with the
/// fewest slots each `Auto` collective can take.
pub fn fit(program: &mut ValidProgram) -> Result<(), Overflow> {
    let capacity = capacity(program);
    fit_within(program, capacity)
}

/// A program whose collectives take more slots of a TOP_SP's CTRL SPAD
/// than it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// Slots the collectives take as chosen.
    pub needed: u32,
    /// Slots a TOP_SP's CTRL SPAD holds.
    pub capacity: u32,
    /// When any collective is `Auto`, a lower bound on the slots the
    /// collectives take with each `Auto` one's fewest: exact, or, when
    /// more collectives than slots need one, one a collective.
    pub fewest: Option<u32>,
    /// The collectives taking the most slots (at most [`HEAVIEST`]), most
    /// first: `collective 3 (InterRdh, 24 phases): 4 slots`; empty when
    /// every collective takes one.
    pub heaviest: Vec<String>,
    /// Whether more collectives take a slot than the CTRL SPAD holds (each
    /// takes one at the fewest): no choice of algorithms fits them.
    pub by_count: bool,
}

/// How many of the collectives taking the most slots an [`Overflow`] names.
pub const HEAVIEST: usize = 5;

/// [`fit`] against `capacity` slots (tests use fewer than the arch's).
pub(crate) fn fit_within(program: &mut ValidProgram, capacity: u32) -> Result<(), Overflow> {
    // A collective alone never comes near the limit (lowering still
    // checks it).
    if program.collectives.len() < 2 {
        return Ok(());
    }
    // A collective that does not plan is refused by building it.
    let Some(phases) = phases(program) else { return Ok(()) };
    let taken: Vec<u32> = phases.iter().map(|&p| slots(p as usize)).collect();
    let needed = taken.iter().fold(0u32, |sum, &s| sum.saturating_add(s));
    let machine = Machine::of(program);
    let max_events = u32::from(program.arch().params().mesh_event_max);
    let slots_over = needed > capacity;
    // The most mesh events a TOP_SP needs over the collectives, and over
    // the written ones, rank by rank: counted only where choosing again
    // could be needed for them.
    let counted = held_after_auto(program).then(|| most_events(program, machine));
    let events_short = counted.is_some_and(|(all, written)| all > max_events && written <= max_events);
    if !slots_over && !events_short {
        return Ok(());
    }
    // Fitted for the mesh events alone, a program that cannot fit is left
    // to lowering, which names the rank and TOP_SP that run out.
    let refused = |o: Overflow| if slots_over { Err(o) } else { Ok(()) };
    let with_slots = taken.iter().filter(|&&s| s > 0).count();
    let by_count = u32::try_from(with_slots).unwrap_or(u32::MAX) > capacity;
    let overflow = |fewest| Overflow { needed, capacity, fewest, heaviest: heaviest(program, &phases), by_count };
    if program.collectives.iter().all(|c| c.auto.is_none()) {
        return refused(overflow(None));
    }
    // Each collective with a phase takes a slot at least, whatever it
    // chooses: a program of more such collectives than slots cannot fit,
    // and is refused before any alternative is built.
    let auto = |i: usize| program.collectives.get(i).is_some_and(|c| c.auto.is_some());
    let fixed = (0..taken.len()).filter(|&i| !auto(i)).fold(0u32, |sum, i| sum.saturating_add(taken[i]));
    let at_least = (0..taken.len()).filter(|&i| auto(i) && taken[i] > 0).count();
    let at_least = fixed.saturating_add(u32::try_from(at_least).unwrap_or(u32::MAX));
    if at_least > capacity {
        return refused(overflow(Some(at_least)));
    }
    let mut items: Vec<Item> = Vec::new();
    // Where an equal collective's options were found: by bucket, then
    // compared whole.
    let mut seen: BTreeMap<Bucket, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, c) in program.collectives.iter().enumerate() {
        if c.auto.is_none() {
            continue;
        }
        let bucket = seen.entry((c.op, c.dtype, c.count, c.channels)).or_default();
        let equal = bucket.iter().find(|&&(j, _)| program.collectives.get(j).is_some_and(|e| same_choice(e, c)));
        let (options, widened) = match equal.and_then(|&(_, k)| items.get(k)) {
            Some(item) => (item.options.clone(), item.widened.clone()),
            None => {
                bucket.push((i, items.len()));
                options(c, machine)
            }
        };
        if options.is_empty() {
            return refused(overflow(None));
        }
        items.push(Item { collective: i, options, widened });
    }
    let least = |item: &Item| item.options.iter().map(|o| o.slots).min().unwrap_or(0);
    let fewest = items.iter().fold(fixed, |sum, item| sum.saturating_add(least(item)));
    // The mesh events the `Auto` collectives may take in all: what the
    // written ones leave of a TOP_SP's at their busiest rank. Each `Auto`
    // collective's most, summed, bounds what any rank needs over them, so
    // what fits here lowers.
    let written_events = counted.unwrap_or_else(|| most_events(program, machine)).1;
    let events = max_events.saturating_sub(written_events);
    let Some(slots_left) = capacity.checked_sub(fixed) else { return refused(overflow(Some(fewest))) };
    let Some(picks) = knapsack(&items, Room { slots: slots_left, events }) else {
        return refused(overflow(Some(fewest)));
    };
    for (item, pick) in items.iter().zip(picks) {
        let Some(c) = program.collectives.get_mut(item.collective) else { continue };
        let Some(auto) = &mut c.auto else { continue };
        let Some(chosen) = item.options.get(pick).map(|o| o.alternative) else { continue };
        // The options index the widened alternatives where there are
        // some (a superset, in the same order), else the collective's own.
        let among = item.widened.as_deref().unwrap_or(&auto.alternatives);
        let algorithm_of = |alts: &[Alternative], i: usize| alts.get(i).map(|a| a.algorithm);
        let was = algorithm_of(&auto.alternatives, auto.chosen);
        if algorithm_of(among, chosen) == was {
            continue;
        }
        if let Some(widened) = &item.widened {
            auto.alternatives.clone_from(widened);
        }
        // The move is recorded against the cheapest of the alternatives
        // listed (the options come cheapest first), not against what
        // validation chose one collective at a time: with the widened
        // alternatives the fit may move to a faster choice that is still
        // not the cheapest listed. Moved to the cheapest, nothing is.
        let cheapest = item.options.first().filter(|w| w.alternative != chosen);
        let taken = item.options.iter().find(|o| o.alternative == chosen);
        auto.fitted = cheapest.zip(taken).map(|(w, c)| Fitted {
            cheapest: w.alternative,
            slots: c.slots,
            cheapest_slots: w.slots,
            capacity,
            events: c.events,
            cheapest_events: w.events,
            max_events,
        });
        for o in &item.options {
            if let Some(a) = auto.alternatives.get_mut(o.alternative) {
                a.predicted_ns = Some(o.predicted_ns);
            }
        }
        auto.chosen = chosen;
        if let Some(a) = auto.alternatives.get(chosen) {
            c.algorithm = a.algorithm;
        }
    }
    Ok(())
}

/// Whether a program's mesh events may need choosing again for: a
/// written collective comes after an `Auto` one (validation holds each
/// `Auto` collective to what the collectives before it leave, not to what
/// written ones after it need: an `Auto` choice taking 16 events left a
/// later written Mesh all-gather 1 short at lowering). [`fit_within`]
/// then counts them ([`most_events`]) and chooses again when they pass a
/// TOP_SP's and the written ones alone fit; the `Auto` ones may take what
/// the written ones leave at their busiest rank.
///
/// The events are summed rank by rank (what lowering counts on TOP_SP 0,
/// which hosts every collective): three rooted meshes, each busiest at
/// its own root, do not add up at one rank, whatever groups each
/// collective has (until stop 45, collectives whose groups differed had
/// each one's most summed, the bound validation holds `Auto` to, and a
/// program that lowered could be moved). Each distinct collective is
/// built once.
///
/// A collective partly left to `Auto` (a Hier with a written leg) after an
/// `Auto` one calls for the count as a written one does (it is still
/// fitted as an `Auto` one): validation may have let it choose in what
/// the written collectives leave, past what the `Auto` ones before it
/// left (`ProgramAuto::deferred` in `validate`). Without such a choice,
/// each collective's most, summed, is within the limit and nothing moves.
fn held_after_auto(program: &ValidProgram) -> bool {
    let cs = &program.collectives;
    let Some(first_auto) = cs.iter().position(|c| c.auto.is_some()) else { return false };
    let held_after = |c: &ValidCollective| c.auto.as_ref().is_none_or(|a| !a.auto_legs.is_empty());
    cs.iter().skip(first_auto + 1).any(held_after)
}

/// Whether `program`'s collectives need more mesh events than a TOP_SP
/// has, counted as lowering counts them: rank by rank, summed over the
/// collectives.
pub(crate) fn events_over(program: &ValidProgram) -> bool {
    let max = u32::from(program.arch().params().mesh_event_max);
    most_events(program, Machine::of(program)).0 > max
}

/// The most mesh events a TOP_SP needs over `program`'s collectives, and
/// over its written ones alone (see [`held_after_auto`]).
fn most_events(program: &ValidProgram, machine: Machine) -> (u32, u32) {
    let (mut written, mut all): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for (c, events) in program.collectives.iter().zip(events_by_rank(program, machine)) {
        add(&mut all, &events);
        if c.auto.is_none() {
            add(&mut written, &events);
        }
    }
    let most = |v: &[u32]| v.iter().copied().max().unwrap_or(0);
    (most(&all), most(&written))
}

/// Each of `program`'s collectives' mesh events per TOP_SP, rank by rank
/// (as lowering counts them), in program order; an equal collective's
/// taken again rather than counted.
fn events_by_rank(program: &ValidProgram, machine: Machine) -> Vec<Vec<u32>> {
    let cs = &program.collectives;
    let mut found: Vec<Vec<u32>> = Vec::with_capacity(cs.len());
    for (i, c) in cs.iter().enumerate() {
        let equal = cs.iter().take(i).position(|e| e.algorithm == c.algorithm && same_inputs(e, c));
        let events = match equal.and_then(|j| found.get(j)) {
            Some(events) => events.clone(),
            None => by_rank(c, super::events_by_member(c, machine)),
        };
        found.push(events);
    }
    found
}

/// A collective's events `by_member` (of a group, by index), rank by
/// rank: member `i` of every group needs what member `i` of the one costed
/// needs (the groups share the schedule's phases and scopes).
pub(super) fn by_rank(c: &ValidCollective, by_member: Vec<u32>) -> Vec<u32> {
    if !c.groups.is_explicit() {
        return by_member;
    }
    // Every rank of the world is in one group.
    let (group_n, size) = (c.groups.group_n(), c.groups.size());
    let mut out = vec![0; group_n as usize * size as usize];
    for (g, i) in (0..group_n).flat_map(|g| (0..size).map(move |i| (g, i))) {
        if let (Some(r), Some(&e)) = (c.groups.member(g, i), by_member.get(i as usize))
            && let Some(slot) = out.get_mut(r.0 as usize)
        {
            *slot = e;
        }
    }
    out
}

/// Adds `events` to `sum` rank by rank, `sum` growing to its length.
pub(super) fn add(sum: &mut Vec<u32>, events: &[u32]) {
    if sum.len() < events.len() {
        sum.resize(events.len(), 0);
    }
    for (s, &e) in sum.iter_mut().zip(events) {
        *s = s.saturating_add(e);
    }
}

/// The [`HEAVIEST`] collectives of `program` taking the most slots (most
/// first, then in program order), in words, from their `phases`; none
/// when every collective takes one slot (naming five of them would say
/// nothing).
fn heaviest(program: &ValidProgram, phases: &[u32]) -> Vec<String> {
    if phases.iter().all(|&p| slots(p as usize) <= 1) {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..phases.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(phases.get(i).copied().unwrap_or(0)), i));
    order
        .into_iter()
        .take(HEAVIEST)
        .filter_map(|i| {
            let (c, &p) = (program.collectives.get(i)?, phases.get(i)?);
            let s = slots(p as usize);
            Some(format!(
                "collective {i} ({}, {}): {}",
                display(&c.algorithm),
                noun::count(p, "phase"),
                noun::count(s, "slot")
            ))
        })
        .collect()
}

/// Where a collective planned is found again: its op, dtype, count and
/// channels (then compared whole).
type Bucket = (OpType, DType, u64, u8);

/// The phases (records on each TOP_SP it uses) of each collective of
/// `program` under its algorithm, each distinct collective planned once
/// (a training step repeats a few sizes); `None` when one does not plan
/// (building it will say why).
fn phases(program: &ValidProgram) -> Option<Vec<u32>> {
    let shape = program.topology();
    let mut planned: BTreeMap<Bucket, Vec<(usize, u32)>> = BTreeMap::new();
    let mut phases = Vec::with_capacity(program.collectives.len());
    for (i, c) in program.collectives.iter().enumerate() {
        let bucket = planned.entry((c.op, c.dtype, c.count, c.channels)).or_default();
        let equal = |&&(j, _): &&(usize, u32)| {
            program.collectives.get(j).is_some_and(|e| e.algorithm == c.algorithm && same_inputs(e, c))
        };
        let n = match bucket.iter().find(equal) {
            Some(&(_, n)) => n,
            None => {
                let n = u32::try_from(plan_as(c, &c.algorithm, &shape).ok()?.phases.len()).unwrap_or(u32::MAX);
                bucket.push((i, n));
                n
            }
        };
        phases.push(n);
    }
    Some(phases)
}

/// One `Auto` collective's options.
struct Item {
    /// Its index in the program.
    collective: usize,
    /// Every alternative it may take, in preference order: prediction,
    /// then the alternatives' tie-break order.
    options: Vec<Choice>,
    /// The alternatives the options index when they are not the
    /// collective's own: those it holds with a whole TOP_SP's mesh events,
    /// where the collectives before it had left it fewer ([`options`]).
    widened: Option<Vec<Alternative>>,
}

/// One alternative a collective may take.
#[derive(Clone, Copy, Debug)]
struct Choice {
    /// Its index in the collective's alternatives.
    alternative: usize,
    /// Its prediction, whole ns.
    predicted_ns: u64,
    /// Its CTRL SPAD slots per TOP_SP.
    slots: u32,
    /// The most mesh events per TOP_SP any member needs under it
    /// ([`super::mesh_events`]).
    events: u32,
}

/// What the `Auto` collectives may take in all: CTRL SPAD slots and mesh
/// events per TOP_SP.
#[derive(Clone, Copy, Debug)]
struct Room {
    slots: u32,
    events: u32,
}

/// Whether `a` and `b` have the same alternatives to take: the same
/// collective but its index, and the same alternatives and first choice.
fn same_choice(a: &ValidCollective, b: &ValidCollective) -> bool {
    same_inputs(a, b) && a.auto == b.auto
}

/// Whether `a` and `b` are the same collective but their index and
/// algorithm: all that planning reads but the algorithm, and the model.
pub(super) fn same_inputs(a: &ValidCollective, b: &ValidCollective) -> bool {
    let fields = |c: &ValidCollective| (c.op, c.dtype, c.reduce, c.count, c.channels, c.root, c.model);
    fields(a) == fields(b) && a.peers == b.peers && a.counts == b.counts && a.groups == b.groups
}

/// The alternatives of `c`, each built and predicted, in preference
/// order (prediction, then the alternatives' order). Empty when one does
/// not build.
///
/// Validation held `c` to the mesh events the collectives before it
/// left; choosing the program's `Auto` collectives again at once, each
/// may take any choice that lowers on its own within a whole TOP_SP's
/// events (the knapsack holds their sum to what the written collectives
/// leave): where `c` was held to fewer ([`ValidCollective::listed`]),
/// its candidates are held again with none spent, and when that holds
/// more of them, those are its alternatives here (returned beside the
/// options, which index them). A mesh that an earlier collective's
/// choice crowded out is then weighed against that choice.
fn options(c: &ValidCollective, machine: Machine) -> (Vec<Choice>, Option<Vec<Alternative>>) {
    let none = (Vec::new(), None);
    let Some(auto) = &c.auto else { return none };
    let widened = c.listed.as_ref().and_then(|listed| {
        let whole = Machine { mesh_events_spent: 0, ..machine };
        let alone = super::choose(c, whole, &c.model, listed.to_vec(), auto.auto_legs.clone()).ok()?;
        (alone.alternatives.len() > auto.alternatives.len()).then_some(alone.alternatives)
    });
    let alternatives = widened.as_deref().unwrap_or(&auto.alternatives);
    let mut options = Vec::with_capacity(alternatives.len());
    for (i, alt) in alternatives.iter().enumerate() {
        let Some((schedule, e)) = evaluate_choice(c, machine, &c.model, &alt.algorithm) else { return none };
        let Some(plan) = schedule.collectives.first() else { return none };
        let predicted_ns = whole_ns(e.prediction.total_ns);
        options.push(Choice {
            alternative: i,
            predicted_ns,
            slots: slots(plan.phases.len()),
            events: events_of(&schedule),
        });
    }
    options.sort_by_key(|o| (o.predicted_ns, o.alternative));
    (options, widened)
}

/// For each item, the option to take (an index into its options): the
/// least sum of predictions whose slots and mesh events each sum to at
/// most `room`'s, the tie-break of the module doc (of equal sums, the
/// earliest item takes its first option in preference order). `None`
/// when nothing fits.
fn knapsack(items: &[Item], room: Room) -> Option<Vec<usize>> {
    let (slots, events) = (room.slots as usize, room.events as usize);
    let depth = events + 1;
    let cells = (slots + 1) * depth;
    let cell = |s: usize, e: usize| s * depth + e;
    // after[cell(s, e)]: the least sum for the items after the current
    // one within s slots and e events (`None`: they do not fit); taken[k]
    // the option item k takes for each cell (`NONE`: none fits).
    const NONE: u16 = u16::MAX;
    let mut after: Vec<Option<u128>> = vec![Some(0); cells];
    let mut taken: Vec<Vec<u16>> = vec![Vec::new(); items.len()];
    for (k, item) in items.iter().enumerate().rev() {
        let mut here: Vec<Option<u128>> = vec![None; cells];
        let mut pick = vec![NONE; cells];
        for s in 0..=slots {
            for e in 0..=events {
                let mut found: Option<(u128, u16)> = None;
                for (i, o) in item.options.iter().enumerate() {
                    let (Some(ls), Some(le)) = (s.checked_sub(o.slots as usize), e.checked_sub(o.events as usize))
                    else {
                        continue;
                    };
                    let Some(&Some(rest)) = after.get(cell(ls, le)) else { continue };
                    let sum = rest + u128::from(o.predicted_ns);
                    // Options come in preference order: a later one
                    // replaces an earlier only when strictly cheaper.
                    if found.is_none_or(|(f, _)| sum < f) {
                        found = Some((sum, u16::try_from(i).unwrap_or(NONE)));
                    }
                }
                if let Some((sum, i)) = found {
                    here[cell(s, e)] = Some(sum);
                    pick[cell(s, e)] = i;
                }
            }
        }
        after = here;
        taken[k] = pick;
    }
    let (mut s, mut e) = (slots, events);
    let mut picks = Vec::with_capacity(items.len());
    for (item, row) in items.iter().zip(&taken) {
        let pick = *row.get(cell(s, e))?;
        let o = item.options.get(usize::from(pick))?;
        picks.push(usize::from(pick));
        s -= o.slots as usize;
        e -= o.events as usize;
    }
    Some(picks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::validate::validate;
    use ccc_ir::arch::Arch;
    use ccc_ir::enums::OpType;
    use ccc_ir::spec::{Algorithm, Collective, DType, Program, ReduceOp, Topology};

    /// All-reduces of `counts` elements on two nodes of 32, each `Auto`
    /// (the smallest choose InterRdh: 12 phases, 2 slots).
    fn program(counts: &[u64]) -> Program {
        let c = |count| {
            Collective::new(OpType::AllReduce, DType::Bf16, count, Arch::Cayman, Topology::new(64, 32))
                .reduce(ReduceOp::Add)
                .channels(4)
                .algorithm(Algorithm::Auto)
        };
        Program { collectives: counts.iter().map(|&n| c(n)).collect() }
    }

    /// The least sum of predictions over every way to give each item one
    /// of its options within `room` slots, by trying them all.
    fn brute_force(items: &[Item], room: Room) -> Option<u128> {
        let mut best: Option<u128> = None;
        let mut pick = vec![0usize; items.len()];
        loop {
            let options: Vec<&Choice> = items.iter().zip(&pick).map(|(item, &k)| &item.options[k]).collect();
            let events = options.iter().map(|o| o.events).sum::<u32>();
            if options.iter().map(|o| o.slots).sum::<u32>() <= room.slots && events <= room.events {
                let sum = options.iter().map(|o| u128::from(o.predicted_ns)).sum::<u128>();
                best = Some(best.map_or(sum, |b| b.min(sum)));
            }
            // The next combination, the last item fastest.
            let mut k = items.len();
            loop {
                if k == 0 {
                    return best;
                }
                k -= 1;
                pick[k] += 1;
                if pick[k] < items[k].options.len() {
                    break;
                }
                pick[k] = 0;
            }
        }
    }

    /// Over three all-reduces of different sizes, every room of slots
    /// from none to what their most take and rooms of mesh events from
    /// none to plenty, the knapsack finds the least sum that trying every
    /// combination finds, or none exactly when none fits; its picks take
    /// at most the room; and where several picks tie, the earliest
    /// collective takes the first option in preference order.
    #[test]
    fn the_knapsack_finds_the_least_sum_within_the_room() {
        let valid = validate(&program(&[64, 1 << 16, 1 << 22])).unwrap();
        let machine = Machine::of(&valid);
        let items: Vec<Item> = valid
            .collectives
            .iter()
            .enumerate()
            .map(|(i, c)| Item { collective: i, options: options(c, machine).0, widened: None })
            .collect();
        // Several slot counts and mesh events to choose between, or
        // nothing is tested.
        for item in &items {
            let slots: std::collections::BTreeSet<u32> = item.options.iter().map(|o| o.slots).collect();
            let events: std::collections::BTreeSet<u32> = item.options.iter().map(|o| o.events).collect();
            assert!(slots.len() > 1 && events.len() > 1, "{:?}", item.options);
        }
        let most = |f: fn(&Choice) -> u32| items.iter().map(|i| i.options.iter().map(f).max().unwrap()).sum::<u32>();
        let (slots_most, events_most) = (most(|o| o.slots), most(|o| o.events));
        let mut fitted = 0;
        let mut tried = 0;
        for slots in 0..=slots_most {
            for events in [0, 1, events_most / 4, events_most / 2, events_most] {
                let room = Room { slots, events };
                let picks = knapsack(&items, room);
                let want = brute_force(&items, room);
                let got = picks.as_ref().map(|p| {
                    let options: Vec<&Choice> = items.iter().zip(p).map(|(item, &k)| &item.options[k]).collect();
                    assert!(options.iter().map(|o| o.slots).sum::<u32>() <= slots, "{room:?}: {options:?}");
                    assert!(options.iter().map(|o| o.events).sum::<u32>() <= events, "{room:?}: {options:?}");
                    options.iter().map(|o| u128::from(o.predicted_ns)).sum::<u128>()
                });
                assert_eq!(got, want, "{room:?}");
                fitted += usize::from(picks.is_some());
                tried += 1;
            }
        }
        assert!(fitted > 0 && fitted < tried, "{fitted} of {tried} rooms fit");
        // Two equal items and a room for one to take its first option:
        // the earlier takes it.
        let twin = |collective| Item { collective, options: items[0].options.clone(), widened: None };
        let pair = [twin(0), twin(1)];
        let first = &items[0].options[0];
        let fewer =
            items[0].options.iter().filter(|o| o.slots < first.slots).min_by_key(|o| (o.predicted_ns, o.alternative));
        if let Some(fewer) = fewer {
            let room = Room { slots: first.slots + fewer.slots, events: first.events + fewer.events };
            let picks = knapsack(&pair, room).unwrap();
            assert_eq!(picks[0], 0, "{picks:?}");
        }
    }

    /// The options of a collective: every prediction `Auto` made of an
    /// alternative is the one fitting computes, and the slots and mesh
    /// events of each are what its lowered chain takes on TOP_SP 0.
    #[test]
    fn options_agree_with_auto_and_with_lowering() {
        let valid = validate(&program(&[64, 1 << 22])).unwrap();
        let machine = Machine::of(&valid);
        for c in &valid.collectives {
            let auto = c.auto.as_ref().unwrap();
            let (options, widened) = options(c, machine);
            assert!(widened.is_none(), "held to a whole TOP_SP's events, nothing to widen");
            assert_eq!(options.len(), auto.alternatives.len());
            for o in options {
                let alt = &auto.alternatives[o.alternative];
                if let Some(p) = alt.predicted_ns {
                    assert_eq!(p, o.predicted_ns, "{:?}", alt.algorithm);
                }
                let (schedule, _) = evaluate_choice(c, machine, &c.model, &alt.algorithm).unwrap();
                let program = crate::pipeline::lower_ranks(&schedule, &[ccc_ir::id::Rank(0)]).unwrap();
                let records = program[0].topsps[0].segments[0].records.len();
                assert_eq!(o.slots as usize, ctrl_spad::slots(records), "{:?}", alt.algorithm);
                // Every member of a world all-reduce waits on as many.
                assert_eq!(o.events as usize, program[0].topsps[0].neff.mesh_events.len(), "{:?}", alt.algorithm);
            }
        }
    }

    /// A program whose collectives fit is left as validation chose it;
    /// squeezed into fewer slots, every moved collective records what it
    /// left, and the slots it now takes, and the program fits.
    #[test]
    fn only_a_program_that_does_not_fit_moves() {
        let counts = [64, 64, 1 << 16, 1 << 22, 64];
        let chose = validate(&program(&counts)).unwrap();
        assert!(chose.collectives.iter().all(|c| c.auto.as_ref().unwrap().fitted.is_none()));
        let taken = |p: &ValidProgram| -> u32 {
            build(p).unwrap().collectives.iter().map(|plan| slots(plan.phases.len())).sum()
        };
        let before = taken(&chose);
        // Planned once per distinct collective, as built.
        let each: Vec<u32> = build(&chose).unwrap().collectives.iter().map(|p| p.phases.len() as u32).collect();
        assert_eq!(super::phases(&chose), Some(each));
        let mut same = chose.clone();
        fit_within(&mut same, before).unwrap();
        assert!(same.collectives.iter().zip(&chose.collectives).all(|(a, b)| a.auto == b.auto));
        let mut squeezed = chose.clone();
        fit_within(&mut squeezed, before - 1).unwrap();
        assert!(taken(&squeezed) < before);
        let mut moved = 0;
        for (c, was) in squeezed.collectives.iter().zip(&chose.collectives) {
            let auto = c.auto.as_ref().unwrap();
            let Some(f) = auto.fitted else {
                assert_eq!(c.algorithm, was.algorithm);
                continue;
            };
            moved += 1;
            // The cheapest of its alternatives: here the one it left
            // (held to a whole TOP_SP's events, nothing was widened).
            assert_eq!(auto.alternatives[f.cheapest].algorithm, was.algorithm);
            assert!(f.slots < f.cheapest_slots, "{f:?}");
            assert_eq!(c.algorithm, auto.alternatives[auto.chosen].algorithm);
            assert!(auto.alternatives.iter().all(|a| a.predicted_ns.is_some()));
        }
        assert!(moved > 0);
    }

    /// A fitted collective that is not the cheapest of the alternatives
    /// it lists records the move, against the cheapest of them, even
    /// where the fit moved it to a faster choice than validation's (a
    /// mesh the earlier collectives had crowded out, weighed again): 6
    /// tiny all-reduces take the mesh events first, then 30 larger ones
    /// must fit. It recorded nothing there, and `verify` called such a
    /// choice "the cheapest" with a faster one named "next".
    #[test]
    fn every_choice_off_the_cheapest_listed_records_the_move() {
        let c = |count| {
            Collective::new(OpType::AllReduce, DType::Bf16, count, Arch::Cayman, Topology::new(64, 16))
                .reduce(ReduceOp::Add)
                .channels(1)
                .algorithm(Algorithm::Auto)
        };
        let program = Program { collectives: [1; 6].into_iter().chain([2048; 30]).map(c).collect() };
        let valid = validate(&program).unwrap();
        let mut recorded = 0;
        for (i, c) in valid.collectives.iter().enumerate() {
            let auto = c.auto.as_ref().unwrap();
            // One not predicted could not win: its floor is at least the
            // runner-up's prediction.
            let predicted = |k: usize| auto.alternatives[k].predicted_ns.unwrap_or(auto.alternatives[k].floor_ns);
            let cheapest = (0..auto.alternatives.len()).min_by_key(|&k| (predicted(k), k)).unwrap();
            match auto.fitted {
                None => assert_eq!(auto.chosen, cheapest, "collective {i} is off its cheapest, unrecorded"),
                Some(f) => {
                    assert_eq!(f.cheapest, cheapest, "collective {i}");
                    assert_ne!(auto.chosen, cheapest, "collective {i}");
                    recorded += 1;
                }
            }
        }
        assert!(recorded > 6, "the larger collectives move too: {recorded}");
    }
}
