//! `ccc.AutoCache`: what `algorithm: Auto` keeps between the calls of a
//! lowering pass that compiles one collective at a time
//! (`ccc_compiler::validate::AutoCache`, behind a lock so that threads
//! may share one).

use ccc_compiler::validate::AutoCache;
use pyo3::prelude::*;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Keeps `Auto`'s answers between calls: pass the same one as
/// `auto_cache=` to `ccc.compile` and `ccc.sign`, and a collective equal to
/// one seen before (the same op, sizes, groups, machine and `model:`)
/// reuses its choice instead of searching the cost model again. The
/// result is the one a call without the cache gives: only the time
/// differs. Holds at most `capacity` collectives (1024 by default), the
/// oldest dropped first; `capacity=0` keeps nothing. Threads may share
/// one (calls through it take turns at validation).
#[pyclass(frozen, module = "ccc", name = "AutoCache")]
pub struct PyAutoCache {
    inner: Mutex<AutoCache>,
}

impl PyAutoCache {
    /// The cache, for one call (a lock a panicking call poisoned is taken
    /// as it is: the cache never changes a result).
    pub fn lock(&self) -> &Mutex<AutoCache> {
        &self.inner
    }

    fn get(&self) -> MutexGuard<'_, AutoCache> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl PyAutoCache {
    #[new]
    #[pyo3(signature = (capacity = AutoCache::DEFAULT_CAPACITY))]
    fn new(capacity: usize) -> PyAutoCache {
        PyAutoCache { inner: Mutex::new(AutoCache::with_capacity(capacity)) }
    }

    /// The most collectives kept.
    #[getter]
    fn capacity(&self) -> usize {
        self.get().capacity()
    }

    /// The distinct collectives whose `Auto` answers are kept.
    fn __len__(&self) -> usize {
        self.get().len()
    }

    /// Drops everything kept.
    fn clear(&self) {
        self.get().clear();
    }

    fn __repr__(&self) -> String {
        let cache = self.get();
        format!("AutoCache(capacity={}, collectives={})", cache.capacity(), cache.len())
    }
}
