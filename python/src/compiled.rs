//! `ccc.Compiled` and `ccc.TopSpImages`: what `ccc.compile` returns — the
//! signature, the images of every rank asked for as `bytes`, the proof's
//! summary, the manifest, and `write(out_dir)`.

use crate::adapter::{self, Compiled};
use crate::errors;
use crate::json;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::Arc;

/// The three images one TOP_SP of one rank loads, as `bytes`, byte for
/// byte the files `ccc compile -o OUT` writes under `rank-R/topsp-T/`.
#[pyclass(frozen, module = "ccc", name = "TopSpImages")]
pub struct PyTopSpImages {
    /// The rank.
    #[pyo3(get)]
    rank: u32,
    /// The TOP_SP.
    #[pyo3(get)]
    topsp: u8,
    /// `ctrl_spad.bin`: the scheduler slot chain.
    #[pyo3(get)]
    ctrl_spad: Py<PyBytes>,
    /// `slot_spad.bin`: the DMA tail-pointer schedule.
    #[pyo3(get)]
    slot_spad: Py<PyBytes>,
    /// `neff_configs.bin`: the 3592-byte EXEC config.
    #[pyo3(get)]
    neff_configs: Py<PyBytes>,
    /// Records in the chain.
    #[pyo3(get)]
    record_n: u32,
}

#[pymethods]
impl PyTopSpImages {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<ccc.TopSpImages rank {} TOP_SP {}: ctrl_spad {} B, slot_spad {} B, neff_configs {} B, {} records>",
            self.rank,
            self.topsp,
            self.ctrl_spad.bind(py).as_bytes().len(),
            self.slot_spad.bind(py).as_bytes().len(),
            self.neff_configs.bind(py).as_bytes().len(),
            self.record_n
        )
    }

    /// Does not pickle: say what does, rather than Python's bare refusal.
    fn __reduce__(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "a ccc.TopSpImages does not pickle: send its bytes (.ctrl_spad, .slot_spad, .neff_configs, which \
             pickle) with its .rank and .topsp",
        ))
    }

    /// Immutable: a copy is the object itself, as for a tuple.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Immutable: a deep copy is the object itself.
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

/// A compiled spec: `images[rank][topsp]` for every rank asked for, the
/// `signature`, the `proof` (None with `verify=False`), the `manifest`.
/// Immutable and safe to share between threads.
#[pyclass(frozen, module = "ccc", name = "Compiled")]
pub struct PyCompiled {
    pub(crate) compiled: Arc<Compiled>,
    /// `{rank: {topsp: TopSpImages}}`, ascending, read-only mappings.
    images: Py<PyAny>,
    /// The ranks compiled, ascending.
    ranks: Vec<u32>,
    /// The signature: 32 lower-case hex digits.
    #[pyo3(get)]
    signature: String,
}

impl PyCompiled {
    /// Wraps a compile's result; the images are copied once into `bytes`.
    pub fn new(py: Python<'_>, compiled: Compiled) -> PyResult<PyCompiled> {
        // Read-only views, so that a `Compiled` shared between threads
        // (or callers) cannot be changed by one of them.
        let read_only = py.import("types")?.getattr("MappingProxyType")?;
        let images = PyDict::new(py);
        let mut ranks: Vec<(u32, Bound<'_, PyDict>)> = Vec::new();
        for image in adapter::images(&compiled) {
            if ranks.last().is_none_or(|(r, _)| *r != image.rank) {
                ranks.push((image.rank, PyDict::new(py)));
            }
            let Some((_, rank)) = ranks.last() else { continue };
            let topsp = PyTopSpImages {
                rank: image.rank,
                topsp: image.topsp,
                ctrl_spad: bytes(py, image.ctrl_spad)?,
                slot_spad: bytes(py, image.slot_spad)?,
                neff_configs: bytes(py, image.neff_configs)?,
                record_n: image.record_n,
            };
            rank.set_item(image.topsp, Py::new(py, topsp)?)?;
        }
        for (rank, topsps) in &ranks {
            images.set_item(rank, read_only.call1((topsps,))?)?;
        }
        let (signature, _) = adapter::signature(&compiled);
        Ok(PyCompiled {
            compiled: Arc::new(compiled),
            images: read_only.call1((images,))?.unbind(),
            ranks: ranks.into_iter().map(|(rank, _)| rank).collect(),
            signature,
        })
    }
}

/// `data` as a Python `bytes`; `MemoryError` when Python cannot allocate
/// it (`PyBytes::new` would panic).
fn bytes(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyBytes>> {
    Ok(PyBytes::new_with(py, data.len(), |buf| {
        buf.copy_from_slice(data);
        Ok(())
    })?
    .unbind())
}

#[pymethods]
impl PyCompiled {
    /// `{rank: {topsp: TopSpImages}}` for the ranks compiled, ascending
    /// (read-only mappings).
    #[getter]
    fn images(&self, py: Python<'_>) -> Py<PyAny> {
        self.images.clone_ref(py)
    }

    /// The ranks compiled, ascending.
    #[getter]
    fn ranks(&self) -> Vec<u32> {
        self.ranks.clone()
    }

    /// The signature's fields, `(name, value)` in preimage order
    /// (`docs/signature.md`).
    #[getter]
    fn signature_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (_, fields) = adapter::signature(&self.compiled);
        let list = PyList::empty(py);
        for (name, value) in fields {
            list.append(PyTuple::new(py, [name, value])?)?;
        }
        Ok(list)
    }

    /// What the proof established (None with `verify=False`): `postconditions`
    /// (per collective: `claim`, `groups`, `members`, `transfers`, ...),
    /// `protocol` (`chains`, `records`, `steps`, `signals`),
    /// `symmetric_groups` (of which `symmetric_by_phase` shown from the
    /// phases' structure), `images_checked`, `certified`, and the seconds
    /// each part took.
    #[getter]
    fn proof<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::loads(py, &adapter::proof_json(&self.compiled).to_string())
    }

