//! The prover's state across ranks ([`Prover`]): what is listed once per
//! schedule (member 0's transfers of every group and what they post), then
//! each rank taken on its own (lowered, watched, its records checked,
//! its images decoded), then the world's postcondition from what the
//! watches saw, and every defect found, in order.
//!
//! Only member 0's transfers and what each rank's watch saw ([`Seen`], a
//! count per collective) outlive a rank's check: a caller may drop each
//! rank's program once it is checked.

use super::defect::{Defect, Defects, VerifyError};
use super::options::ProverOptions;
use super::postcondition::{self, CollectivePostcondition};
use super::protocol::{self, Chains, Profiles, ProtocolProof, RankChecked, Setups};
use super::symmetry::{Bases, Seen, Symmetry};
use super::transfers::AsBuilt;
use crate::lower::RankProgram;
use crate::schedule::Schedule;
use ccc_ir::id::Rank;
use std::time::{Duration, Instant};

/// What a schedule's proof holds across ranks.
pub(crate) struct Prover<'s> {
    schedule: &'s Schedule,
    options: ProverOptions,
    /// Member 0's transfers of every group that can be symmetric, and what
    /// they post (symmetry on).
    bases: Option<(Bases, Profiles)>,
    /// The TOP_SP programs whose chains passed, checked once each.
    chains: Chains,
    /// What every rank's protocol check shares, per collective.
    setups: Setups<'s>,
    /// The time listing them took: postcondition work.
    pub(crate) setup_time: Duration,
}

/// What the proof established, before its times are added.
pub(crate) struct Established {
    pub(crate) postcondition: Vec<CollectivePostcondition>,
    pub(crate) protocol: ProtocolProof,
    pub(crate) symmetric_groups: u64,
    pub(crate) symmetric_by_phase: u64,
}

