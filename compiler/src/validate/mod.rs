//! validate: a parsed spec into a [`ValidProgram`], or every problem in it.
//!
//! Validation collects: it reports every problem at once, each a typed
//! [`Problem`] located by a field path inside its collective
//! (`topology.local_rank_n`, `groups[1][3]`, `algorithm.inter_all_reduce`).
//! Checks that depend on an invalid value (the group size when the groups
//! are broken, the node of a rank when the topology is) are skipped rather
//! than reported as a cascade of follow-on errors.
//!
//! What an algorithm serves and what structure it needs come from
//! [`crate::algorithms`], the single source of truth.

use crate::algorithms::{self, Requirement};
use crate::cost::auto::{Candidates, Machine, NoChoice, Stands};
use crate::cost::{self, ModelParams};
use crate::valid::{
    AutoChoice, DEFAULT_SEND_CREDITS, Groups, LegAlgorithms, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram,
};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Algorithm, Barrier, Collective, DType, HierLegs, Leg, LegChoices, Program, ReduceOp, Topology};
use std::collections::BTreeMap;
use std::fmt::{self, Display};

/// The largest world ccc compiles, ring channels and initial send
/// credits accepted: `ccc_ir`'s, where `parse` reads them too.
pub use ccc_ir::spec::{CHANNELS, MAX_RANK_N, SEND_CREDITS};

mod algorithm;
pub(crate) use algorithm::{auto_legs, combinations};
mod cache;
mod error;
mod problem;
#[cfg(test)]
mod tests;
mod wording;

pub use cache::AutoCache;
use cache::Table;
pub use error::{ValidationError, ValidationErrors};
pub use problem::*;

// ---------------------------------------------------------------------------
// The pass.

/// Checks a parsed program and resolves its defaults.
///
/// # Errors
///
/// [`ValidationErrors`] listing every problem found (at least one).
pub fn validate(program: &Program) -> Result<ValidProgram, ValidationErrors> {
    validate_with(program, &mut ProgramAuto::of(program))
}

/// Checks, of `c`, only the settings every collective of a program shares
/// and an HLO target sets for all of them: `topology`, `channels`,
/// `barrier`, `send_credits` and `model`, by the rules [`validate`]
/// applies to each collective. The op, count, groups and algorithm are not
/// looked at. Each problem is named by the setting's own path
/// (`model.hops_max`), with no collective index: `ccc import` refuses a
/// target whose values no collective could take before importing anything.
///
/// # Errors
///
/// [`ValidationErrors`] listing every problem found (at least one).
pub fn validate_settings(c: &Collective) -> Result<(), ValidationErrors> {
    let mut cx = Checker::new(0);
    cx.settings(c, Own { topology: true, barrier: true, send_credits: true });
    if cx.errors.is_empty() {
        return Ok(());
    }
    let mut errors: Vec<ValidationError> =
        cx.errors.into_iter().map(|e| ValidationError { collective: None, ..e }).collect();
    push_unlisted(&mut errors, cx.unlisted);
    Err(ValidationErrors(errors))
}

/// [`validate`], keeping what `Auto` finds in `cache` for the programs
/// validated after it, and taking what earlier ones kept there.
///
/// A framework's lowering pass that compiles one collective at a time
/// (one program each) meets the same collective again and again: every
/// layer's gradient all-reduce of one size, every step. Validated with
/// one [`AutoCache`], a collective equal to one seen before reuses its
/// answer instead of searching again. The result is the one [`validate`]
/// gives, whatever the cache holds (`docs/cost-model.md` §4, "Across
/// programs").
///
/// # Errors
///
/// As [`validate`].
pub fn validate_cached(program: &Program, cache: &mut AutoCache) -> Result<ValidProgram, ValidationErrors> {
    validate_in(program, cache).0
}

/// [`validate_cached`], with what `Auto` carried through the program
/// (its memo given back to `cache`).
fn validate_in(program: &Program, cache: &mut AutoCache) -> (Result<ValidProgram, ValidationErrors>, ProgramAuto) {
    let mut autos = ProgramAuto::of(program);
    autos.memo = std::mem::take(&mut cache.memo);
    // A cache that keeps nothing between programs validates as
    // `validate` does, without keeping for later what it would drop.
    let keeps = cache.capacity > 0;
    autos.capacity = cache.capacity;
    autos.keep_all = keeps;
    let valid = validate_with(program, &mut autos);
    autos.memo.release(cache.capacity);
    cache.memo = std::mem::take(&mut autos.memo);
    (valid, autos)
}

/// [`validate_cached`], with every `Auto` answer logged.
#[cfg(test)]
fn validate_cached_logged(
    program: &Program,
    cache: &mut AutoCache,
) -> (Result<ValidProgram, ValidationErrors>, Vec<Logged>) {
    let (valid, autos) = validate_in(program, cache);
    (valid, autos.log)
}

/// [`validate`], with every `Auto` answer the program's collectives asked
/// `autos` for logged (the tests compare each with a fresh search).
#[cfg(test)]
fn validate_logged(program: &Program) -> (Result<ValidProgram, ValidationErrors>, Vec<Logged>) {
    let mut autos = ProgramAuto::of(program);
    let valid = validate_with(program, &mut autos);
    (valid, autos.log)
}

/// The most problems a [`ValidationErrors`] lists; past them they are
/// counted ([`Problem::Unlisted`]), so that a spec of many bad entries
/// costs no more memory and text than this many.
pub const PROBLEMS_LISTED: usize = 256;

/// Ends `errors` with the count of the problems not listed, if any.
fn push_unlisted(errors: &mut Vec<ValidationError>, n: u64) {
    if n > 0 {
        errors.push(ValidationError { collective: None, field: "...".to_owned(), problem: Problem::Unlisted { n } });
    }
}

