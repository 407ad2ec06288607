//! `ccc compile` and `ccc verify`: run the pipeline; write the images
//! atomically (compile) or print the proof (verify).

use crate::Failure;
use crate::args::{CompileArgs, VerifyArgs};
use crate::load::load_spec;
use crate::progress::Bar;
use ccc_compiler::manifest::Manifest;
use ccc_compiler::output::{self, NotOurs, OutputError, Written};
use ccc_compiler::pipeline::{CertificateError, CompileError, Compiled, Options, Proof, WayOut, compile};
use ccc_compiler::verify::VerifyError;
use ccc_ir::id::Rank;
use ccc_ir::noun::count;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `ccc compile`.
pub fn run(args: &CompileArgs) -> Result<ExitCode, Failure> {
    let mut wall = Wall::start();
    let (_, valid) = load_spec(&args.spec, &args.hlo)?;
    wall.lap_load();
    let certificate = args.proven_by.as_deref().map(read_certificate).transpose()?;
    // Ctrl-C stops the compile, and the write before it replaces OUT.
    let cancel = crate::interrupt::install();
    let options = Options {
        ranks: args.ranks.iter().copied().map(Rank).collect(),
        verify: !args.no_verify,
        certificate: certificate.map(Arc::new),
        memory_budget: args.memory_budget.0,
        cancel: cancel.clone(),
        ..Options::default()
    };
    let (bar, options) = Bar::attach(args.quiet, options);
    let compiled = compile(&valid, &options).map_err(|e| match (e, &args.proven_by) {
        (CompileError::Cancelled, _) => interrupted(),
        (CompileError::Certificate(e), Some(manifest)) => certificate_failure(&args.spec, manifest, &e),
        (e, _) => compile_failure(&args.spec, e),
    })?;
    drop(bar);
    wall.lap_compile();
    // Said while it waits for another compile writing there (Ctrl-C stops
    // the wait).
    let waiting = |dir: &std::path::Path| {
        note!(
            "note: waiting for another compile writing into {} to finish (Ctrl-C stops)",
            crate::report::one_line(&dir.display())
        );
    };
    let written = output::write_telling(&args.out, &compiled, cancel.as_ref(), &waiting).map_err(output_failure)?;
    report_debris(&written);
    wall.lap_write();
    let mut out = summary(&args.spec, &compiled);
    let _ = writeln!(
        out,
        "wrote {}: {}, {}, {}",
        crate::report::one_line(&args.out.display()),
        count(compiled.images.len(), "rank"),
        count(written.files, "file"),
        count(written.bytes, "byte")
    );
    if !written.kept.is_empty() {
        let shown: Vec<String> = written.kept.iter().take(5).map(|p| crate::report::one_line(&p.display())).collect();
        let more = written.kept.len().saturating_sub(shown.len());
        let _ = writeln!(
            out,
            "kept {} ccc did not write: {}{}",
            count(written.kept.len(), "entry"),
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        );
    }
    wall.write_line(&mut out, &compiled);
    // The output is in place by now: a failure to print the summary must
    // not read as "nothing was written".
    crate::out::emit_after(&out, "this summary", Some(&args.out))?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the manifest a `--proven-by` names (a file, or a folder holding
/// `manifest.json`).
fn read_certificate(path: &Path) -> Result<Manifest, Failure> {
    let file = if path.is_dir() { path.join("manifest.json") } else { path.to_path_buf() };
    let text = crate::load::read_text(&file, crate::load::MANIFEST_CAP, "--proven-by manifest")?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::input(miette::miette!(
            help = "--proven-by takes the manifest.json (or the output folder) of an earlier `ccc compile` of this \
                    spec, run without --no-verify",
            "--proven-by {} is not a ccc manifest: {}",
            file.display(),
            ccc_compiler::parse::bound_message(&e.to_string())
        ))
    })
}

