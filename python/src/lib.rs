//! # ccc-py: ccc as a Python extension module
//!
//! `import ccc` from a framework's lowering pass: parse or build a spec,
//! compile it (the GIL released while ccc works), read each rank's images
//! as `bytes`, sign, diagnose and decode — in-process, with exceptions
//! that carry the Rust errors' structured fields.
//!
//! - `adapter.rs`: every call into ccc's libraries, without PyO3; a change
//!   of the library's API is fixed there.
//! - `program.rs`: `ccc.Program` and `ccc.parse`.
//! - `compiled.rs`: `ccc.Compiled` and `ccc.TopSpImages`.
//! - `cache.rs`: `ccc.AutoCache`, `Auto`'s answers kept between calls.
//! - `errors.rs`: failures and panics as the exceptions of `ccc/_errors.py`.
//! - `hlo.rs`, `cost.rs`: the adapter's calls into the HLO front end
//!   and the cost model, without PyO3 (`cost.rs` asks
//!   `ccc_compiler::explain`, as the CLI does).
//! - this file: the module and its functions `compile`, `sign`,
//!   `diagnose`, `decode`, `import_hlo`, `explain`.
//!
//! The Python package around the native module (`ccc/`: exceptions,
//! `.pyi` stubs, re-exports) and its tests (`tests/`) sit beside `src/`;
//! `./test` at the repository root builds it with maturin and runs them.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod adapter;
mod cache;
mod compiled;
mod cost;
mod errors;
mod fork;
mod hlo;
mod json;
mod program;
mod strict;

use adapter::{DiagnoseInput, ErrorClass, ErrorInfo, Failure, Region, Request, Spec};
use cache::PyAutoCache;
use compiled::PyCompiled;
use program::{PyProgram, spec_of};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyMapping};
use std::time::Instant;

/// `ranks` as the adapter takes it: `None` for every rank. An empty list is
/// refused rather than read as every rank (the library's convention).
fn some_ranks(ranks: Option<Bound<'_, PyAny>>) -> PyResult<Option<Vec<u32>>> {
    let Some(ranks) = ranks else { return Ok(None) };
    // Text and bytes iterate too, but not as ranks (`b"\x07"` read as rank
    // 7); anything else that iterates (a list, a tuple, a range, an array)
    // is read item by item.
    let refused = || -> PyResult<PyErr> {
        Ok(pyo3::exceptions::PyTypeError::new_err(format!(
            "ranks is of type {}; accepted: a list (or other iterable) of ints, or None for every rank",
            ranks.get_type().name()?
        )))
    };
    let text_or_bytes = ranks.is_instance_of::<pyo3::types::PyString>()
        || ranks.is_instance_of::<pyo3::types::PyBytes>()
        || ranks.is_instance_of::<pyo3::types::PyByteArray>()
        || ranks.is_instance_of::<pyo3::types::PyMemoryView>();
    if text_or_bytes {
        return Err(refused()?);
    }
    let Ok(items) = ranks.try_iter() else { return Err(refused()?) };
    let ranks: Vec<Bound<'_, PyAny>> = items.collect::<PyResult<_>>()?;
    if ranks.is_empty() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "ranks is empty; name at least one rank, or pass ranks=None for every rank",
        ));
    }
    let rank = |(i, r): (usize, &Bound<'_, PyAny>)| {
        let shown = match whole(r, &format!("ranks[{i}]"))? {
            Ok(r) => match u32::try_from(r) {
                Ok(rank) => return Ok(rank),
                Err(_) => r.to_string(),
            },
            Err(shown) => shown,
        };
        Err(pyo3::exceptions::PyValueError::new_err(format!(
            "ranks[{i}] is {shown}, not a rank; accepted: ranks 0 to the world's rank_n - 1"
        )))
    };
    ranks.iter().enumerate().map(rank).collect::<PyResult<Vec<u32>>>().map(Some)
}

/// An int argument as an `i128`; one past that range is `Err` of its
/// decimal text (for a `ValueError` that names it, not Python's bare
/// `OverflowError`), anything but an int a `TypeError`.
fn whole(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Result<i128, String>> {
    // A bool is an int to Python, not a number to ccc (`True` read as 1).
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what} is {}, a bool; accepted: an int",
            value.repr()?
        )));
    }
    // An integer of another type (one with `__index__`, as numpy's) read
    // as its int first: PyO3 reads an `i128` of the limited API by shifting
    // the object itself, which such a type need not support.
    let indexed = match value.is_instance_of::<pyo3::types::PyInt>() {
        true => None,
        false => json::index_of(value).transpose()?,
    };
    match indexed.as_ref().unwrap_or(value).extract::<i128>() {
        Ok(v) => Ok(Ok(v)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(value.py()) => {
            Ok(Err(value.str()?.to_string()))
        }
        // Not an int: said of the argument, the error that said so its
        // cause (an `__index__` that raised keeps its own error).
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(value.py()) => {
            let named =
                pyo3::exceptions::PyTypeError::new_err(format!("{what}: {}; accepted: an int", e.value(value.py())));
            named.set_cause(value.py(), Some(e));
            Err(named)
        }
        Err(e) => Err(e),
    }
}