/// [`validate`], `Auto` carrying what it found in `autos`.
fn validate_with(program: &Program, autos: &mut ProgramAuto) -> Result<ValidProgram, ValidationErrors> {
    let mut errors = Vec::new();
    let Some(first) = program.collectives.first() else {
        errors.push(ValidationError {
            collective: None,
            field: "collectives".to_owned(),
            problem: Problem::NoCollectives,
        });
        return Err(ValidationErrors(errors));
    };
    let first_barrier = first.barrier.unwrap_or_default();
    let first_credits = first.send_credits.unwrap_or(u32::from(DEFAULT_SEND_CREDITS));

    let mut valid = Vec::new();
    let mut unlisted = 0u64;
    for (i, c) in program.collectives.iter().enumerate() {
        let mut cx = Checker::new(idx(i));
        let barrier = c.barrier.unwrap_or_default();
        let credits = c.send_credits.unwrap_or(u32::from(DEFAULT_SEND_CREDITS));
        if i > 0 {
            if c.arch != first.arch {
                cx.push("arch", Problem::ArchDiffers { found: c.arch, first: first.arch });
            }
            if c.topology != first.topology {
                cx.push("topology", Problem::TopologyDiffers { found: c.topology, first: first.topology });
            }
            if barrier != first_barrier {
                cx.push("barrier", Problem::BarrierDiffers { found: barrier, first: first_barrier });
            }
            if credits != first_credits {
                cx.push("send_credits", Problem::SendCreditsDiffers { found: credits, first: first_credits });
            }
        }
        // Shared settings are reported once, at the first collective that
        // carries them, not once per collective.
        let own = Own {
            topology: i == 0 || c.topology != first.topology,
            barrier: i == 0 || barrier != first_barrier,
            send_credits: i == 0 || credits != first_credits,
        };
        if let Some(v) = cx.collective(c, own, autos) {
            valid.push(v);
        }
        // At most PROBLEMS_LISTED over the program, the rest counted.
        let room = PROBLEMS_LISTED.saturating_sub(errors.len()).min(cx.errors.len());
        unlisted = unlisted.saturating_add(cx.unlisted).saturating_add((cx.errors.len() - room) as u64);
        errors.extend(cx.errors.drain(..room));
    }

    let shape = shape_of(first.topology);
    let all_valid = errors.is_empty() && valid.len() == program.collectives.len();
    match (all_valid, shape, u16::try_from(first_credits)) {
        (true, Some(topology), Ok(send_credits)) => {
            let mut program =
                ValidProgram { arch: first.arch, topology, barrier: first_barrier, send_credits, collectives: valid };
            // The choices made one collective at a time, fitted together
            // into the CTRL SPAD they share; a program that cannot fit is
            // refused here, before anything is lowered.
            match cost::auto::fit::fit(&mut program) {
                // A collective chose in more mesh events than the `Auto`
                // ones before it left, and choosing them again did not
                // make room: its refusal stands.
                Ok(()) if !autos.deferred.is_empty() && cost::auto::fit::events_over(&program) => {
                    Err(ValidationErrors(std::mem::take(&mut autos.deferred)))
                }
                Ok(()) => Ok(program),
                // A collective that chose in more events than the `Auto`
                // ones before it left is not refused beside it: the way
                // out is splitting the program, after which it may fit
                // (`ccc import --split` cuts a program refused for its
                // slots alone).
                Err(o) => Err(ValidationErrors(vec![ValidationError {
                    collective: None,
                    field: "collectives".to_owned(),
                    problem: Problem::CtrlSpadFull(o),
                }])),
            }
        }
        // With the program refused for other problems, nothing says
        // fitting it would make room: a collective that chose in more
        // events than the `Auto` ones before it left is refused as well,
        // in its place among the collectives.
        _ => {
            let mut deferred = std::mem::take(&mut autos.deferred);
            if !deferred.is_empty() {
                errors.append(&mut deferred);
                errors.sort_by_key(|e| e.collective.map_or(u32::MAX, |i| i));
                // Still the first PROBLEMS_LISTED, the rest counted.
                unlisted = unlisted.saturating_add(errors.len().saturating_sub(PROBLEMS_LISTED) as u64);
                errors.truncate(PROBLEMS_LISTED);
            }
            push_unlisted(&mut errors, unlisted);
            Err(ValidationErrors(errors))
        }
    }
}

/// Why `Auto` found no choice for a collective of `op`, reported at its
/// `algorithm`: it is this collective's choice that fails (for
/// `OutOfRange`, its size with the model), not the model alone.
fn auto_problem(op: OpType, no: NoChoice) -> Problem {
    match no {
        NoChoice::NonePlans => Problem::AutoNoChoice { op },
        NoChoice::OutOfRange => Problem::AutoOutOfRange { op },
        NoChoice::Limit { limit, arch, needed, max, spent, fewest, also } => {
            let fewest = cost::auto::display(&fewest);
            let also = also
                .into_iter()
                .map(|a| AlsoNeeds {
                    limit: a.limit,
                    needed: a.needed,
                    max: a.max,
                    fewest: cost::auto::display(&a.fewest),
                })
                .collect();
            Problem::AutoNoneLowers { op, arch, limit, needed, max, spent, fewest, also }
        }
    }
}

fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The shape of a topology, if it is valid.
fn shape_of(t: Topology) -> Option<Shape> {
    let ok = (1..=MAX_RANK_N).contains(&t.rank_n)
        && t.local_rank_n >= 1
        && t.rank_n.is_multiple_of(t.local_rank_n)
        && t.pod_n >= 1
        && (t.rank_n / t.local_rank_n).is_multiple_of(t.pod_n);
    ok.then(|| {
        let node_n = t.rank_n / t.local_rank_n;
        Shape {
            rank_n: t.rank_n,
            local_rank_n: t.local_rank_n,
            pod_n: t.pod_n,
            node_n,
            nodes_per_pod: node_n / t.pod_n,
        }
    })
}

