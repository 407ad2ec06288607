//! Annotated hexdumps: one line per field, `offset | bytes | meaning`, so a
//! byte diff reads like prose (`docs/wire-format.md` for every layout).
//!
//! ```text
//! -- slot 0 --
//! 0x0000 | 01 b1 00 00 00 00 00 00 | op 0: mesh, sub 3 (MESH_SWITCH), trigger_next, sema_shift_offset 0, sema_mask 0x0000
//! 0x0008 | 06 18 00 80 82 00 00 00 | END compl 0x0000008280001804 (TOP_SP 0 INC sem 1)
//! ```
//!
//! The renderers take decoded values, not bytes: the bytes column is the
//! value packed again with the `ir` encoders, which mirror the decoders
//! exactly (every decoded value packs back to the bytes it came from). A
//! value that cannot be packed (only a hand-built one can be such) shows
//! `--` bytes and its meaning still.
//!
//! Addresses are named against an [`ArchParams`] table: a semaphore as
//! `(TOP_SP 0 READ sem 5)`, a load address as `(TOP_SP 0 CTRL SPAD)`.

use ccc_ir::arch::ArchParams;
use ccc_ir::enums::{DevicePattern, MeshType, MetaringType};
use ccc_ir::wire::ctrl_word::{CcOp, CtrlWord, WORD_BYTES};
use ccc_ir::wire::neff_configs::{self as nc, BarrierConfigs, BarrierStep, MeshEvent, NeffConfigs};
use ccc_ir::wire::slot_spad::{self, SlotSpad};
use ccc_ir::wire::tp::ENTRY_BYTES;

/// Bytes per slot of a CTRL SPAD image, where the dump draws a separator.
const SLOT_BYTES: u64 = ccc_ir::wire::ctrl_spad::SLOT_BYTES as u64;

/// Width of the bytes column: eight bytes as `xx` separated by spaces.
const BYTES_COLUMN: usize = 3 * 8 - 1;

/// Dumps a CTRL SPAD image decoded word by word (`ctrl_word::decode_words`):
/// one line per word with a `-- slot N --` line at each 64-byte slot
/// boundary. `arch` names the END marks' completion semaphores.
pub fn ctrl(words: &[(u64, CtrlWord)], arch: &ArchParams) -> String {
    let mut out = String::new();
    let mut op_index = 0usize;
    for (offset, word) in words {
        if offset % SLOT_BYTES == 0 {
            line(&mut out, &format!("-- slot {} --", offset / SLOT_BYTES));
        }
        let bytes = word.encode().map(|b| hex(&b)).unwrap_or_else(|_| unknown_bytes(WORD_BYTES));
        row(&mut out, *offset, &bytes, &word_meaning(word, op_index, arch));
        if let CtrlWord::Op(_) = word {
            op_index += 1;
        }
    }
    out
}

/// The meaning column of one word: for an op entry, with `op_index` its
/// index among the image's op entries,
/// `op 1: ring, sub 0 (RING), trigger_next, reporter, channels {0,1,2,3}`;
/// for a mark `END compl 0x0000008280001804 (TOP_SP 0 INC sem 1)`,
/// `CONTINUE` or `empty` (`op_index` unused), the completion address named
/// against `arch`.
pub fn word_meaning(word: &CtrlWord, op_index: usize, arch: &ArchParams) -> String {
    match word {
        CtrlWord::Op(op) => op_meaning(op_index, op),
        CtrlWord::End { compl_addr } => format!("END compl {}", address(*compl_addr, arch)),
        CtrlWord::Continue => "CONTINUE".to_owned(),
        CtrlWord::Empty => "empty".to_owned(),
    }
}

