//! `ccc check SPEC`: parse and validate a spec, print what it resolves to.
//!
//! On success it prints one line for the machine and one per collective
//! (op, dtype, count, groups, channels, the resolved algorithm) and exits 0;
//! a bad spec exits 2 with the rendered report on stderr, and so does one
//! that validates but whose choices exceed a lowering limit that depends on
//! the algorithm (`legal::exceeded`: what `compile` would refuse).

use crate::Failure;
use crate::args::SpecArg;
use crate::load::load_spec;
use ccc_compiler::cost::auto::legal::{exceeded, exceeded_built};
use ccc_compiler::parse::SpecForm;
use ccc_compiler::schedule::Schedule;
use ccc_compiler::valid::{ResolvedAlgorithm, ValidCollective, ValidProgram};
use ccc_ir::noun::count;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// Refuses `program`, read from `spec`, when a choice validates but
/// lowering would refuse it (a written Mesh over more peers than a TOP_SP
/// has mesh events, `legal::exceeded`), as `compile` refuses it: so that a
/// spec `check` passes compiles, and `sign` and `diagnose` give no
/// signature that no rank could load.
///
/// # Errors
///
/// An input failure (exit 2) naming the rank, the collective and the
/// limit, with the limit's advice.
/// `schedule`: the program built already, when it is (`sign`,
/// `diagnose`), judged as it stands rather than built again.
pub fn refuse_unlowerable(spec: &Path, program: &ValidProgram, schedule: Option<&Schedule>) -> Result<(), Failure> {
    let found = match schedule {
        Some(schedule) => exceeded_built(program, schedule),
        None => exceeded(program),
    };
    let Some(x) = found else { return Ok(()) };
    let arch = program.arch();
    Err(Failure::input(miette::miette!(
        help = x.refusal.limit.advice(arch),
        "{}: {}",
        spec.display(),
        x.refusal_text(arch)
    )))
}

/// Runs `ccc check`.
pub fn run(args: &SpecArg) -> Result<ExitCode, Failure> {
    let (parsed, program) = load_spec(&args.spec, &args.hlo)?;
    refuse_unlowerable(&args.spec, &program, None)?;
    let shape = program.topology();
    let n = program.collectives().len();
    let what = match parsed.form {
        SpecForm::Collective => "a valid collective".to_owned(),
        SpecForm::Program => format!("a valid program of {}", count(n, "collective")),
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}: {what}", args.spec.display());
    let _ = writeln!(
        out,
        "  {}: {}, {} per node, {}, {}; barrier {}, send_credits {}",
        program.arch(),
        count(shape.rank_n, "rank"),
        shape.local_rank_n,
        count(shape.node_n, "node"),
        count(shape.pod_n, "pod"),
        program.barrier(),
        program.send_credits(),
    );
    for c in program.collectives() {
        let _ = writeln!(out, "  {}", summary(c));
    }
    crate::out::emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// One collective on one line.
fn summary(c: &ValidCollective) -> String {
    let mut s = format!("collective {}: {} {} x {}", c.index(), c.op(), c.dtype(), c.count());
    if let Some(reduce) = c.reduce() {
        let _ = write!(s, ", reduce {reduce}");
    }
    if let Some(root) = c.root() {
        let _ = write!(s, ", root {root}");
    }
    if !c.peers().is_empty() {
        let _ = write!(s, ", {}", count(c.peers().len(), "peer pair"));
    }
    let groups = c.groups();
    let _ =
        write!(s, ", {} of {}, {}, ", count(groups.group_n(), "group"), groups.size(), count(c.channels(), "channel"));
    // What `Auto` chose is marked: the whole choice, or each leg left to it.
    let auto_legs = c.auto().map(|a| a.auto_legs.as_slice());
    let whole_auto = auto_legs.is_some_and(<[_]>::is_empty);
    match c.algorithm() {
        ResolvedAlgorithm::Flat(alg) => {
            let _ = write!(s, "{alg}");
        }
        ResolvedAlgorithm::Hier(legs) => {
            let legs: Vec<String> = legs
                .iter()
                .map(|(leg, alg)| {
                    let by_auto = auto_legs.is_some_and(|l| l.contains(leg));
                    format!("{leg} {alg}{}", if by_auto { " (Auto)" } else { "" })
                })
                .collect();
            let _ = write!(s, "Hier ({})", legs.join(", "));
        }
    }
    if whole_auto {
        s.push_str(", chosen by Auto");
    }
    if c.auto().is_some_and(|a| a.fitted.is_some()) {
        s.push_str(
            " (not the cheapest alone: fitted with the program's other collectives into the CTRL SPAD and mesh events)",
        );
    }
    s
}
