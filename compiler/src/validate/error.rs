//! The error validation returns: every problem found, each located by collective and field path.

use super::Problem;
use crate::parse::SpecForm;
use std::fmt::{self, Display};

/// One problem in a spec, located by collective and field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The collective's index in the program; `None` for the program itself.
    pub collective: Option<u32>,
    /// The path inside the collective (`topology.local_rank_n`, `groups[1][3]`,
    /// `algorithm.inter_all_reduce`, `peers[2]`).
    pub field: String,
    /// What is wrong, with the values.
    pub problem: Problem,
}

impl ValidationError {
    /// What would be accepted in the field, as the problem says it (the
    /// text after `accepted: `); `None` for a field that has no meaning
    /// there (the problem says to remove it).
    pub fn accepted(&self) -> Option<String> {
        crate::accepted::accepted_after(&self.problem.to_string())
    }

    /// The full path as the user wrote the file: prefixed with
    /// `collectives[i].` when the file held a program.
    pub fn path(&self, form: SpecForm) -> String {
        match (form, self.collective) {
            (SpecForm::Program, Some(i)) => format!("collectives[{i}].{}", self.field),
            _ => self.field.clone(),
        }
    }
}

impl Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.collective {
            write!(f, "collective {i}: ")?;
        }
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for ValidationError {}

/// Every problem found in a spec (at least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    /// The problems found: those listed, and those counted past
    /// [`PROBLEMS_LISTED`](super::PROBLEMS_LISTED) ([`Problem::Unlisted`]).
    pub fn count(&self) -> u64 {
        self.0.iter().fold(0u64, |n, e| match e.problem {
            Problem::Unlisted { n: more } => n.saturating_add(more),
            _ => n.saturating_add(1),
        })
    }

    /// The problems listed, without the [`Problem::Unlisted`] count.
    pub fn listed(&self) -> impl Iterator<Item = &ValidationError> {
        self.0.iter().filter(|e| !matches!(e.problem, Problem::Unlisted { .. }))
    }
}

impl Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.count();
        write!(f, "{n} problem{} in the spec:", if n == 1 { "" } else { "s" })?;
        for e in &self.0 {
            write!(f, "\n  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}