/// The meaning column of an op entry: the pattern, the sub-type with its
/// name for that pattern, the set flags by name, then the live union view.
fn op_meaning(op_index: usize, op: &CcOp) -> String {
    let mut parts = Vec::new();
    let union = match DevicePattern::try_from(op.algo_type) {
        Ok(DevicePattern::Ring) => {
            let name = MetaringType::try_from(op.algo_sub_type).map(MetaringType::c_name).unwrap_or("unknown");
            parts.push(format!("op {op_index}: ring"));
            parts.push(format!("sub {} ({name})", op.algo_sub_type));
            format!("channels {}", channel_set(op.channel_list()))
        }
        Ok(DevicePattern::Mesh) => {
            let name = MeshType::try_from(op.algo_sub_type)
                .map(|t| t.c_name().strip_prefix("ENC_ALG_").unwrap_or(t.c_name()))
                .unwrap_or("unknown");
            parts.push(format!("op {op_index}: mesh"));
            parts.push(format!("sub {} ({name})", op.algo_sub_type));
            mesh_view(op)
        }
        Err(_) => {
            // No known pattern says which view is live: show both.
            parts.push(format!("op {op_index}: algo_type {} (unknown pattern)", op.algo_type));
            parts.push(format!("sub {}", op.algo_sub_type));
            format!("channel_list {:#010x} / {}", op.channel_list(), mesh_view(op))
        }
    };
    let CcOp { trigger_next, reporter, ring_wait_complete, ring_send_complete, safe_mode, unique_tensors, .. } = *op;
    for (on, name) in [
        (trigger_next, "trigger_next"),
        (reporter, "reporter"),
        (ring_wait_complete, "ring_wait_complete"),
        (ring_send_complete, "ring_send_complete"),
        (safe_mode, "safe_mode"),
        (unique_tensors, "unique_tensors"),
    ] {
        if on {
            parts.push(name.to_owned());
        }
    }
    parts.push(union);
    parts.join(", ")
}

/// Dumps a SLOT SPAD image: the header, the per-record index, then each
/// record's `tp_inc_steps` under a `-- record N --` line, in the runtime's
/// wording (`tp_inc_steps[0] = m2s 3, s2m 3, repeat 4`).
pub fn slot(spad: &SlotSpad) -> String {
    let mut out = String::new();
    let record_n = spad.records.len();
    let entry_n: usize = spad.records.iter().map(Vec::len).sum();
    row_u32(&mut out, slot_spad::RECORD_N_OFFSET, record_n, "record_n");
    row_u32(&mut out, slot_spad::ENTRY_N_OFFSET, entry_n, "entry_n");
    let mut first = 0usize;
    for (i, entries) in spad.records.iter().enumerate() {
        let at = slot_spad::INDEX_OFFSET + slot_spad::INDEX_ROW_BYTES * i;
        let bytes = match (u16::try_from(first), u16::try_from(entries.len())) {
            (Ok(f), Ok(n)) => hex(&[f.to_le_bytes(), n.to_le_bytes()].concat()),
            _ => unknown_bytes(slot_spad::INDEX_ROW_BYTES),
        };
        let meaning = format!("record {i}: first_entry {first}, entry_n {}", entries.len());
        row(&mut out, at as u64, &bytes, &meaning);
        first += entries.len();
    }
    let index_end = slot_spad::INDEX_OFFSET + slot_spad::INDEX_ROW_BYTES * record_n;
    let start = slot_spad::entries_offset(record_n);
    if start > index_end {
        row(&mut out, index_end as u64, &hex(&vec![0; start - index_end]), "padding");
    }
    let mut at = start;
    for (i, entries) in spad.records.iter().enumerate() {
        line(&mut out, &format!("-- record {i} --"));
        for (j, step) in entries.iter().enumerate() {
            let bytes = step.encode().map(|b| hex(&b)).unwrap_or_else(|_| unknown_bytes(ENTRY_BYTES));
            row(&mut out, at as u64, &bytes, &crate::text_log::tp_inc_step(j, step));
            at += ENTRY_BYTES;
        }
    }
    out
}

/// Dumps a `neff_configs` block: one line per field (at most 8 bytes), in
/// offset order, reserved areas as one line each, so the lines tile the
/// 3592 bytes. Addresses are named against `arch`.
pub fn neff(cfg: &NeffConfigs, arch: &ArchParams) -> String {
    let mut out = String::new();
    for r in neff_rows(cfg, arch) {
        let bytes = match &r.bytes {
            Bytes::Some(b) => hex(b),
            Bytes::Zero(n) => format!("({n} zero bytes)"),
        };
        row(&mut out, r.offset as u64, &bytes, &r.meaning);
    }
    out
}

