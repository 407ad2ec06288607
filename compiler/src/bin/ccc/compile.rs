//! `ccc compile` and `ccc verify`: run the pipeline; write the images
//! atomically (compile) or print the proof (verify).

use crate::Failure;
use crate::args::{CompileArgs, SpecArg};
use crate::load::load_spec;
use ccc_compiler::manifest::Manifest;
use ccc_compiler::pipeline::{CompileError, Compiled, Options, Proof, compile, compile_certified};
use ccc_compiler::verify::VerifyError;
use ccc_ir::id::Rank;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `ccc compile`.
pub fn run(args: &CompileArgs) -> Result<ExitCode, Failure> {
    let (_, valid) = load_spec(&args.spec)?;
    let options = Options { ranks: args.ranks.iter().copied().map(Rank).collect(), verify: !args.no_verify };
    let compiled = match &args.proven_by {
        None => compile(&valid, &options),
        Some(path) => compile_certified(&valid, &options, &read_certificate(path)?),
    }
    .map_err(|e| compile_failure(&args.spec, e))?;
    let manifest = Manifest::of(&compiled);
    let json = manifest.to_json().map_err(|e| Failure::input(miette::miette!("cannot write manifest.json: {e}")))?;
    let (files, bytes) = write_atomically(&args.out, &compiled, &json)?;
    let mut out = summary(&args.spec, &compiled);
    let _ =
        writeln!(out, "wrote {}: {} ranks, {files} files, {bytes} bytes", args.out.display(), compiled.images.len());
    crate::out::emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the manifest a `--proven-by` names (a file, or a folder holding
/// `manifest.json`).
fn read_certificate(path: &Path) -> Result<Manifest, Failure> {
    let file = if path.is_dir() { path.join("manifest.json") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Failure::input(miette::miette!("cannot read --proven-by {}: {e}", file.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::input(miette::miette!("--proven-by {} is not a ccc manifest: {e}", file.display())))
}

/// Runs `ccc verify`.
pub fn run_verify(args: &SpecArg) -> Result<ExitCode, Failure> {
    let (_, valid) = load_spec(&args.spec)?;
    let compiled = compile(&valid, &Options::default()).map_err(|e| compile_failure(&args.spec, e))?;
    crate::out::emit(&summary(&args.spec, &compiled))?;
    Ok(ExitCode::SUCCESS)
}

/// Maps a pipeline error to its exit code: a failed proof is a defect
/// (exit 1); everything else is input that does not fit (exit 2).
pub fn compile_failure(spec: &Path, error: CompileError) -> Failure {
    let name = spec.display();
    match error {
        CompileError::Verify(VerifyError::Defect(defect)) => Failure {
            code: 1,
            report: miette::miette!(
                help = "ccc refuses to emit a schedule it cannot prove; this is a defect in ccc, please report it with the spec",
                "{name}: the schedule is not proven: {defect}"
            ),
        },
        other => Failure::input(miette::miette!("{name}: {other}")),
    }
}

/// The summary both verbs print: the program, the signature, one line per
/// collective, then the proof.
fn summary(spec: &Path, compiled: &Compiled) -> String {
    let mut out = String::new();
    let schedule = &compiled.schedule;
    let topsps = ccc_compiler::lower::topsps_used(schedule);
    let _ = writeln!(
        out,
        "{}: {} collective{}, {} ranks, {} TOP_SP{} per rank ({})",
        spec.display(),
        schedule.collectives.len(),
        plural(schedule.collectives.len()),
        schedule.shape.rank_n,
        topsps,
        plural(usize::from(topsps)),
        schedule.arch
    );
    let _ = writeln!(out, "signature {}", compiled.signature.digest);
    for p in &schedule.collectives {
        let _ = writeln!(
            out,
            "collective {}: {} {} x {}, {}, {} phase{}, {} steps",
            p.index,
            p.op,
            p.dtype,
            p.count,
            ccc_compiler::sign::algorithm(p),
            p.phases.len(),
            plural(p.phases.len()),
            p.step_n
        );
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
            "{verb}: collective {}: {} ({} group{} of {}, {} transfers matched)",
            c.collective,
            c.claim,
            c.groups,
            plural(c.groups as usize),
            c.members,
            c.transfers
        );
    }
    let p = &proof.protocol;
    let _ = writeln!(
        out,
        "{verb}: protocol of {} chains, {} records, {} steps checked, {} semaphore increments matched: no wait left unsatisfied",
        p.chains, p.records, p.steps, p.signals
    );
    if proof.symmetric_groups > 0 {
        let _ = writeln!(
            out,
            "symmetry: {} group{} ran member 0's program moved to each member, at every step (checked while lowering): proven on member 0",
            proof.symmetric_groups,
            plural(proof.symmetric_groups as usize)
        );
    }
    if proof.certified {
        let _ = writeln!(
            out,
            "checked: the chains of the ranks compiled here, and step by step the descriptors their records post"
        );
    }
    let _ = writeln!(out, "proven: {} images decode back to their records", proof.images_checked);
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
            "proof time: {:.1} ms (postcondition {:.1} ms, protocol {:.1} ms, round trip {:.1} ms)",
            ms(proof.time()),
            ms(proof.postcondition_time),
            ms(proof.protocol_time),
            ms(proof.roundtrip_time)
        );
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Writes every image and the manifest into a temporary folder next to
/// `out`, then renames it into place: `out` is complete or untouched.
fn write_atomically(out: &Path, compiled: &Compiled, manifest: &str) -> Result<(u64, u64), Failure> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        Failure::input(miette::miette!("cannot {what} {}: {e}", path.display()))
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| io("create", &parent, e))?;
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let pid = std::process::id();
    let tmp = parent.join(format!(".{name}.ccc-tmp-{pid}"));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = (|| {
        let mut files = 0u64;
        let mut bytes = 0u64;
        std::fs::create_dir(&tmp).map_err(|e| io("create", &tmp, e))?;
        for rank in &compiled.images {
            for t in &rank.topsps {
                let dir = tmp.join(format!("rank-{}", rank.rank.0)).join(format!("topsp-{}", t.topsp.0));
                std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
                for (file, data) in [
                    ("ctrl_spad.bin", &t.ctrl_spad[..]),
                    ("slot_spad.bin", &t.slot_spad[..]),
                    ("neff_configs.bin", &t.neff_configs[..]),
                ] {
                    let path = dir.join(file);
                    std::fs::write(&path, data).map_err(|e| io("write", &path, e))?;
                    files += 1;
                    bytes += data.len() as u64;
                }
            }
        }
        let path = tmp.join("manifest.json");
        std::fs::write(&path, manifest).map_err(|e| io("write", &path, e))?;
        files += 1;
        bytes += manifest.len() as u64;
        replace(out, &tmp, &parent, &name, pid)?;
        Ok((files, bytes))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn replace(out: &Path, tmp: &Path, parent: &Path, name: &str, pid: u32) -> Result<(), Failure> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        Failure::input(miette::miette!("cannot {what} {}: {e}", path.display()))
    };
    if out.exists() {
        let ours = out.is_dir()
            && (out.join("manifest.json").is_file()
                || std::fs::read_dir(out).map(|mut d| d.next().is_none()).unwrap_or(false));
        if !ours {
            return Err(Failure::input(miette::miette!(
                help = "choose another -o folder, or remove it first",
                "refusing to replace {}: it exists and is not a ccc output folder (no manifest.json)",
                out.display()
            )));
        }
        let old = parent.join(format!(".{name}.ccc-old-{pid}"));
        std::fs::rename(out, &old).map_err(|e| io("move aside", out, e))?;
        if let Err(e) = std::fs::rename(tmp, out) {
            let _ = std::fs::rename(&old, out);
            return Err(io("rename into place", out, e));
        }
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(tmp, out).map_err(|e| io("rename into place", out, e))?;
    }
    Ok(())
}
