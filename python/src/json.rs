//! Values crossing as JSON text: Python's own `json` module turns the
//! library's serde output into dicts and lists (and dicts into text for
//! serde), so each Python value has exactly the shape the CLI's JSON has.

use crate::adapter::{ErrorClass, ErrorInfo};
use crate::errors;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

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
    let Bad { path, why, kind: own, cause } = match checked(py, value, root, &format!("a {whole}"))? {
        Ok(text) => return Ok(text),
        Err(bad) => bad,
    };
    // A program's collective by its index; a lone collective is
    // collective 0, as validation names it (a spec's: not a target's).
    let lone = whole == "spec" && !path.is_empty() && value.get_item("collectives").is_err();
    let field = if path.is_empty() { whole.to_owned() } else { path };
    // A target's refusals are all of its own kind but for text that is
    // not UTF-8.
    let own = own.filter(|&k| k == NOT_UTF8 || kind == "Syntax");
    let mut info = ErrorInfo::new(ErrorClass::Parse, own.unwrap_or(kind), format!("{field}: {why}"));
    info.collective = crate::adapter::collective_of(&field).or(lone.then_some(0));
    info.field = Some(field);
    (info.accepted, info.help) = match own {
        Some(NOT_UTF8) => (Some("text that encodes as UTF-8".to_owned()), None),
        _ => crate::adapter::integer_said(&why, info.field.as_deref().unwrap_or_default()),
    };
    Err(caused(py, errors::to_py(py, info), cause))
}

/// `err`, with what the caller's own object raised (`cause`) as its
/// `__cause__`, so that a traceback shows that error and where it came
/// from.
pub fn caused(py: Python<'_>, err: PyErr, cause: Option<Box<PyErr>>) -> PyErr {
    if let Some(cause) = cause {
        err.set_cause(py, Some(*cause));
    }
    err
}

/// `json.dumps(value)` of a manifest given as a dict (to `diagnose`),
/// checked as a spec's dict is: a value JSON cannot carry raises
/// `ccc.InputError` of kind `NotAManifest` naming its path, as a manifest
/// that does not read does.
pub fn dumps_manifest(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let Bad { path, why, cause, .. } = match checked(py, value, "", "a manifest")? {
        Ok(text) => return Ok(text),
        Err(bad) => bad,
    };
    let mut info = ErrorInfo::new(ErrorClass::Input, "NotAManifest", format!("{path}: {why}"));
    // What the message accepts, without a spec field's range as help.
    info.accepted = crate::adapter::integer_said(&why, &path).0;
    info.field = Some(path);
    Err(caused(py, errors::to_py(py, info), cause))
}

/// `json.dumps(value)` of a dict read under `root`, or the first value in
/// it that `noun` (`a spec`, `a manifest`) cannot hold as JSON ([`Bad`]),
/// for a caller that refuses it as its own kind of error. A mapping that is
/// not a dict is read as the dict of its items.
pub fn checked(py: Python<'_>, value: &Bound<'_, PyAny>, root: &str, noun: &str) -> PyResult<Result<String, Bad>> {
    let mappings = match plain(value, root, 0, noun) {
        Ok(mappings) => mappings,
        // What is no refusal of the value goes on as it was raised: Ctrl-C
        // (`KeyboardInterrupt`) or an exit (`SystemExit`) while an
        // `__index__` or a mapping's `items` ran, not an `Exception`.
        Err(Bad { cause: Some(cause), .. }) if !cause.is_instance_of::<PyException>(py) => return Err(*cause),
        Err(bad) => return Ok(Err(bad)),
    };
    // `json.dumps` takes dicts and lists only: a mapping of another kind,
    // at any depth, is read as the dict of its items.
    Ok(Ok(if mappings { dumps(py, &dictified(py, value)?)? } else { dumps(py, value)? }))
}

