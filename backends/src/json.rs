//! JSON views, pretty-printed with a 2-space indent.
//!
//! The CTRL SPAD view is the vendor dumper's shape (`interface.md`,
//! `ccc decode --format json`): an array with one element per 8-byte word,
//! an op entry as `{"offset", "header": {"cc_op"}, "cc_op": {...}}` with
//! both union views always (as the dumper prints them) and flags as 0/1,
//! a mark as `{"offset", "mark": "end" | "continue" | "empty"}` with the END
//! mark's `compl_addr` as an address object.
//!
//! Key order is part of the format, so every view is a `#[derive(Serialize)]`
//! struct whose field order is the key order (serde_json's own `Map` would
//! sort the keys). Every address is the vendor's `addr_t` rendering
//! (`ncfw_log_addr`, seed 001 §2.1): `{"soc_addr": "0x%016lX"}`, 16
//! upper-case hex digits after a lower-case `0x`.

use ccc_ir::wire::ctrl_word::{CcOp, CtrlWord};
use ccc_ir::wire::neff_configs::{BarrierConfigs, BarrierStep, MeshEvent, NeffConfigs};
use ccc_ir::wire::slot_spad::SlotSpad;
use ccc_ir::wire::tp::TpIncStep;
use serde::Serialize;

/// A JSON rendering failure (serde_json refused a value; the views here
/// hold only numbers and strings, so this does not happen in practice).
#[derive(Debug, thiserror::Error)]
#[error("cannot render JSON: {0}")]
pub struct Error(#[from] serde_json::Error);

/// The CTRL SPAD view: one element per word, in order.
///
/// # Errors
///
/// [`Error`] if serde_json refuses a value.
pub fn ctrl(words: &[(u64, CtrlWord)]) -> Result<String, Error> {
    let entries: Vec<CtrlEntry> = words.iter().map(|&(offset, word)| CtrlEntry::new(offset, word)).collect();
    pretty(&entries)
}

/// The SLOT SPAD view:
/// `{"record_n", "entry_n", "records": [[{"m2s", "s2m", "repeat"}, ...], ...]}`.
///
/// # Errors
///
/// [`Error`] if serde_json refuses a value.
pub fn slot(spad: &SlotSpad) -> Result<String, Error> {
    let view = SlotView {
        record_n: spad.records.len(),
        entry_n: spad.records.iter().map(Vec::len).sum(),
        records: spad.records.iter().map(|r| r.iter().map(StepView::from).collect()).collect(),
    };
    pretty(&view)
}

/// The `neff_configs` view: the typed block with the field names of
/// `docs/wire-format.md` §8, in offset order.
///
/// # Errors
///
/// [`Error`] if serde_json refuses a value.
pub fn neff(cfg: &NeffConfigs) -> Result<String, Error> {
    pretty(&NeffView::from(cfg))
}

fn pretty<T: Serialize>(value: &T) -> Result<String, Error> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}

/// An address as the vendor's dumper spells an `addr_t`:
/// `{"soc_addr":"0x%016lX"}` (the `0x` is literal text in the C format, so
/// it stays lower-case; the digits are upper-case).
#[derive(Serialize)]
struct Addr {
    soc_addr: String,
}

fn addr(a: u64) -> Addr {
    Addr { soc_addr: format!("0x{a:016X}") }
}

/// One element of the CTRL SPAD array.
#[derive(Serialize)]
#[serde(untagged)]
enum CtrlEntry {
    Op(OpEntry),
    Mark(MarkEntry),
}

impl CtrlEntry {
    fn new(offset: u64, word: CtrlWord) -> Self {
        let mark = |mark, compl_addr| CtrlEntry::Mark(MarkEntry { offset, mark, compl_addr });
        match word {
            CtrlWord::Op(op) => {
                CtrlEntry::Op(OpEntry { offset, header: Header { cc_op: 1 }, cc_op: CcOpView::from(&op) })
            }
            CtrlWord::End { compl_addr } => mark("end", Some(addr(compl_addr))),
            CtrlWord::Continue => mark("continue", None),
            CtrlWord::Empty => mark("empty", None),
        }
    }
}

#[derive(Serialize)]
struct OpEntry {
    offset: u64,
    header: Header,
    cc_op: CcOpView,
}

#[derive(Serialize)]
struct Header {
    cc_op: u8,
}

/// The vendor dumper's keys, in its order; `safe_mode` and `unique_tensors`
/// (which the dumper drops) sit after the flags it prints.
#[derive(Serialize)]
struct CcOpView {
    algo_type: u8,
    algo_sub_type: u8,
    trigger_next: u8,
    reporter: u8,
    ring_wait_complete: u8,
    ring_send_complete: u8,
    safe_mode: u8,
    unique_tensors: u8,
    ring: RingView,
    mesh: MeshView,
}