/// The bytes of one row of the `neff_configs` dump.
enum Bytes {
    /// The field's bytes (at most 8).
    Some(Vec<u8>),
    /// A run of zero bytes (a reserved or unused area).
    Zero(usize),
}

impl Bytes {
    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Bytes::Some(b) => b.len(),
            Bytes::Zero(n) => *n,
        }
    }
}

/// One row of the `neff_configs` dump.
struct Row {
    offset: usize,
    bytes: Bytes,
    meaning: String,
}

/// The rows of the `neff_configs` dump, in offset order.
fn neff_rows(cfg: &NeffConfigs, arch: &ArchParams) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut some = |offset: usize, bytes: &[u8], meaning: String| {
        rows.push(Row { offset, bytes: Bytes::Some(bytes.to_vec()), meaning });
    };
    let addr = |name: &str, a: u64| format!("{name} = {}", address(a, arch));
    for (offset, name, value) in [
        (nc::TRIGGER, "trigger", cfg.trigger),
        (nc::TRIGGER_NEXT, "trigger_next", cfg.trigger_next),
        (nc::COMPLETE, "complete", cfg.complete),
        (nc::COMPLETE_PREV, "complete_prev", cfg.complete_prev),
        (nc::TPB_STOP_SEMA, "tpb_stop_sema", cfg.tpb_stop_sema),
        (nc::CTRL_SPAD, "ctrl_spad", cfg.ctrl_spad),
    ] {
        some(offset, &value.to_le_bytes(), addr(name, value));
    }
    for (i, base) in cfg.slot_spad_base.iter().enumerate() {
        some(nc::SLOT_SPAD_BASE + 8 * i, &base.to_le_bytes(), addr(&format!("slot_spad_base[{i}]"), *base));
    }
    some(nc::OP_NUM, &cfg.op_num.to_le_bytes(), format!("op_num = {}", cfg.op_num));
    some(nc::FUNCTION_N, &cfg.function_n.to_le_bytes(), format!("function_n = {}", cfg.function_n));
    some(nc::TPB_COMPL_ADDR_NUM, &[cfg.tpb_compl_addr_num], format!("tpb_compl_addr_num = {}", cfg.tpb_compl_addr_num));
    let mesh_event_n = cfg.mesh_events.len();
    let mesh_event_byte = u8::try_from(mesh_event_n).unwrap_or(u8::MAX);
    some(nc::MESH_EVENT_N, &[mesh_event_byte], format!("mesh_event_n = {mesh_event_n}"));
    some(nc::CHANNEL_N, &[cfg.channel_n], format!("channel_n = {}", cfg.channel_n));
    some(nc::TOPSP_INDEX, &[cfg.topsp_index], format!("topsp_index = {}", cfg.topsp_index));
    some(nc::SEND_CREDITS, &cfg.send_credits.to_le_bytes(), format!("send_credits = {}", cfg.send_credits));
    // channel_ids in rows of 8; the used ids are a prefix, the rest 0xff.
    for chunk in 0..nc::CHANNEL_IDS_N / 8 {
        let lo = chunk * 8;
        let ids: Vec<u8> =
            (lo..lo + 8).map(|i| cfg.channel_ids.get(i).copied().unwrap_or(nc::CHANNEL_ID_UNUSED)).collect();
        let used: Vec<String> = cfg.channel_ids.iter().skip(lo).take(8).map(u8::to_string).collect();
        let meaning = match used.len() {
            0 => format!("channel_ids[{lo}..{}] unused (0xff)", lo + 8),
            8 => format!("channel_ids[{lo}..{}] = {}", lo + 8, used.join(", ")),
            n => format!("channel_ids[{lo}..{}] = {}; [{}..{}] unused (0xff)", lo + n, used.join(", "), lo + n, lo + 8),
        };
        some(nc::CHANNEL_IDS + lo, &ids, meaning);
    }
    zero(&mut rows, nc::RESERVED_A, nc::MESH_EVENTS - nc::RESERVED_A, "reserved");
    for (i, e) in cfg.mesh_events.iter().enumerate() {
        let at = nc::MESH_EVENTS + i * nc::MESH_EVENT_BYTES;
        let MeshEvent { peer, sema_index, target, bytes } = *e;
        let head = [peer.to_le_bytes().as_slice(), &sema_index.to_le_bytes(), &target.to_le_bytes()].concat();
        rows.push(Row {
            offset: at + nc::EVENT_PEER,
            bytes: Bytes::Some(head),
            meaning: format!("mesh_events[{i}]: peer {peer}, sema_index {sema_index}, target {target}"),
        });
        rows.push(Row {
            offset: at + nc::EVENT_BYTES,
            bytes: Bytes::Some(bytes.to_le_bytes().to_vec()),
            meaning: format!("mesh_events[{i}].bytes = {bytes}"),
        });
    }
    let unused = nc::MESH_EVENTS + mesh_event_n * nc::MESH_EVENT_BYTES;
    zero(
        &mut rows,
        unused,
        nc::RESERVED_B - unused,
        &format!("mesh_events[{mesh_event_n}..{}] unused", nc::MESH_EVENTS_N),
    );
    zero(&mut rows, nc::RESERVED_B, nc::BARRIER_CONFIGS - nc::RESERVED_B, "reserved");
    barrier_rows(&mut rows, &cfg.barrier, arch);
    let bb = nc::BASIC_BLOCK_CONFIGS;
    zero(&mut rows, bb, nc::BB_SWITCH_COMPLETED, "basic_block_configs reserved");
    for (offset, name, value) in [
        (nc::BB_SWITCH_COMPLETED, "basic_block_configs.switch_completed", cfg.basic_block.switch_completed),
        (nc::BB_PRING_BASE_ADDR, "basic_block_configs.pring_base_addr", cfg.basic_block.pring_base_addr),
    ] {
        rows.push(Row {
            offset: bb + offset,
            bytes: Bytes::Some(value.to_le_bytes().to_vec()),
            meaning: format!("{name} = {}", address(value, arch)),
        });
    }
    let total = cfg.basic_block.pring_total_desc_num;
    rows.push(Row {
        offset: bb + nc::BB_PRING_TOTAL_DESC_NUM,
        bytes: Bytes::Some(total.to_le_bytes().to_vec()),
        meaning: format!("basic_block_configs.pring_total_desc_num = {total}"),
    });
    zero(&mut rows, nc::RESERVED_C, nc::FLAGS - nc::RESERVED_C, "reserved");
    let f = cfg.flags;
    let flag_byte = [(f.leader, nc::FLAG_LEADER), (f.dbg_cc_nop, nc::FLAG_DBG_CC_NOP), (f.host_cc, nc::FLAG_HOST_CC)]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0u8, |acc, (_, bit)| acc | bit);
    let names: Vec<&str> = [(f.leader, "leader"), (f.dbg_cc_nop, "dbg_cc_nop"), (f.host_cc, "host_cc")]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
    let set = if names.is_empty() { "none set".to_owned() } else { names.join(", ") };
    rows.push(Row {
        offset: nc::FLAGS,
        bytes: Bytes::Some(vec![flag_byte]),
        meaning: format!("flags = {flag_byte:#04x}: {set}"),
    });
    rows
}

