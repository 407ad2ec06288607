//! `ccc decode FILE [--format json|log|text] [--region ctrl|slot|neff]`:
//! read an image, decode it with the `ir` decoders, render it with a
//! `ccc_backends` view, print it.
//!
//! The region comes from `--region`, else from the file name (`slot_spad*`
//! → slot, `neff_configs*` → neff, anything else → ctrl). A CTRL SPAD image
//! is decoded word by word (any multiple of 8 bytes), not as a chain, so
//! that any raw image can be looked at. A decode error exits 2 with the
//! file, the byte offset and what was wrong; so does an unreadable file, an
//! empty one, and one larger than the region is on any arch (the read stops
//! there, see [`image_cap`]).
//!
//! `--format log` prints the runtime's log lines: CTRL-mark lines for a
//! CTRL SPAD image, `tp_inc_steps` lines under a label per record for a SLOT
//! SPAD image. A `neff_configs` block has none (the runtime logs none of its
//! fields), so `--format log` of one is refused (exit 2) and points at the
//! text and JSON views.

use crate::Failure;
use crate::args::{DecodeArgs, DecodeFormat, Region};
use crate::load::read_bounded;
use ccc_backends::{hexdump, json, text_log};
use ccc_ir::arch::{Arch, ArchParams};
use ccc_ir::noun::count;
use ccc_ir::wire::ctrl_word;
use ccc_ir::wire::neff_configs::{NEFF_CONFIGS_BYTES, NeffConfigs};
use ccc_ir::wire::slot_spad::{ENTRY_N_OFFSET, RECORD_N_OFFSET, SlotSpad, entries_offset};
use ccc_ir::wire::tp::ENTRY_BYTES;
use ccc_ir::wire::{DecodeError, DecodeErrorKind};
use std::path::Path;
use std::process::ExitCode;

/// Runs `ccc decode`.
pub fn run(args: &DecodeArgs) -> Result<ExitCode, Failure> {
    let region = args.region.unwrap_or_else(|| region_of(&args.file));
    // Too large for the region the file name suggests: said as a guess
    // (another region may take it), before anything is read.
    let size = std::fs::metadata(&args.file).ok().filter(std::fs::Metadata::is_file).map(|m| m.len());
    if let Some(len) = size.filter(|&len| args.region.is_none() && len > image_cap(region)) {
        let what = format!("{len} bytes, more than any arch's {} ({} bytes)", region_name(region), image_cap(region));
        return Err(refusal(args, region, None, &what));
    }
    let image = read_bounded(&args.file, image_cap(region), &format!("{} image", region_name(region)))?;
    // An empty CTRL image is a TOP_SP no collective has work on (ccc
    // writes one, `docs/wire-format.md` §2): no chain to decode. The other
    // regions always have a header.
    if image.is_empty() && region != Region::Ctrl {
        return Err(refusal(args, region, Some(&image), "empty image (0 bytes)"));
    }
    let arch = naming_arch();
    let text = match region {
        Region::Ctrl => {
            let words = ctrl_word::decode_words(&image).map_err(|e| decode_failure(args, region, &image, &e))?;
            match args.format {
                DecodeFormat::Json => json::ctrl(&words).map_err(|e| Failure::input(miette::miette!("{e}")))?,
                DecodeFormat::Log => text_log::ctrl(&words, args.device, args.topsp),
                DecodeFormat::Text if words.is_empty() => "(empty: no collective has work on this TOP_SP)\n".to_owned(),
                DecodeFormat::Text => hexdump::ctrl(&words, arch),
            }
        }
        Region::Slot => {
            let spad = SlotSpad::decode(&image).map_err(|e| decode_failure(args, region, &image, &e))?;
            match args.format {
                DecodeFormat::Json => json::slot(&spad).map_err(|e| Failure::input(miette::miette!("{e}")))?,
                DecodeFormat::Log => text_log::slot(&spad, args.device, args.topsp),
                DecodeFormat::Text => hexdump::slot(&spad),
            }
        }
        Region::Neff => {
            let cfg = NeffConfigs::decode(&image).map_err(|e| decode_failure(args, region, &image, &e))?;
            match args.format {
                DecodeFormat::Json => json::neff(&cfg).map_err(|e| Failure::input(miette::miette!("{e}")))?,
                DecodeFormat::Log => return Err(no_neff_log(args)),
                DecodeFormat::Text => hexdump::neff(&cfg, arch),
            }
        }
    };
    crate::out::emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `--format log` of a `neff_configs` block: refused (exit 2), because the
/// runtime logs none of the block's fields, so there is no log to diff it
/// against; the text and JSON views show every field.
fn no_neff_log(args: &DecodeArgs) -> Failure {
    Failure::input(miette::miette!(
        code = "ccc::decode",
        help = "use --format text (every field, with its offset) or --format json (the vendor dumper's shape); \
                --format log is for a CTRL SPAD image (CTRL-mark lines) and a SLOT SPAD image (tp_inc_steps lines)",
        "{}: a neff_configs block has no log: the runtime logs none of its fields",
        args.file.display()
    ))
}

/// The region a file name suggests.
fn region_of(file: &Path) -> Region {
    let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if name.starts_with("slot_spad") {
        Region::Slot
    } else if name.starts_with("neff_configs") {
        Region::Neff
    } else {
        Region::Ctrl
    }
}

/// The table that names semaphore and load addresses in the dumps. Every
/// arch shares Cayman's numbers (`docs/wire-format.md` §9) and differs only
/// in how many TOP_SPs it has, so the arch with the most TOP_SPs names the
/// addresses of any image without being told which arch it came from.
fn naming_arch() -> &'static ArchParams {
    let mut best = Arch::Cayman.params();
    for arch in Arch::ALL {
        if arch.params().topsp_n > best.topsp_n {
            best = arch.params();
        }
    }
    best
}

