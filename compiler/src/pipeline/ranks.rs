//! Ranks mapped in parallel (lowered, encoded), in the order asked, the
//! first error in that order whatever the thread count.

use crate::lower::{LowerError, Lowerer, RankProgram};
use crate::schedule::Schedule;
use ccc_ir::id::Rank;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lowers `ranks` in parallel; the result is in the order asked, and the
/// error (if any) is the first in that order, whatever the thread count.
///
/// # Errors
///
/// The first rank's [`LowerError`].
pub fn lower_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<RankProgram>, LowerError> {
    let lowerer = Lowerer::new(schedule);
    first_error_early(ranks, |&r| lowerer.lower(r))
}

/// Maps `items` in parallel, in order, stopping early at a failure: the
/// error returned is the first in input order, whatever the thread count
/// (a parallel collect into `Result` would return whichever failed first
/// in time).
pub(super) fn first_error_early<I, T, E, F>(items: &[I], f: F) -> Result<Vec<T>, E>
where
    I: Sync,
    T: Send,
    E: Send,
    F: Fn(&I) -> Result<T, E> + Sync,
{
    match map_until_error(items, f) {
        (done, None) => Ok(done),
        (_, Some(failed)) => Err(failed.error),
    }
}

/// The first item in input order whose map failed: its index, its error.
pub(super) struct Failed<E> {
    pub(super) index: usize,
    pub(super) error: E,
}

/// Maps `items` in parallel, in order, until the first failure in input
/// order: the results of every item before it, and the failure. Once item
/// `i` has failed, items after it are skipped; every item before the
/// lowest failing index still runs, so that index's error is the first in
/// order, whatever the thread count.
pub(super) fn map_until_error<I, T, E, F>(items: &[I], f: F) -> (Vec<T>, Option<Failed<E>>)
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
    let mut done = Vec::with_capacity(results.len());
    for (index, result) in results.into_iter().enumerate() {
        match result {
            Some(Ok(t)) => done.push(t),
            Some(Err(error)) => return (done, Some(Failed { index, error })),
            None => break,
        }
    }
    (done, None)
}
