//! What a member whose transfers are member 0's moved to it posts, from
//! member 0's transfers alone: its descriptor counts step by step (the
//! same for every member when every block costs the same, else per member
//! from member 0's costs of small and big blocks), folded as lowering
//! folds them when that can be compared record by record. With blocks of
//! two sizes, each member's fold is the group's base fold cut at the
//! member's few exceptions (`exceptions.rs`), or, where its blocks move
//! on by one a step (a ring, flat or in a hierarchy), in pieces of equal
//! steps (`tracks.rs`), not a walk of its steps.

pub(super) use super::exceptions::Folded;
use super::exceptions::{Costs, Exceptions};
use super::found::hosted;
use super::tracks::Tracks;
use crate::placement::topsps_for;
use crate::schedule::{BlockSet, CollectivePlan, DescTable, Schedule, Transfer};
use crate::verify::symmetry::{BaseSize, Orbit};
use ccc_ir::enums::DevicePattern;
use ccc_ir::wire::tp::Folder;

/// What a member of a group posts when its transfers are member 0's moved
/// to it, from member 0's transfers (its [`Orbit`]).
pub(crate) struct Profile {
    pub(super) counts: Counts,
    /// The counts of [`Counts::Same`] folded as the lowering folds them,
    /// per TOP_SP and phase: a record whose `tp_inc_steps` are exactly these
    /// posts exactly the counts, step by step. `None` otherwise, with mesh
    /// phases (their events need the steps) or counts too wide to fold.
    pub(super) folded: Option<Folded>,
    /// Whether the collective has a mesh phase.
    mesh: bool,
    /// Semaphore increments a member receives over the collective, on
    /// every channel.
    pub(super) signals: u64,
    /// With [`Counts::ByBlock`], no mesh phase and transfers of one block
    /// each: what every member's fold shares.
    exceptions: Option<Exceptions>,
    /// With [`Counts::ByBlock`] and no mesh phase: member 0's runs of
    /// steps that move as one (`tracks.rs`), and whether folding members
    /// from them costs less than listing their exceptions (always, when
    /// the group has none).
    tracks: Option<(Tracks, bool)>,
}

/// Which way [`Profile::fold_for`] folds a member whose group has
/// [`Exceptions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// The cheaper of the two.
    Cheaper,
    /// The member's exceptions, listed.
    #[cfg(test)]
    Listed,
    /// The group's runs, in pieces (`tracks.rs`), where it has them.
    #[cfg(test)]
    Tracks,
}

/// The descriptors a member of a symmetric group posts at each step.
pub(super) enum Counts {
    /// Every block costs the same: every member posts member 0's counts,
    /// `[s * used + t]` for step `s` and TOP_SP `t`.
    Same(Vec<(u64, u64)>),
    /// Blocks below `big_below` hold one more element, and every transfer
    /// moves one block, whole runs of the group's action, or none: what
    /// member 0's transfer `k` posts on TOP_SP `t` per block it moves,
    /// `[k * used + t]`, for a small block and for a big one. A member
    /// posts, for each of its transfers, the small row for each small
    /// block of its moved set and the big row for each big one.
    ByBlock { big_below: u32, costs: Vec<[(u64, u64); 2]> },
}

impl Profile {
    /// The most bytes [`Profile::new`] holds for the group whose member 0
    /// moves as an orbit of size `base`: its counts, in the form it takes them (per step
    /// where every block costs the same, else per transfer for a small
    /// block and a big one), on every TOP_SP the collective uses. (Its
    /// exceptions and tracks, small beside them, are not counted.)
    pub(crate) fn bytes_at_most(schedule: &Schedule, plan: &CollectivePlan, base: BaseSize) -> u64 {
        let used = topsps_for(schedule.arch.params(), plan.channels);
        let same = (0..used).all(|t| DescTable::new(plan, &hosted(schedule, plan, t)).position_free());
        let counts = if same {
            u64::from(plan.step_n).saturating_mul(std::mem::size_of::<(u64, u64)>() as u64)
        } else {
            (base.transfers as u64).saturating_mul(std::mem::size_of::<[(u64, u64); 2]>() as u64)
        };
        u64::from(used).saturating_mul(counts)
    }

