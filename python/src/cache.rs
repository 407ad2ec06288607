//! `ccc.AutoCache`: what `algorithm: Auto` keeps between the calls of a
//! lowering pass that compiles one collective at a time
//! (`ccc_compiler::validate::AutoCache`, behind a lock so that threads
//! may share one; the lock is only ever taken with the GIL released).

use ccc_compiler::validate::AutoCache;
use pyo3::prelude::*;
use std::sync::{Mutex, PoisonError};

/// A capacity from Python: Python's own refusal of a negative count
/// (`can't convert negative int to unsigned`) says nothing of what is
/// accepted; the same exception class, saying it.
fn capacity_of(capacity: &Bound<'_, PyAny>) -> PyResult<usize> {
    // An int, as every int argument is read (a bool or a float refused,
    // naming it), then in range.
    let fits = crate::whole(capacity, "capacity")?.ok().and_then(|n| usize::try_from(n).ok());
    fits.ok_or_else(|| {
        pyo3::exceptions::PyOverflowError::new_err(format!(
            "capacity {capacity} is out of range; accepted: a number of collectives from 0 (keep nothing) to {}",
            usize::MAX
        ))
    })
}

/// How long a forked process waits for an `AutoCache`'s lock before it
/// takes the lock for one held at the fork ([`PyAutoCache::with`]): far
/// longer than one search by a thread of its own takes in most programs.
const FORKED_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps `Auto`'s answers between calls: pass the same one as
/// `auto_cache=` to `ccc.compile` and `ccc.sign`, and a collective equal to
/// one seen before (the same op, sizes, groups, machine and `model:`)
/// reuses its choice instead of searching the cost model again. The
/// result is the one a call without the cache gives: only the time
/// differs. Holds at most `capacity` collectives between calls (1024 by
/// default), the least recently used dropped first; `capacity=0` keeps
/// nothing between calls. Threads may share one: their validations
/// through it take turns (the rest of each compile runs in parallel).
#[pyclass(frozen, module = "ccc", name = "AutoCache")]
pub struct PyAutoCache {
    inner: Mutex<AutoCache>,
    /// The cache's capacity, which never changes: read without the lock.
    capacity: usize,
}

impl PyAutoCache {
    /// The cache behind its lock, for a call to take with the GIL
    /// released (a lock a panicking call poisoned is taken as it is: the
    /// cache never changes a result).
    pub fn mutex(&self) -> &Mutex<AutoCache> {
        &self.inner
    }

    /// Runs `f` on the cache with the GIL released: the lock may be held
    /// by another thread's compile for the whole of its search. In a
    /// forked process it may be held for ever, by a thread of the parent's
    /// the child does not have (`fork.rs`): there it is waited on for
    /// [`FORKED_WAIT`] at most, then refused.
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut AutoCache) -> T + Send) -> PyResult<T> {
        if !crate::fork::forked() {
            return Ok(py.detach(|| f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))));
        }
        let started = std::time::Instant::now();
        py.detach(|| {
            loop {
                match crate::fork::try_lock(&self.inner) {
                    Some(mut cache) => return Some(f(&mut cache)),
                    None if started.elapsed() < FORKED_WAIT => std::thread::sleep(std::time::Duration::from_millis(1)),
                    None => return None,
                }
            }
        })
        .ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this AutoCache was in use when the process forked, by a thread this process does not have: it \
                 cannot be read here (compiles through it search without it); make a new ccc.AutoCache in this \
                 process",
            )
        })
    }
}

#[pymethods]
impl PyAutoCache {
    #[new]
    // The text signature spells the default out (`help()` would show
    // `capacity=Ellipsis` for a constant); a test holds it to the constant.
    #[pyo3(signature = (capacity = AutoCache::DEFAULT_CAPACITY), text_signature = "(capacity=1024)")]
    fn new(#[pyo3(from_py_with = capacity_of)] capacity: usize) -> PyAutoCache {
        PyAutoCache { inner: Mutex::new(AutoCache::with_capacity(capacity)), capacity }
    }

    /// The most collectives kept between calls.
    #[getter]
    fn capacity(&self) -> usize {
        self.capacity
    }

    /// The distinct collectives whose `Auto` answers are kept.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |cache| cache.len())
    }

    /// Drops everything kept.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, AutoCache::clear)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        // Printing never waits on a lock a forked process cannot take:
        // its count is then unknown.
        let len = match crate::fork::forked() {
            false => self.__len__(py).ok(),
            true => crate::fork::try_lock(&self.inner).map(|cache| cache.len()),
        };
        let len = len.map_or_else(|| "?".to_owned(), |n| n.to_string());
        format!("AutoCache(capacity={}, collectives={len})", self.capacity)
    }

    /// Pickles (and copies) as an empty cache of the same capacity: what a
    /// cache keeps only saves time in the process that searched, and never
    /// changes a result, so a worker process starts its own.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (usize,))> {
        Ok((py.get_type::<PyAutoCache>().into_any(), (self.capacity,)))
    }
}