/// The rows of `barrier_configs` (296 bytes at +2200).
fn barrier_rows(rows: &mut Vec<Row>, barrier: &BarrierConfigs, arch: &ArchParams) {
    let base = nc::BARRIER_CONFIGS;
    let mut push = |offset: usize, bytes: Vec<u8>, meaning: String| {
        rows.push(Row { offset, bytes: Bytes::Some(bytes), meaning });
    };
    let tag = match barrier {
        BarrierConfigs::Host { barrier_start, barrier_done } => {
            for (offset, name, value) in [
                (nc::HOST_BARRIER_START, "barrier_start", *barrier_start),
                (nc::HOST_BARRIER_DONE, "barrier_done", *barrier_done),
            ] {
                let meaning = format!("barrier_configs.host.{name} = {}", address(value, arch));
                push(base + offset, value.to_le_bytes().to_vec(), meaning);
            }
            let rest = base + nc::HOST_BARRIER_BYTES;
            zero(
                rows,
                rest,
                nc::BARRIER_UNION_BYTES - nc::HOST_BARRIER_BYTES,
                "barrier_configs.host unused union bytes",
            );
            0u32
        }
        BarrierConfigs::Device { steps } => {
            let step_n = u32::try_from(steps.len()).unwrap_or(u32::MAX);
            push(
                base + nc::DEVICE_STEP_N,
                step_n.to_le_bytes().to_vec(),
                format!("barrier_configs.device.step_n = {step_n}"),
            );
            zero(rows, base + nc::DEVICE_STEP_N + 4, nc::DEVICE_STEPS - 4, "barrier_configs.device reserved");
            for (s, step) in steps.iter().enumerate() {
                step_rows(rows, base + nc::DEVICE_STEPS + s * nc::BARRIER_STEP_BYTES, s, step, arch);
            }
            let unused = base + nc::DEVICE_STEPS + steps.len() * nc::BARRIER_STEP_BYTES;
            if steps.len() < nc::DEVICE_STEPS_N {
                let meaning = format!("barrier_configs.device.steps[{}..{}] unused", steps.len(), nc::DEVICE_STEPS_N);
                zero(rows, unused, (nc::DEVICE_STEPS_N - steps.len()) * nc::BARRIER_STEP_BYTES, &meaning);
            }
            let rest = base + nc::DEVICE_RESERVED;
            zero(rows, rest, nc::BARRIER_UNION_BYTES - nc::DEVICE_RESERVED, "barrier_configs.device reserved");
            1u32
        }
    };
    let kind = if tag == 0 { "host" } else { "device" };
    rows.push(Row {
        offset: base + nc::EXECUTE_DEVICE_BARRIER,
        bytes: Bytes::Some(tag.to_le_bytes().to_vec()),
        meaning: format!("barrier_configs.execute_device_barrier = {tag} ({kind})"),
    });
}