    /// The profile of the group whose member 0 moves as `orbit`; `None`
    /// when its counts depend on the member in a way member 0's do not show.
    pub(super) fn new(schedule: &Schedule, plan: &CollectivePlan, orbit: &Orbit) -> Option<Profile> {
        let used = topsps_for(schedule.arch.params(), plan.channels);
        let tables: Vec<DescTable<'_>> = (0..used).map(|t| DescTable::new(plan, &hosted(schedule, plan, t))).collect();
        let all = orbit.transfers();
        let counts = if tables.iter().all(DescTable::position_free) {
            let tables = &tables;
            Counts::Same(
                (0..plan.step_n).flat_map(|s| tables.iter().map(move |table| table.step(0, orbit.step(s)))).collect(),
            )
        } else {
            let big_below = tables.first()?.big_below()?;
            // One block, or whole runs of the action: moved, again such a
            // set, whose big blocks [`Profile::counts`] counts in O(1).
            let movable = |b: BlockSet| b.count <= 1 || orbit.action.whole_runs(b).is_some();
            if !all.iter().all(|t| movable(t.src) && movable(t.dst)) {
                return None;
            }
            let n = plan.groups.size();
            let probe = |t: &Transfer, pos: u32| {
                let at = |b: BlockSet| if b.count == 0 { b } else { BlockSet::one(pos) };
                Transfer { src: at(t.src), dst: at(t.dst), ..*t }
            };
            let costs = all
                .iter()
                .flat_map(|t| {
                    let (small, big) = (probe(t, big_below.min(n - 1)), probe(t, 0));
                    tables.iter().map(move |table| [table.step(0, &[small]), table.step(0, &[big])])
                })
                .collect();
            Counts::ByBlock { big_below, costs }
        };
        let mesh = plan.phases.iter().any(|p| p.alg.pattern() == Some(DevicePattern::Mesh));
        let channels: u64 = tables.iter().map(|t| t.channels().len() as u64).sum();
        let signals = all
            .iter()
            .filter(|tr| tr.to == 0)
            .map(|tr| u64::from(tr.src.count) * u64::from(tr.halves.count()) * channels)
            .sum();
        let exceptions = match &counts {
            Counts::ByBlock { big_below, costs } if !mesh => {
                Exceptions::new(plan, orbit, *big_below, costs.as_slice() as &Costs, usize::from(used))
            }
            _ => None,
        };
        let tracks = match &counts {
            Counts::ByBlock { costs, .. } if !mesh => Tracks::new(plan, orbit, costs, usize::from(used)).map(|t| {
                let cheaper = exceptions.as_ref().is_none_or(|e| t.cheaper_than(e.listed));
                (t, cheaper)
            }),
            _ => None,
        };
        // A transfer of several blocks has no exceptions to list: its
        // group folds in pieces when there are fewer than its steps (its
        // blocks move on by one a step), else (moved by XOR, by strides,
        // or with mesh events) it has no profile and each rank is checked
        // against its own step graph, as cheaply, and with no watch.
        let several = all.iter().any(|t| t.src.count > 1 || t.dst.count > 1);
        let in_pieces = tracks.as_ref().is_some_and(|(t, _)| t.pieces() < u64::from(plan.step_n));
        if matches!(counts, Counts::ByBlock { .. }) && several && !in_pieces {
            return None;
        }
        let mut profile = Profile { counts, folded: None, mesh, signals, exceptions, tracks };
        // The same for every member: fold them once.
        if matches!(profile.counts, Counts::Same(_)) {
            profile.folded = profile.fold_for(plan, orbit, 0, usize::from(used));
        }
        Some(profile)
    }

    /// What member `member` posts, folded per TOP_SP and phase as the
    /// lowering folds it, when that can be compared record by record (no
    /// mesh phase, counts that fit): where the group has [`Exceptions`],
    /// in pieces (`tracks.rs`) or from the member's exceptions, whichever
    /// costs less; else step by step.
    pub(super) fn fold_for(&self, plan: &CollectivePlan, orbit: &Orbit, member: u32, used: usize) -> Option<Folded> {
        if self.mesh {
            return None;
        }
        let by_exceptions = self.exceptions_fold(plan, orbit, member, used, Route::Cheaper);
        by_exceptions.or_else(|| self.fold_steps(plan, orbit, member, used))
    }