    /// The manifest, as a dict: what `write` puts in `manifest.json`.
    #[getter]
    fn manifest<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::loads(py, &self.manifest_json(py)?)
    }

    /// The text of `manifest.json`, exactly as `write` (and `ccc compile -o`) writes it.
    fn manifest_json(&self, py: Python<'_>) -> PyResult<String> {
        errors::run(py, || adapter::manifest_json(&self.compiled))
    }

    /// Writes the images and `manifest.json` into `out_dir`, as
    /// `ccc compile -o OUT_DIR` does: atomically, replacing only a folder
    /// that is absent, empty or ccc's own output, and keeping every file
    /// ccc did not write. Returns what it did: `files`, `bytes`,
    /// `replaced`, `kept` (your entries carried over), `left`, `swept`
    /// (debris of killed compiles removed), `atomic`.
    ///
    /// Raises `ccc.OutputError` (nothing written) for a folder ccc may not
    /// replace or a file of yours where ccc writes one. Ctrl-C stops it
    /// (`KeyboardInterrupt`) before the new output takes the folder's
    /// place: the folder is then as it was, and no work folder is left.
    fn write<'py>(&self, py: Python<'py>, out_dir: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        // A path as `open()` takes one: `str`, `bytes` or `os.PathLike`
        // (`os.fsdecode` reads each as the file system names it).
        let os = py.import("os")?;
        let out_dir: PathBuf = match os.call_method1("fsdecode", (out_dir,)) {
            Ok(path) => path.extract()?,
            // Not a path: said so, with what said it as the cause; an
            // `__fspath__` that raised anything else raises it.
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
                let named = pyo3::exceptions::PyTypeError::new_err(format!(
                    "write takes a folder path (str, bytes or os.PathLike), not a {}",
                    out_dir.get_type().name()?
                ));
                named.set_cause(py, Some(e));
                return Err(named);
            }
            Err(e) => return Err(e),
        };
        if out_dir.as_os_str().is_empty() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "write takes a folder path, and '' names none; accepted: a folder to write (it need not exist yet)",
            ));
        }
        let compiled = Arc::clone(&self.compiled);
        // Ctrl-C stops it before the new output takes the folder's place
        // (the folder then as it was, nothing left beside it), as it stops
        // `ccc compile -o`; once it has, the old tree is emptied first.
        let written =
            crate::interruptible(py, |cancel| errors::guard(|| adapter::write(&out_dir, &compiled, cancel.as_ref())))?;
        let written = written.map_err(|e| errors::to_py(py, e))?;
        let dict = PyDict::new(py);
        dict.set_item("files", written.files)?;
        dict.set_item("bytes", written.bytes)?;
        dict.set_item("replaced", written.replaced)?;
        // As `os.fsdecode` gives them (a byte no encoding reads as a lone
        // surrogate), so that each names its file to `open`.
        dict.set_item("kept", written.kept.iter().map(|p| p.as_os_str()).collect::<Vec<_>>())?;
        dict.set_item("left", written.left.iter().map(|p| p.as_os_str()).collect::<Vec<_>>())?;
        let unremoved: Vec<(&std::ffi::OsStr, &str)> =
            written.unremoved.iter().map(|(p, e)| (p.as_os_str(), e.as_str())).collect();
        dict.set_item("unremoved", unremoved)?;
        dict.set_item("swept", written.swept.iter().map(|s| s.path.as_os_str()).collect::<Vec<_>>())?;
        dict.set_item("atomic", written.atomic)?;
        Ok(dict)
    }

    /// A `Compiled` holds the whole compile (schedule, proof, images) and
    /// does not pickle: say what does, rather than Python's bare refusal.
    fn __reduce__(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "a ccc.Compiled does not pickle: send its program (a ccc.Program pickles) and compile it again \
             where it is needed (the result is the same, byte for byte), or send what you need of it: \
             .signature, .manifest_json(), the images' bytes",
        ))
    }

    /// Immutable: a copy is the object itself, as for a tuple.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Immutable: a deep copy is the object itself (`copy.deepcopy` of a
    /// structure holding one shares it).
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __repr__(&self) -> String {
        let ranks = self.ranks.len();
        let proof = if adapter::proven(&self.compiled) { "proven" } else { "not verified" };
        format!("<ccc.Compiled signature {}: {ranks} rank(s), {proof}>", self.signature)
    }
}