/// The rows of one `barrier_step_config` (52 bytes).
fn step_rows(rows: &mut Vec<Row>, at: usize, s: usize, step: &BarrierStep, arch: &ArchParams) {
    let BarrierStep { m2s_val, s2m_val, barrier_sema, target_sema_val } = *step;
    let name = format!("barrier_configs.device.steps[{s}]");
    rows.push(Row {
        offset: at + nc::STEP_M2S_VAL,
        bytes: Bytes::Some([m2s_val.to_le_bytes(), s2m_val.to_le_bytes()].concat()),
        meaning: format!("{name}: m2s_val {m2s_val}, s2m_val {s2m_val}"),
    });
    for (i, sema) in barrier_sema.iter().enumerate() {
        rows.push(Row {
            offset: at + nc::STEP_BARRIER_SEMA + 8 * i,
            bytes: Bytes::Some(sema.to_le_bytes().to_vec()),
            meaning: format!("{name}.barrier_sema[{i}] = {}", address(*sema, arch)),
        });
    }
    for pair in 0..2 {
        let (a, b) = (target_sema_val[2 * pair], target_sema_val[2 * pair + 1]);
        rows.push(Row {
            offset: at + nc::STEP_TARGET_SEMA_VAL + 8 * pair,
            bytes: Bytes::Some([a.to_le_bytes(), b.to_le_bytes()].concat()),
            meaning: format!("{name}.target_sema_val[{}..{}] = {a}, {b}", 2 * pair, 2 * pair + 2),
        });
    }
}

/// Appends a zero-run row, unless the run is empty.
fn zero(rows: &mut Vec<Row>, offset: usize, len: usize, meaning: &str) {
    if len > 0 {
        rows.push(Row { offset, bytes: Bytes::Zero(len), meaning: meaning.to_owned() });
    }
}

/// An address as `0x%016x`, followed by what it names, if anything.
fn address(addr: u64, arch: &ArchParams) -> String {
    match address_name(addr, arch) {
        Some(name) => format!("{addr:#018x} ({name})"),
        None => format!("{addr:#018x}"),
    }
}