/// What `Auto` carries from one collective of a program to the next.
///
/// **The mesh events spent.** A TOP_SP's mesh events add up over every
/// collective it hosts, and every collective has records on TOP_SP 0 (a
/// collective of `c` channels uses TOP_SPs `0..c`, at most the arch's),
/// so what the collectives before an `Auto` collective spend on TOP_SP 0
/// bounds what they spend on any TOP_SP it uses. Each collective before
/// the last `Auto` one adds the most events any member of its groups
/// needs under its algorithm, written or chosen
/// ([`cost::auto::mesh_events`]), and `Auto` holds its candidates to what
/// is left ([`Machine::mesh_events_spent`]). Choices are thus made in
/// program order, the earlier collectives' first; one that finds no
/// choice in what the `Auto` ones before it left asks again in what the
/// written ones leave, and the program is fitted afterwards
/// ([`ProgramAuto::deferred`]). The sum of each
/// collective's most is at least what any one rank needs over them, so
/// what this accepts lowers; it can refuse a candidate that would lower
/// only when different members are the busiest in different collectives
/// (explicit groups of uneven shapes, rooted meshes).
///
/// **The answers found.** A program repeating a collective (a training
/// step's per-layer all-reduces of one size, an imported module's equal
/// all-gathers) plans its candidates once per distinct collective. The
/// answer is a function of what is compared here and nothing else:
/// [`cost::auto::choose`] reads the collective's op, dtype, reduction,
/// count, channels, groups, root, peers, counts and model, the machine
/// (with the events spent), the candidates and the `Auto` legs, and not
/// its index (it plans every candidate as collective 0). Entries are
/// found by op, dtype, count and channels in a `BTreeMap`, then compared
/// whole (the machine without the events spent). Validated alone
/// ([`validate`]), only a collective that a later one could equal (the
/// same op, dtype, count and channels) keeps anything, so a program of
/// distinct collectives holds no plans; through an [`AutoCache`]
/// ([`validate_cached`]) every collective keeps what it found for later
/// programs, within the cache's capacity, and what one keeps for a later
/// collective of its own program is pinned until the program ends. Each
/// entry keeps the candidates planned, with every need counted and value costed of them
/// so far ([`Candidates`]: they depend on the collective and the machine,
/// not on the events left), and the answers found. An answer is reused
/// while the events left are in the range over which it stands
/// ([`Stands`]: the same candidates held), a refusal only with the same
/// events spent; otherwise the entry's candidates choose again for the
/// events left, judging them and running the branch and bound afresh over
/// the values kept, costing only what no earlier choice asked for. That
/// answer is the one a fresh search gives, equal as a whole: what it
/// records of an alternative is what this choice asked of it, whatever
/// the earlier ones found (`tests/algorithm.rs` compares every answer of
/// the training step, of programs that refuse some candidates and all of
/// them, and of random programs with a fresh `choose_standing`).
struct ProgramAuto {
    /// The answers found, the events spent and the listings made, kept
    /// for the collectives after (and, in an [`AutoCache`], for later
    /// programs).
    memo: Memo,
    /// The most entries each of `memo`'s tables keeps beyond those
    /// pinned for this program's later collectives: unbounded for one
    /// program, the cache's otherwise.
    capacity: usize,
    /// Whether every collective keeps what it found (in an
    /// [`AutoCache`], a later program may equal any of them), not only
    /// those a later collective of this program could equal (which pin
    /// what they keep until the program ends).
    keep_all: bool,
    /// Whether a later collective of this program may take a listing
    /// kept: when more than one collective is `Auto` (a listing kept then
    /// is pinned until the program ends).
    lists_within: bool,
    /// The mesh events per TOP_SP the collectives so far spend.
    mesh_events_spent: u32,
    /// Of which the written collectives' (those with no `Auto` in their
    /// algorithm): what is left when the `Auto` ones before are chosen
    /// again ([`ProgramAuto::deferred`]).
    written_spent: u32,
    /// The refusals of collectives (partly left to `Auto`) that found no
    /// choice in what the `Auto` collectives before them left, but one in
    /// what the written ones leave: each took that choice, spending
    /// nothing for the collectives after it, and the program's `Auto`
    /// choices are fitted together afterwards ([`cost::auto::fit`]). If
    /// the program's mesh events still pass a TOP_SP's then, these
    /// refusals are the program's.
    deferred: Vec<ValidationError>,
    /// The collectives before this index spend events an `Auto` one
    /// after them must leave room for: up to the last collective with
    /// `Auto` in its algorithm.
    counted_before: usize,
    /// By collective up to the last `Auto` one: whether a later one has
    /// the same op, dtype, count and channels (could be equal to it).
    /// Only those keep their candidates for later ones.
    repeated: Vec<bool>,
    /// Every answer given, in order.
    #[cfg(test)]
    log: Vec<Logged>,
}

/// What `Auto` keeps: three tables, each entry found by a bucket in a
/// `BTreeMap` and then compared whole. Validated alone, a program keeps
/// only what its own later collectives take, all of it pinned, so
/// nothing is ever dropped.
#[derive(Default)]
struct Memo {
    /// Each collective's candidates and answers ([`Kept`]).
    answers: Table<Bucket, MemoKey, Kept>,
    /// The mesh events each collective spends ([`ProgramAuto::spend`]).
    spent: Table<Bucket, SpendKey, u32>,
    /// The legal choices whole `Auto` listed, by op, then shape and
    /// groups (all they depend on: `Checker::algorithm`), for the `Auto`
    /// collectives after them; only non-empty ones (an empty one is a
    /// problem reported at each).
    listed: Table<OpType, (Shape, Groups), Vec<ResolvedAlgorithm>>,
    /// Stamps given so far ([`Memo::next`]): when each entry was last
    /// used, to drop the least recently used.
    stamps: u64,
}

impl Memo {
    /// A stamp not used before, for an entry made or found now.
    fn next(&mut self) -> u64 {
        self.stamps += 1;
        self.stamps
    }

    /// Ends a program: its pins lapse, and each table is trimmed to
    /// `capacity` entries.
    fn release(&mut self, capacity: usize) {
        self.answers.release(capacity);
        self.spent.release(capacity);
        self.listed.release(capacity);
    }
}

/// One `Auto` answer a program's collective was given, with what it was
/// asked over: `chosen_now` when it was chosen then (not kept from an
/// equal collective before it), with the rooms over which the choice
/// stands where one was made.
#[cfg(test)]
struct Logged {
    collective: ValidCollective,
    machine: Machine,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
    answer: Result<AutoChoice, NoChoice>,
    chosen_now: Option<Option<Stands>>,
}

/// What a kept `Auto` value reads of a collective beyond its bucket's
/// fields and its index (every candidate is planned, and the events
/// counted, as collective 0), with the machine without the events spent
/// (what was spent is judged by [`Stands`], and does not change what a
/// collective builds).
#[derive(PartialEq)]
struct Inputs {
    reduce: Option<ReduceOp>,
    groups: Groups,
    root: Option<u32>,
    peers: Vec<(u32, u32)>,
    counts: Option<std::sync::Arc<[Vec<u64>]>>,
    model: ModelParams,
    machine: Machine,
}