impl<'s> Prover<'s> {
    /// The prover of `schedule`.
    pub(crate) fn new(schedule: &'s Schedule, options: &ProverOptions) -> Prover<'s> {
        let t = Instant::now();
        let bases = options.symmetry.then(|| {
            let mut bases = Bases::new(schedule);
            let profiles = Profiles::new(schedule, Some(&bases));
            // A member's watch serves its group's symmetry and, where the
            // group has a profile, its own protocol check: only groups
            // without one may go unwatched (see `symmetry`).
            bases.deny_unneeded(schedule, |collective, group| profiles.has(collective, group));
            (bases, profiles)
        });
        let setups = Setups::new(schedule);
        Prover { schedule, options: *options, bases, chains: Chains::new(), setups, setup_time: t.elapsed() }
    }

    /// What `rank` runs, per collective: member 0's transfers moved at
    /// every step, as the phases show or a watch of its step graph sees
    /// where they do not decide (symmetry on; otherwise nothing is
    /// watched). See `Bases::watch_rank`.
    pub(crate) fn watch(&self, rank: Rank) -> Seen {
        match &self.bases {
            Some((bases, _)) => bases.watch_rank(self.schedule, rank),
            None => Seen::unwatched(rank),
        }
    }

    /// The protocol check of one rank's records (see `protocol`).
    pub(crate) fn check_rank(&self, program: &RankProgram, seen: &Seen) -> RankChecked {
        let bases = self.bases.as_ref().map(|(b, p)| (b, p));
        protocol::check_rank_in(self.schedule, &self.setups, program, bases, Some(seen), Some(&self.chains))
    }

    /// The world's postcondition, each group that every member's watch saw
    /// moved proven on member 0 alone (`seen`: every rank's), calling
    /// `proven(members)` as each group is done.
    ///
    /// # Errors
    ///
    /// [`VerifyError::TooLarge`] for a group too large to run in full
    /// (defects are kept for [`Prover::conclude`]).
    pub(crate) fn prove_postconditions(
        &self,
        seen: &[Seen],
        proven: &dyn Fn(u64),
    ) -> Result<Postconditions, VerifyError> {
        let symmetry = match &self.bases {
            Some((bases, _)) => bases.symmetry(self.schedule, seen),
            None => Symmetry::none(),
        };
        let proven = postcondition::prove(self.schedule, &AsBuilt, &self.options, &symmetry, proven)?;
        let symmetric_groups = symmetry.symmetric_groups();
        Ok(Postconditions { proven, symmetric_groups, symmetric_by_phase: symmetry.by_phase() })
    }

    /// Every defect found, the postconditions' first, then the ranks' (in
    /// the order given), then `others`; or, when there is none, what the
    /// proof established.
    ///
    /// # Errors
    ///
    /// [`VerifyError::Defects`] with every defect found.
    pub(crate) fn conclude(
        post: Postconditions,
        ranks: impl IntoIterator<Item = RankChecked>,
        others: impl IntoIterator<Item = Defect>,
    ) -> Result<Established, VerifyError> {
        let mut defects = post.proven.defects;
        let mut protocol = ProtocolProof::default();
        for rank in ranks {
            protocol.add(&rank.proof);
            defects.extend(rank.defects);
        }
        defects.extend(others);
        match Defects::collect(defects) {
            Some(defects) => Err(VerifyError::Defects(Box::new(defects))),
            None => Ok(Established {
                postcondition: post.proven.collectives,
                protocol,
                symmetric_groups: post.symmetric_groups,
                symmetric_by_phase: post.symmetric_by_phase,
            }),
        }
    }
}

/// The postcondition proof of the world, with its defects.
pub(crate) struct Postconditions {
    proven: postcondition::Proven,
    symmetric_groups: u64,
    symmetric_by_phase: u64,
}

/// What the proof established, and what it cost.
#[derive(Clone, Debug)]
pub struct Proof {
    /// Per collective: the postcondition proven by symbolic execution.
    pub postcondition: Vec<CollectivePostcondition>,
    /// The protocol proof over every rank's records.
    pub protocol: ProtocolProof,
    /// Replica groups whose every member was seen, at every step, to run
    /// member 0's program moved to it (see `verify::symmetry`): the
    /// postcondition ran on member 0 alone for them (0 when certified: the
    /// certificate does not say).
    pub symmetric_groups: u64,
    /// How many of them their phases' structure showed invariant (see
    /// `verify::by_phase`); the others were watched on every member's step
    /// graph.
    pub symmetric_by_phase: u64,
    /// Images decoded back to their records.
    pub images_checked: u64,
    /// Wall time spent lowering the ranks only the proof needs (those not
    /// asked for, or every rank when none is kept) and watching every rank
    /// for symmetry (by its phases, or step by step where they do not
    /// decide).
    pub lowering_time: Duration,
    /// Wall time spent proving postconditions (with listing member 0's
    /// transfers of every group the watches compare with).
    pub postcondition_time: Duration,
    /// Wall time spent on the protocol proof of every rank's records.
    pub protocol_time: Duration,
    /// Wall time spent on round trips, with encoding the images when the
    /// compile keeps none (only the round trip needs them then).
    pub roundtrip_time: Duration,
    /// `true` when the postcondition and protocol figures come from the
    /// certificate of an earlier compile of the same schedule (see
    /// `pipeline::Options::certificate`) and this compile checked only
    /// its own ranks' chains and images.
    pub certified: bool,
}

impl Proof {
    /// Total proof time: the sum of its parts.
    pub fn time(&self) -> Duration {
        self.lowering_time + self.postcondition_time + self.protocol_time + self.roundtrip_time
    }
}

impl Established {
    /// The proof, with the images checked and the time each part took:
    /// lowering, postcondition, protocol, round trip.
    pub(crate) fn proof(
        self,
        images_checked: u64,
        [lowering, postcondition, protocol, roundtrip]: [Duration; 4],
    ) -> Proof {
        Proof {
            postcondition: self.postcondition,
            protocol: self.protocol,
            symmetric_groups: self.symmetric_groups,
            symmetric_by_phase: self.symmetric_by_phase,
            images_checked,
            lowering_time: lowering,
            postcondition_time: postcondition,
            protocol_time: protocol,
            roundtrip_time: roundtrip,
            certified: false,
        }
    }
}
