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
    let mappings = plain(value, root, 0).map_err(|Bad { path, why, kind: own }| {
        let field = if path.is_empty() { whole.to_owned() } else { path };
        let mut info = ErrorInfo::new(ErrorClass::Parse, own.unwrap_or(kind), format!("{field}: {why}"));
        info.field = Some(field);
        if own == Some(NOT_UTF8) {
            info.accepted = Some("text that encodes as UTF-8".to_owned());
        }
        errors::to_py(py, info)
    })?;
    // `json.dumps` takes dicts and lists only: a mapping of another kind,
    // at any depth, is read as the dict of its items.
    if mappings { dumps(py, &dictified(py, value)?) } else { dumps(py, value) }
}

/// `value` with every mapping in it (a dict, `types.MappingProxyType`,
/// `collections.UserDict`) a dict and every list or tuple a list, at every
/// depth ([`plain`] has checked it).
fn dictified<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(m) = value.cast::<PyMapping>() {
        let dict = PyDict::new(py);
        for item in m.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            dict.set_item(k, dictified(py, &v)?)?;
        }
        return Ok(dict.into_any());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let list = PyList::empty(py);
        for v in value.try_iter()? {
            list.append(dictified(py, &v?)?)?;
        }
        return Ok(list.into_any());
    }
    Ok(value.clone())
}

/// A value [`plain`] refuses: its path, why, and the error kind when it
/// is not the caller's.
struct Bad {
    path: String,
    why: String,
    kind: Option<&'static str>,
}

impl Bad {
    fn at(path: &str, why: String) -> Bad {
        Bad { path: path.to_owned(), why, kind: None }
    }
}

/// The kind of a refusal of text holding a lone surrogate (`"\ud800"`,
/// which no UTF-8 text holds), as `ccc.parse` names it.
const NOT_UTF8: &str = "NotUtf8";

/// What a refusal of text holding a lone surrogate says.
const LONE_SURROGATE: &str = "holds a lone surrogate, which no UTF-8 text can";

/// How deep a spec's dicts and lists nest at most (a spec nests four
/// deep: program, collective, groups, group); deeper, or a list that holds
/// itself, is refused before it could exhaust the stack.
const MAX_DEPTH: usize = 64;

/// The first value under `value` (at `path`, `depth` containers down) that
/// a spec cannot hold as JSON: its path and why; else whether it holds a
/// mapping that is not a dict (`types.MappingProxyType`,
/// `collections.UserDict`: read as the dict of its items). The kinds a
/// spec holds are tried first, each a type check; only a value of none of
/// them is asked whether it is a mapping (Python's `isinstance`, slower).
fn plain(value: &Bound<'_, PyAny>, path: &str, depth: usize) -> Result<bool, Bad> {
    // A container one level deeper, refused past the most a spec nests.
    let deeper = || match depth >= MAX_DEPTH {
        true => Err(Bad::at(
            path,
            format!("nested more than {MAX_DEPTH} deep (or holds itself); a spec nests a few levels"),
        )),
        false => Ok(()),
    };
    let mut mappings = false;
    if let Ok(dict) = value.cast::<PyDict>() {
        deeper()?;
        for (k, v) in dict.iter() {
            mappings |= plain(&v, &keyed(path, &k)?, depth + 1)?;
        }
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        deeper()?;
        for (i, v) in value.try_iter().map_err(|e| Bad::at(path, e.to_string()))?.enumerate() {
            let v = v.map_err(|e| Bad::at(path, e.to_string()))?;
            mappings |= plain(&v, &format!("{path}[{i}]"), depth + 1)?;
        }
    } else if value.is_instance_of::<PyInt>() {
        // A bool is an int here, 0 or 1: in range.
        if !whole_in_range(value) {
            return Err(Bad::at(
                path,
                format!("{value} is out of range: no field of a spec holds a whole number past 2^64 - 1"),
            ));
        }
    } else if let Ok(f) = value.cast::<PyFloat>() {
        if !f.value().is_finite() {
            return Err(Bad::at(path, format!("{value} is not a finite number")));
        }
    } else if let Ok(text) = value.cast::<PyString>() {
        if text.to_cow().is_err() {
            return Err(Bad { path: path.to_owned(), why: format!("the text {LONE_SURROGATE}"), kind: Some(NOT_UTF8) });
        }
    } else if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Err(Bad::at(path, "bytes where text belongs; decode it to str".to_owned()));
    } else if value.is_none() {
    } else if let Ok(m) = value.cast::<PyMapping>() {
        deeper()?;
        mappings = true;
        let items = m.items().map_err(|e| Bad::at(path, e.to_string()))?;
        for item in items.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                item.extract().map_err(|e: PyErr| Bad::at(path, e.to_string()))?;
            plain(&v, &keyed(path, &k)?, depth + 1)?;
        }
    } else {
        // What `json.dumps` would refuse without a path (a set, a complex,
        // any object).
        let kind = value.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
        return Err(Bad::at(
            path,
            format!(
                "a value of type `{kind}` is not one a spec holds; accepted: text, a number, a bool, None, a list or a dict"
            ),
        ));
    }
    Ok(mappings)
}

/// Whether the int `value` is one JSON carries as a whole number for a
/// spec: from -2^63 to 2^64 - 1.
fn whole_in_range(value: &Bound<'_, PyAny>) -> bool {
    value.extract::<u64>().is_ok() || value.extract::<i64>().is_ok()
}

/// The path of the value under key `k` of the mapping at `path`: a key is
/// text, or a whole number (`devices: {0: 7}`), which JSON writes as its
/// digits, as a spec's RON map keys read.
fn keyed(path: &str, k: &Bound<'_, PyAny>) -> Result<String, Bad> {
    let key = if let Ok(text) = k.cast::<PyString>() {
        let Ok(key) = text.to_cow() else {
            return Err(Bad { path: path.to_owned(), why: format!("a key {LONE_SURROGATE}"), kind: Some(NOT_UTF8) });
        };
        key.into_owned()
    } else if k.is_instance_of::<PyInt>() && !k.is_instance_of::<pyo3::types::PyBool>() {
        if !whole_in_range(k) {
            return Err(Bad::at(path, format!("the key {k} is out of range: no key of a spec is past 2^64 - 1")));
        }
        k.to_string()
    } else {
        return Err(Bad::at(path, format!("the key {k} is not text; keys are field names, or numbers")));
    };
    Ok(if path.is_empty() { key } else { format!("{path}.{key}") })
}