/// Runs `ccc verify`: the whole world proven, no rank kept (it writes
/// nothing), so its memory is the proof's and one chunk's of ranks.
pub fn run_verify(args: &VerifyArgs) -> Result<ExitCode, Failure> {
    let mut wall = Wall::start();
    let (_, valid) = load_spec(&args.spec, &args.hlo)?;
    wall.lap_load();
    let options = Options { emit: false, memory_budget: args.memory_budget.0, ..Options::default() };
    let (bar, options) = Bar::attach(args.quiet, options);
    let compiled = compile(&valid, &options).map_err(|e| compile_failure(&args.spec, e))?;
    drop(bar);
    wall.lap_compile();
    let mut out = summary(&args.spec, &compiled);
    wall.write_line(&mut out, &compiled);
    crate::out::emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Where a verb's wall time went, from its start to its summary: reading
/// and checking the spec, the compile (split in its
/// [`Times`](ccc_compiler::pipeline::Times)), writing the output. Each
/// part is a lap of one clock, so the parts add up to the total.
struct Wall {
    last: Instant,
    load: Duration,
    compile: Duration,
    write: Duration,
}

impl Wall {
    fn start() -> Wall {
        Wall { last: Instant::now(), load: Duration::ZERO, compile: Duration::ZERO, write: Duration::ZERO }
    }

    fn lap(&mut self) -> Duration {
        let now = Instant::now();
        let lap = now - self.last;
        self.last = now;
        lap
    }

    fn lap_load(&mut self) {
        let lap = self.lap();
        self.load += lap;
    }

    fn lap_compile(&mut self) {
        let lap = self.lap();
        self.compile += lap;
    }

    fn lap_write(&mut self) {
        let lap = self.lap();
        self.write += lap;
    }

    /// The `time:` line: the total, then every part. The compile's own
    /// parts are its [`Times`](ccc_compiler::pipeline::Times); what the
    /// call took beyond their sum (returning, the bar's last draw) and
    /// formatting the summary are counted with `other`. Printing the
    /// summary is not counted.
    fn write_line(&mut self, out: &mut String, compiled: &Compiled) {
        let lap = self.lap();
        self.compile += lap;
        let t = &compiled.times;
        let other = t.other + self.compile.saturating_sub(t.total());
        let total = self.load + t.total().max(self.compile) + self.write;
        let proof = if compiled.proof.as_ref().is_some_and(|p| p.certified) { "check" } else { "proof" };
        let _ = writeln!(
            out,
            "time: {:.1} ms (load {:.1} ms, build {:.1} ms, lower {:.1} ms, encode {:.1} ms, {proof} {:.1} ms, other {:.1} ms, write {:.1} ms)",
            ms(total),
            ms(self.load),
            ms(t.build),
            ms(t.lower),
            ms(t.encode),
            ms(t.proof),
            ms(other),
            ms(self.write)
        );
    }
}

/// Maps a pipeline error to its exit code: a failed proof is a defect
/// (exit 1); everything else is input that does not fit (exit 2).
pub fn compile_failure(spec: &Path, error: CompileError) -> Failure {
    let name = spec.display();
    match error {
        CompileError::Verify(VerifyError::Defects(defect)) => Failure {
            code: 1,
            report: miette::miette!(
                help = "ccc refuses to emit a schedule it cannot prove; this is a defect in ccc, please report it with the spec",
                "{name}: the schedule is not proven: {defect}"
            ),
        },
        CompileError::Memory(e) => {
            // Ranks already named (`--rank`): not told to name them.
            let named = e.ranks < u64::from(e.rank_n);
            let ways: Vec<&str> = e.ways_out().iter().map(|&w| way_out(w, named)).collect();
            Failure::input(miette::miette!(
                help = format!("{}; or raise the budget with --memory-budget", ways.join("; ")),
                "{name}: {e}"
            ))
        }
        CompileError::Verify(e @ VerifyError::TooLarge { .. }) => {
            let write = match &e {
                VerifyError::TooLarge { provable: Some(a), .. } => format!("write {a} as its algorithm; or "),
                _ => String::new(),
            };
            Failure::input(miette::miette!(
                help = format!("{write}prove a smaller world; or compile the ranks you need (--rank) with --no-verify"),
                "{name}: {e}"
            ))
        }
        other => Failure::input(miette::miette!("{name}: {other}")),
    }
}

/// A `--proven-by MANIFEST` that does not certify `spec`'s schedule: named
/// by the manifest's path, the file at fault, with the way forward.
fn certificate_failure(spec: &Path, manifest: &Path, error: &CertificateError) -> Failure {
    let help = match error {
        CertificateError::NotProven => {
            "its compile ran with --no-verify; a compile without it writes a manifest that certifies".to_owned()
        }
        CertificateError::OtherSchedule { .. } => {
            format!("run `ccc diagnose {} {}` to see why the two differ", spec.display(), manifest.display())
        }
        CertificateError::Schema { .. } | CertificateError::FormatVersion { .. } => {
            "a certificate is the manifest of a verified compile by this ccc: compile once without --proven-by \
             to make one"
                .to_owned()
        }
        CertificateError::Corrupt { .. } | CertificateError::ProofMismatch { .. } => {
            "the manifest is not as ccc wrote it: use the manifest of a verified compile, unedited".to_owned()
        }
    };
    Failure::input(miette::miette!(help = help, "{} does not certify {}: {error}", manifest.display(), spec.display()))
}

/// A way out of the memory budget, in the CLI's flags (`named`: the
/// compile emits ranks named with `--rank`).
fn way_out(way: WayOut, named: bool) -> &'static str {
    match way {
        WayOut::EmitFewerRanks => "name fewer ranks to emit with --rank",
        WayOut::SkipProof if named => "compile the ranks named with --no-verify",
        WayOut::SkipProof => "name the ranks needed (--rank R) and compile them with --no-verify",
        WayOut::Certificate => "compile them with --proven-by MANIFEST of an earlier verified compile",
        WayOut::FewerRanks => "use a spec with fewer ranks",
    }
}