impl Inputs {
    fn of(valid: &ValidCollective, machine: Machine) -> Inputs {
        Inputs {
            reduce: valid.reduce,
            groups: valid.groups.clone(),
            root: valid.root,
            peers: valid.peers.clone(),
            counts: valid.counts.clone(),
            model: valid.model,
            machine: Machine { mesh_events_spent: 0, ..machine },
        }
    }
}

/// Everything [`cost::auto::mesh_events`] could read but the bucket's
/// fields: the inputs and the collective's algorithm (written or chosen).
#[derive(PartialEq)]
struct SpendKey {
    inputs: Inputs,
    algorithm: ResolvedAlgorithm,
}

/// Where an answer is kept: the collective's op, dtype, count and
/// channels.
type Bucket = (OpType, DType, u64, u8);

/// What is kept of one collective's `Auto`: its candidates planned, with
/// every value costed of them so far ([`Candidates`]), and the answers
/// found with the events spent before it.
struct Kept {
    planned: Candidates,
    answers: Vec<Answer>,
}

/// An answer kept: a choice with the rooms over which it stands, or why
/// there is none with the events the collectives before had spent.
type Answer = Result<(AutoChoice, Stands), (u32, NoChoice)>;

/// Everything [`cost::auto::choose`] reads but the bucket's fields: the
/// inputs, the candidates and the `Auto` legs.
#[derive(PartialEq)]
struct MemoKey {
    inputs: Inputs,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
}

impl ProgramAuto {
    /// Nothing found or spent yet, for `program`.
    fn of(program: &Program) -> ProgramAuto {
        let last_auto = program.collectives.iter().rposition(|c| c.algorithm.leaves_to_auto());
        let counted_before = last_auto.unwrap_or(0);
        // Worked out only where an `Auto` collective may repeat (not for
        // one collective, nor for a program without `Auto`).
        let bucket = |c: &Collective| (c.op, c.dtype, c.count, c.channels);
        let cs = program.collectives.get(..last_auto.map_or(0, |last| last + 1)).filter(|cs| cs.len() > 1);
        let cs = cs.unwrap_or_default();
        // From the last back, each asks whether its bucket was seen after
        // it: one pass, not a scan of the rest per collective.
        let mut later = std::collections::BTreeSet::new();
        let mut repeated: Vec<bool> = cs.iter().rev().map(|c| !later.insert(bucket(c))).collect();
        repeated.reverse();
        let lists_within = program.collectives.iter().filter(|c| c.algorithm == Algorithm::Auto).nth(1).is_some();
        ProgramAuto {
            memo: Memo::default(),
            capacity: usize::MAX,
            keep_all: false,
            lists_within,
            mesh_events_spent: 0,
            written_spent: 0,
            deferred: Vec::new(),
            counted_before,
            repeated,
            #[cfg(test)]
            log: Vec::new(),
        }
    }

    /// Whether a later collective of this program could equal collective
    /// `i`: then what it keeps is pinned until the program ends.
    fn repeated(&self, i: usize) -> bool {
        self.repeated.get(i).copied().unwrap_or(false)
    }

    /// Whether whole `Auto`'s listings are kept: when more than one
    /// collective is `Auto`, or in an [`AutoCache`] that keeps anything.
    fn lists(&self) -> bool {
        self.lists_within || self.keep_all
    }

    /// Whether collective `i` keeps what it finds for those after it.
    fn keeps(&self, i: usize) -> bool {
        self.keep_all || self.repeated(i)
    }

    /// Adds what `valid` (validated, on `machine`) spends of the mesh
    /// events, when an `Auto` collective comes after it.
    ///
    /// What a collective spends is a function of what [`SpendKey`] and
    /// its bucket hold (it builds the collective alone under its
    /// algorithm): a collective a later one could equal keeps it, and an
    /// equal collective after it takes it instead of building again.
    fn spend(&mut self, valid: &ValidCollective, machine: Machine) {
        let i = valid.index as usize;
        if i >= self.counted_before {
            return;
        }
        let at = (valid.op, valid.dtype, valid.count, valid.channels);
        let (keeps, pin) = (self.keeps(i), self.repeated(i));
        let events = if keeps || self.memo.spent.has_bucket(&at) {
            let key = SpendKey { inputs: Inputs::of(valid, machine), algorithm: valid.algorithm };
            let now = self.memo.next();
            match self.memo.spent.get_mut(&at, |k| *k == key, now, pin) {
                Some(&mut events) => events,
                None => {
                    let events = cost::auto::mesh_events(valid, machine);
                    if keeps {
                        self.memo.spent.insert(at, key, events, now, self.capacity, pin);
                    }
                    events
                }
            }
        } else {
            cost::auto::mesh_events(valid, machine)
        };
        self.mesh_events_spent = self.mesh_events_spent.saturating_add(events);
        if valid.auto.is_none() {
            self.written_spent = self.written_spent.saturating_add(events);
        }
    }

    /// [`cost::auto::choose`]'s answer for `valid` over `candidates`: the
    /// one kept for an equal collective before it, or chosen now (from the
    /// candidates kept for one, [`Candidates`]) and kept.
    fn choose(
        &mut self,
        valid: &ValidCollective,
        machine: Machine,
        candidates: Vec<ResolvedAlgorithm>,
        auto_legs: Vec<Leg>,
    ) -> Result<AutoChoice, NoChoice> {
        #[cfg(test)]
        let asked = (valid.clone(), candidates.clone(), auto_legs.clone());
        let (answer, _chosen_now) = self.answer(valid, machine, candidates, auto_legs);
        #[cfg(test)]
        {
            let (collective, candidates, auto_legs) = asked;
            let (answer, chosen_now) = (answer.clone(), _chosen_now);
            self.log.push(Logged { collective, machine, candidates, auto_legs, answer, chosen_now });
        }
        answer
    }