impl From<&CcOp> for CcOpView {
    fn from(op: &CcOp) -> Self {
        // Exhaustive destructure: a new field breaks the build here.
        let CcOp {
            algo_type,
            algo_sub_type,
            trigger_next,
            reporter,
            ring_wait_complete,
            ring_send_complete,
            safe_mode,
            unique_tensors,
            operand: _,
        } = *op;
        CcOpView {
            algo_type,
            algo_sub_type,
            trigger_next: u8::from(trigger_next),
            reporter: u8::from(reporter),
            ring_wait_complete: u8::from(ring_wait_complete),
            ring_send_complete: u8::from(ring_send_complete),
            safe_mode: u8::from(safe_mode),
            unique_tensors: u8::from(unique_tensors),
            ring: RingView { channel_list: op.channel_list() },
            mesh: MeshView { sema_shift_offset: op.sema_shift_offset(), sema_mask: op.sema_mask() },
        }
    }
}

#[derive(Serialize)]
struct RingView {
    channel_list: u32,
}

#[derive(Serialize)]
struct MeshView {
    sema_shift_offset: u16,
    sema_mask: u16,
}

#[derive(Serialize)]
struct MarkEntry {
    offset: u64,
    mark: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    compl_addr: Option<Addr>,
}

#[derive(Serialize)]
struct SlotView {
    record_n: usize,
    entry_n: usize,
    records: Vec<Vec<StepView>>,
}

#[derive(Serialize)]
struct StepView {
    m2s: u32,
    s2m: u32,
    repeat: u16,
}

impl From<&TpIncStep> for StepView {
    fn from(&TpIncStep { m2s, s2m, repeat }: &TpIncStep) -> Self {
        StepView { m2s, s2m, repeat }
    }
}

#[derive(Serialize)]
struct NeffView {
    trigger: Addr,
    trigger_next: Addr,
    complete: Addr,
    complete_prev: Addr,
    tpb_stop_sema: Addr,
    ctrl_spad: Addr,
    slot_spad_base: Vec<Addr>,
    op_num: u32,
    function_n: u16,
    tpb_compl_addr_num: u8,
    mesh_event_n: usize,
    channel_n: u8,
    topsp_index: u8,
    send_credits: u16,
    channel_ids: Vec<u8>,
    mesh_events: Vec<MeshEventView>,
    barrier_configs: BarrierView,
    basic_block_configs: BasicBlockView,
    flags: FlagsView,
}

impl From<&NeffConfigs> for NeffView {
    fn from(cfg: &NeffConfigs) -> Self {
        // Exhaustive destructure: a new field breaks the build here.
        let NeffConfigs {
            trigger,
            trigger_next,
            complete,
            complete_prev,
            tpb_stop_sema,
            ctrl_spad,
            slot_spad_base,
            op_num,
            function_n,
            tpb_compl_addr_num,
            channel_n,
            topsp_index,
            send_credits,
            channel_ids,
            mesh_events,
            barrier,
            basic_block,
            flags,
        } = cfg;
        NeffView {
            trigger: addr(*trigger),
            trigger_next: addr(*trigger_next),
            complete: addr(*complete),
            complete_prev: addr(*complete_prev),
            tpb_stop_sema: addr(*tpb_stop_sema),
            ctrl_spad: addr(*ctrl_spad),
            slot_spad_base: slot_spad_base.iter().map(|&a| addr(a)).collect(),
            op_num: *op_num,
            function_n: *function_n,
            tpb_compl_addr_num: *tpb_compl_addr_num,
            mesh_event_n: mesh_events.len(),
            channel_n: *channel_n,
            topsp_index: *topsp_index,
            send_credits: *send_credits,
            channel_ids: channel_ids.clone(),
            mesh_events: mesh_events.iter().map(MeshEventView::from).collect(),
            barrier_configs: BarrierView::from(barrier),
            basic_block_configs: BasicBlockView {
                switch_completed: addr(basic_block.switch_completed),
                pring_base_addr: addr(basic_block.pring_base_addr),
                pring_total_desc_num: basic_block.pring_total_desc_num,
            },
            flags: FlagsView {
                leader: u8::from(flags.leader),
                dbg_cc_nop: u8::from(flags.dbg_cc_nop),
                host_cc: u8::from(flags.host_cc),
            },
        }
    }
}

#[derive(Serialize)]
struct MeshEventView {
    peer: u32,
    sema_index: u16,
    target: u16,
    bytes: u64,
}

