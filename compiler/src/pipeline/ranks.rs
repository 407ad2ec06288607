//! The ranks lowered and encoded in parallel, in the order asked, the
//! first error in that order whatever the thread count.

use super::CompileError;
use super::{Options, Stage, Ticker};
use crate::encode::{RankImages, encode};
use crate::lower::{LowerError, RankProgram, lower};
use crate::schedule::Schedule;
use ccc_ir::id::Rank;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lowers and encodes `ranks`, each rank lowered counted as
/// [`Stage::Lower`] progress.
pub(super) fn lower_and_encode(
    schedule: &Schedule,
    ranks: &[Rank],
    options: &Options,
) -> Result<(Vec<RankProgram>, Vec<RankImages>), CompileError> {
    let lowering = Ticker::start(options, Stage::Lower, ranks.len() as u64);
    let programs = first_error_early(ranks, |&r| {
        let program = lower(schedule, r);
        lowering.tick(1);
        program
    })?;
    let images = first_error_early(&programs, |p| encode(p, schedule.arch))?;
    Ok((programs, images))
}

/// Lowers `ranks` in parallel; the result is in the order asked, and the
/// error (if any) is the first in that order, whatever the thread count.
///
/// # Errors
///
/// The first rank's [`LowerError`].
pub fn lower_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<RankProgram>, LowerError> {
    first_error_early(ranks, |&r| lower(schedule, r))
}

/// Maps `items` in parallel, in order, stopping early at a failure: the
/// error returned is the first in input order, whatever the thread count
/// (a parallel collect into `Result` would return whichever failed first
/// in time). Once item `i` has failed, items after it are skipped; every
/// item before the lowest failing index still runs, so that index's error
/// is the first in order.
pub(super) fn first_error_early<I, T, E, F>(items: &[I], f: F) -> Result<Vec<T>, E>
where
    I: Sync,
    T: Send,
    E: Send,
    F: Fn(&I) -> Result<T, E> + Sync,
{
    let failed = AtomicUsize::new(usize::MAX);
    let results: Vec<Option<Result<T, E>>> = items
        .par_iter()
        .enumerate()
        .map(|(i, item)| {
            if i > failed.load(Ordering::Relaxed) {
                return None;
            }
            let result = f(item);
            if result.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            Some(result)
        })
        .collect();
    // An item is skipped only after a failure at a lower index, which
    // comes first here.
    results.into_iter().flatten().collect()
}
