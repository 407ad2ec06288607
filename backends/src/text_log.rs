//! The vendor runtime's log lines, byte for byte, so that a user can `diff`
//! ccc's view of an image against a runtime log.
//!
//! - CTRL mark, one line per op entry (`libnrt` `encd_dma_mark_end`, format
//!   string verbatim from the seed):
//!   `"[nec_dev %2u, TOPSP %d, op %d] CTRL mark -alg %d-subalg %d-trignext %d-chlist %d-reporter %d-sema_shift_offset %u-sema_mask %u-safe_mode %d"`.
//! - `tp_inc_steps`, one line per entry: `"tp_inc_steps[%d] = m2s %d, s2m %d, repeat %d"`.
//!
//! The C conversions are honoured, not prettified: `%2u` pads the device
//! index to width 2 (`[nec_dev  0, ...`), and `%d` prints `channel_list` as a
//! signed int, so a list with channel 31 reads negative, as the runtime's does.

use ccc_ir::wire::slot::{CcOp, SlotWord};
use ccc_ir::wire::slot_spad::SlotSpad;
use ccc_ir::wire::tp::TpIncStep;

/// The CTRL-mark log of a CTRL SPAD image decoded word by word: one line per
/// op entry, `op` counting op entries from 0; marks print nothing.
pub fn ctrl(words: &[(u64, SlotWord)], device: u32, topsp: u32) -> String {
    let mut out = String::new();
    let ops = words.iter().filter_map(|(_, w)| match w {
        SlotWord::Op(op) => Some(op),
        _ => None,
    });
    for (index, op) in ops.enumerate() {
        out.push_str(&ctrl_mark(device, topsp, index, op));
        out.push('\n');
    }
    out
}

/// One CTRL-mark line (without its newline).
pub fn ctrl_mark(device: u32, topsp: u32, op_index: usize, op: &CcOp) -> String {
    format!(
        "[nec_dev {device:>2}, TOPSP {topsp}, op {op_index}] CTRL mark -alg {alg}-subalg {subalg}-trignext {trignext}\
         -chlist {chlist}-reporter {reporter}-sema_shift_offset {shift}-sema_mask {mask}-safe_mode {safe}",
        topsp = topsp.cast_signed(),
        alg = op.algo_type,
        subalg = op.algo_sub_type,
        trignext = u8::from(op.trigger_next),
        chlist = op.channel_list().cast_signed(),
        reporter = u8::from(op.reporter),
        shift = op.sema_shift_offset(),
        mask = op.sema_mask(),
        safe = u8::from(op.safe_mode),
    )
}

/// The `tp_inc_steps` log of a SLOT SPAD image: each record's entries in
/// chain order, the index counting within the record as the runtime's does.
pub fn slot(spad: &SlotSpad) -> String {
    let mut out = String::new();
    for entries in &spad.records {
        for (index, step) in entries.iter().enumerate() {
            out.push_str(&tp_inc_step(index, step));
            out.push('\n');
        }
    }
    out
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
            ctrl(&[(0, SlotWord::Op(op))], 0, 0),
            "[nec_dev  0, TOPSP 0, op 0] CTRL mark -alg 1-subalg 3-trignext 1-chlist 0-reporter 0\
             -sema_shift_offset 0-sema_mask 0-safe_mode 0\n"
        );
    }

    #[test]
    fn marks_print_nothing_and_ops_are_counted() {
        let ring = CcOp { reporter: true, safe_mode: true, operand: 0x0f, ..CcOp::default() };
        let mesh = CcOp { algo_type: 1, algo_sub_type: 1, operand: CcOp::mesh_operand(88, 0x7f), ..CcOp::default() };
        let words = [
            (0, SlotWord::Op(ring)),
            (8, SlotWord::Continue),
            (16, SlotWord::Op(mesh)),
            (24, SlotWord::End { compl_addr: 0x82_8000_1804 }),
            (32, SlotWord::Empty),
        ];
        let expected = "\
[nec_dev 12, TOPSP 3, op 0] CTRL mark -alg 0-subalg 0-trignext 0-chlist 15-reporter 1-sema_shift_offset 15-sema_mask 0-safe_mode 1
[nec_dev 12, TOPSP 3, op 1] CTRL mark -alg 1-subalg 1-trignext 0-chlist 8323160-reporter 0-sema_shift_offset 88-sema_mask 127-safe_mode 0
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
    fn tp_inc_steps_count_within_each_record() {
        let spad = SlotSpad {
            records: vec![
                vec![TpIncStep { m2s: 3, s2m: 3, repeat: 4 }, TpIncStep { m2s: 0, s2m: 1, repeat: 1 }],
                vec![TpIncStep { m2s: 2, s2m: 0, repeat: 65535 }],
            ],
        };
        let expected = "\
tp_inc_steps[0] = m2s 3, s2m 3, repeat 4
tp_inc_steps[1] = m2s 0, s2m 1, repeat 1
tp_inc_steps[0] = m2s 2, s2m 0, repeat 65535
";
        assert_eq!(slot(&spad), expected);
    }
}
