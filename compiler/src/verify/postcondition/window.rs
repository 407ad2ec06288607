//! The path run's listing: every member's transfers over a window of
//! steps of one phase, listed before the steps are applied one by one.
//!
//! A source's transfers depend only on the site asked (member, phase,
//! step), never on what was applied before, so listing a window ahead
//! changes nothing but the order of the work. Members are listed a chunk
//! at a time (the chunks in parallel when asked), each chunk step-major
//! in one flat buffer: the matching pass then reads one step's lists of
//! consecutive members from consecutive memory, and the chunks cost one
//! fork-join per window instead of one per step. The chunk and window
//! sizes decide only where lists are stored, never what is listed or in
//! which order the path run matches and applies them.

use crate::schedule::{CollectivePlan, Phase, PhaseInstance, Schedule, Transfer};
use crate::verify::transfers::{Site, TransferSource};
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
    /// The listing of a group of `n` members: in parallel from
    /// `parallel_from` members on.
    pub(super) fn for_group(n: u32, parallel_from: u32) -> Listing {
        let parallel = n >= parallel_from;
        let chunk = if parallel { PARALLEL_CHUNK } else { n.max(1) };
        Listing { steps: (WINDOW_SITES / n.max(1)).max(1), chunk, parallel }
    }
}

/// What one window lists: a phase's steps `first..first + steps` (`t`,
/// within the phase) of one group, from `source`, each transfer checked
/// by `shape_ok` as it is listed.
pub(super) struct Span<'a> {
    pub(super) schedule: &'a Schedule,
    pub(super) plan: &'a CollectivePlan,
    pub(super) source: &'a dyn TransferSource,
    pub(super) shape_ok: Shape<'a>,
    pub(super) group: u32,
    pub(super) phase: &'a Phase,
    /// Every member's placement in the phase, by member.
    pub(super) insts: &'a [PhaseInstance],
    pub(super) first: u32,
    pub(super) steps: u32,
}

/// Whether a transfer a member listed is well formed (the path run's
/// shape checks), asked of every transfer as it is listed.
pub(super) type Shape<'a> = &'a (dyn Fn(&Transfer, u32) -> bool + Sync);

/// Members `first..first + len`, their lists over the window step-major.
struct Chunk {
    first: u32,
    len: u32,
    /// Site `w * len + i`'s transfers are `list[starts[site]..starts[site + 1]]`.
    starts: Vec<u32>,
    list: Vec<Transfer>,
    /// Per window step, the sends listed (transfers whose sender is the
    /// member that lists them).
    sends: Vec<u32>,
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
        self.ok = true;
        for t in span.first..span.first + span.steps {
            let mut sends = 0;
            for m in self.first..self.first + self.len {
                let site = Site {
                    group: span.group,
                    index: m,
                    phase: span.phase,
                    inst: span.insts[m as usize],
                    step: span.phase.first_step + t,
                    t,
                };
                // A list of its own: a source may edit what it was handed
                // (the tests' mutated sources do).
                self.site.clear();
                span.source.transfers(span.schedule, span.plan, &site, &mut self.site);
                self.ok &= self.site.iter().all(|tr| (span.shape_ok)(tr, m));
                sends += self.site.iter().filter(|tr| tr.from == m).count() as u32;
                self.list.extend_from_slice(&self.site);
                self.starts.push(self.list.len() as u32);
            }
            self.sends.push(sends);
        }
    }

    fn range(&self, m: u32, w: u32) -> Range<usize> {
        let site = (w * self.len + (m - self.first)) as usize;
        self.starts[site] as usize..self.starts[site + 1] as usize
    }
}

/// Every member's transfers over one window, and which sends have been
/// matched to a receive.
pub(super) struct Window {
    chunk: u32,
    chunks: Vec<Chunk>,
    /// Per chunk, per transfer listed: matched to a receive.
    matched: Vec<Vec<bool>>,
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
                site: Vec::new(),
                ok: true,
            })
            .collect::<Vec<_>>();
        let matched = chunks.iter().map(|_| Vec::new()).collect();
        Window { chunk, chunks, matched, parallel }
    }

    /// Lists `span`; `false` when some transfer fails its shape check.
    pub(super) fn fill(&mut self, span: &Span<'_>) -> bool {
        let fill = |c: &mut Chunk| c.fill(span);
        if self.parallel {
            self.chunks.par_iter_mut().for_each(fill);
        } else {
            self.chunks.iter_mut().for_each(fill);
        }
        for (c, matched) in self.chunks.iter().zip(&mut self.matched) {
            matched.clear();
            matched.resize(c.list.len(), false);
        }
        self.chunks.iter().all(|c| c.ok)
    }

    fn at(&self, m: u32, w: u32) -> (usize, Range<usize>) {
        let c = (m / self.chunk) as usize;
        (c, self.chunks[c].range(m, w))
    }

    /// Member `m`'s transfers at window step `w`.
    pub(super) fn list(&self, m: u32, w: u32) -> &[Transfer] {
        let (c, r) = self.at(m, w);
        &self.chunks[c].list[r]
    }

    /// Marks the first send of `tr.from` at window step `w` not matched
    /// yet for which `same` holds (the full run's matching); `None` when
    /// there is none.
    pub(super) fn match_send(&mut self, tr: &Transfer, w: u32, same: impl Fn(&Transfer) -> bool) -> Option<()> {
        let (c, r) = self.at(tr.from, w);
        let (sent, matched) = (&self.chunks[c].list[r.clone()], &mut self.matched[c][r]);
        let k = (0..sent.len()).find(|&k| sent[k].from == tr.from && !matched[k] && same(&sent[k]))?;
        matched[k] = true;
        Some(())
    }

    /// How many sends the members listed at window step `w`: when as many
    /// receives were matched ([`Window::match_send`] marks a distinct send
    /// each time), none is left unmatched.
    pub(super) fn sends(&self, w: u32) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.sends[w as usize])).sum()
    }
}