    /// [`ProgramAuto::choose`], and whether the answer was chosen now
    /// (not kept from an equal collective before) with, if one was made,
    /// the rooms over which the choice stands.
    fn answer(
        &mut self,
        valid: &ValidCollective,
        machine: Machine,
        candidates: Vec<ResolvedAlgorithm>,
        auto_legs: Vec<Leg>,
    ) -> (Result<AutoChoice, NoChoice>, Option<Option<Stands>>) {
        let at = (valid.op, valid.dtype, valid.count, valid.channels);
        // Validated alone, a collective no later one can equal (the last
        // one, the common call of one) keeps nothing for them: with no
        // equal collective before it, it searches without building a
        // key, planning for later or copying the answer (a program of one
        // collective pays for no memo). Through a cache, every collective
        // keeps.
        let i = valid.index as usize;
        let (keeps, pin) = (self.keeps(i), self.repeated(i));
        if !keeps && !self.memo.answers.has_bucket(&at) {
            return alone(valid, machine, candidates, auto_legs);
        }
        let key = MemoKey { inputs: Inputs::of(valid, machine), candidates, auto_legs };
        let now = self.memo.next();
        if let Some(kept) = self.memo.answers.get_mut(&at, |k| *k == key, now, pin) {
            return kept.choose(machine);
        }
        if !keeps {
            let MemoKey { candidates, auto_legs, .. } = key;
            return alone(valid, machine, candidates, auto_legs);
        }
        let MemoKey { candidates, auto_legs, .. } = &key;
        let planned = Candidates::of(valid, machine, &valid.model, candidates.clone(), auto_legs.clone());
        let mut kept = Kept { planned, answers: Vec::new() };
        let choice = kept.choose(machine);
        self.memo.answers.insert(at, key, kept, now, self.capacity, pin);
        choice
    }
}

/// [`ProgramAuto::answer`] for a collective that keeps nothing: searched
/// now, alone.
fn alone(
    valid: &ValidCollective,
    machine: Machine,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> (Result<AutoChoice, NoChoice>, Option<Option<Stands>>) {
    let answer = cost::auto::choose_standing(valid, machine, &valid.model, candidates, auto_legs);
    let stands = answer.as_ref().ok().map(|&(_, stands)| stands);
    (answer.map(|(choice, _)| choice), Some(stands))
}

impl Kept {
    /// The answer for an equal collective on `machine`: one found before
    /// if it holds with the events spent, else chosen now from the
    /// candidates planned, and kept.
    fn choose(&mut self, machine: Machine) -> (Result<AutoChoice, NoChoice>, Option<Option<Stands>>) {
        let room = machine.mesh_event_room();
        let found = self.answers.iter().find_map(|answer| match answer {
            Ok((choice, stands)) if stands.with(room) => Some(Ok(choice.clone())),
            Err((spent, no)) if *spent == machine.mesh_events_spent => Some(Err(no.clone())),
            _ => None,
        });
        if let Some(answer) = found {
            return (answer, None);
        }
        let answer = self.planned.choose(machine.mesh_events_spent);
        let stands = answer.as_ref().ok().map(|&(_, stands)| stands);
        let choice = answer.as_ref().map(|(choice, _)| choice.clone()).map_err(Clone::clone);
        self.answers.push(answer.map_err(|no| (machine.mesh_events_spent, no)));
        (choice, Some(stands))
    }
}

/// Which of the settings every collective of a program shares are checked
/// at this collective: the first one's always, a later one's only where it
/// differs (so that one bad shared value is reported once).
#[derive(Clone, Copy)]
struct Own {
    topology: bool,
    barrier: bool,
    send_credits: bool,
}

/// The groups of a collective, once checked.
struct CheckedGroups {
    groups: Groups,
    /// Members per group.
    n: u32,
    /// Each group's members in order, with how to name it.
    members: Vec<(GroupRef, Vec<u32>)>,
}

/// Collects one collective's problems.
struct Checker {
    index: u32,
    /// The problems found, the first [`PROBLEMS_LISTED`] of them.
    errors: Vec<ValidationError>,
    /// The problems found past those.
    unlisted: u64,
    /// The legal choices of `algorithm: Auto` (or of a `Hier((...))` with
    /// `Auto` legs, which are listed second), once listed.
    auto: Option<(Vec<ResolvedAlgorithm>, Vec<Leg>)>,
    /// Structural facts about this collective's groups, each with whether
    /// the groups meet it, found once per validation (`algorithm.rs`):
    /// `Auto` checks every legal choice's structure, and most share their
    /// requirements. A failed fact's problem is found and formatted afresh
    /// whenever it is reported; a listing only drops the candidate.
    facts: [Option<bool>; Fact::SLOTS],
    /// Listing `Auto`'s choices: a problem only drops the candidate, so
    /// the structural checks return at the first unmet fact without
    /// naming it (a written algorithm's problems are always reported).
    listing: bool,
}

/// A structural fact about a collective's groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fact {
    /// Every group meets the requirement.
    Whole(Requirement),
    /// Every group's intra-leg members (one node's), or inter-leg members
    /// (one per node), meet the requirement.
    Leg { intra: bool, req: Requirement },
    /// Every group has one node/pod shape.
    SameShapes,
}

impl Fact {
    /// How many facts there are: one per requirement over whole groups,
    /// intra legs and inter legs, and `SameShapes`.
    const SLOTS: usize = 3 * Self::REQUIREMENTS + 1;
    /// How many [`Requirement`]s there are.
    const REQUIREMENTS: usize = 4;

    /// This fact's place in [`Checker::facts`].
    fn slot(self) -> usize {
        let req = |r: Requirement| match r {
            Requirement::None => 0,
            Requirement::WithinNode => 1,
            Requirement::NodeAligned => 2,
            Requirement::PodAligned => 3,
        };
        match self {
            Fact::Whole(r) => req(r),
            Fact::Leg { intra: true, req: r } => Self::REQUIREMENTS + req(r),
            Fact::Leg { intra: false, req: r } => 2 * Self::REQUIREMENTS + req(r),
            Fact::SameShapes => 3 * Self::REQUIREMENTS,
        }
    }
}

impl Checker {
    fn new(index: u32) -> Self {
        Checker { index, errors: Vec::new(), unlisted: 0, auto: None, facts: [None; Fact::SLOTS], listing: false }
    }
}

