//! The vendor runtime's log lines, byte for byte, so that a user can `diff`
//! ccc's view of an image against a runtime log.
//!
//! The CTRL SPAD log ([`ctrl`]) prints, in image order, what `libnrt`'s
//! `encd_dma_mark_end` logs while it packs the chain (seed 000 §5, seed 001
//! §2.2 and §2.7):
//!
//! - an op entry: the CTRL-mark line, format string verbatim from the seed
//!   (0x804088), [`CTRL_MARK`]:
//!   `"[nec_dev %2u, TOPSP %d, op %d] CTRL mark -alg %d-subalg %d-trignext %d-chlist %d-reporter %d-sema_shift_offset %u-sema_mask %u-safe_mode %d"`;
//! - the op entry right after a CONTINUE mark (the first word of the next
//!   slot): the SLOT-CONTINUE variant (0x804198), [`SLOT_CONTINUE_MARK`],
//!   which drops the reporter field:
//!   `"[nec_dev %2u, TOPSP %d, op %d] SLOT CONTINUE mark -alg %d-subalg %d-trignext %d-chlist %d-sema_shift_offset %u-sema_mask %u-safe_mode %d"`;
//! - a CONTINUE mark: `"Adding CONTINUE mark"` (0x8029e0);
//! - an END mark: `"Adding END mark with compl address 0x%lx"` (0x802a78),
//!   the completion address without the mark's tag bits;
//! - an empty word: nothing.
//!
//! Where the seeds disagree or are silent (`docs/wire-format.md` §11): the
//! two seeds quote the CTRL-mark string differently (seed 001 has a space
//! before `-reporter`); ccc follows seed 000, the descriptor's own page,
//! which quotes it byte-anchored at 0x804088 with no space. Neither seed
//! quotes the SLOT-CONTINUE string: seed 000 names it ("SLOT CONTINUE
//! mark", the label of the 0x804198 `nlog_write`) and says it is the
//! CTRL-mark line without the reporter field, and that is the line ccc
//! prints. The multi-function variants (0x804490 / 0x804538) are not quoted
//! either and are not printed.
//!
//! The SLOT SPAD log ([`slot`]) prints one `"tp_inc_steps[%d] = m2s %d, s2m
//! %d, repeat %d"` line per entry (0x804248), the index counting within its
//! record. Before each record's entries comes a label line, ccc's own (the
//! runtime prints no such line; it logs the entries beside the op they
//! belong to): `[nec_dev %2u, TOPSP %d, op %d] tp_inc_steps: %d entries`,
//! the CTRL-mark prefix, where record `op` of a SLOT SPAD is op entry `op` of
//! the same TOP_SP's CTRL SPAD log, so the two logs read side by side;
//! `grep 'tp_inc_steps\['` keeps the runtime's lines alone.
//!
//! A `neff_configs` block has no log: the runtime logs none of its fields.
//!
//! The C conversions are honoured, not prettified: `%2u` pads the device
//! index to width 2 (`[nec_dev  0, ...`), `%d` prints `channel_list` as a
//! signed int, so a list with channel 31 reads negative, as the runtime's
//! does, and `%lx` is lower-case hex without padding.

use ccc_ir::enums::AlgType;
use ccc_ir::spec::Leg;
use ccc_ir::wire::ctrl_word::{CcOp, CtrlWord};
use ccc_ir::wire::slot_spad::SlotSpad;
use ccc_ir::wire::tp::TpIncStep;

/// The CTRL-mark format string (seed 000 §5, 0x804088), as a reference.
pub const CTRL_MARK: &str = "[nec_dev %2u, TOPSP %d, op %d] CTRL mark -alg %d-subalg %d-trignext %d-chlist %d\
                             -reporter %d-sema_shift_offset %u-sema_mask %u-safe_mode %d";

/// The SLOT-CONTINUE variant (0x804198): the CTRL-mark line without the
/// reporter field, for the op entry after a CONTINUE mark.
pub const SLOT_CONTINUE_MARK: &str = "[nec_dev %2u, TOPSP %d, op %d] SLOT CONTINUE mark -alg %d-subalg %d\
                                      -trignext %d-chlist %d-sema_shift_offset %u-sema_mask %u-safe_mode %d";

/// The chaining line for a CONTINUE mark (seed 001 §2.7, 0x8029e0).
pub const ADDING_CONTINUE: &str = "Adding CONTINUE mark";

/// The chaining line for an END mark (seed 001 §2.7, 0x802a78).
pub const ADDING_END: &str = "Adding END mark with compl address 0x%lx";