/// What an address names: a semaphore (`TOP_SP 0 INC sem 1`) or a TOP_SP's
/// load address (`TOP_SP 0 CTRL SPAD`).
fn address_name(addr: u64, arch: &ArchParams) -> Option<String> {
    if let Some((topsp, window, index)) = arch.sem_of_addr(addr) {
        return Some(format!("TOP_SP {topsp} {window} sem {index}"));
    }
    (0..arch.topsp_n).find_map(|t| {
        let region = if addr == arch.ctrl_spad_addr(t) {
            "CTRL SPAD"
        } else if addr == arch.slot_spad_addr(t) {
            "SLOT SPAD"
        } else if addr == arch.pring_addr(t) {
            "persistent ring"
        } else {
            return None;
        };
        Some(format!("TOP_SP {t} {region}"))
    })
}

/// The mesh view of the union.
fn mesh_view(op: &CcOp) -> String {
    format!("sema_shift_offset {}, sema_mask {:#06x}", op.sema_shift_offset(), op.sema_mask())
}

/// A channel bitmap as a set: `{0,1,2,3}`.
fn channel_set(list: u32) -> String {
    let ids: Vec<String> = (0..32).filter(|c| list & (1 << c) != 0).map(|c: u32| c.to_string()).collect();
    format!("{{{}}}", ids.join(","))
}

/// Bytes as lower-case hex pairs separated by spaces.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

/// The bytes column of a value that could not be packed.
fn unknown_bytes(n: usize) -> String {
    vec!["--"; n].join(" ")
}

/// A `u32` header field of the SLOT SPAD image.
fn row_u32(out: &mut String, offset: usize, value: usize, name: &str) {
    let bytes = u32::try_from(value).map(|v| hex(&v.to_le_bytes())).unwrap_or_else(|_| unknown_bytes(4));
    row(out, offset as u64, &bytes, &format!("{name} = {value}"));
}

/// One `offset | bytes | meaning` line.
fn row(out: &mut String, offset: u64, bytes: &str, meaning: &str) {
    line(out, &format!("{offset:#06x} | {bytes:<BYTES_COLUMN$} | {meaning}"));
}