/// A `bool` argument (`verify`): an int or anything else is a `TypeError`
/// naming it (`0` is not read as `False`).
fn verify_flag(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    // As PyO3 reads a `bool` (`numpy.bool_` too), with a message of ours.
    match value.extract::<bool>() {
        Ok(b) => Ok(b),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "verify is {}, a value of type `{}`; accepted: True or False",
            value.repr()?,
            value.get_type().name()?
        ))),
    }
}

/// The `auto_cache` argument: `None`, or a `ccc.AutoCache`; anything else
/// a `TypeError` naming it.
fn cache_arg<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAutoCache>>> {
    if value.is_none() {
        return Ok(None);
    }
    match value.cast::<PyAutoCache>() {
        Ok(c) => Ok(Some(c.clone())),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "auto_cache is {}, a value of type `{}`; accepted: a ccc.AutoCache, or None",
            value.repr()?,
            value.get_type().name()?
        ))),
    }
}

/// `decode`'s `data`: `bytes` (borrowed, not copied: an image too large is
/// refused unread) or a `bytearray` (copied); anything else a `TypeError`
/// naming it.
fn image_bytes(value: &Bound<'_, PyAny>) -> PyResult<pyo3::pybacked::PyBackedBytes> {
    value.extract().map_err(|_| {
        let kind = value.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
        pyo3::exceptions::PyTypeError::new_err(format!(
            "data is a value of type `{kind}`; accepted: an image's bytes (bytes or bytearray)"
        ))
    })
}

/// `memory_budget` in bytes: `None` for the default; a negative one is a
/// `ValueError` naming it (not Python's bare `OverflowError`).
fn budget(memory_budget: Option<Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(b) = memory_budget else { return Ok(None) };
    let shown = match whole(&b, "memory_budget")? {
        Ok(b) => match u64::try_from(b) {
            Ok(bytes) => return Ok(Some(bytes)),
            Err(_) => b.to_string(),
        },
        Err(shown) => shown,
    };
    Err(pyo3::exceptions::PyValueError::new_err(format!("memory_budget is {shown}; accepted: 0 to {} bytes", u64::MAX)))
}

/// Validates, builds, lowers, encodes, proves and signs a spec.
///
/// `program_or_text` is a `ccc.Program` or RON text. `ranks` names the
/// ranks to emit images for (all when None); `verify=False` skips the
/// proof (it covers every rank, so it costs as much as a whole-world
/// compile); `memory_budget` bounds, in bytes, what the compile may hold
/// (2 GiB by default); `auto_cache`, a `ccc.AutoCache`, keeps `Auto`'s
/// answers for the calls after (the same result, sooner for a collective
/// seen before); `proven_by`, the manifest of an earlier verified compile
/// of the same spec (a `ccc.Compiled`, its manifest as a dict or JSON
/// text, or an `os.PathLike` naming its `manifest.json` or output folder),
/// takes the world's proof from it instead of proving the world again, as
/// `ccc compile --proven-by` does: each rank compiled is still checked on
/// its own, at its own cost. The GIL is released while ccc works, so
/// threads may compile in parallel.
///
/// Raises a subclass of `ccc.CccError`: `ParseError`, `ValidationError`
/// (every problem, by field path), `BuildError`, `LowerError` (a rank that
/// does not fit the device, or does not exist), `ImageError`, `ProofError`
/// (a defect in ccc), `ProofTooLargeError`, `MemoryBudgetError`,
/// `CertificateError` (`proven_by` does not vouch for this schedule),
/// `InputError` (`proven_by` is not a manifest, or cannot be read).
#[pyfunction]
#[pyo3(signature = (program_or_text, ranks=None, verify=true, memory_budget=None, auto_cache=None, proven_by=None))]
fn compile(
    py: Python<'_>,
    program_or_text: &Bound<'_, PyAny>,
    ranks: Option<Bound<'_, PyAny>>,
    #[pyo3(from_py_with = verify_flag)] verify: bool,
    memory_budget: Option<Bound<'_, PyAny>>,
    #[pyo3(from_py_with = cache_arg)] auto_cache: Option<Bound<'_, PyAutoCache>>,
    proven_by: Option<Bound<'_, PyAny>>,
) -> PyResult<PyCompiled> {
    let spec = spec_of(py, program_or_text)?;
    let (ranks, memory_budget) = (some_ranks(ranks)?, budget(memory_budget)?);
    let certificate = match proven_by {
        // As the CLI's `--no-verify` and `--proven-by` conflict: a
        // certificate stands in for a proof only where one is made.
        Some(_) if !verify => {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "proven_by takes the world's proof from a certificate, but verify=False skips the proof; accepted: \
                 one of the two",
            ));
        }
        Some(item) => Some(std::sync::Arc::new(certificate_arg(py, &item)?)),
        None => None,
    };
    let request = Request { ranks, no_verify: !verify, memory_budget, certificate };
    let cache = auto_cache.as_ref().map(|c| c.get().mutex());
    let run = |cancel| errors::guard(|| fork::pooled(|| adapter::compile(&spec, &request, cache, cancel)));
    // A short compile runs here (a thread of its own costs more than it
    // does); a long one where Ctrl-C can stop it.
    let compiled = match may_take_long(&spec, &request) {
        true => interruptible(py, run)?,
        false => py.detach(|| run(None)),
    };
    PyCompiled::new(py, compiled.map_err(|e| errors::to_py(py, e))?)
}

