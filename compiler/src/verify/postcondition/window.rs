//! The path run's listing: every member's transfers over a window of
//! steps of one phase, listed before the steps are applied one by one.
//!
//! A source's transfers depend only on the site asked (member, phase,
//! step), never on what was applied before, so listing a window ahead
//! changes nothing but the order of the work. Members are listed a chunk
//! at a time (the chunks in parallel when asked), each chunk step-major
//! in one flat buffer: the passes then read one step's lists of
//! consecutive members from consecutive memory, and the chunks cost one
//! fork-join per window instead of one per step. Matching depends on the
//! lists alone, not on the cells, so a whole window is matched at once
//! after it is listed ([`Window::matches`], the chunks in parallel too),
//! by counting each receive's class in both ends' lists, which decides
//! exactly as the full run's one-by-one matching (a test compares both on
//! random lists). The chunk and window sizes decide only where lists are
//! stored, never what is listed or in which order the path run applies
//! them. Each chunk also keeps its members' receives (the transfers whose
//! receiver is the member listing them) step by step in member order as
//! it lists them, so that a step's receives are the chunks' slices one
//! after another: what reading every member's list in member order
//! gives, without a second pass over the lists. For the same reason
//! (neither listing nor matching reads the cells), where the chunks are
//! listed in parallel `paths` lists and matches each window in a second
//! [`Window`] while the one before it lands (see its overview).
//!
//! A phase whose runs of steps decide its checks (`step_runs`) is not
//! listed here at all; every other phase is listed from the source, a
//! chunk's members at a step at once ([`TransferSource::list_members`]:
//! the schedule as built generates them straight onto the chunk's buffer,
//! a mutated source of the tests is asked site by site, each site in a
//! list of its own, as before), then read once for the shape checks
//! ([`Shape`], a plain value so that they are inlined) and the counts.
//! What is listed, member by member and in order, is what asking each
//! site gives (a test compares both on every pairing), so the checks and
//! the matching decide as before.

use crate::schedule::{CollectivePlan, Phase, PhaseInstance, Schedule, Transfer};
use crate::verify::transfers::{Members, TransferSource};
use rayon::prelude::*;
use std::ops::Range;

/// Sites (member x step) listed per window, about: a 4,096-member group
/// lists 16 steps at a time, some 4 MiB of transfers.
const WINDOW_SITES: u32 = 1 << 16;
/// Members per chunk when listing in parallel.
const PARALLEL_CHUNK: u32 = 256;

/// How a group's transfers are listed: `steps` at a time, `chunk`
/// members to a buffer, the chunks in parallel or not.
#[derive(Clone, Copy, Debug)]
pub(super) struct Listing {
    pub(super) steps: u32,
    pub(super) chunk: u32,
    pub(super) parallel: bool,
}

impl Listing {
    /// The listing of a group of `n` members: in parallel when a window
    /// lists `parallel_from` sites or more (a window costs one fork-join,
    /// whatever its members: a 3,072-member group lists 21 steps, 64,512
    /// sites, at a time) and the members fill more than one chunk.
    pub(super) fn for_group(n: u32, parallel_from: u32) -> Listing {
        let steps = (WINDOW_SITES / n.max(1)).max(1);
        let parallel = n > PARALLEL_CHUNK && n.saturating_mul(steps) >= parallel_from;
        let chunk = if parallel { PARALLEL_CHUNK } else { n.max(1) };
        Listing { steps, chunk, parallel }
    }
}

/// What one window lists: a phase's steps `first..first + steps` (`t`,
/// within the phase) of one group, from `source`, each transfer checked
/// by `shape` as it is listed.
pub(super) struct Span<'a> {
    pub(super) schedule: &'a Schedule,
    pub(super) plan: &'a CollectivePlan,
    pub(super) source: &'a dyn TransferSource,
    pub(super) shape: Shape,
    pub(super) group: u32,
    pub(super) phase: &'a Phase,
    /// Every member's placement in the phase, by member.
    pub(super) insts: &'a [PhaseInstance],
    pub(super) first: u32,
    pub(super) steps: u32,
}

/// The path run's shape checks (the full run's) for a group of `n`
/// members of `block_n` blocks, asked of every transfer as it is listed:
/// a plain value, so that the check is inlined where it is asked.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub(super) n: u32,
    pub(super) block_n: u32,
}

