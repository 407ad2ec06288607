//! `ccc.Program`: a spec, read from RON text ([`parse`]) or a dict
//! ([`PyProgram::from_dict`]), written back as RON or a dict.

use crate::adapter::{self, Spec};
use crate::errors;
use crate::json;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyType};

/// A spec: one collective, or a program of several in order.
///
/// Make one with `ccc.parse(text)` (RON, as in `examples/*.ron`) or
/// `ccc.Program.from_dict(d)`; give it to `ccc.compile`, `ccc.sign` or
/// `ccc.diagnose`. Immutable; equal when the collectives are.
#[pyclass(frozen, module = "ccc", name = "Program")]
pub struct PyProgram {
    pub(crate) spec: Spec,
}

#[pymethods]
impl PyProgram {
    /// A spec from a dict of the RON schema's fields (`docs/interface.md`):
    /// one collective (`{"op": "AllReduce", "dtype": "Bf16", ...}`) or a
    /// program (`{"collectives": [...]}`). Enums are their RON names as
    /// strings (`"Ring"`); a Hier algorithm is `{"Hier": {"intra_reduce_scatter":
    /// "Ring", ...}}`; tuples are lists. `to_dict()` returns this form.
    ///
    /// Raises `ccc.ParseError` naming the field path (`collectives[0].topology.rank_n`)
    /// and what would be accepted.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyProgram> {
        // Text or a list is not a spec's dict: say what reads it, rather
        // than a serde error quoting the whole value.
        if spec.cast::<pyo3::types::PyMapping>().is_err() {
            let hint = if spec.is_instance_of::<pyo3::types::PyString>() {
                "; RON text is read by ccc.parse"
            } else {
                "; a program's collectives go in {\"collectives\": [...]}"
            };
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "Program.from_dict takes a dict of the spec's fields, not a {}{hint}",
                spec.get_type().name()?
            )));
        }
        let text = json::dumps_spec(py, spec)?;
        let spec = errors::run(py, || adapter::from_json(&text))?;
        Ok(PyProgram { spec })
    }

    /// The spec as RON text; `ccc.parse(p.to_ron()) == p` while the text is
    /// within the 16 MiB `parse` reads (a program `from_dict` built may
    /// write more).
    fn to_ron(&self, py: Python<'_>) -> PyResult<String> {
        errors::run(py, || adapter::to_ron(&self.spec))
    }

    /// The spec as a dict, in the form `Program.from_dict` reads: the one
    /// collective's fields when it was written as one collective, else
    /// `{"collectives": [...]}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = errors::run(py, || adapter::to_json(&self.spec))?;
        json::loads(py, &text)
    }

    /// Each collective as a dict (the form of `to_dict`).
    #[getter]
    fn collectives<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for text in errors::run(py, || adapter::collectives_json(&self.spec))? {
            list.append(json::loads(py, &text)?)?;
        }
        Ok(list)
    }

    /// The number of collectives.
    fn __len__(&self) -> usize {
        adapter::collective_n(&self.spec)
    }

    fn __eq__<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match other.cast::<PyProgram>() {
            Ok(o) => Ok(pyo3::types::PyBool::new(py, adapter::same_collectives(&o.get().spec, &self.spec))
                .to_owned()
                .into_any()),
            // Another type is asked in turn (`unittest.mock.ANY == p`
            // holds, so `p == ANY` must), as Python's own types do.
            Err(_) => Ok(py.NotImplemented().into_bound(py)),
        }
    }

    /// Equal programs hash alike (their collectives, as `collectives`
    /// gives them, the fields written with their default value left out
    /// as equality leaves them), so a `Program` can key a dict or an
    /// `lru_cache`.
    fn __hash__(&self, py: Python<'_>) -> PyResult<u64> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        errors::run(py, || adapter::collectives_hashed(&self.spec))?.hash(&mut h);
        Ok(h.finish())
    }

    /// Pickles as its dict (`to_dict`), read back by `Program.from_dict`
    /// (so a `Program` crosses to another process, or `copy.deepcopy` makes
    /// an equal one), at any size.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        // As its dict, which `from_dict` reads back whatever its size (the
        // RON text's 16 MiB cap is for files, not for a program already
        // read).
        let from_dict = py.import("ccc")?.getattr("Program")?.getattr("from_dict")?;
        Ok((from_dict, (self.to_dict(py)?,)))
    }

    fn __repr__(&self) -> String {
        let ops = adapter::ops(&self.spec);
        format!("<ccc.Program: {} collective(s): {}>", ops.len(), ops.join(", "))
    }
}

