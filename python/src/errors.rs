//! Rust failures as Python exceptions: an [`ErrorInfo`] becomes an
//! instance of the class of `ccc/_errors.py` its [`ErrorClass`] names, with
//! every structured field as an attribute; a panic inside ccc becomes
//! `ccc.InternalError` ([`guard`]) instead of aborting the interpreter,
//! and prints nothing ([`keep_panics_quiet`]).

use crate::adapter::{ErrorClass, ErrorInfo, Failure};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, PoisonError};

/// The Python module that defines the exception classes.
const ERRORS_MODULE: &str = "ccc._errors";

/// The exception class of each family, by its name in `ccc/_errors.py`.
const fn class_name(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::Parse => "ParseError",
        ErrorClass::Validation => "ValidationError",
        ErrorClass::Build => "BuildError",
        ErrorClass::Lower => "LowerError",
        ErrorClass::Image => "ImageError",
        ErrorClass::Proof => "ProofError",
        ErrorClass::ProofTooLarge => "ProofTooLargeError",
        ErrorClass::Memory => "MemoryBudgetError",
        ErrorClass::Certificate => "CertificateError",
        ErrorClass::Output => "OutputError",
        ErrorClass::Decode => "DecodeError",
        ErrorClass::Input => "InputError",
        ErrorClass::Internal => "InternalError",
    }
}

/// Where the last panic in this module happened (`file:line:column`), as
/// [`keep_panics_quiet`]'s hook saw it, for [`guard`] to put in its error.
static LAST_PANIC_AT: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the default panic hook, which prints to stderr, with one that
/// only notes where the panic happened: the library prints nothing, and a
/// panic reaches Python as an exception that says it all ([`guard`]; PyO3's
/// `PanicException` for one outside it). The hook is this module's own
/// (each extension module has its own Rust runtime).
pub fn keep_panics_quiet() {
    std::panic::set_hook(Box::new(|info| {
        if let Some(at) = info.location() {
            *LAST_PANIC_AT.lock().unwrap_or_else(PoisonError::into_inner) = Some(at.to_string());
        }
    }));
}

/// Runs `f`, turning a panic into an [`ErrorClass::Internal`] error: ccc
/// never panics on bad input, so a panic is a defect, and it must reach
/// Python as an exception, never abort the interpreter.
pub fn guard<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        let at = LAST_PANIC_AT.lock().unwrap_or_else(PoisonError::into_inner).take();
        let at = at.map(|at| format!(" at {at}")).unwrap_or_default();
        let mut info = ErrorInfo::new(ErrorClass::Internal, "Panic", format!("ccc panicked{at}: {what}"));
        info.help = Some("this is a defect in ccc; please report it with the spec".to_owned());
        Err(info)
    })
}

/// The Python exception for `info`.
pub fn to_py(py: Python<'_>, info: Failure) -> PyErr {
    exception(py, &info).unwrap_or_else(|e| e)
}

fn exception(py: Python<'_>, info: &ErrorInfo) -> PyResult<PyErr> {
    let module = py.import(ERRORS_MODULE)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("kind", &info.kind)?;
    kwargs.set_item("field", &info.field)?;
    kwargs.set_item("collective", info.collective)?;
    kwargs.set_item("rank", info.rank)?;
    kwargs.set_item("topsp", info.topsp)?;
    kwargs.set_item("step", info.step)?;
    kwargs.set_item("record", info.record)?;
    kwargs.set_item("line", info.line)?;
    kwargs.set_item("column", info.column)?;
    kwargs.set_item("end_line", info.end_line)?;
    kwargs.set_item("end_column", info.end_column)?;
    kwargs.set_item("offset", info.offset)?;
    kwargs.set_item("accepted", &info.accepted)?;
    kwargs.set_item("help", &info.help)?;
    let problem_class = module.getattr("Problem")?;
    let problems = PyList::empty(py);
    for p in &info.problems {
        let fields = PyDict::new(py);
        fields.set_item("kind", &p.kind)?;
        fields.set_item("field", &p.field)?;
        fields.set_item("collective", p.collective)?;
        fields.set_item("message", &p.message)?;
        fields.set_item("accepted", &p.accepted)?;
        fields.set_item("line", p.line)?;
        fields.set_item("instruction", &p.instruction)?;
        problems.append(problem_class.call((), Some(&fields))?)?;
    }
    kwargs.set_item("problems", problems.to_tuple())?;
    let value = module.getattr(class_name(info.class))?.call((&info.message,), Some(&kwargs))?;
    Ok(PyErr::from_value(value))
}

/// [`guard`] then [`to_py`]: the `PyResult` of a call into ccc.
pub fn run<T>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure>) -> PyResult<T> {
    guard(f).map_err(|e| to_py(py, e))
}
