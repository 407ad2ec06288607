//! The one place snapshot paths are set: `snapshots/<kind>/<name>.snap` at
//! the repository root, each named by its snapshot name alone (not by the
//! test's module path, so a test can move between modules or binaries and
//! keep its file).

use std::path::Path;

/// insta settings for the snapshots of one kind (`examples`, `errors`,
/// `decode`, `diagnose`): the folder `snapshots/<kind>`, no module prefix.
pub fn settings(kind: &str) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots").join(kind));
    settings.set_prepend_module_to_snapshot(false);
    settings
}