/// The largest image of `region` read: the region's size on the arch where
/// it is largest (no emitted image is larger; the encoder refuses to
/// overflow a region).
fn image_cap(region: Region) -> u64 {
    let (ctrl, slot) = Arch::largest_spads();
    match region {
        Region::Ctrl => u64::from(ctrl),
        Region::Slot => u64::from(slot),
        Region::Neff => NEFF_CONFIGS_BYTES as u64,
    }
}

fn region_name(region: Region) -> &'static str {
    match region {
        Region::Ctrl => "CTRL SPAD",
        Region::Slot => "SLOT SPAD",
        Region::Neff => "neff_configs",
    }
}

fn region_help(region: Region) -> &'static str {
    match region {
        Region::Ctrl => ccc_ir::wire::ctrl_word::IMAGE_SHAPE,
        Region::Slot => ccc_ir::wire::slot_spad::IMAGE_SHAPE,
        Region::Neff => ccc_ir::wire::neff_configs::IMAGE_SHAPE,
    }
}

/// The report for an image the decoder refused: the file, the region, what
/// was wrong and the byte offset.
fn decode_failure(args: &DecodeArgs, region: Region, image: &[u8], err: &DecodeError) -> Failure {
    let at = err.offset;
    let slot_len = if region == Region::Slot { slot_spad_len(image) } else { None };
    let what = match (&err.kind, slot_len) {
        // The SLOT SPAD's header says how long the image must be: say it.
        (DecodeErrorKind::BadLength { len, .. }, Some((record_n, entry_n, expected))) => format!(
            "image is {}, not the {expected} its header says: 8 bytes of record_n and entry_n, the index \
             of record_n = {} (4 bytes each, padded to 8), then entry_n = {} of {ENTRY_BYTES} bytes \
             (at offset {at:#x})",
            count(len, "byte"),
            count(record_n, "record"),
            count(entry_n, "entry"),
        ),
        _ => err.to_string(),
    };
    refusal(args, region, Some(image), &what)
}

/// Whether `bytes` read as text: not empty, UTF-8, with no control
/// character but tabs and line breaks (an emitted image's words always
/// hold zero bytes).
fn reads_as_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes)
        .is_ok_and(|t| !t.trim().is_empty() && t.chars().all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r')))
}

/// A SLOT SPAD image's `record_n`, `entry_n`, and the length they call
/// for; `None` when the header is cut short or the length overflows.
fn slot_spad_len(image: &[u8]) -> Option<(u32, u32, u64)> {
    let word = |at: usize| image.get(at..at + 4)?.try_into().ok().map(u32::from_le_bytes);
    let (record_n, entry_n) = (word(RECORD_N_OFFSET)?, word(ENTRY_N_OFFSET)?);
    let start = u64::try_from(entries_offset(usize::try_from(record_n).ok()?)).ok()?;
    let len = u64::from(entry_n).checked_mul(ENTRY_BYTES as u64)?.checked_add(start)?;
    Some((record_n, entry_n, len))
}

/// The report for an image that is not one of `region`: `what` says why;
/// `image` its bytes, where they were read.
fn refusal(args: &DecodeArgs, region: Region, image: Option<&[u8]>, what: &str) -> Failure {
    let path = args.file.display();
    let mut help = format!("{}; see docs/wire-format.md", region_help(region));
    // A spec, a manifest or a module given where an image belongs: an
    // image's words hold zero bytes; text holds none. (Judged on the bytes
    // read, never by reading a file too large to decode.)
    if image.is_some_and(reads_as_text) {
        help.push_str(
            "\nthis file reads as text (a spec, a manifest, a module?): decode takes an image ccc emitted, \
             OUT/rank-R/topsp-T/{ctrl_spad,slot_spad,neff_configs}.bin",
        );
    }
    if args.region.is_none() {
        // Standard input has no name to take it from: CTRL SPAD, the default.
        let from = match args.file == Path::new(crate::load::STDIN) {
            true => "is the default for standard input",
            false => "was taken from the file name",
        };
        help.push_str(&format!(
            "\nthe region ({}) {from}; --region chooses another: ctrl, slot or neff",
            region_name(region)
        ));
    }
    Failure::input(miette::miette!(
        code = "ccc::decode",
        help = help,
        "{path}: not a valid {} image: {what}",
        region_name(region)
    ))
}