impl Shape {
    /// Whether `t`, listed by member `m`, involves `m`, names members and
    /// blocks in range, as many of each side, and keeps every block at its
    /// position.
    #[inline(always)]
    pub(super) fn ok(&self, t: &Transfer, m: u32) -> bool {
        t.from < self.n
            && t.to < self.n
            && (t.from == m || t.to == m)
            && t.src.count == t.dst.count
            && t.src.below(self.block_n)
            && t.dst.below(self.block_n)
            && t.src.same_positions(t.dst)
    }
}

/// Members `first..first + len`, their lists over the window step-major.
struct Chunk {
    first: u32,
    len: u32,
    /// Site `w * len + i`'s transfers are `list[starts[site]..starts[site + 1]]`.
    starts: Vec<u32>,
    list: Vec<Transfer>,
    /// Per window step, the sends listed (transfers whose sender is the
    /// member that lists them) and the receives (whose receiver is).
    sends: Vec<(u32, u32)>,
    /// The receives listed (each transfer whose receiver is the member
    /// that lists it), step-major, in member order within a step: window
    /// step `w`'s are `receives[received[w]..received[w + 1]]`.
    receives: Vec<Transfer>,
    received: Vec<u32>,
    /// One site's list, before it joins `list`.
    site: Vec<Transfer>,
    /// Whether every transfer listed passed the full run's shape checks.
    ok: bool,
}

impl Chunk {
    fn fill(&mut self, span: &Span<'_>) {
        self.starts.clear();
        self.list.clear();
        self.starts.push(0);
        self.sends.clear();
        self.receives.clear();
        self.received.clear();
        self.received.push(0);
        self.ok = true;
        let members = self.first as usize..(self.first + self.len) as usize;
        let insts = &span.insts[members];
        for t in span.first..span.first + span.steps {
            // The chunk's members' lists, one after the other (each site's
            // end in `starts`), then read once for the checks.
            let from = self.list.len();
            let ends = self.starts.len();
            let at = Members { group: span.group, phase: span.phase, first: self.first, insts, t };
            span.source.list_members(span.schedule, span.plan, &at, &mut self.list, &mut self.starts, &mut self.site);
            let (mut sends, mut receives) = (0, 0);
            let mut begin = from;
            for (m, &end) in (self.first..).zip(&self.starts[ends..]) {
                for tr in &self.list[begin..end as usize] {
                    self.ok &= span.shape.ok(tr, m);
                    sends += u32::from(tr.from == m);
                    if tr.to == m {
                        receives += 1;
                        self.receives.push(*tr);
                    }
                }
                begin = end as usize;
            }
            self.sends.push((sends, receives));
            self.received.push(self.receives.len() as u32);
        }
    }

    fn range(&self, m: u32, w: u32) -> Range<usize> {
        let site = (w * self.len + (m - self.first)) as usize;
        self.starts[site] as usize..self.starts[site + 1] as usize
    }
}

/// Every member's transfers over one window.
pub(super) struct Window {
    chunk: u32,
    chunks: Vec<Chunk>,
    parallel: bool,
}

impl Window {
    /// A window for a group of `n` members, listed as `listing` says.
    pub(super) fn new(n: u32, listing: Listing) -> Window {
        let (chunk, parallel) = (listing.chunk.max(1), listing.parallel);
        let chunks = (0..n.div_ceil(chunk))
            .map(|c| Chunk {
                first: c * chunk,
                len: chunk.min(n - c * chunk),
                starts: Vec::new(),
                list: Vec::new(),
                sends: Vec::new(),
                receives: Vec::new(),
                received: Vec::new(),
                site: Vec::new(),
                ok: true,
            })
            .collect::<Vec<_>>();
        Window { chunk, chunks, parallel }
    }

    /// Lists `span`; `false` when some transfer fails its shape check.
    pub(super) fn fill(&mut self, span: &Span<'_>) -> bool {
        let fill = |c: &mut Chunk| c.fill(span);
        if self.parallel {
            self.chunks.par_iter_mut().for_each(fill);
        } else {
            self.chunks.iter_mut().for_each(fill);
        }
        self.chunks.iter().all(|c| c.ok)
    }

    fn at(&self, m: u32, w: u32) -> (usize, Range<usize>) {
        let c = (m / self.chunk) as usize;
        (c, self.chunks[c].range(m, w))
    }