    /// The fold by `route` when the group has [`Exceptions`] (`None`
    /// otherwise): in pieces for a member of the group, else from its
    /// exceptions. `None` too when a count does not fit a fold, the
    /// exceptions cannot be found, or (by [`Route::Tracks`]) the group
    /// has no runs.
    pub(super) fn exceptions_fold(
        &self,
        plan: &CollectivePlan,
        orbit: &Orbit,
        member: u32,
        used: usize,
        route: Route,
    ) -> Option<Folded> {
        let counted = |s, out: &mut Vec<(u64, u64)>| self.counts(orbit, s, member, used, out);
        let tracks = self.tracks.as_ref().filter(|(_, cheaper)| match route {
            Route::Cheaper => *cheaper,
            #[cfg(test)]
            Route::Listed => false,
            #[cfg(test)]
            Route::Tracks => true,
        });
        let n = plan.groups.size();
        match (tracks, &self.counts) {
            (Some((tracks, _)), Counts::ByBlock { big_below, .. }) if member < n => {
                tracks.fold(orbit, member, n, *big_below, used, counted)
            }
            #[cfg(test)]
            _ if route == Route::Tracks => None,
            _ => self.exceptions.as_ref()?.fold(plan, orbit, member, used, counted),
        }
    }

    /// Whether the group has [`Exceptions`] to list (not when a transfer
    /// moves several blocks).
    #[cfg(test)]
    pub(super) fn has_exceptions(&self) -> bool {
        self.exceptions.is_some()
    }

    /// Whether [`Profile::fold_for`] folds members in pieces
    /// (`tracks.rs`) rather than from their listed exceptions.
    #[cfg(test)]
    pub(super) fn takes_tracks(&self) -> bool {
        self.tracks.as_ref().is_some_and(|(_, cheaper)| *cheaper)
    }

    /// [`Profile::fold_for`] step by step: the reference the exceptions'
    /// fold is tested against.
    pub(super) fn fold_steps(&self, plan: &CollectivePlan, orbit: &Orbit, member: u32, used: usize) -> Option<Folded> {
        if self.mesh {
            return None;
        }
        let mut out: Folded = vec![Vec::with_capacity(plan.phases.len()); used];
        let mut counts = Vec::new();
        for p in &plan.phases {
            let mut folders: Vec<Folder> = (0..used).map(|_| Folder::new()).collect();
            for s in p.first_step..p.first_step + p.step_n {
                self.counts(orbit, s, member, used, &mut counts);
                for (folder, &(m2s, s2m)) in folders.iter_mut().zip(&counts) {
                    folder.push(u32::try_from(m2s).ok()?, u32::try_from(s2m).ok()?);
                }
            }
            for (o, f) in out.iter_mut().zip(folders) {
                o.push(f.finish());
            }
        }
        Some(out)
    }

    /// What member `member` posts at step `step`, per TOP_SP, into `out`.
    pub(super) fn counts(&self, orbit: &Orbit, step: u32, member: u32, used: usize, out: &mut Vec<(u64, u64)>) {
        out.clear();
        match &self.counts {
            Counts::Same(counts) => out.extend_from_slice(&counts[step as usize * used..][..used]),
            Counts::ByBlock { big_below, costs } => {
                out.resize(used, (0, 0));
                let (first, end) = orbit.span(step);
                let action = &orbit.action;
                // (small, big) blocks of `b` moved to `member` (`Profile::new`
                // took only sets that move).
                let sizes = |b: BlockSet| {
                    let moved = action.move_set(b, member);
                    debug_assert!(moved.is_some(), "{b:?} does not move");
                    let big = moved.map_or(0, |m| m.count_below(*big_below));
                    (u64::from(b.count - big), u64::from(big))
                };
                for (k, tr) in (first..end).zip(orbit.step(step)) {
                    let (src, dst) = (sizes(tr.src), sizes(tr.dst));
                    for (t, o) in out.iter_mut().enumerate() {
                        let [small, big] = &costs[k * used + t];
                        o.0 += src.0 * small.0 + src.1 * big.0;
                        o.1 += dst.0 * small.1 + dst.1 * big.1;
                    }
                }
            }
        }
    }
}