/// How often a compile's caller looks for a signal (a Ctrl-C) while the
/// compile runs.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Rank programs lowered (ranks times collectives) from which a compile
/// runs on a thread of its own that Ctrl-C can stop ([`interruptible`]):
/// below, it takes some tens of milliseconds at most, and the thread
/// (about 70 µs a call, measured by `benches/overhead.py`) would cost more
/// than a small compile does (6 µs for one rank of an 8-rank ring).
const INTERRUPTIBLE_FROM: u64 = 16_384;

/// Whether `request` of `spec` lowers [`INTERRUPTIBLE_FROM`] rank programs
/// or more: every rank of the world when it proves it, else the ranks
/// asked (a certificate stands in for the world's proof).
fn may_take_long(spec: &Spec, request: &Request) -> bool {
    let world = spec.program.collectives.iter().map(|c| u64::from(c.topology.rank_n)).max().unwrap_or(0);
    let own_ranks = request.no_verify || request.certificate.is_some();
    let ranks = match (&request.ranks, own_ranks) {
        (Some(ranks), true) => ranks.len() as u64,
        _ => world,
    };
    ranks.saturating_mul(spec.program.collectives.len() as u64) >= INTERRUPTIBLE_FROM
}

/// Runs `work` on a thread of its own, given a cancel flag, while this
/// thread waits with the GIL released and, every [`SIGNAL_POLL`], runs
/// Python's signal handlers: when one raises (Ctrl-C's
/// `KeyboardInterrupt`), the flag is set, the work stops at its next
/// check (`Options::cancel`, a chunk of ranks at most) and is dropped, and
/// the handler's exception is raised. (Only the main thread runs signal
/// handlers: from another, this waits for the work.) Where no thread can
/// be started, the work runs here, uninterruptible.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(Option<ccc_compiler::pipeline::Cancel>) -> T + Send,
) -> PyResult<T> {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let cancel = ccc_compiler::pipeline::Cancel::new();
    let given = cancel.clone();
    let (send, receive) = channel();
    // The work, moved into the thread if one starts, else taken back.
    let slot = std::sync::Mutex::new(Some(work));
    let take = |slot: &std::sync::Mutex<Option<_>>| slot.lock().ok().and_then(|mut w| w.take());
    std::thread::scope(|scope| {
        let slot = &slot;
        // `send` moves in: it drops with the thread, so a thread that ends
        // without answering (a panic past `guard`) disconnects the channel.
        let spawned = std::thread::Builder::new().name("ccc-compile".to_owned()).spawn_scoped(scope, move || {
            if let Some(work) = take(slot) {
                let _ = send.send(work(Some(given)));
            }
        });
        let Ok(worker) = spawned else {
            return match take(slot) {
                Some(work) => Ok(py.detach(|| work(None))),
                None => Err(pyo3::exceptions::PyRuntimeError::new_err("ccc could not start its compile")),
            };
        };
        let mut receive = receive;
        let answer = loop {
            // The receiver is moved in and out (it may not be shared).
            let (back, received) = py.detach(move || {
                let received = receive.recv_timeout(SIGNAL_POLL);
                (receive, received)
            });
            receive = back;
            match received {
                Ok(done) => break Ok(done),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(interrupted) = py.check_signals() {
                        cancel.cancel();
                        break Err(interrupted);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    break Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "ccc's compile thread ended without an answer (a defect in ccc)",
                    ));
                }
            }
        };
        // Joined here, without the GIL (the scope would join it holding
        // the GIL, and raise a panic of its again): an interrupted one at
        // its next check, its answer dropped.
        drop(py.detach(move || worker.join()));
        answer
    })
}