/// `value` with every mapping in it (a dict, `types.MappingProxyType`,
/// `collections.UserDict`) a dict, every list or tuple a list and every
/// integer of another type an int, at every depth ([`plain`] has checked
/// it).
fn dictified<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if value.is_instance_of::<PyDict>() || is_mapping(value)? {
        let dict = PyDict::new(py);
        for (k, v) in items(value)? {
            dict.set_item(plain_scalar(k)?, dictified(py, &v)?)?;
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
    plain_scalar(value.clone())
}

/// `value`, or the int `operator.index` gives of an integer of another
/// type (numpy's): an int, float or str is itself, asked nothing more.
/// What the `__index__` raised is raised (Ctrl-C, say).
fn plain_scalar(value: Bound<'_, PyAny>) -> PyResult<Bound<'_, PyAny>> {
    if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyString>() {
        return Ok(value);
    }
    index_of(&value).unwrap_or(Ok(value))
}

/// A value [`plain`] refuses: its path, why, and the error kind when it
/// is not the caller's.
pub struct Bad {
    /// Where it sits (`groups[1][0]`; empty: the whole value).
    pub path: String,
    /// Why it cannot be held.
    pub why: String,
    kind: Option<&'static str>,
    /// What the caller's object raised when read (a mapping's `items`,
    /// an `__index__`), kept as the refusal's `__cause__`.
    pub cause: Option<Box<PyErr>>,
}

impl Bad {
    fn at(path: &str, why: String) -> Bad {
        Bad { path: path.to_owned(), why, kind: None, cause: None }
    }

    /// The refusal of a value whose reading raised `e`: said as `why`
    /// (given the error's text), with `e` its cause.
    fn raised(path: &str, e: PyErr, why: impl FnOnce(&PyErr) -> String) -> Bad {
        let why = why(&e);
        Bad { cause: Some(Box::new(e)), ..Bad::at(path, why) }
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
/// `noun` (`a spec`) cannot hold as JSON: its path and why; else whether it holds a
/// mapping that is not a dict (`types.MappingProxyType`,
/// `collections.UserDict`: read as the dict of its items) or an integer
/// that is not an int (numpy's: read as its `operator.index`), which
/// [`dictified`] rebuilds. The kinds a
/// spec holds are tried first, each a type check; only a value of none of
/// them is asked whether it is a mapping (Python's `isinstance`, slower).
fn plain(value: &Bound<'_, PyAny>, path: &str, depth: usize, noun: &str) -> Result<bool, Bad> {
    // A container one level deeper, refused past the most a spec nests.
    let deeper = || match depth >= MAX_DEPTH {
        true => Err(Bad::at(
            path,
            format!("nested more than {MAX_DEPTH} deep (or holds itself); {noun} nests a few levels"),
        )),
        false => Ok(()),
    };
    let mut mappings = false;
    if value.is_instance_of::<PyDict>() {
        deeper()?;
        let mut keys = Keys::default();
        // Its items as they stand (a list): an `__index__` met below may
        // change the dict, which its own iterator would not survive.
        for (k, v) in items(value).map_err(|e| Bad::raised(path, e, PyErr::to_string))? {
            let (under, rebuilt) = keys.add(path, &k, noun)?;
            mappings |= rebuilt | plain(&v, &under, depth + 1, noun)?;
        }
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        deeper()?;
        for (i, v) in value.try_iter().map_err(|e| Bad::raised(path, e, PyErr::to_string))?.enumerate() {
            let v = v.map_err(|e| Bad::raised(path, e, PyErr::to_string))?;
            mappings |= plain(&v, &format!("{path}[{i}]"), depth + 1, noun)?;
        }
    } else if value.is_instance_of::<PyInt>() {
        // A bool is an int here, 0 or 1: in range.
        if !whole_in_range(value) {
            let why = format!("{value} is out of range: no field of {noun} holds a whole number past 2^64 - 1");
            // As `parse` names it in RON text.
            return Err(Bad { kind: Some("IntegerOutOfBounds"), ..Bad::at(path, why) });
        }
    } else if let Ok(f) = value.cast::<PyFloat>() {
        if !f.value().is_finite() {
            return Err(Bad::at(path, format!("{value} is not a finite number")));
        }
    } else if let Ok(text) = value.cast::<PyString>() {
        if text.to_cow().is_err() {
            return Err(Bad { kind: Some(NOT_UTF8), ..Bad::at(path, format!("the text {LONE_SURROGATE}")) });
        }
    } else if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Err(Bad::at(path, "bytes where text belongs; decode it to str".to_owned()));
    } else if value.is_none() {
    } else if is_mapping(value).map_err(|e| Bad::raised(path, e, PyErr::to_string))? {
        deeper()?;
        mappings = true;
        let mut keys = Keys::default();
        for (k, v) in items(value).map_err(|e| Bad::raised(path, e, PyErr::to_string))? {
            plain(&v, &keys.add(path, &k, noun)?.0, depth + 1, noun)?;
        }
    } else if let Some(whole) = index_of(value) {
        // An integer of another type (numpy's `int64`): read as the int
        // `operator.index` gives, so rebuilt; one whose `__index__` raised
        // is refused with what it raised.
        let whole = whole.map_err(|e| Bad::raised(path, e, |e| format!("its __index__ raised {e}")))?;
        mappings = true;
        plain(&whole, path, depth, noun)?;
    } else {
        // What `json.dumps` would refuse without a path (a set, a complex,
        // any object), named with its module where it is not a builtin
        // (numpy's `bool` is `numpy.bool`, not Python's bool).
        let kind = value.get_type().fully_qualified_name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
        let array = if value.hasattr("tolist").unwrap_or(false) { " (an array's .tolist())" } else { "" };
        return Err(Bad::at(
            path,
            format!(
                "a value of type `{kind}` is not one {noun} holds; accepted: text, a number (an int, a float, or \
                 an integer of any type that has __index__), a bool, None, a list{array} or a dict"
            ),
        ));
    }
    Ok(mappings)
}

/// Whether `value` is a mapping (`isinstance(value,
/// collections.abc.Mapping)`), or what asking raised: a Ctrl-C that
/// lands while the check runs is raised, where PyO3's own check would
/// print it as ignored and call the value no mapping.
fn is_mapping(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value.is_instance(&value.py().import("collections.abc")?.getattr("Mapping")?)
}

/// A mapping's items (`value.items()`), each key and value, taken whole
/// before any is read.
fn items<'py>(value: &Bound<'py, PyAny>) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let items = match value.cast::<PyDict>() {
        Ok(dict) => dict.items(),
        Err(_) => {
            value.py().import("builtins")?.getattr("list")?.call1((value.call_method0("items")?,))?.cast_into()?
        }
    };
    items.iter().map(|item| item.extract()).collect()
}

/// The int `operator.index(value)` gives, when `value` has `__index__`
/// (numpy's integers), or what it raised; `None` for anything else.
pub fn index_of<'py>(value: &Bound<'py, PyAny>) -> Option<PyResult<Bound<'py, PyAny>>> {
    if !value.hasattr("__index__").unwrap_or(false) {
        return None;
    }
    Some(value.py().import("operator").and_then(|operator| operator.call_method1("index", (value,))))
}

