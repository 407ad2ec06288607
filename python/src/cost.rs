//! The adapter's cost half, without PyO3: every legal choice of every
//! collective, predicted and bounded, the winner marked and why the others
//! lost, as `ccc_compiler::explain` builds them: the same values
//! `ccc explain --json` prints (`tests/test_hlo_explain.py` compares the
//! two on the shipped examples).

use crate::adapter::{Failure, Spec, validation_error};
use ccc_compiler::validate::validate;

/// Explains every collective of `spec`: JSON text of the list
/// `ccc explain --json` prints.
///
/// # Errors
///
/// Validation errors (every problem, by field path).
pub fn explain(spec: &Spec) -> Result<String, Failure> {
    let valid = validate(&spec.program).map_err(|e| validation_error(&e, spec))?;
    let all = ccc_compiler::explain::explain(&spec.program, &valid);
    serde_json::to_string(&all).map_err(|e| {
        crate::adapter::ErrorInfo::new(crate::adapter::ErrorClass::Internal, "Json", format!("cannot write JSON: {e}"))
    })
}