/// The collective signature of a spec: 32 lower-case hex digits, what
/// `ccc sign` prints and every rank's runtime compares.
///
/// `auto_cache` as for `compile`.
///
/// Raises `ccc.ParseError`, `ccc.ValidationError` or `ccc.BuildError`.
#[pyfunction]
#[pyo3(signature = (program_or_text, auto_cache=None))]
fn sign(
    py: Python<'_>,
    program_or_text: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = cache_arg)] auto_cache: Option<Bound<'_, PyAutoCache>>,
) -> PyResult<String> {
    let spec = spec_of(py, program_or_text)?;
    let cache = auto_cache.as_ref().map(|c| c.get().mutex());
    py.detach(|| errors::guard(|| adapter::sign(&spec, cache))).map_err(|e| errors::to_py(py, e))
}

/// An input to `diagnose`, read while the GIL is held.
enum Owned {
    Spec(Spec),
    Manifest(String),
    /// A manifest dict, as JSON text.
    ManifestDict(String),
    Compiled(std::sync::Arc<adapter::Compiled>),
    Folder(std::path::PathBuf),
}

/// Reads one `diagnose` input: a `Program`, a `Compiled`, a manifest dict,
/// or text (a manifest's JSON when it starts with `{`, else RON).
fn diagnose_input(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<Owned> {
    if let Some(path) = path_of(item)? {
        if path.is_dir() {
            return Ok(Owned::Folder(path));
        }
        let text = py.detach(|| adapter::read_input_file(&path)).map_err(|e| errors::to_py(py, e))?;
        return if ccc_compiler::diagnose::is_manifest(Some(&path), &text) {
            Ok(Owned::Manifest(text))
        } else {
            program::parse_released(py, &text).map(Owned::Spec)
        };
    }
    if let Ok(c) = item.cast::<PyCompiled>() {
        return Ok(Owned::Compiled(std::sync::Arc::clone(&c.get().compiled)));
    }
    if let Ok(mapping) = item.cast::<PyMapping>() {
        // A spec's dict (`Program.to_dict`), not a manifest's: say how it
        // is read, rather than that a manifest's `signature` is missing.
        let has = |key: &str| mapping.contains(key).unwrap_or(false);
        let manifest = has("signature") || has("manifest_schema") || has("format_version");
        if !manifest && (has("op") || has("collectives")) {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a dict of a spec's fields (Program.to_dict) is not a diagnose input: pass ccc.Program.from_dict(d); \
                 a dict is read as a manifest (Compiled.manifest)",
            ));
        }
        // Any mapping (`types.MappingProxyType`, as the stub says), read as
        // the dict of its items and checked as a spec's dict is: a value
        // JSON cannot carry (bytes, a set) is refused at its path, not with
        // json's bare TypeError.
        return Ok(Owned::ManifestDict(json::dumps_manifest(py, item)?));
    }
    if let Ok(text) = item.extract::<String>()
        && ccc_compiler::diagnose::is_manifest(None, &text)
    {
        return Ok(Owned::Manifest(text));
    }
    spec_of(py, item).map(Owned::Spec).map_err(|e| {
        // Text naming a file or folder: read as RON, as documented, but
        // say how to have it read as the path it looks like.
        if let Ok(text) = item.extract::<String>()
            && names_a_path(&text)
        {
            return with_path_hint(py, item, &text, "RON", e);
        }
        if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
            let kind = item.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
            pyo3::exceptions::PyTypeError::new_err(format!(
                "diagnose compares ccc.Program, RON text, ccc.Compiled, a manifest (dict or JSON text), or an \
                 os.PathLike (pathlib.Path) naming an output folder or a spec or manifest file; a value of type `{kind}` is not one"
            ))
        } else {
            e
        }
    })
}

/// Whether `text` names a file or folder that exists (one line).
pub(crate) fn names_a_path(text: &str) -> bool {
    !text.contains('\n') && std::path::Path::new(text).exists()
}

/// `e`, raised for `text` (read as `read_as` text, as documented), with
/// its message and `help` saying how to have `item` read as the path it
/// names instead.
fn with_path_hint(py: Python<'_>, item: &Bound<'_, PyAny>, text: &str, read_as: &str, e: PyErr) -> PyErr {
    let shown = item.repr().map_or_else(|_| format!("{text:?}"), |r| r.to_string());
    let help =
        format!("a str is read as {read_as} text; to read the file or folder it names, pass pathlib.Path({shown})");
    with_help(py, e, help)
}

/// `e` with `help` set and added to its message in parentheses.
pub(crate) fn with_help(py: Python<'_>, e: PyErr, help: String) -> PyErr {
    let value = e.value(py);
    if let Ok(message) = value.getattr("message").and_then(|m| m.extract::<String>()) {
        let told = format!("{message} ({help})");
        let _ = value.setattr("message", &told).and_then(|()| value.setattr("args", (told,)));
    }
    let _ = value.setattr("help", help);
    e
}

