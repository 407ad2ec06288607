//! Compiling in a process forked from one that has compiled.
//!
//! ccc proves and streams on rayon's global thread pool. `os.fork()` (and
//! `multiprocessing`'s default start method on Linux) copies a process
//! with only the forking thread: the pool's threads are gone in the child,
//! and a compile there would wait for them forever. The child is told
//! ([`after_fork_in_child`], registered with `os.register_at_fork` when
//! the module loads), and from then on each call that would use the pool
//! runs on a pool of its own ([`pooled`]), as many threads as the global
//! one would have (`RAYON_NUM_THREADS`, else the cores), built on the
//! process's first such call and kept for the others. The bytes are the
//! same on any number of threads.
//!
//! A lock is copied as it stood: an `AutoCache` another thread was
//! searching through when the process forked stays locked in the child,
//! by a thread the child does not have. There, a compile takes the
//! cache's lock only if it is free, and searches without the cache
//! otherwise (the same result, by design), rather than wait forever.

use crate::adapter::{ErrorClass, ErrorInfo, Failure};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// Set in a process forked from this one's parent, whose rayon threads it
/// does not have.
static FORKED: AtomicBool = AtomicBool::new(false);

/// Registered with `os.register_at_fork(after_in_child=...)`.
#[pyfunction]
pub fn _after_fork_in_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Registers [`_after_fork_in_child`] with `os.register_at_fork` (a
/// platform without `fork` has no such function, and nothing to do).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(_after_fork_in_child, m)?;
    let os = m.py().import("os")?;
    if let Ok(register) = os.getattr("register_at_fork") {
        let kwargs = pyo3::types::PyDict::new(m.py());
        kwargs.set_item("after_in_child", hook)?;
        register.call((), Some(&kwargs))?;
    }
    Ok(())
}

/// Whether this process was forked from one that had loaded ccc.
pub fn forked() -> bool {
    FORKED.load(Ordering::Relaxed)
}

/// `lock`'s guard if it is free (one a panicking call poisoned taken as
/// it is), `None` if it is held: in a forked process, perhaps for ever,
/// by a thread of the parent's the child does not have.
pub fn try_lock<T>(lock: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match lock.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Runs `work`, which may use rayon's global pool: as it is, or, in a
/// forked process, inside a pool of its own.
///
/// # Errors
///
/// `work`'s, or [`ErrorClass::Internal`] when a forked process cannot
/// start the threads.
pub fn pooled<T: Send>(work: impl FnOnce() -> Result<T, Failure> + Send) -> Result<T, Failure> {
    if !forked() {
        return work();
    }
    match pool() {
        Ok(pool) => pool.install(work),
        Err(e) => Err(ErrorInfo::new(
            ErrorClass::Internal,
            "Threads",
            format!("ccc cannot start its threads in this forked process: {e}"),
        )),
    }
}

/// This process's own pool, built on its first call and kept (a pool
/// copied from a parent, whose threads a grandchild does not have, is
/// left, never dropped: dropping it would signal threads that are not
/// there). A call that finds the slot's lock taken (by a thread of the
/// parent's, copied locked) builds a pool for itself alone.
fn pool() -> Result<Arc<rayon::ThreadPool>, rayon::ThreadPoolBuildError> {
    let build = || rayon::ThreadPoolBuilder::new().thread_name(|i| format!("ccc-forked-{i}")).build().map(Arc::new);
    let pid = std::process::id();
    let Some(mut slot) = try_lock(&POOL) else { return build() };
    if let Some((owner, pool)) = slot.as_ref()
        && *owner == pid
    {
        return Ok(Arc::clone(pool));
    }
    let pool = build()?;
    if let Some(copied) = slot.replace((pid, Arc::clone(&pool))) {
        std::mem::forget(copied);
    }
    Ok(pool)
}

/// The pool of the process whose id it holds ([`pool`]).
static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
