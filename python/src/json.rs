//! Values crossing as JSON text: Python's own `json` module turns the
//! library's serde output into dicts and lists (and dicts into text for
//! serde), so each Python value has exactly the shape the CLI's JSON has.

use crate::adapter::{ErrorClass, ErrorInfo};
use crate::errors;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

/// `json.loads(text)`.
pub fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// `json.dumps(value)`.
pub fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    py.import("json")?.call_method1("dumps", (value,))?.extract()
}

/// `json.dumps(value)` of a spec given as a dict, after checking that
/// every value in it is one JSON holds as the spec reads it: text keys,
/// whole numbers from -2^63 to 2^64 - 1, finite floats, no bytes. A value
/// that is not raises `ccc.ParseError` naming its path (`groups[1][0]`),
/// where `json.dumps` would turn a large int into a float, write `NaN`,
/// or fail without a path.
pub fn dumps_spec(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    dumps_checked(py, value, "", "spec", "Syntax")
}

/// [`dumps_spec`] of a dict read under `root` (`target`: its paths read
/// `target.channels`; empty for a spec), refused as `ParseError` of `kind`
/// naming the whole as `whole` when it is the culprit. A mapping that is
/// not a dict (`types.MappingProxyType`, `collections.UserDict`) is read
/// as the dict of its items.
pub fn dumps_checked(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    root: &str,
    whole: &str,
    kind: &str,
) -> PyResult<String> {
    let value = match value.cast::<PyMapping>() {
        Ok(m) if !value.is_instance_of::<PyDict>() => {
            let dict = PyDict::new(py);
            for item in m.items()?.iter() {
                let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
                dict.set_item(k, v)?;
            }
            dict.into_any()
        }
        _ => value.clone(),
    };
    plain(&value, root, 0).map_err(|(path, why)| {
        let field = if path.is_empty() { whole.to_owned() } else { path };
        let mut info = ErrorInfo::new(ErrorClass::Parse, kind, format!("{field}: {why}"));
        info.field = Some(field);
        errors::to_py(py, info)
    })?;
    dumps(py, &value)
}

/// How deep a spec's dicts and lists nest at most (a spec nests four
/// deep: program, collective, groups, group); deeper, or a list that holds
/// itself, is refused before it could exhaust the stack.
const MAX_DEPTH: usize = 64;

/// The first value under `value` (at `path`, `depth` containers down) that
/// a spec cannot hold as JSON: its path and why.
fn plain(value: &Bound<'_, PyAny>, path: &str, depth: usize) -> Result<(), (String, String)> {
    let at = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    let container =
        value.is_instance_of::<PyDict>() || value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>();
    if container && depth >= MAX_DEPTH {
        return Err((
            path.to_owned(),
            format!("nested more than {MAX_DEPTH} deep (or holds itself); a spec nests a few levels"),
        ));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        for (k, v) in dict.iter() {
            let Ok(key) = k.extract::<String>() else {
                return Err((
                    path.to_owned(),
                    format!("the key {k} is not text; keys are field names or numbers as text"),
                ));
            };
            plain(&v, &at(&key), depth + 1)?;
        }
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        for (i, v) in value.try_iter().map_err(|e| (path.to_owned(), e.to_string()))?.enumerate() {
            let v = v.map_err(|e| (path.to_owned(), e.to_string()))?;
            plain(&v, &format!("{path}[{i}]"), depth + 1)?;
        }
    } else if value.is_instance_of::<PyInt>() {
        // A bool is an int here, 0 or 1: in range.
        if value.extract::<u64>().is_err() && value.extract::<i64>().is_err() {
            return Err((path.to_owned(), format!("{value} is out of range; accepted: a whole number up to 2^64 - 1")));
        }
    } else if let Ok(f) = value.cast::<PyFloat>() {
        if !f.value().is_finite() {
            return Err((path.to_owned(), format!("{value} is not a finite number")));
        }
    } else if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Err((path.to_owned(), "bytes where text belongs; decode it to str".to_owned()));
    } else if !(value.is_none() || value.is_instance_of::<PyString>()) {
        // What `json.dumps` would refuse without a path (a set, a complex,
        // a nested mapping that is not a dict, any object).
        let kind = value.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
        return Err((
            path.to_owned(),
            format!(
                "a value of type `{kind}` is not one a spec holds; accepted: text, a number, a bool, None, a list or a dict"
            ),
        ));
    }
    Ok(())
}