/// `e` with its message naming the `diagnose` input it is about
/// (`rank 5: ...`), when it is one of ccc's errors (a spec that does not
/// parse or validate, a file that cannot be read: a line and column say
/// nothing without the input) or a `TypeError` (an input of a type
/// `diagnose` does not read). Other errors pass unchanged.
fn naming(py: Python<'_>, name: &str, e: PyErr) -> PyErr {
    // An input of no type `diagnose` reads: which one.
    if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
        return pyo3::exceptions::PyTypeError::new_err(format!("{name}: {}", e.value(py)));
    }
    let value = e.value(py);
    let Ok(message) = value.getattr("message").and_then(|m| m.extract::<String>()) else { return e };
    let named = format!("{name}: {message}");
    // Both what `str(e)` prints and the `message` attribute.
    let _ = value.setattr("message", &named).and_then(|()| value.setattr("args", (named,)));
    e
}

/// The path of an `os.PathLike` (a `pathlib.Path`), not of a `str`: text
/// is a spec or a manifest, never a file name.
fn path_of(item: &Bound<'_, PyAny>) -> PyResult<Option<std::path::PathBuf>> {
    if item.is_instance_of::<pyo3::types::PyString>() || !item.hasattr("__fspath__")? {
        return Ok(None);
    }
    // As `open()` reads one: `os.fsdecode` turns a `__fspath__` that gives
    // bytes into the name the file system has.
    item.py().import("os")?.call_method1("fsdecode", (item,))?.extract().map(Some)
}