/// The log of a CTRL SPAD image decoded word by word, one line per word
/// that the runtime logs (see the module docs): `op` counts op entries from
/// 0; an op entry right after a CONTINUE mark gets the SLOT-CONTINUE line.
pub fn ctrl(words: &[(u64, CtrlWord)], device: u32, topsp: u32) -> String {
    let mut out = String::new();
    let mut op_index = 0usize;
    let mut after_continue = false;
    for (_, word) in words {
        let line = match word {
            CtrlWord::Op(op) => {
                let line = if after_continue {
                    slot_continue_mark(device, topsp, op_index, op)
                } else {
                    ctrl_mark(device, topsp, op_index, op)
                };
                op_index += 1;
                Some(line)
            }
            CtrlWord::Continue => Some(ADDING_CONTINUE.to_owned()),
            CtrlWord::End { compl_addr } => Some(adding_end(*compl_addr)),
            CtrlWord::Empty => None,
        };
        after_continue = matches!(word, CtrlWord::Continue);
        if let Some(line) = line {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// One CTRL-mark line (without its newline).
pub fn ctrl_mark(device: u32, topsp: u32, op_index: usize, op: &CcOp) -> String {
    mark_line("CTRL mark", device, topsp, op_index, op, Some(op.reporter))
}

/// One SLOT-CONTINUE line (without its newline): the CTRL-mark line's
/// fields but `reporter`.
pub fn slot_continue_mark(device: u32, topsp: u32, op_index: usize, op: &CcOp) -> String {
    mark_line("SLOT CONTINUE mark", device, topsp, op_index, op, None)
}

/// The two mark lines differ only in their label and in whether the
/// reporter field is there.
fn mark_line(label: &str, device: u32, topsp: u32, op_index: usize, op: &CcOp, reporter: Option<bool>) -> String {
    let reporter = reporter.map_or_else(String::new, |r| format!("-reporter {}", u8::from(r)));
    format!(
        "[nec_dev {device:>2}, TOPSP {topsp}, op {op_index}] {label} -alg {alg}-subalg {subalg}-trignext {trignext}\
         -chlist {chlist}{reporter}-sema_shift_offset {shift}-sema_mask {mask}-safe_mode {safe}",
        topsp = topsp.cast_signed(),
        alg = op.algo_type,
        subalg = op.algo_sub_type,
        trignext = u8::from(op.trigger_next),
        chlist = op.channel_list().cast_signed(),
        shift = op.sema_shift_offset(),
        mask = op.sema_mask(),
        safe = u8::from(op.safe_mode),
    )
}

/// The END mark's chaining line (without its newline): `%lx` of the
/// completion address.
pub fn adding_end(compl_addr: u64) -> String {
    format!("Adding END mark with compl address {compl_addr:#x}")
}

/// The runtime's per-leg selection line of a hierarchical collective
/// (seed 001 §2.7: "Hier algorithm selections - alg_intra_allg …
/// alg_inter_allr … alg_inter_redsct …"), one field per leg, each with the
/// algorithm `legs` gives it in ccc's spelling, `-` for a leg the op does
/// not use.
///
/// The seed quotes the prefix and three of the five field names, not the
/// whole string: the two other names (`alg_intra_redsct`,
/// `alg_inter_allg`), the order (the seed's three keep their relative
/// order) and the values' spelling are \[project\] (`docs/wire-format.md`
/// §11). The line is printed from a compile (`ccc verify`, `ccc compile`),
/// never from an image: a CTRL SPAD image does not tell a Hier program
/// from a flat one (`docs/wire-format.md` §12).
pub fn hier_selections(legs: &[(Leg, AlgType)]) -> String {
    let mut out = String::from("Hier algorithm selections -");
    for (name, leg) in HIER_FIELDS {
        let alg = legs.iter().find(|(l, _)| *l == leg).map_or("-", |(_, a)| a.name());
        out.push(' ');
        out.push_str(name);
        out.push(' ');
        out.push_str(alg);
    }
    out
}

/// The selection line's fields, in its order.
const HIER_FIELDS: [(&str, Leg); 5] = [
    ("alg_intra_allg", Leg::IntraAllGather),
    ("alg_intra_redsct", Leg::IntraReduceScatter),
    ("alg_inter_allg", Leg::InterAllGather),
    ("alg_inter_allr", Leg::InterAllReduce),
    ("alg_inter_redsct", Leg::InterReduceScatter),
];

/// The `tp_inc_steps` log of a SLOT SPAD image: each record's label line
/// ([`record_label`]), then its entries in chain order, the index counting
/// within the record as the runtime's does.
pub fn slot(spad: &SlotSpad, device: u32, topsp: u32) -> String {
    let mut out = String::new();
    for (record, entries) in spad.records.iter().enumerate() {
        out.push_str(&record_label(device, topsp, record, entries.len()));
        out.push('\n');
        for (index, step) in entries.iter().enumerate() {
            out.push_str(&tp_inc_step(index, step));
            out.push('\n');
        }
    }
    out
}

/// The label line before a SLOT SPAD record's entries (without its
/// newline): the CTRL-mark prefix of the op entry the record belongs to, and
/// how many entries follow. ccc's own line; see the module docs.
pub fn record_label(device: u32, topsp: u32, record: usize, entry_n: usize) -> String {
    format!(
        "[nec_dev {device:>2}, TOPSP {topsp}, op {record}] tp_inc_steps: {}",
        ccc_ir::noun::count(entry_n, "entry"),
        topsp = topsp.cast_signed(),
    )
}

/// One `tp_inc_steps` line (without its newline).
pub fn tp_inc_step(index: usize, step: &TpIncStep) -> String {
    format!("tp_inc_steps[{index}] = m2s {}, s2m {}, repeat {}", step.m2s, step.s2m, step.repeat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_word_logs_in_the_vendor_wording() {
        let op = CcOp { algo_type: 1, algo_sub_type: 3, trigger_next: true, ..CcOp::default() };
        // The seed's format string filled in by hand: `%2u` pads the device.
        assert_eq!(
            ctrl(&[(0, CtrlWord::Op(op))], 0, 0),
            "[nec_dev  0, TOPSP 0, op 0] CTRL mark -alg 1-subalg 3-trignext 1-chlist 0-reporter 0\
             -sema_shift_offset 0-sema_mask 0-safe_mode 0\n"
        );
    }

    #[test]
    fn marks_print_their_chaining_lines_and_ops_are_counted() {
        let ring = CcOp { reporter: true, safe_mode: true, operand: 0x0f, ..CcOp::default() };
        let mesh = CcOp { algo_type: 1, algo_sub_type: 1, operand: CcOp::mesh_operand(88, 0x7f), ..CcOp::default() };
        let words = [
            (0, CtrlWord::Op(ring)),
            (8, CtrlWord::Continue),
            (16, CtrlWord::Op(mesh)),
            (24, CtrlWord::End { compl_addr: 0x82_8000_1804 }),
            (32, CtrlWord::Empty),
        ];
        // Only the entry right after the mark is a SLOT-CONTINUE line.
        let two = [(0, CtrlWord::Continue), (8, CtrlWord::Op(ring)), (16, CtrlWord::Op(ring))];
        let lines: Vec<String> = ctrl(&two, 0, 0).lines().map(str::to_owned).collect();
        assert!(lines[1].contains("] SLOT CONTINUE mark -alg 0-"), "{lines:?}");
        assert!(lines[2].contains("] CTRL mark -alg 0-"), "{lines:?}");
        assert_eq!(adding_end(0x82_80A0_1804), "Adding END mark with compl address 0x8280a01804");
        // The seeds' format strings filled in by hand: the entry after the
        // CONTINUE mark takes the SLOT-CONTINUE line (no reporter), each mark
        // its "Adding ..." line, the END address in `%lx`.
        let expected = "\
[nec_dev 12, TOPSP 3, op 0] CTRL mark -alg 0-subalg 0-trignext 0-chlist 15-reporter 1-sema_shift_offset 15-sema_mask 0-safe_mode 1
Adding CONTINUE mark
[nec_dev 12, TOPSP 3, op 1] SLOT CONTINUE mark -alg 1-subalg 1-trignext 0-chlist 8323160-sema_shift_offset 88-sema_mask 127-safe_mode 0
Adding END mark with compl address 0x8280001804
";
        assert_eq!(ctrl(&words, 12, 3), expected);
    }

    #[test]
    fn c_conversions_are_honoured() {
        let op = CcOp { operand: 0x8000_0000, ..CcOp::default() };
        let line = ctrl_mark(100, u32::MAX, 7, &op);
        assert!(line.starts_with("[nec_dev 100, TOPSP -1, op 7] "), "{line}");
        assert!(line.contains("-chlist -2147483648-"), "{line}");
        assert!(line.contains("-sema_shift_offset 0-sema_mask 32768-"), "{line}");
    }

    #[test]
    fn hier_selections_name_every_leg() {
        let legs = [
            (Leg::IntraReduceScatter, AlgType::Ring),
            (Leg::InterAllReduce, AlgType::SingleCycleRing),
            (Leg::IntraAllGather, AlgType::Kangaring),
        ];
        // Seed 001 §2.7's prefix and field names, the rest as documented.
        assert_eq!(
            hier_selections(&legs),
            "Hier algorithm selections - alg_intra_allg Kangaring alg_intra_redsct Ring alg_inter_allg - \
             alg_inter_allr SingleCycleRing alg_inter_redsct -"
        );
    }

    #[test]
    fn tp_inc_steps_count_within_each_record() {
        let spad = SlotSpad {
            records: vec![
                vec![TpIncStep { m2s: 3, s2m: 3, repeat: 4 }, TpIncStep { m2s: 0, s2m: 1, repeat: 1 }],
                vec![TpIncStep { m2s: 2, s2m: 0, repeat: 65535 }],
            ],
        };
        // Each record is labelled with the CTRL-mark prefix of its op.
        let expected = "\
[nec_dev 12, TOPSP 3, op 0] tp_inc_steps: 2 entries
tp_inc_steps[0] = m2s 3, s2m 3, repeat 4
tp_inc_steps[1] = m2s 0, s2m 1, repeat 1
[nec_dev 12, TOPSP 3, op 1] tp_inc_steps: 1 entry
tp_inc_steps[0] = m2s 2, s2m 0, repeat 65535
";
        assert_eq!(slot(&spad, 12, 3), expected);
        assert_eq!(slot(&spad, 0, 0).lines().next(), Some("[nec_dev  0, TOPSP 0, op 0] tp_inc_steps: 2 entries"));
    }
}