/// Appends a line.
fn line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccc_ir::arch::Arch;
    use ccc_ir::wire::neff_configs::{BasicBlockConfigs, NEFF_CONFIGS_BYTES, NeffFlags};
    use ccc_ir::wire::tp::TpIncStep;

    fn cayman() -> &'static ArchParams {
        Arch::Cayman.params()
    }

    /// `algo_type=1, algo_sub_type=3, trigger_next=1`: the contract's check value.
    fn canonical() -> CcOp {
        CcOp { algo_type: 1, algo_sub_type: 3, trigger_next: true, ..CcOp::default() }
    }

    #[test]
    fn ctrl_lines_are_offset_bytes_meaning() {
        let ring = CcOp { algo_type: 0, trigger_next: true, reporter: true, operand: 0x0f, ..CcOp::default() };
        let words = [
            (0, CtrlWord::Op(canonical())),
            (8, CtrlWord::Op(ring)),
            (16, CtrlWord::End { compl_addr: 0x82_8000_1804 }),
            (24, CtrlWord::Continue),
            (32, CtrlWord::Empty),
        ];
        let expected = "\
-- slot 0 --
0x0000 | 01 b1 00 00 00 00 00 00 | op 0: mesh, sub 3 (MESH_SWITCH), trigger_next, sema_shift_offset 0, sema_mask 0x0000
0x0008 | 01 80 01 00 0f 00 00 00 | op 1: ring, sub 0 (RING), trigger_next, reporter, channels {0,1,2,3}
0x0010 | 06 18 00 80 82 00 00 00 | END compl 0x0000008280001804 (TOP_SP 0 INC sem 1)
0x0018 | 00 00 00 00 fe ff fe ff | CONTINUE
0x0020 | 00 00 00 00 00 00 00 00 | empty
";
        assert_eq!(ctrl(&words, cayman()), expected);
    }

    #[test]
    fn ctrl_marks_each_slot_boundary() {
        let words: Vec<(u64, CtrlWord)> = (0..17).map(|i| (8 * i, CtrlWord::Empty)).collect();
        let out = ctrl(&words, cayman());
        let separators: Vec<&str> = out.lines().filter(|l| l.starts_with("--")).collect();
        assert_eq!(separators, ["-- slot 0 --", "-- slot 1 --", "-- slot 2 --"]);
        assert_eq!(out.lines().count(), 17 + 3);
    }

    #[test]
    fn op_meaning_names_every_flag_and_unknown_values() {
        let all = CcOp {
            algo_type: 1,
            algo_sub_type: 7,
            trigger_next: true,
            reporter: true,
            ring_wait_complete: true,
            ring_send_complete: true,
            safe_mode: true,
            unique_tensors: true,
            operand: CcOp::mesh_operand(5, 0x7f),
        };
        assert_eq!(
            op_meaning(4, &all),
            "op 4: mesh, sub 7 (unknown), trigger_next, reporter, ring_wait_complete, ring_send_complete, \
             safe_mode, unique_tensors, sema_shift_offset 5, sema_mask 0x007f"
        );
        let odd = CcOp { algo_type: 9, algo_sub_type: 2, operand: 0x007f_0005, ..CcOp::default() };
        assert_eq!(
            op_meaning(0, &odd),
            "op 0: algo_type 9 (unknown pattern), sub 2, channel_list 0x007f0005 / sema_shift_offset 5, sema_mask 0x007f"
        );
        let kanga = CcOp { algo_type: 0, algo_sub_type: 1, operand: 0x8000_0001, ..CcOp::default() };
        assert_eq!(op_meaning(2, &kanga), "op 2: ring, sub 1 (KANGARING), channels {0,31}");
    }

    #[test]
    fn end_marks_name_their_semaphore_only_when_there_is_one() {
        let named = CtrlWord::End { compl_addr: 0x82_8010_1808 };
        assert_eq!(word_meaning(&named, 0, cayman()), "END compl 0x0000008280101808 (TOP_SP 1 INC sem 2)");
        let bare = CtrlWord::End { compl_addr: 0x1000 };
        assert_eq!(word_meaning(&bare, 0, cayman()), "END compl 0x0000000000001000");
    }

    #[test]
    fn slot_dump_shows_header_index_padding_and_entries() {
        let spad = SlotSpad {
            records: vec![
                vec![TpIncStep { m2s: 3, s2m: 3, repeat: 4 }, TpIncStep { m2s: 0, s2m: 0, repeat: 1 }],
                vec![TpIncStep { m2s: 17, s2m: 0, repeat: 1 }],
                vec![TpIncStep { m2s: 0xff_ffff, s2m: 0xff_ffff, repeat: 0xffff }],
            ],
        };
        let expected = "\
0x0000 | 03 00 00 00             | record_n = 3
0x0004 | 04 00 00 00             | entry_n = 4
0x0008 | 00 00 02 00             | record 0: first_entry 0, entry_n 2
0x000c | 02 00 01 00             | record 1: first_entry 2, entry_n 1
0x0010 | 03 00 01 00             | record 2: first_entry 3, entry_n 1
0x0014 | 00 00 00 00             | padding
-- record 0 --
0x0018 | 03 00 00 03 00 00 04 00 | tp_inc_steps[0] = m2s 3, s2m 3, repeat 4
0x0020 | 00 00 00 00 00 00 01 00 | tp_inc_steps[1] = m2s 0, s2m 0, repeat 1
-- record 1 --
0x0028 | 11 00 00 00 00 00 01 00 | tp_inc_steps[0] = m2s 17, s2m 0, repeat 1
-- record 2 --
0x0030 | ff ff ff ff ff ff ff ff | tp_inc_steps[0] = m2s 16777215, s2m 16777215, repeat 65535
";
        assert_eq!(slot(&spad), expected);
    }

    fn sample_neff(barrier: BarrierConfigs) -> NeffConfigs {
        NeffConfigs {
            trigger: 0x82_8000_1000,
            trigger_next: 0x82_8000_1008,
            complete: 0x82_8000_1004,
            complete_prev: 0x82_8000_100c,
            tpb_stop_sema: 0x82_8000_1010,
            ctrl_spad: 0x82_8002_0000,
            slot_spad_base: [0x82_8004_0000, 0, 0, 0, 0, 0],
            op_num: 2,
            function_n: 1,
            tpb_compl_addr_num: 1,
            channel_n: 2,
            topsp_index: 0,
            send_credits: 4,
            channel_ids: vec![0, 4],
            mesh_events: vec![MeshEvent { peer: 3, sema_index: 88, target: 2, bytes: 65536 }],
            barrier,
            basic_block: BasicBlockConfigs {
                switch_completed: 0x82_8000_101c,
                pring_base_addr: 0x82_8008_0000,
                pring_total_desc_num: 40,
            },
            flags: NeffFlags { leader: true, dbg_cc_nop: false, host_cc: false },
        }
    }

    /// The rows must tile the block: contiguous, in order, 3592 bytes.
    fn assert_tiles(cfg: &NeffConfigs) {
        let rows = neff_rows(cfg, cayman());
        let mut at = 0;
        for r in &rows {
            assert_eq!(r.offset, at, "row {:?} starts at {:#x}, expected {at:#x}", r.meaning, r.offset);
            assert!(matches!(r.bytes, Bytes::Zero(_)) || r.bytes.len() <= 8, "{}", r.meaning);
            at += r.bytes.len();
        }
        assert_eq!(at, NEFF_CONFIGS_BYTES);
    }

    #[test]
    fn neff_rows_tile_the_block() {
        let host = BarrierConfigs::Host { barrier_start: 0x82_8000_1014, barrier_done: 0x82_8000_1018 };
        assert_tiles(&sample_neff(host));
        let step = BarrierStep {
            m2s_val: 1,
            s2m_val: 1,
            barrier_sema: [0x82_8000_1020, 0, 0, 0],
            target_sema_val: [1, 0, 0, 0],
        };
        assert_tiles(&sample_neff(BarrierConfigs::Device { steps: vec![step, step] }));
        let mut full = sample_neff(BarrierConfigs::Device { steps: vec![step; 4] });
        full.channel_ids = (0..32).collect();
        full.channel_n = 32;
        full.mesh_events = vec![MeshEvent::default(); nc::MESH_EVENTS_N];
        assert_tiles(&full);
    }

    #[test]
    fn neff_dump_names_fields_and_addresses() {
        let host = BarrierConfigs::Host { barrier_start: 0x82_8000_1014, barrier_done: 0x82_8000_1018 };
        let out = neff(&sample_neff(host), cayman());
        for expected in [
            "0x0000 | 00 10 00 80 82 00 00 00 | trigger = 0x0000008280001000 (TOP_SP 0 READ sem 0)",
            "0x0028 | 00 00 02 80 82 00 00 00 | ctrl_spad = 0x0000008280020000 (TOP_SP 0 CTRL SPAD)",
            "0x0060 | 02 00 00 00             | op_num = 2",
            "0x006c | 00 04 ff ff ff ff ff ff | channel_ids[0..2] = 0, 4; [2..8] unused (0xff)",
            "0x0074 | ff ff ff ff ff ff ff ff | channel_ids[8..16] unused (0xff)",
            "0x0090 | 03 00 00 00 58 00 02 00 | mesh_events[0]: peer 3, sema_index 88, target 2",
            "0x00a0 | (1712 zero bytes)       | mesh_events[1..108] unused",
            "0x0898 | 14 10 00 80 82 00 00 00 | barrier_configs.host.barrier_start = 0x0000008280001014 (TOP_SP 0 READ sem 5)",
            "0x09bc | 00 00 00 00             | barrier_configs.execute_device_barrier = 0 (host)",
            "0x0e07 | 01                      | flags = 0x01: leader",
        ] {
            assert!(out.lines().any(|l| l == expected), "missing line {expected:?} in\n{out}");
        }
    }
}