/// The summary both verbs print: the program, the signature, one line per
/// collective, then the proof.
fn summary(spec: &Path, compiled: &Compiled) -> String {
    let mut out = String::new();
    let schedule = &compiled.schedule;
    let topsps = ccc_compiler::placement::topsps_used(schedule);
    let _ = writeln!(
        out,
        "{}: {}, {}, {} per rank ({})",
        spec.display(),
        count(schedule.collectives.len(), "collective"),
        count(schedule.shape.rank_n, "rank"),
        count(topsps, "TOP_SP"),
        schedule.arch
    );
    let _ = writeln!(out, "signature {}", compiled.signature.digest);
    for p in &schedule.collectives {
        let _ = writeln!(
            out,
            "collective {}: {} {} x {}, {}, {}, {}",
            p.index,
            p.op,
            p.dtype,
            p.count,
            ccc_compiler::sign::algorithm(p),
            count(p.phases.len(), "phase"),
            count(p.step_n, "step")
        );
        crate::explain::cost_lines(&mut out, schedule, p);
        // The runtime's per-leg selection line (seed 001 §2.7): only the
        // compile knows it, the images cannot tell (wire-format.md §12).
        let legs: Vec<_> = p.legs.iter().filter_map(|&(leg, alg)| Some((leg?, alg))).collect();
        if !legs.is_empty() {
            let _ = writeln!(out, "collective {}: {}", p.index, ccc_backends::text_log::hier_selections(&legs));
        }
    }
    match &compiled.proof {
        Some(proof) => write_proof(&mut out, proof),
        None => out.push_str("proof: skipped (--no-verify)\n"),
    }
    out
}

