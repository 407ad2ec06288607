//! Compiling in a process forked from one that has compiled.
//!
//! ccc proves and streams on rayon's global thread pool. `os.fork()` (and
//! `multiprocessing`'s default start method on Linux) copies a process
//! with only the forking thread: the pool's threads are gone in the child,
//! and a compile there would wait for them forever. The child is told
//! ([`after_fork_in_child`], registered with `os.register_at_fork` when
//! the module loads), and from then on each call that would use the pool
//! runs on a pool of its own ([`pooled`]), as many threads as the global
//! one would have (`RAYON_NUM_THREADS`, else the cores), built for the
//! call and dropped after it (tens of microseconds). The bytes are the
//! same on any number of threads.

use crate::adapter::{ErrorClass, ErrorInfo, Failure};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Runs `work`, which may use rayon's global pool: as it is, or, in a
/// forked process, inside a pool of its own.
///
/// # Errors
///
/// `work`'s, or [`ErrorClass::Internal`] when a forked process cannot
/// start the threads.
pub fn pooled<T: Send>(work: impl FnOnce() -> Result<T, Failure> + Send) -> Result<T, Failure> {
    if !FORKED.load(Ordering::Relaxed) {
        return work();
    }
    match rayon::ThreadPoolBuilder::new().thread_name(|i| format!("ccc-forked-{i}")).build() {
        Ok(pool) => pool.install(work),
        Err(e) => Err(ErrorInfo::new(
            ErrorClass::Internal,
            "Threads",
            format!("ccc cannot start its threads in this forked process: {e}"),
        )),
    }
}