/// Compares the signatures of specs, compiles or manifests and explains
/// what differs and the likely cause: the report `ccc diagnose --json`
/// prints, as a dict (`all_match`, `groups`, `odd_ones_out`,
/// `differences` with each differing `field`, both values and its `cause`,
/// and, when an output folder holds a file changed since ccc wrote it,
/// `edited`: no match, whatever the signatures say).
///
/// `inputs` is a list (named `input 0`, `input 1`, ..., a path by itself)
/// or a dict from name to input; an input is a `ccc.Program`, RON text, a
/// `ccc.Compiled`, a manifest (a dict, or the text of a `manifest.json`),
/// or an `os.PathLike` (`pathlib.Path`; a `str` is always text): a
/// `ccc compile -o` output folder, compared by its images when they are
/// the ones its manifest lists, as `ccc diagnose OUT` does, or a file
/// read as `ccc diagnose FILE` reads it (a `.json` or text starting with
/// `{` is a manifest, else a spec). An unreadable path raises
/// `ccc.InputError` of `kind` `NoManifest`, `NotAFile`, `Io`, `TooLarge`,
/// `NotUtf8` or `Replaced` (another compile put a new output in the
/// folder's place each time it was read);
/// a spec that does not parse or validate raises its `ccc.ParseError` or
/// `ccc.ValidationError`, the message starting with the input's name
/// (`rank 5: ...`). Every input is read: of those refused, the first in
/// input order is raised, its name followed by how many others were
/// refused and which (`rank 0 (and 2 other inputs refused too: rank 1,
/// rank 3): ...`).
///
/// When every input is a `Program` that `import_hlo` made (two or more),
/// their modules' collectives are compared instruction by instruction
/// too, as `ccc diagnose A.hlo B.hlo --target T --json` compares the
/// modules: where they differ, the report's `hlo` names the instructions
/// (`reference`, and each other group's `modules`, `differences` and
/// `cause`), the modules named as the inputs are.
#[pyfunction]
fn diagnose<'py>(py: Python<'py>, inputs: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let mut named: Vec<(String, Owned)> = Vec::new();
    // A lone string is one input, not a list of characters.
    if inputs.is_instance_of::<pyo3::types::PyString>() || inputs.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "diagnose takes a list (or dict) of inputs to compare, not one string: diagnose([a, b])",
        ));
    }
    // Not a collection at all (`None`, a number): say what is taken.
    if inputs.cast::<PyMapping>().is_err() && inputs.try_iter().is_err() {
        let kind = inputs.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "diagnose takes a list (or dict) of inputs to compare, not a `{kind}`: diagnose([a, b])"
        )));
    }
    // Every input is read, and every one refused is counted: the first
    // refused, in input order (refused reading it, or reading its spec),
    // is raised, saying how many others were ([`refused`]).
    let mut refused: Vec<(usize, String, PyErr)> = Vec::new();
    if let Ok(mapping) = inputs.cast::<PyMapping>() {
        // One manifest (or a spec's dict) given alone, its keys read as
        // inputs' names: a value no input is (a number, a list) under a
        // key a manifest, a program's or a collective's dict has.
        let shapes = [
            ("manifest_schema", "one manifest"),
            ("collectives", "one program's dict"),
            ("count", "one collective's dict"),
        ];
        for (key, what) in shapes {
            let value = mapping.get_item(key).ok();
            let not_an_input = value
                .is_some_and(|v| v.is_instance_of::<pyo3::types::PyInt>() || v.is_instance_of::<pyo3::types::PyList>());
            if not_an_input {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "diagnose takes a list (or a {{name: input}} dict) of inputs to compare, and this dict is {what} \
                     (its `{key}` is no input): diagnose([a, b])"
                )));
            }
        }
        for (i, item) in mapping.items()?.iter().enumerate() {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let name = program::text_arg(py, &key, "a diagnose key", "an input's name (str)")?;
            match diagnose_input(py, &value) {
                Ok(input) => named.push((name, input)),
                // Ctrl-C, or an exit, while an input was read: not a
                // refusal of it.
                Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(py) => return Err(e),
                Err(e) => refused.push((i, name, e)),
            }
        }
    } else {
        for (i, item) in inputs.try_iter()?.enumerate() {
            let item = item?;
            // A path is named as given (`ccc diagnose` shortens its names to
            // the trailing parts that tell them apart; a dict names them as
            // the caller likes).
            let name = match path_of(&item)? {
                Some(path) => path.display().to_string(),
                None => format!("input {i}"),
            };
            match diagnose_input(py, &item) {
                Ok(input) => named.push((name, input)),
                Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(py) => return Err(e),
                Err(e) => refused.push((i, name, e)),
            }
        }
    }
    // An empty gather is no evidence that ranks match.
    if named.is_empty() && refused.is_empty() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "diagnose was given no inputs; accepted: a list or dict of at least one (ccc diagnose takes two or more)",
        ));
    }
    // Where each input read sits among all of them.
    let positions: Vec<usize> = {
        let gone: std::collections::BTreeSet<usize> = refused.iter().map(|(i, _, _)| *i).collect();
        (0..named.len() + refused.len()).filter(|i| !gone.contains(i)).collect()
    };
    let report = py.detach(|| {
        errors::guard(|| {
            let borrowed: Vec<(String, DiagnoseInput<'_>)> = named
                .iter()
                .map(|(name, input)| {
                    let input = match input {
                        Owned::Spec(s) => DiagnoseInput::Spec(s),
                        Owned::Manifest(m) => DiagnoseInput::ManifestJson(m),
                        Owned::ManifestDict(m) => DiagnoseInput::ManifestDict(m),
                        Owned::Compiled(c) => DiagnoseInput::Compiled(c),
                        Owned::Folder(dir) => DiagnoseInput::Folder(dir),
                    };
                    (name.clone(), input)
                })
                .collect();
            fork::pooled(|| Ok(adapter::diagnose(&borrowed)))
        })
    });
    let report = match report {
        Ok(Ok(report)) if refused.is_empty() => report,
        Ok(Ok(_)) => return Err(first_refused(py, refused)),
        Ok(Err(failures)) => {
            for (at, failure) in failures {
                let i = positions.get(at).copied().unwrap_or(at);
                let name = named.get(at).map_or_else(String::new, |(n, _)| n.clone());
                refused.push((i, name, errors::to_py(py, failure)));
            }
            return Err(first_refused(py, refused));
        }
        Err(e) => return Err(errors::to_py(py, e)),
    };
    json::loads(py, &report)
}

/// The first of the inputs `diagnose` refused, in input order, its
/// message naming it (`rank 5: ...`) and, when others were refused too,
/// how many and which (`ccc diagnose` says each, then how many).
fn first_refused(py: Python<'_>, mut refused: Vec<(usize, String, PyErr)>) -> PyErr {
    refused.sort_by_key(|(i, _, _)| *i);
    let others: Vec<String> = refused.iter().skip(1).map(|(_, name, _)| name.clone()).collect();
    let Some((_, name, e)) = refused.into_iter().next() else {
        return pyo3::exceptions::PyRuntimeError::new_err("diagnose refused no input (a defect in ccc)");
    };
    // A manifest's error names its input already (`rank 5 is not a ccc
    // manifest`).
    let said = e.value(py).getattr("message").and_then(|m| m.extract::<String>()).unwrap_or_default();
    let named = if others.is_empty() {
        if said.starts_with(&format!("{name} ")) {
            return e;
        }
        name
    } else {
        let shown: Vec<&str> = others.iter().take(REFUSED_NAMED).map(String::as_str).collect();
        let more = others.len().saturating_sub(REFUSED_NAMED);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!(
            "{name} (and {} refused too: {}{more})",
            ccc_ir::noun::count(others.len() as u64, "other input"),
            shown.join(", ")
        )
    };
    naming(py, &named, e)
}

