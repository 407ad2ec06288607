//! The progress bar a long compile draws on stderr: one bar per stage the
//! pipeline reports (lower, postcondition, protocol, round trip), counted
//! in ranks; of stages that run together, the first started. Drawn only when stderr is a terminal and `--quiet` is not
//! given; cleared before the summary is printed.

use ccc_compiler::pipeline::{Options, Progress, Stage};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the bar reads: the stage, the bar, ranks done of all, time spent.
const TEMPLATE: &str = "{prefix:>13} [{bar:40}] {pos}/{len} ranks {elapsed}";

/// How long a compile runs before the bar appears: a quick compile never
/// flashes one.
const SHOW_AFTER: Duration = Duration::from_millis(300);

/// Overrides [`SHOW_AFTER`], in milliseconds (the tests set 0).
const SHOW_AFTER_ENV: &str = "CCC_PROGRESS_AFTER_MS";

/// A progress bar hooked to a compile's [`Options`]; cleared when dropped.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar hooked to `options`, or none (and `options` as they were)
    /// when stderr is not a terminal or the user asked for quiet.
    pub fn attach(quiet: bool, options: Options) -> (Option<Bar>, Options) {
        match Bar::new(quiet) {
            Some(bar) => {
                let options = bar.hook(options);
                (Some(bar), options)
            }
            None => (None, options),
        }
    }

    fn new(quiet: bool) -> Option<Bar> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let style = ProgressStyle::with_template(TEMPLATE).ok()?.progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()).with_style(style);
        Some(Bar { bar })
    }

    /// `options` with this bar receiving its progress reports.
    fn hook(&self, options: Options) -> Options {
        let bar = self.bar.clone();
        let started = std::time::Instant::now();
        let show_after =
            std::env::var(SHOW_AFTER_ENV).ok().and_then(|ms| ms.parse().ok()).map_or(SHOW_AFTER, Duration::from_millis);
        let current: Mutex<Option<Stage>> = Mutex::new(None);
        let report = move |p: Progress| {
            let Ok(mut current) = current.lock() else { return };
            if *current != Some(p.stage) {
                // Reports of a finished stage may still arrive from another
                // thread; only a stage's start (done 0) switches the bar,
                // and only once the stage shown is done (streamed stages
                // start together: the bar follows the first, lowering).
                let running = bar.length().is_some_and(|total| bar.position() < total);
                if current.is_some() && (p.done != 0 || running) {
                    return;
                }
                *current = Some(p.stage);
                bar.set_prefix(p.stage.name());
                bar.set_length(p.total);
                bar.set_position(0);
            }
            if bar.is_hidden() && started.elapsed() >= show_after {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            if p.done > bar.position() {
                bar.set_position(p.done);
            }
        };
        Options { progress: Some(Arc::new(report)), ..options }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
