//! The `ccc` binary: the process edge. It parses the command line, runs one
//! verb, renders errors (miette) and sets the exit code. The libraries know
//! nothing of terminals; everything printed is decided here.
//!
//! Exit codes (interface.md): 0 success; 1 a mismatch (`diagnose`) or a
//! defect found (`verify`, `compile`); 2 bad input.

#![allow(clippy::exit)]

/// Writes a line to stderr as `eprintln!` does, except that a stderr that
/// cannot be written (a closed pipe, a full disk) loses the line instead
/// of panicking: the exit code stays the one the run earned.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        // A path or name quoted from the input must not drive the terminal.
        let _ = writeln!(std::io::stderr(), "{}", $crate::report::escape_controls(&format!($($arg)*)));
    }};
}

mod args;
mod check;
mod compile;
mod decode;
mod diagnose;
mod explain;
mod graph;
mod import;
mod interrupt;
mod load;
mod out;
mod progress;
mod report;
mod sign;
mod sweep;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

/// A verb's failure: the report to print on stderr and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code (1 or 2).
    pub code: u8,
    /// What to print.
    pub report: miette::Report,
}

impl Failure {
    /// A bad-input failure (exit 2).
    pub fn input(report: impl Into<miette::Report>) -> Self {
        Failure { code: 2, report: report.into() }
    }
}

/// clap's own refusal (or `--help`, `--version`), printed as clap prints
/// it unless an argument holds a control character, which clap echoes
/// raw on a terminal (a value holding ESC `]` set its title): then as
/// plain text, which drops escape sequences, any other control character
/// escaped.
fn argument_error(e: &clap::Error) -> ExitCode {
    use std::io::Write as _;
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    let controls = std::env::args_os().any(|a| a.to_string_lossy().chars().any(report::drives_terminal));
    let printed = match controls {
        false => e.print(),
        true => {
            let plain = report::escape_controls(&e.render().to_string());
            match e.use_stderr() {
                true => write!(std::io::stderr(), "{plain}"),
                false => write!(std::io::stdout(), "{plain}").and_then(|()| std::io::stdout().flush()),
            }
        }
    };
    // `--help` or `--version` into a stdout that cannot take it (a full
    // disk, `> /dev/full`) fails as every verb's output does: exit 2, said
    // on stderr (it exited 0, nothing written). A reader that stopped
    // early (a broken pipe) is no failure.
    match printed {
        Err(err) if !e.use_stderr() && err.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = writeln!(std::io::stderr(), "  × cannot write to stdout: {err}");
            ExitCode::from(2)
        }
        _ => ExitCode::from(code),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(&e),
    };
    report::install_handler();
    let json = cli.command.prints_json();
    let result = match cli.command {
        Command::Check(a) => check::run(&a),
        Command::Decode(a) => decode::run(&a),
        Command::Compile(a) => compile::run(&a),
        Command::Verify(a) => compile::run_verify(&a),
        Command::Sign(a) => sign::run(&a),
        Command::Graph(a) => graph::run(&a),
        Command::Diagnose(a) => diagnose::run(&a),
        Command::Import(a) => import::run(&a),
        Command::Explain(a) => explain::run(&a),
        Command::Sweep(a) => sweep::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            report::print(&failure.report);
            if json {
                report::print_json(&failure);
            }
            ExitCode::from(failure.code)
        }
    }
}