/// How many other refused inputs [`first_refused`] names.
const REFUSED_NAMED: usize = 4;

/// Decodes an image into what `ccc decode --format json` prints for it, as
/// Python values: for `ctrl` a list of words, for `slot` a dict of
/// `record_n`, `entry_n` and `records`, for `neff` the block's fields.
///
/// `region` is `"ctrl"`, `"slot"` or `"neff"` (or the file stems
/// `ctrl_spad`, `slot_spad`, `neff_configs`). Raises `ccc.DecodeError` with
/// the byte `offset` and what was wrong there.
#[pyfunction]
fn decode<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = image_bytes)] data: pyo3::pybacked::PyBackedBytes,
    region: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let region = program::text_arg(py, region, "region", "a region's name (str)")?;
    let region = region.as_str();
    let Some(region) = Region::of(region) else {
        let mut info = ErrorInfo::new(ErrorClass::Decode, "UnknownRegion", format!("unknown region {region:?}"));
        info.accepted = Some(Region::ACCEPTED.to_owned());
        return Err(errors::to_py(py, info));
    };
    let text = errors::run(py, || adapter::decode(&data, region))?;
    json::loads(py, &text)
}

/// Imports the collectives of an XLA HLO module (the text XLA prints:
/// `--xla_dump_to`, `Compiled.as_text()`, `Lowered.as_text(dialect="hlo")`)
/// as a `ccc.Program` for a machine, as `ccc compile MODULE.hlo --target
/// TARGET.ron` does (`docs/hlo.md` says what is supported).
///
/// `target` is the target file's RON text (`"(arch: Cayman, topology:
/// (rank_n: 8, local_rank_n: 8))"`) or a dict of its fields (`{"arch":
/// "Cayman", "topology": {"rank_n": 8, "local_rank_n": 8}}`; optional
/// `channels`, `algorithm`, `algorithms`, `devices`, `barrier`,
/// `send_credits`, `model`). `algorithm`, as a spec writes it (`"Ring"`,
/// `"Hier((...))"`, `"Auto"`), overrides the target's choice for every
/// collective, as `--algorithm` does.
///
/// What of the module is not compiled as it runs (collectives in
/// branches of a `conditional`, device-to-device send/recv) is said in a
/// `UserWarning`, as the CLI says it on stderr.
///
/// Raises `ccc.ParseError`: `kind` `"Hlo"` with the `line` and `column`
/// in the module and what would be accepted in `help`; `"Target"` or
/// `"Algorithm"` (with `field` and, for RON text, `line` and `column`)
/// when those are not of their schema; `"NotUtf8"` (with `field` `text`,
/// `target` or `algorithm`) for text holding a lone surrogate.
#[pyfunction]
#[pyo3(signature = (text, target, algorithm=None))]
fn import_hlo(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    algorithm: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyProgram> {
    let text = program::text_arg(py, text, "text", "the HLO module's text (str)")?;
    let algorithm = algorithm
        .map(|a| program::text_arg(py, a, "algorithm", "an algorithm as a spec writes it (str)"))
        .transpose()?;
    let json_target = match target.cast::<PyMapping>() {
        Ok(_) => Some(json::dumps_checked(py, target, "target", "target", "Target")?),
        Err(_) => None,
    };
    let ron_target = match &json_target {
        Some(_) => None,
        None => Some(program::text_arg(py, target, "target", "a target's RON text (str) or a dict of its fields")?),
    };
    let target = match (&json_target, &ron_target) {
        (Some(j), _) => hlo::TargetText::Json(j),
        (None, Some(r)) => hlo::TargetText::Ron(r),
        (None, None) => return Err(pyo3::exceptions::PyTypeError::new_err("target is missing")),
    };
    let imported = py.detach(|| errors::guard(|| hlo::import_hlo(&text, &target, algorithm.as_deref())));
    let (spec, notes) = imported.map_err(|e| errors::to_py(py, e))?;
    // What is not compiled as it runs (branches, device-to-device send/recv),
    // as the CLI says on stderr: a `UserWarning` at the caller's line.
    for note in notes {
        let message = std::ffi::CString::new(note.replace('\0', "")).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &message, 1)?;
    }
    Ok(PyProgram { spec })
}