    /// Every member's receives at window step `w` (each transfer whose
    /// receiver is the member that lists it), in member order, appended
    /// to `out`: what reading each member's list for them gives.
    pub(super) fn receives(&self, w: u32, out: &mut Vec<Transfer>) {
        for c in &self.chunks {
            let w = w as usize;
            out.extend_from_slice(&c.receives[c.received[w] as usize..c.received[w + 1] as usize]);
        }
    }

    /// Member `m`'s transfers at window step `w`.
    pub(super) fn list(&self, m: u32, w: u32) -> &[Transfer] {
        let (c, r) = self.at(m, w);
        &self.chunks[c].list[r]
    }

    /// Whether, at each of the window's first `steps` steps, every receive
    /// can be matched to a send of its own by its sender for which `same`
    /// holds, and no send is left over: the full run's matching (each
    /// receive, in member order, takes the first such send not taken yet)
    /// succeeds exactly then. `same` is an equivalence (equality of what
    /// it compares, the members among it: a class is counted only among
    /// transfers between the receive's two members, and a member that
    /// lists one receive holds one of its class), so that matching
    /// succeeds when every receive's class
    /// has as many sends in its sender's list as receives in its
    /// receiver's, and there are as many receives as sends in all: then
    /// every send is in some receive's class, and taken. The members'
    /// shape checks passed ([`Window::fill`]): every sender is a member.
    /// Read only, so the chunks are checked in parallel when listed so.
    pub(super) fn matches(&self, steps: u32, same: impl Fn(&Transfer, &Transfer) -> bool + Sync) -> bool {
        // A member that lists one receive has one in that receive's
        // class (`same` is reflexive): only its sender's list is counted.
        let chunk_matches = |c: &Chunk| {
            (0..steps).all(|w| {
                let base = (w * c.len) as usize;
                let ends = &c.starts[base..=base + c.len as usize];
                (c.first..).zip(ends.windows(2)).all(|(m, end)| {
                    let listed = &c.list[end[0] as usize..end[1] as usize];
                    let one = listed.iter().filter(|tr| tr.to == m).count() == 1;
                    listed.iter().filter(|tr| tr.to == m).all(|tr| {
                        let received = if one { 1 } else { listed.iter().filter(|x| x.to == m && same(x, tr)).count() };
                        let sender = self.list(tr.from, w);
                        let sent = sender.iter().filter(|x| x.from == tr.from && x.to == tr.to && same(x, tr)).count();
                        received == sent
                    })
                })
            })
        };
        let classes = if self.parallel {
            self.chunks.par_iter().all(chunk_matches)
        } else {
            self.chunks.iter().all(chunk_matches)
        };
        let balanced = |w: u32| {
            let (sends, receives) = self
                .chunks
                .iter()
                .map(|c| c.sends[w as usize])
                .fold((0u64, 0u64), |(s, r), (cs, cr)| (s + u64::from(cs), r + u64::from(cr)));
            sends == receives
        };
        classes && (0..steps).all(balanced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{BlockSet, Halves};
    use ccc_ir::enums::Neigh;

    /// A window of one step holding `lists` (member by member), `chunk`
    /// members to a chunk.
    fn window(lists: &[Vec<Transfer>], chunk: u32, parallel: bool) -> Window {
        let n = lists.len() as u32;
        let mut w = Window::new(n, Listing { steps: 1, chunk, parallel });
        for c in &mut w.chunks {
            c.starts = vec![0];
            let (mut sends, mut receives) = (0, 0);
            for m in c.first..c.first + c.len {
                let list = &lists[m as usize];
                sends += list.iter().filter(|t| t.from == m).count() as u32;
                receives += list.iter().filter(|t| t.to == m).count() as u32;
                c.list.extend_from_slice(list);
                c.starts.push(c.list.len() as u32);
            }
            c.sends = vec![(sends, receives)];
        }
        w
    }

    /// The full run's matching: each receive, in member order, takes the
    /// first send of its sender not taken yet that is the same; then no
    /// send may be left.
    fn greedy(lists: &[Vec<Transfer>], same: impl Fn(&Transfer, &Transfer) -> bool) -> bool {
        let mut taken: Vec<Vec<bool>> = lists.iter().map(|l| vec![false; l.len()]).collect();
        for (m, list) in lists.iter().enumerate() {
            for tr in list.iter().filter(|t| t.to == m as u32) {
                let from = tr.from as usize;
                let found = (0..lists[from].len())
                    .find(|&k| lists[from][k].from == tr.from && !taken[from][k] && same(&lists[from][k], tr));
                match found {
                    Some(k) => taken[from][k] = true,
                    None => return false,
                }
            }
        }
        lists.iter().enumerate().all(|(m, l)| l.iter().zip(&taken[m]).all(|(t, &done)| t.from != m as u32 || done))
    }

    /// The schedule as built lists a run of members straight onto the
    /// window's buffer (`AsBuilt::list_members`): the same transfers,
    /// member by member, with the same ends, as asking it site by site,
    /// each site in a list of its own (the trait's default), appended
    /// after what the buffer held, on every pairing, phase and step, from
    /// the first member and from the middle one.
    #[test]
    fn members_listed_at_once_are_the_sites_listed_one_by_one() {
        use crate::build::build;
        use crate::testing::Case;
        use crate::verify::transfers::{AsBuilt, Site};
        struct SiteBySite;
        impl TransferSource for SiteBySite {
            fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
                AsBuilt.transfers(s, plan, site, out);
            }
        }
        let held = Transfer {
            from: 0,
            to: 0,
            src: BlockSet::one(0),
            dst: BlockSet::one(0),
            halves: Halves::Both,
            fold: None,
            neigh: Neigh::Next,
        };
        let mut listed = 0;
        for case in Case::pairings(&[2, 3, 5, 8]) {
            let schedule = build(&case.valid()).unwrap_or_else(|e| panic!("{case:?}: {e}"));
            for plan in &schedule.collectives {
                let n = plan.groups.size();
                for group in 0..plan.groups.group_n() {
                    for phase in &plan.phases {
                        let insts: Vec<PhaseInstance> = (0..n).map(|m| plan.instance(phase, m)).collect();
                        for (t, first) in (0..phase.step_n).flat_map(|t| [(t, 0), (t, n / 2)]) {
                            let at = Members { group, phase, first, insts: &insts[first as usize..], t };
                            let (mut ours, mut theirs) = ((vec![held], vec![1]), (vec![held], vec![1]));
                            let mut scratch = Vec::new();
                            AsBuilt.list_members(&schedule, plan, &at, &mut ours.0, &mut ours.1, &mut scratch);
                            SiteBySite.list_members(&schedule, plan, &at, &mut theirs.0, &mut theirs.1, &mut scratch);
                            assert_eq!(ours, theirs, "{case:?} {t} {first}");
                            listed += ours.0.len() - 1;
                        }
                    }
                }
            }
        }
        assert!(listed > 1000, "{listed}");
    }

    /// On random lists of four members (transfers among them, each
    /// listed by one end, both or neither, some twice), counting classes
    /// decides as the full run's greedy matching does, whatever the chunks.
    #[test]
    fn counting_classes_decides_as_greedy_matching() {
        let same = |a: &Transfer, b: &Transfer| super::super::full::same(a, b);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound) as u32
        };
        let (mut matched, mut refused) = (0, 0);
        for _ in 0..4000 {
            let n = 4;
            let mut lists: Vec<Vec<Transfer>> = vec![Vec::new(); n];
            for _ in 0..next(6) {
                let (from, to) = (next(4), next(4));
                let block = BlockSet::one(next(2));
                let fold = (next(2) == 0).then_some(ccc_ir::enums::ReductionType::Ring2R1W);
                let tr = Transfer { from, to, src: block, dst: block, halves: Halves::Both, fold, neigh: Neigh::Next };
                // Listed by both ends, mostly; by one, or twice, sometimes.
                match next(8) {
                    0 => lists[from as usize].push(tr),
                    1 => lists[to as usize].push(tr),
                    2 => {
                        lists[from as usize].push(tr);
                        lists[from as usize].push(tr);
                        lists[to as usize].push(tr);
                    }
                    _ => {
                        lists[from as usize].push(tr);
                        if to != from {
                            lists[to as usize].push(tr);
                        }
                    }
                }
            }
            let want = greedy(&lists, same);
            for (chunk, parallel) in [(1, false), (3, true), (4, false)] {
                assert_eq!(window(&lists, chunk, parallel).matches(1, same), want, "{lists:?}");
            }
            if want { matched += 1 } else { refused += 1 }
        }
        assert!(matched > 500 && refused > 500, "{matched} {refused}");
    }
}