/// The keys of one mapping met so far, as JSON writes them: an int key and
/// the text of its digits (`{0: 1, "0": 2}`) are one key in JSON, where
/// the last would silently win.
#[derive(Default)]
struct Keys(std::collections::BTreeSet<String>);

impl Keys {
    /// The path of the value under key `k` ([`key_text`]) and whether the
    /// key is rebuilt, refusing a key that JSON writes as one already met.
    fn add(&mut self, path: &str, k: &Bound<'_, PyAny>, noun: &str) -> Result<(String, bool), Bad> {
        let (key, rebuilt) = key_text(path, k, noun)?;
        let under = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        if !self.0.insert(key.clone()) {
            return Err(Bad::at(
                path,
                format!(
                    "the key {key:?} is given twice (an int and its digits as text are one key in JSON); \
                     accepted: each key once"
                ),
            ));
        }
        Ok((under, rebuilt))
    }
}

/// Whether the int `value` is one JSON carries as a whole number for a
/// spec: from -2^63 to 2^64 - 1.
fn whole_in_range(value: &Bound<'_, PyAny>) -> bool {
    value.extract::<u64>().is_ok() || value.extract::<i64>().is_ok()
}

/// Key `k` of the mapping at `path` as JSON writes it: text, or a whole
/// number (`devices: {0: 7}`) as its digits, as a spec's RON map keys
/// read; and whether it is an integer of another type (numpy's), which
/// [`dictified`] makes an int.
fn key_text(path: &str, k: &Bound<'_, PyAny>, noun: &str) -> Result<(String, bool), Bad> {
    if let Ok(text) = k.cast::<PyString>() {
        let Ok(key) = text.to_cow() else {
            return Err(Bad { kind: Some(NOT_UTF8), ..Bad::at(path, format!("a key {LONE_SURROGATE}")) });
        };
        return Ok((key.into_owned(), false));
    }
    if k.is_instance_of::<pyo3::types::PyBool>() {
        return Err(Bad::at(path, format!("the key {k} is a bool; keys are field names, or whole numbers")));
    }
    // An int, or an integer of another type (numpy's), read as its int.
    let (whole, rebuilt) = match k.is_instance_of::<PyInt>() {
        true => (k.clone(), false),
        false => match index_of(k) {
            Some(Ok(whole)) => (whole, true),
            Some(Err(e)) => return Err(Bad::raised(path, e, |e| format!("the key {k}: its __index__ raised {e}"))),
            None => {
                return Err(Bad::at(
                    path,
                    format!("the key {k} is not text; accepted: field names, or whole numbers (with __index__)"),
                ));
            }
        },
    };
    if !whole_in_range(&whole) {
        return Err(Bad::at(path, format!("the key {k} is out of range: no key of {noun} is past 2^64 - 1")));
    }
    Ok((whole.to_string(), rebuilt))
}