impl Checker {
    /// Records a problem: listed while fewer than [`PROBLEMS_LISTED`] are,
    /// else counted.
    fn push(&mut self, field: impl Into<String>, problem: Problem) {
        if self.errors.len() < PROBLEMS_LISTED {
            self.errors.push(ValidationError { collective: Some(self.index), field: field.into(), problem });
        } else {
            self.unlisted = self.unlisted.saturating_add(1);
        }
    }

    /// The problems found so far, listed or not: what a check compares
    /// before and after to tell whether it found one.
    fn found(&self) -> u64 {
        (self.errors.len() as u64).saturating_add(self.unlisted)
    }

    fn range(&mut self, field: &str, value: u32, range: &std::ops::RangeInclusive<u32>) -> bool {
        let ok = range.contains(&value);
        if !ok {
            let (min, max) = (u64::from(*range.start()), u64::from(*range.end()));
            self.push(field, Problem::OutOfRange { value: u64::from(value), min, max });
        }
        ok
    }

    /// Checks one collective; `own` says which shared settings to check
    /// here; `autos` is what `Auto` carries from the collectives before
    /// it.
    fn collective(&mut self, c: &Collective, own: Own, autos: &mut ProgramAuto) -> Option<ValidCollective> {
        let before = self.found();
        if own.topology {
            self.topology(c.topology);
        }
        let shape = shape_of(c.topology);
        let rank_n = (1..=MAX_RANK_N).contains(&c.topology.rank_n).then_some(c.topology.rank_n);

        // The groups come first because the group size bounds everything
        // else; their problems are reported after the other fields, in the
        // order of the schema.
        let mut group_checker = Checker::new(self.index);
        let groups = rank_n.and_then(|rank_n| group_checker.groups(c.groups.as_deref(), rank_n));
        // The fields indexed by group member (root, peers, counts) are
        // checked against the group size even where the groups have other
        // problems, as long as their sizes agree: one round of fixes, not
        // two.
        let n = groups.as_ref().map(|g| g.n).or_else(|| agreed_size(c.groups.as_deref(), rank_n));

        let channels = self.channels(c);
        self.count(c, n);
        self.reduce(c);
        if let Some(n) = n {
            self.count_split(c, n);
        }
        let root = self.root(c, n);
        let peers = self.peers(c, n);
        self.counts(c, n);
        for e in group_checker.errors {
            self.push(e.field, e.problem);
        }
        self.unlisted = self.unlisted.saturating_add(group_checker.unlisted);
        let structure = shape.as_ref().zip(groups.as_ref());
        let algorithm = match (&c.algorithm, structure) {
            (Algorithm::Auto, Some(structure)) if autos.lists() => self.auto_listed(c.op, structure, autos),
            _ => self.algorithm(c.op, &c.algorithm, structure),
        };
        self.model(c);
        self.barrier_and_credits(c, own);

        if self.found() != before {
            return None;
        }
        let mut valid = ValidCollective {
            index: self.index,
            op: c.op,
            dtype: c.dtype,
            reduce: c.reduce,
            count: c.count,
            channels: channels?,
            algorithm: algorithm?,
            groups: groups?.groups.modelled_on(shape.as_ref()?, peers.as_deref().unwrap_or_default()),
            root: root?,
            peers: peers?,
            counts: c.counts.clone().map(std::sync::Arc::from),
            model: ModelParams::with(c.arch, c.model.as_ref()),
            auto: None,
            listed: None,
        };
        let machine = Machine {
            arch: c.arch,
            shape: shape?,
            barrier: c.barrier.unwrap_or_default(),
            send_credits: u16::try_from(c.send_credits.unwrap_or(u32::from(DEFAULT_SEND_CREDITS))).ok()?,
            mesh_events_spent: autos.mesh_events_spent,
        };
        if let Some((candidates, auto_legs)) = self.auto.take() {
            // Held to what the collectives before it leave, it may hold
            // fewer than it would alone: the program's fit may choose
            // among the others (`cost::auto::fit`).
            if machine.mesh_events_spent > 0 {
                valid.listed = Some(std::sync::Arc::from(candidates.as_slice()));
            }
            // What a retry asks again (below): kept only where one may be made.
            // (A whole `Auto` collective always has a choice of no mesh
            // events, Ring: only one partly left to `Auto` retries.)
            let partly = !auto_legs.is_empty();
            let again = (partly && autos.written_spent < autos.mesh_events_spent)
                .then(|| (candidates.clone(), auto_legs.clone()));
            let choice = match autos.choose(&valid, machine, candidates, auto_legs) {
                Ok(choice) => choice,
                // No choice in what the `Auto` collectives before it left
                // (a Hier with a written Mesh leg, whose every choice takes
                // mesh events): it chooses in what the written ones leave,
                // and the program's `Auto` choices are fitted together
                // afterwards, this refusal kept in case they cannot be
                // (`docs/cost-model.md` §4).
                Err(no @ NoChoice::Limit { .. }) if again.is_some() => {
                    let retried = again.and_then(|(candidates, auto_legs)| {
                        let written = Machine { mesh_events_spent: autos.written_spent, ..machine };
                        autos.choose(&valid, written, candidates, auto_legs).ok()
                    });
                    let problem = auto_problem(c.op, no);
                    let Some(choice) = retried else {
                        self.push("algorithm", problem);
                        return None;
                    };
                    let field = "algorithm".to_owned();
                    autos.deferred.push(ValidationError { collective: Some(self.index), field, problem });
                    // It spends nothing for those after it: each is held
                    // to what it would be held to were this one refused,
                    // and says so if refused.
                    valid.algorithm = choice.winner()?.algorithm;
                    valid.auto = Some(choice);
                    return Some(valid);
                }
                Err(no) => {
                    self.push("algorithm", auto_problem(c.op, no));
                    return None;
                }
            };
            valid.algorithm = choice.winner()?.algorithm;
            valid.auto = Some(choice);
        }
        autos.spend(&valid, machine);
        Some(valid)
    }

    /// The settings a program's collectives share, in the order
    /// [`Checker::collective`] reports them ([`validate_settings`]).
    fn settings(&mut self, c: &Collective, own: Own) {
        if own.topology {
            self.topology(c.topology);
        }
        self.channels(c);
        self.model(c);
        self.barrier_and_credits(c, own);
    }