impl From<&MeshEvent> for MeshEventView {
    fn from(&MeshEvent { peer, sema_index, target, bytes }: &MeshEvent) -> Self {
        MeshEventView { peer, sema_index, target, bytes }
    }
}

/// `barrier_configs`: the tag, then the live arm of the union only.
#[derive(Serialize)]
struct BarrierView {
    execute_device_barrier: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<HostBarrierView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceBarrierView>,
}

impl From<&BarrierConfigs> for BarrierView {
    fn from(barrier: &BarrierConfigs) -> Self {
        match barrier {
            BarrierConfigs::Host { barrier_start, barrier_done } => BarrierView {
                execute_device_barrier: 0,
                host: Some(HostBarrierView { barrier_start: addr(*barrier_start), barrier_done: addr(*barrier_done) }),
                device: None,
            },
            BarrierConfigs::Device { steps } => BarrierView {
                execute_device_barrier: 1,
                host: None,
                device: Some(DeviceBarrierView {
                    step_n: steps.len(),
                    steps: steps.iter().map(BarrierStepView::from).collect(),
                }),
            },
        }
    }
}

#[derive(Serialize)]
struct HostBarrierView {
    barrier_start: Addr,
    barrier_done: Addr,
}

#[derive(Serialize)]
struct DeviceBarrierView {
    step_n: usize,
    steps: Vec<BarrierStepView>,
}

#[derive(Serialize)]
struct BarrierStepView {
    m2s_val: u16,
    s2m_val: u16,
    barrier_sema: Vec<Addr>,
    target_sema_val: [u32; 4],
}

impl From<&BarrierStep> for BarrierStepView {
    fn from(step: &BarrierStep) -> Self {
        let BarrierStep { m2s_val, s2m_val, barrier_sema, target_sema_val } = *step;
        BarrierStepView {
            m2s_val,
            s2m_val,
            barrier_sema: barrier_sema.iter().map(|&a| addr(a)).collect(),
            target_sema_val,
        }
    }
}

#[derive(Serialize)]
struct BasicBlockView {
    switch_completed: Addr,
    pring_base_addr: Addr,
    pring_total_desc_num: u64,
}

#[derive(Serialize)]
struct FlagsView {
    leader: u8,
    dbg_cc_nop: u8,
    host_cc: u8,
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccc_ir::wire::neff_configs::{BasicBlockConfigs, NeffFlags};
    use serde_json::{Value, json};

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn the_canonical_word_is_the_interface_example() {
        let op = CcOp { algo_type: 1, algo_sub_type: 3, trigger_next: true, ..CcOp::default() };
        let out = ctrl(&[(0, CtrlWord::Op(op))]).unwrap();
        // interface.md, `ccc decode --format json`, written out by hand.
        let expected = json!([{"offset": 0,
         "header": {"cc_op": 1},
         "cc_op": {"algo_type": 1, "algo_sub_type": 3, "trigger_next": 1,
                   "reporter": 0, "ring_wait_complete": 0, "ring_send_complete": 0,
                   "safe_mode": 0, "unique_tensors": 0,
                   "ring": {"channel_list": 0},
                   "mesh": {"sema_shift_offset": 0, "sema_mask": 0}}}]);
        assert_eq!(parse(&out), expected);
    }

