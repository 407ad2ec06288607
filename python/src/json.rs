//! Values crossing as JSON text: Python's own `json` module turns the
//! library's serde output into dicts and lists (and dicts into text for
//! serde), so each Python value has exactly the shape the CLI's JSON has.

use pyo3::prelude::*;

/// `json.loads(text)`.
pub fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// `json.dumps(value)`.
pub fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    py.import("json")?.call_method1("dumps", (value,))?.extract()
}
