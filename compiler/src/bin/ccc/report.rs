//! Rendering of library errors as miette reports (stub; being written).

/// Installs the miette handler used for every report.
pub fn install_handler() {}