    /// `channels` in range, as the one byte a plan holds.
    fn channels(&mut self, c: &Collective) -> Option<u8> {
        self.range("channels", c.channels, &CHANNELS).then(|| u8::try_from(c.channels).ok()).flatten()
    }

    /// A device barrier within its world size, and `send_credits` in range,
    /// where `own` says this collective is the one to check them.
    fn barrier_and_credits(&mut self, c: &Collective, own: Own) {
        let rank_n = (1..=MAX_RANK_N).contains(&c.topology.rank_n).then_some(c.topology.rank_n);
        if let (true, Barrier::Device, Some(rank_n)) = (own.barrier, c.barrier.unwrap_or_default(), rank_n)
            && rank_n > crate::placement::DEVICE_BARRIER_MAX_RANK_N
        {
            self.push("barrier", Problem::DeviceBarrierTooLarge { rank_n });
        }
        if let (true, Some(credits)) = (own.send_credits, c.send_credits) {
            self.range("send_credits", credits, &SEND_CREDITS);
        }
    }

    /// [`Checker::algorithm`] for whole `Auto` in a program of several:
    /// its legal choices depend on the op, the shape and the groups alone,
    /// so an equal listing before is taken, and a listing made here is
    /// kept for the collectives after (a non-empty one: an empty one is a
    /// problem reported at each).
    fn auto_listed(
        &mut self,
        op: OpType,
        (shape, checked): (&Shape, &CheckedGroups),
        autos: &mut ProgramAuto,
    ) -> Option<ResolvedAlgorithm> {
        let same = |(s, g): &(Shape, Groups)| s == shape && *g == checked.groups;
        let (now, pin) = (autos.memo.next(), autos.lists_within);
        if let Some(candidates) = autos.memo.listed.get_mut(&op, same, now, pin) {
            self.auto = Some((candidates.clone(), Vec::new()));
            return candidates.first().copied();
        }
        let first = self.algorithm(op, &Algorithm::Auto, Some((shape, checked)));
        if let Some((candidates, _)) = self.auto.as_ref().filter(|(c, _)| !c.is_empty()) {
            let key = (*shape, checked.groups.clone());
            autos.memo.listed.insert(op, key, candidates.clone(), now, autos.capacity, pin);
        }
        first
    }

    /// The `model:` overrides: each in its accepted range.
    fn model(&mut self, c: &Collective) {
        let Some(model) = &c.model else { return };
        for (field, value) in model.fields() {
            let Some(value) = value else { continue };
            let min = ccc_ir::model::override_min(field);
            if !(min..=ccc_ir::model::OVERRIDE_MAX).contains(&value) {
                self.push(
                    format!("model.{field}"),
                    Problem::OutOfRange { value, min, max: ccc_ir::model::OVERRIDE_MAX },
                );
            }
        }
    }

    fn topology(&mut self, t: Topology) {
        if !self.range("topology.rank_n", t.rank_n, &(1..=MAX_RANK_N)) {
            if t.local_rank_n == 0 {
                self.push(
                    "topology.local_rank_n",
                    Problem::OutOfRange { value: 0, min: 1, max: u64::from(MAX_RANK_N) },
                );
            }
            if t.pod_n == 0 {
                self.push("topology.pod_n", Problem::OutOfRange { value: 0, min: 1, max: u64::from(MAX_RANK_N) });
            }
            return;
        }
        // (0 included: what is accepted is a divisor, not any number up to
        // rank_n, which a range would have said.)
        if !t.rank_n.is_multiple_of(t.local_rank_n) {
            let problem = Problem::LocalRankNNotDivisor { rank_n: t.rank_n, local_rank_n: t.local_rank_n };
            self.push("topology.local_rank_n", problem);
            if t.pod_n == 0 {
                self.push("topology.pod_n", Problem::OutOfRange { value: 0, min: 1, max: u64::from(t.rank_n) });
            }
            return;
        }
        let node_n = t.rank_n / t.local_rank_n;
        if !node_n.is_multiple_of(t.pod_n) {
            self.push("topology.pod_n", Problem::PodNNotDivisor { node_n, pod_n: t.pod_n });
        }
    }

    /// `n`: the group size, when the groups are valid or their sizes
    /// agree on one that could be ([`agreed_size`]).
    fn count(&mut self, c: &Collective, n: Option<u32>) {
        if c.count == 0 {
            let split = n.filter(|_| splits_count(c.op)).map(|n| (c.op, n));
            self.push("count", Problem::CountZero { dtype: c.dtype, split });
        } else if c.count.checked_mul(c.dtype.size()).is_none() {
            self.push("count", Problem::CountOverflow { count: c.count, dtype: c.dtype });
        }
    }

    fn count_split(&mut self, c: &Collective, n: u32) {
        if splits_count(c.op) && c.count != 0 && !c.count.is_multiple_of(u64::from(n)) {
            self.push("count", Problem::CountNotMultiple { op: c.op, count: c.count, n, dtype: c.dtype });
        }
    }

    fn reduce(&mut self, c: &Collective) {
        match (c.op.is_reducing(), c.reduce) {
            (true, None) => self.push("reduce", Problem::ReduceMissing { op: c.op }),
            (false, Some(reduce)) => self.push("reduce", Problem::ReduceRefused { op: c.op, reduce }),
            (true, Some(ReduceOp::Average)) if !c.dtype.is_float() => {
                self.push("reduce", Problem::AverageNeedsFloat { dtype: c.dtype });
            }
            _ => {}
        }
    }

    /// `Some(root)` when valid (`Some(None)` for an op without a root).
    fn root(&mut self, c: &Collective, n: Option<u32>) -> Option<Option<u32>> {
        match (c.op.is_rooted(), c.root) {
            (true, None) => {
                self.push("root", Problem::RootMissing { op: c.op, n });
                None
            }
            (false, Some(root)) => {
                self.push("root", Problem::RootRefused { op: c.op, root });
                None
            }
            (false, None) => Some(None),
            (true, Some(root)) => match n {
                Some(n) if root < n => Some(Some(root)),
                Some(n) => {
                    self.push("root", Problem::RootOutOfRange { root, n });
                    None
                }
                None => None,
            },
        }
    }