/// Reads a spec from RON text: one `Collective(...)` (the name may be left
/// out) or a `Program(collectives: [...])`.
///
/// Raises `ccc.ParseError` with `line`, `column` (1-based), `kind`
/// (`UnknownField`, `UnknownVariant`, `MissingField`, ...) and, where
/// RON says, what would be `accepted`. Rules (a divisor, a range) are
/// checked by `compile` and `sign`, which raise `ccc.ValidationError`.
#[pyfunction]
pub fn parse(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<PyProgram> {
    let Some(text) = text_of(py, text)? else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "parse reads RON text (str), not a {}",
            text.get_type().name()?
        )));
    };
    let spec = parse_released(py, &text)?;
    Ok(PyProgram { spec })
}

/// The text of a `str` (`None` for anything else); one holding a lone
/// surrogate (`"\ud800"`, which no UTF-8 text holds) is a `ParseError` of
/// kind `NotUtf8` naming where, not Python's `UnicodeEncodeError`.
pub fn text_of(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    text_at(py, value, None)
}

/// [`text_of`] of the argument or field `field`, which a refusal names.
pub fn text_at(py: Python<'_>, value: &Bound<'_, PyAny>, field: Option<&str>) -> PyResult<Option<String>> {
    let Ok(text) = value.cast::<pyo3::types::PyString>() else { return Ok(None) };
    match text.to_cow() {
        Ok(text) => Ok(Some(text.into_owned())),
        Err(_) => {
            let at = text.to_string_lossy().find('\u{fffd}').unwrap_or(0);
            let what = field.map_or_else(|| "the text".to_owned(), |f| format!("{f}:"));
            let message = format!("{what} holds a lone surrogate near byte {at}, which no UTF-8 text can");
            let mut info = adapter::ErrorInfo::new(adapter::ErrorClass::Parse, "NotUtf8", message);
            info.field = field.map(str::to_owned);
            info.accepted = Some("text that encodes as UTF-8".to_owned());
            Err(errors::to_py(py, info))
        }
    }
}

/// The text of argument `field`, which must be a `str`: else a
/// `TypeError` saying what it takes (`what`).
pub fn text_arg(py: Python<'_>, value: &Bound<'_, PyAny>, field: &str, what: &str) -> PyResult<String> {
    match text_at(py, value, Some(field))? {
        Some(text) => Ok(text),
        None => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{field} is {what}, not a value of type `{}`",
            value.get_type().name()?
        ))),
    }
}

/// Parses RON text with the GIL released (a spec of megabytes takes a
/// while: other threads run meanwhile).
pub fn parse_released(py: Python<'_>, text: &str) -> PyResult<Spec> {
    py.detach(|| errors::guard(|| adapter::parse(text))).map_err(|e| errors::to_py(py, e))
}

/// The spec of a `Program` or of RON text.
pub fn spec_of(py: Python<'_>, program_or_text: &Bound<'_, PyAny>) -> PyResult<Spec> {
    if let Ok(p) = program_or_text.cast::<PyProgram>() {
        return Ok(p.get().spec.clone());
    }
    if let Some(text) = text_of(py, program_or_text)? {
        // Text that names a spec file (it exists, or is one line ending
        // `.ron`) is read as RON, as documented: the error says how to
        // have the file read.
        let file_like = !text.contains('\n') && text.trim_end().ends_with(".ron");
        return parse_released(py, &text).map_err(|e| match crate::names_a_path(&text) || file_like {
            true => crate::with_help(
                py,
                e,
                format!("a str is read as RON text; to compile the file it names, pass its text: pathlib.Path({text:?}).read_text()"),
            ),
            false => e,
        });
    }
    // A path: its text is what is wanted.
    let read = match program_or_text.hasattr("__fspath__")? {
        true => ": to compile the spec file it names, pass its text (`path.read_text()`)",
        false => "",
    };
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "expected a ccc.Program or RON text (str), got {}{read}",
        program_or_text.get_type().name()?
    )))
}