fn write_proof(out: &mut String, proof: &Proof) {
    let verb = if proof.certified { "certified" } else { "proven" };
    if proof.certified {
        let _ = writeln!(out, "certified: an earlier compile of this very schedule (same signature) proved:");
    }
    for c in &proof.postcondition {
        let _ = writeln!(
            out,
            "{verb}: collective {}: {} ({} of {}, {} matched)",
            c.collective,
            c.claim,
            count(c.groups, "group"),
            c.members,
            count(c.transfers, "transfer")
        );
    }
    let p = &proof.protocol;
    let _ = writeln!(
        out,
        "{verb}: protocol of {}, {}, {} checked, {} matched: no wait left unsatisfied",
        count(p.chains, "chain"),
        count(p.records, "record"),
        count(p.steps, "step"),
        count(p.signals, "semaphore increment")
    );
    if proof.symmetric_groups > 0 {
        const PHASES: &str = "shown from the phases' structure";
        const STEPS: &str = "checked on each rank's step graph";
        let how = match (proof.symmetric_by_phase, proof.symmetric_groups.saturating_sub(proof.symmetric_by_phase)) {
            (_, 0) => PHASES.to_string(),
            (0, _) => STEPS.to_string(),
            (phases, steps) => format!("{phases} {PHASES}, {steps} {STEPS}"),
        };
        let _ = writeln!(
            out,
            "symmetry: {} ran member 0's program moved to each member, at every step ({how}): proven on member 0",
            count(proof.symmetric_groups, "group")
        );
    }
    if proof.certified {
        let _ = writeln!(
            out,
            "checked: the chains of the ranks compiled here, and step by step the descriptors their records post"
        );
    }
    let _ = writeln!(out, "proven: {} decode back to their records", count(proof.images_checked, "image"));
    if proof.certified {
        let _ = writeln!(
            out,
            "check time: {:.1} ms (own ranks' records {:.1} ms, round trip {:.1} ms)",
            ms(proof.time()),
            ms(proof.protocol_time),
            ms(proof.roundtrip_time)
        );
    } else {
        let _ = writeln!(
            out,
            "proof time: {:.1} ms (lower {:.1} ms, postcondition {:.1} ms, protocol {:.1} ms, round trip {:.1} ms)",
            ms(proof.time()),
            ms(proof.lowering_time),
            ms(proof.postcondition_time),
            ms(proof.protocol_time),
            ms(proof.roundtrip_time)
        );
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Says on stderr what the write found beside or inside `OUT` that was not
/// its own: stale work folders of killed compiles (removed), and entries it
/// left where they were.
fn report_debris(written: &Written) {
    for s in &written.swept {
        if s.restored {
            note!(
                "note: put back {} as the output folder: a compile (process {}) died while replacing it",
                s.path.display(),
                s.pid
            );
        } else if s.kept {
            // What keeps it: files ccc did not write, or its own that it
            // could not remove (each named below).
            let theirs = written.left.iter().any(|p| p.starts_with(&s.path));
            let stuck = written.unremoved.iter().any(|(p, _)| p.starts_with(&s.path));
            let why = match (theirs, stuck) {
                (true, _) => "and left the folder, which holds files ccc did not write",
                (false, true) => "and left the folder, which holds files of its own it could not remove",
                // A folder of its own it could not remove (made immutable).
                (false, false) => "but could not remove the folder (or a folder inside it)",
            };
            note!(
                "note: kept {}, left by a compile (process {}) no longer running: ccc removed its own files \
                 from it ({}) {why}",
                s.path.display(),
                s.pid,
                count(s.bytes, "byte")
            );
        } else {
            note!(
                "note: removed {}, left by a compile (process {}) no longer running ({})",
                s.path.display(),
                s.pid,
                count(s.bytes, "byte")
            );
        }
    }
    for path in &written.left {
        note!("note: left {}: ccc did not write it (or not all of it)", path.display());
    }
    for (path, error) in &written.unremoved {
        note!(
            "note: could not remove {}, a file ccc wrote: {error}; the next compile beside it removes it once it can \
             be removed",
            path.display()
        );
    }
    if !written.atomic {
        note!("note: this file system cannot exchange two folders in one step; the output was replaced by two renames");
    }
}

/// A compile Ctrl-C (or SIGTERM) stopped: nothing written, `OUT` as it
/// was; exit 128 + the signal's number.
fn interrupted() -> Failure {
    Failure {
        code: crate::interrupt::exit_code(),
        report: miette::miette!("interrupted: nothing was written (the output folder is as it was)"),
    }
}

/// Maps a refused or failed write to exit 2, with the way forward.
fn output_failure(error: OutputError) -> Failure {
    let help = match &error {
        OutputError::Cancelled { .. } => return interrupted(),
        OutputError::NotOurs { reason: NotOurs::NotAFolder, .. } => {
            "-o names a folder to write (it need not exist yet); choose a path that is not a file"
        }
        OutputError::NotOurs { reason: NotOurs::Root, .. } => {
            "ccc writes a new folder beside the old one and switches them; choose a folder below the root (-o /tmp/out)"
        }
        OutputError::NotOurs { reason: NotOurs::HoldsCurrentFolder, .. } => {
            "run ccc from outside the folder it writes (cd to its parent and name the folder there)"
        }
        OutputError::NotOurs { reason: NotOurs::MountPoint, .. } => {
            "nothing was written; write into a folder inside it (-o MOUNT/out)"
        }
        OutputError::NotOurs { reason: NotOurs::Replaced, .. } => {
            "nothing was written, and what stands there now was left as it was found; compile again once nothing \
             else moves that folder"
        }
        OutputError::NotOurs { .. } => {
            "ccc replaces only a folder it wrote itself (its manifest.json and every file that lists, unchanged); choose another -o folder, or move that folder's contents elsewhere"
        }
        OutputError::NameTooLong { max, .. } => {
            return Failure::input(miette::miette!(
                help = format!("name the output folder in at most {max} bytes"),
                "{error}"
            ));
        }
        OutputError::Io { action: "resolve", path, .. }
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            return Failure::input(miette::miette!(
                help = format!(
                    "{} is a symbolic link to nothing (or to a loop of links): create the folder \
                     it points to, or choose another -o path",
                    path.display()
                ),
                "{error}"
            ));
        }
        OutputError::Io { action: "resolve", .. } => {
            "a folder on the way to -o does not exist (or a link on the way leads nowhere): check the path"
        }
        OutputError::InTheWay { .. } => {
            "ccc never overwrites a file it did not write: move that file elsewhere, or choose another -o folder"
        }
        OutputError::WorkFolderTaken { .. } => {
            "nothing was written; move what takes that name away, then compile again"
        }
        OutputError::MountInside { .. } => {
            "nothing was written; unmount it (or mount it outside the folder), or choose another -o folder"
        }
        OutputError::Io { action: "create", path, source }
            if source.kind() == std::io::ErrorKind::AlreadyExists
                && std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) =>
        {
            "a file stands where a folder on the way to -o must be: nothing was written; choose another -o path"
        }
        OutputError::Io { action: "carry over", path, source } => &ccc_compiler::output::carry_over_help(path, source),
        // A write-only drop folder (mode 0311) around `OUT`.
        OutputError::Io { action: "read", source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
            "ccc lists the folder holding -o's folder (to clear what killed compiles left there, \
             `.NAME.ccc-tmp-PID`) and -o's folder itself, so this user must be able to read both: nothing was \
             written; make it readable, or choose another -o folder"
        }
        OutputError::Io { source, .. } if source.kind() == std::io::ErrorKind::ResourceBusy => {
            "the output folder is a mount point (or in use as one), which ccc cannot switch with the new folder it \
             writes beside it: nothing was written; write into a folder inside it (-o MOUNT/out)"
        }
        OutputError::Io { .. } => "nothing was written; the folder is as it was",
    };
    Failure::input(miette::miette!(help = help, "{error}"))
}