    /// The peer pairs, normalized (empty for an op without a peer map).
    fn peers(&mut self, c: &Collective, n: Option<u32>) -> Option<Vec<(u32, u32)>> {
        if !c.op.takes_peers() {
            let mut ok = true;
            if c.peers.is_some() {
                self.push("peers", Problem::PeerMapRefused { op: c.op, field: "peers" });
                ok = false;
            }
            if c.peer.is_some() {
                self.push("peer", Problem::PeerMapRefused { op: c.op, field: "peer" });
                ok = false;
            }
            return ok.then(Vec::new);
        }
        match (&c.peers, c.peer) {
            (Some(_), Some(_)) => {
                self.push("peer", Problem::PeerMapTwice);
                None
            }
            (None, None) => {
                self.push("peers", Problem::PeerMapMissing { op: c.op });
                None
            }
            (None, Some(k)) => {
                let n = n?;
                if k == 0 || k >= n {
                    self.push("peer", Problem::PeerStepOutOfRange { peer: k, n });
                    return None;
                }
                // k < n <= MAX_RANK_N: the sum cannot overflow.
                Some((0..n).map(|i| (i, (i + k) % n)).collect())
            }
            (Some(pairs), None) => {
                if pairs.is_empty() {
                    self.push("peers", Problem::PeersEmpty);
                    return None;
                }
                let before = self.found();
                let mut sources = BTreeMap::new();
                let mut targets = BTreeMap::new();
                for (i, &(s, t)) in pairs.iter().enumerate() {
                    let field = format!("peers[{i}]");
                    if let Some(n) = n
                        && (s >= n || t >= n)
                    {
                        self.push(field, Problem::PeerOutOfRange { pair: (s, t), n });
                        continue;
                    }
                    if s == t {
                        self.push(field, Problem::PeerSelfPair { member: s });
                        continue;
                    }
                    if let Some(&first) = sources.get(&s) {
                        self.push(field.clone(), Problem::PeerSourceRepeated { member: s, first });
                    } else {
                        sources.insert(s, i);
                    }
                    if let Some(&first) = targets.get(&t) {
                        self.push(field, Problem::PeerTargetRepeated { member: t, first });
                    } else {
                        targets.insert(t, i);
                    }
                }
                (self.found() == before && n.is_some()).then(|| pairs.clone())
            }
        }
    }

    fn counts(&mut self, c: &Collective, n: Option<u32>) {
        if c.op != OpType::AllToAllV {
            if c.counts.is_some() {
                self.push("counts", Problem::CountsRefused { op: c.op });
            }
            return;
        }
        let Some(rows) = &c.counts else {
            self.push("counts", Problem::CountsMissing);
            return;
        };
        if let Some(n) = n
            && rows.len() != n as usize
        {
            self.push("counts", Problem::CountsRows { rows: rows.len(), n });
        }
        for (i, row) in rows.iter().enumerate() {
            if let Some(n) = n
                && row.len() != n as usize
            {
                self.push(format!("counts[{i}]"), Problem::CountsRowLength { len: row.len(), n });
            }
            let sum = row.iter().try_fold(0u64, |acc, &x| acc.checked_add(x));
            if sum != Some(c.count) {
                self.push(format!("counts[{i}]"), Problem::CountsRowSum { sum, count: c.count });
            }
        }
    }

    fn groups(&mut self, groups: Option<&[Vec<u32>]>, rank_n: u32) -> Option<CheckedGroups> {
        let Some(groups) = groups else {
            return Some(CheckedGroups {
                groups: Groups::world(rank_n),
                n: rank_n,
                members: vec![(GroupRef::World, (0..rank_n).collect())],
            });
        };
        if groups.is_empty() {
            self.push("groups", Problem::GroupsEmpty);
            return None;
        }
        let before = self.found();
        let (expected_in, expected) =
            groups.iter().enumerate().find(|(_, g)| !g.is_empty()).map_or((0, 0), |(i, g)| (i, g.len()));
        let mut seen: Vec<Option<(usize, usize)>> = vec![None; rank_n as usize];
        for (gi, group) in groups.iter().enumerate() {
            if group.is_empty() {
                self.push(format!("groups[{gi}]"), Problem::GroupEmpty);
            } else if group.len() != expected {
                self.push(
                    format!("groups[{gi}]"),
                    Problem::GroupSizeMismatch { size: group.len(), expected, expected_in },
                );
            }
            for (mi, &rank) in group.iter().enumerate() {
                match seen.get_mut(rank as usize) {
                    None => self.push(format!("groups[{gi}][{mi}]"), Problem::GroupRankOutOfRange { rank, rank_n }),
                    Some(Some(first)) => {
                        let first = *first;
                        self.push(format!("groups[{gi}][{mi}]"), Problem::RankListedTwice { rank, first });
                    }
                    Some(place) => *place = Some((gi, mi)),
                }
            }
        }
        let missing: Vec<u32> = seen.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(r, _)| idx(r)).collect();
        if !missing.is_empty() {
            self.push("groups", Problem::RanksInNoGroup { ranks: missing, rank_n });
        }
        if self.found() != before {
            return None;
        }
        let members = groups.iter().enumerate().map(|(i, g)| (GroupRef::Explicit(idx(i)), g.clone())).collect();
        Some(CheckedGroups { groups: Groups::explicit(rank_n, groups.to_vec()), n: idx(expected), members })
    }
}

/// Whether `op` splits its count over the group: each member gets
/// `count / n` elements, so the count must be a multiple of `n`.
fn splits_count(op: OpType) -> bool {
    matches!(op, OpType::ReduceScatter | OpType::AllToAll)
}

/// The size every non-empty group of `groups` has, when they agree and
/// it could be a valid group size of `rank_n` ranks (a divisor: groups of
/// one size partition the ranks); `None`: no explicit groups, none
/// non-empty, sizes that differ, or one no valid grouping has.
fn agreed_size(groups: Option<&[Vec<u32>]>, rank_n: Option<u32>) -> Option<u32> {
    let mut sizes = groups?.iter().map(Vec::len).filter(|&l| l > 0);
    let first = sizes.next()?;
    let size = sizes.all(|l| l == first).then(|| u32::try_from(first).ok()).flatten()?;
    rank_n.filter(|&r| r.is_multiple_of(size)).map(|_| size)
}