/// Every legal choice of every collective, predicted by ccc's cost model
/// (`docs/cost-model.md`): what `ccc explain --json` prints, as a list
/// with one dict per collective (`index`, `op`, `bytes`, `written`, `chosen`, and
/// `choices`, cheapest first: each `algorithm`, `time_us`, `algbw_gbps`,
/// `busbw_gbps`, `bound_us`, `ratio`, `winner` (the choice the spec
/// compiles to), `why` it lost, and its `legs`).
///
/// `program_or_text` is a `ccc.Program` (from `parse`, `from_dict` or
/// `import_hlo`) or RON text. Raises `ccc.ParseError` or
/// `ccc.ValidationError`.
#[pyfunction]
fn explain<'py>(py: Python<'py>, program_or_text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let spec = spec_of(py, program_or_text)?;
    let text = py.detach(|| errors::guard(|| cost::explain(&spec)));
    json::loads(py, &text.map_err(|e| errors::to_py(py, e))?)
}

/// Test hook: panics inside ccc's guard, to show that a Rust panic
/// reaches Python as `ccc.InternalError` and the interpreter lives on.
#[pyfunction]
#[allow(clippy::panic)]
fn _panic_for_test(py: Python<'_>, message: &str) -> PyResult<()> {
    py.detach(|| errors::guard(|| -> Result<(), Failure> { panic!("{message}") })).map_err(|e| errors::to_py(py, e))
}

/// The certificate `proven_by` names: a `ccc.Compiled`'s manifest, a
/// manifest dict or its JSON text, or the `manifest.json` an `os.PathLike`
/// names (itself, or in the output folder it names).
fn certificate_arg(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<ccc_compiler::manifest::Manifest> {
    use adapter::CertificateFrom;
    let failed = |e| errors::to_py(py, e);
    if let Some(path) = path_of(item)? {
        return py.detach(|| adapter::read_certificate(&path)).map_err(failed);
    }
    if let Ok(c) = item.cast::<PyCompiled>() {
        return Ok(adapter::certificate_of(&c.get().compiled));
    }
    if item.cast::<PyMapping>().is_ok() {
        // A value JSON cannot carry is refused as any manifest that does
        // not read is, not as a spec's.
        return match json::checked(py, item, "", "a manifest")? {
            Ok(json) => adapter::certificate_json(&json, CertificateFrom::Dict).map_err(failed),
            Err(bad) => {
                let refused = failed(adapter::certificate_unheld(&bad.path, &bad.why));
                Err(json::caused(py, refused, bad.cause))
            }
        };
    }
    // Text holding a lone surrogate is refused as other text is
    // (`ParseError` of kind `NotUtf8`), not as no text at all.
    if let Some(text) = program::text_at(py, item, Some("proven_by"))? {
        return adapter::certificate_json(&text, CertificateFrom::Text).map_err(|e| match names_a_path(&text) {
            true => with_path_hint(py, item, &text, "JSON", failed(e)),
            false => failed(e),
        });
    }
    let kind = item.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "proven_by takes a ccc.Compiled, a manifest (dict or JSON text), or an os.PathLike naming a manifest.json or \
         output folder; a value of type `{kind}` is not one"
    )))
}

/// Benchmark hook: the Rust call `compile` makes (validate and compile
/// the spec, no Python objects), timed in Rust `iterations` times; the
/// seconds of each call. `python/benches/overhead.py` sets it beside
/// `ccc.compile` to report the binding's own cost.
#[pyfunction]
#[pyo3(signature = (program, ranks, verify, iterations))]
fn _time_rust_compile<'py>(
    py: Python<'py>,
    program: &Bound<'py, PyAny>,
    ranks: Option<Bound<'_, PyAny>>,
    verify: bool,
    iterations: u32,
) -> PyResult<Bound<'py, PyList>> {
    let spec = spec_of(py, program)?;
    let request = Request { ranks: some_ranks(ranks)?, no_verify: !verify, memory_budget: None, certificate: None };
    let times = py.detach(|| {
        errors::guard(|| {
            fork::pooled(|| {
                (0..iterations)
                    .map(|_| {
                        let t = Instant::now();
                        adapter::compile(&spec, &request, None, None).map(|c| {
                            let seconds = t.elapsed().as_secs_f64();
                            drop(c);
                            seconds
                        })
                    })
                    .collect::<Result<Vec<f64>, Failure>>()
            })
        })
    });
    PyList::new(py, times.map_err(|e| errors::to_py(py, e))?)
}

/// The native module `ccc._ccc`; `ccc/__init__.py` re-exports it.
#[pymodule]
#[pyo3(name = "_ccc")]
fn ccc_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::keep_panics_quiet();
    fork::register(m)?;
    m.add_class::<PyProgram>()?;
    m.add_class::<PyCompiled>()?;
    m.add_class::<PyAutoCache>()?;
    m.add_class::<compiled::PyTopSpImages>()?;
    m.add_function(wrap_pyfunction!(program::parse, m)?)?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(sign, m)?)?;
    m.add_function(wrap_pyfunction!(diagnose, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(import_hlo, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_time_rust_compile, m)?)?;
    m.add("FORMAT_VERSION", adapter::FORMAT_VERSION)?;
    Ok(())
}
