//! Ctrl-C (SIGINT) or SIGTERM during `ccc compile`: the first sets the
//! compile's cancel flag, so the compile stops at its next check and a
//! write stops before the new output takes `OUT`'s place, removing its
//! work folder (`OUT` is as it was; exit 128 + the signal's number); a
//! second ends the process at once, as the signal's default action would
//! (the next compile into `OUT` sweeps what it left). Without a handler a
//! compile killed while writing left a work folder of every rank's
//! images (280 MB at 4,096 ranks) until the next compile into `OUT`.

use ccc_compiler::pipeline::Cancel;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Installs the handlers; the flag they set, for [`Options::cancel`](ccc_compiler::pipeline::Options::cancel)
/// and the write. `None` where they cannot be installed (the compile is
/// then ended by the signal, as before).
#[cfg(unix)]
pub fn install() -> Option<Cancel> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let cancel = Cancel::new();
    let which = Arc::new(AtomicUsize::new(0));
    for signal in [SIGINT, SIGTERM] {
        // The shutdown first: it ends the process on a signal that finds
        // the flag set already (a second one), as signal_hook documents.
        flag::register_conditional_shutdown(signal, 128 + signal, cancel.flag()).ok()?;
        flag::register(signal, cancel.flag()).ok()?;
        flag::register_usize(signal, Arc::clone(&which), usize::try_from(signal).unwrap_or(0)).ok()?;
    }
    WHICH.get_or_init(|| which);
    Some(cancel)
}

#[cfg(not(unix))]
pub fn install() -> Option<Cancel> {
    None
}

/// Where the handlers record the signal.
static WHICH: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

/// The exit status of a compile the signal stopped: 128 + its number
/// (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a process the
/// signal ended.
pub fn exit_code() -> u8 {
    match WHICH.get().map_or(0, |w| w.load(Ordering::Relaxed)) {
        0 => 130,
        signal => u8::try_from(128 + signal).unwrap_or(130),
    }
}