    #[test]
    fn keys_keep_the_dumper_order() {
        let op = CcOp { algo_type: 0, reporter: true, operand: 0x0007_0005, ..CcOp::default() };
        let out = ctrl(&[(8, CtrlWord::Op(op))]).unwrap();
        let keys = [
            "\"offset\"",
            "\"header\"",
            "\"cc_op\": {",
            "\"algo_type\"",
            "\"algo_sub_type\"",
            "\"trigger_next\"",
            "\"reporter\"",
            "\"ring_wait_complete\"",
            "\"ring_send_complete\"",
            "\"safe_mode\"",
            "\"unique_tensors\"",
            "\"ring\"",
            "\"channel_list\": 458757",
            "\"mesh\"",
            "\"sema_shift_offset\": 5",
            "\"sema_mask\": 7",
        ];
        let positions: Vec<usize> = keys.iter().map(|k| out.find(k).unwrap_or(usize::MAX)).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?} in\n{out}");
        assert!(out.starts_with("[\n  {\n    \"offset\": 8,"), "{out}");
        assert!(out.ends_with("]\n"));
    }

    #[test]
    fn marks_have_their_own_shape() {
        let words =
            [(8, CtrlWord::End { compl_addr: 0x82_80A0_1804 }), (16, CtrlWord::Continue), (24, CtrlWord::Empty)];
        // `{"soc_addr":"0x%016lX"}` (seed 001 §2.1) filled in by hand.
        let expected = json!([
            {"offset": 8, "mark": "end", "compl_addr": {"soc_addr": "0x0000008280A01804"}},
            {"offset": 16, "mark": "continue"},
            {"offset": 24, "mark": "empty"},
        ]);
        assert_eq!(parse(&ctrl(&words).unwrap()), expected);
        assert_eq!(parse(&ctrl(&[]).unwrap()), json!([]));
    }

    #[test]
    fn slot_view_counts_and_lists_records() {
        let spad = SlotSpad {
            records: vec![
                vec![TpIncStep { m2s: 3, s2m: 5, repeat: 4 }],
                vec![],
                vec![TpIncStep { m2s: 1, s2m: 0, repeat: 1 }],
            ],
        };
        let expected = json!({"record_n": 3, "entry_n": 2, "records": [
            [{"m2s": 3, "s2m": 5, "repeat": 4}], [], [{"m2s": 1, "s2m": 0, "repeat": 1}]]});
        assert_eq!(parse(&slot(&spad).unwrap()), expected);
    }

    #[test]
    fn neff_view_spells_addresses_in_hex_and_shows_the_live_barrier() {
        let step = BarrierStep {
            m2s_val: 1,
            s2m_val: 1,
            barrier_sema: [0x82_8000_1020, 0, 0, 0],
            target_sema_val: [1, 0, 0, 0],
        };
        let cfg = NeffConfigs {
            trigger: 0x82_8000_1000,
            trigger_next: 0,
            complete: 0,
            complete_prev: 0,
            tpb_stop_sema: 0,
            ctrl_spad: 0x82_8002_0000,
            slot_spad_base: [0x82_8004_0000, 0, 0, 0, 0, 0],
            op_num: 1,
            function_n: 1,
            tpb_compl_addr_num: 1,
            channel_n: 1,
            topsp_index: 0,
            send_credits: 2,
            channel_ids: vec![0],
            mesh_events: vec![MeshEvent { peer: 1, sema_index: 88, target: 1, bytes: 8 }],
            barrier: BarrierConfigs::Device { steps: vec![step] },
            basic_block: BasicBlockConfigs {
                switch_completed: 0x82_8000_10AC,
                pring_base_addr: 0xFEDC_BA98_7654_3210,
                pring_total_desc_num: 7,
            },
            flags: NeffFlags { leader: true, dbg_cc_nop: false, host_cc: true },
        };
        let v = parse(&neff(&cfg).unwrap());
        // The vendor's `{"soc_addr":"0x%016lX"}`, written out by hand.
        assert_eq!(v["trigger"], json!({"soc_addr": "0x0000008280001000"}));
        assert_eq!(v["ctrl_spad"], json!({"soc_addr": "0x0000008280020000"}));
        assert_eq!(v["slot_spad_base"][0], json!({"soc_addr": "0x0000008280040000"}));
        assert_eq!(v["slot_spad_base"][1], json!({"soc_addr": "0x0000000000000000"}));
        assert_eq!(v["basic_block_configs"]["switch_completed"], json!({"soc_addr": "0x00000082800010AC"}));
        assert_eq!(v["basic_block_configs"]["pring_base_addr"], json!({"soc_addr": "0xFEDCBA9876543210"}));
        assert_eq!(v["mesh_event_n"], json!(1));
        assert_eq!(v["mesh_events"], json!([{"peer": 1, "sema_index": 88, "target": 1, "bytes": 8}]));
        assert_eq!(
            v["barrier_configs"],
            json!({"execute_device_barrier": 1, "device": {"step_n": 1, "steps": [{
                "m2s_val": 1, "s2m_val": 1,
                "barrier_sema": [{"soc_addr": "0x0000008280001020"}, {"soc_addr": "0x0000000000000000"},
                                 {"soc_addr": "0x0000000000000000"}, {"soc_addr": "0x0000000000000000"}],
                "target_sema_val": [1, 0, 0, 0]}]}})
        );
        assert_eq!(v["flags"], json!({"leader": 1, "dbg_cc_nop": 0, "host_cc": 1}));
        let host = NeffConfigs { barrier: BarrierConfigs::Host { barrier_start: 0x14, barrier_done: 0x18 }, ..cfg };
        let v = parse(&neff(&host).unwrap());
        assert_eq!(
            v["barrier_configs"],
            json!({"execute_device_barrier": 0,
                   "host": {"barrier_start": {"soc_addr": "0x0000000000000014"},
                            "barrier_done": {"soc_addr": "0x0000000000000018"}}})
        );
    }
}
