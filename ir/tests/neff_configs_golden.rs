//! Golden offsets for the 3592-byte EXEC config block, `neff_configs`
//! (wire-contract §5; `docs/wire-format.md` §8).
//!
//! Every offset below is written by hand from the doc's tables. Each field is
//! checked by writing a distinctive value into that one field and comparing
//! the whole block with a hand-built expectation: the zero block with those
//! bytes at that offset, so a field written at the wrong place, or a write
//! that spills into a neighbour, fails.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{assert_bad_length, assert_bad_value_at, assert_bytes_eq, assert_reserved_at};
use ccc_ir::wire::neff_configs::{
    BarrierConfigs, BarrierStep, BasicBlockConfigs, MeshEvent, NEFF_CONFIGS_BYTES, NeffConfigs, NeffFlags,
};
use ccc_ir::wire::{DecodeError, DecodeErrorKind, EncodeError};

/// The block's size [seed].
const BLOCK: usize = 3592;

/// A distinctive u64 and its little-endian bytes.
const V64: u64 = 0x8877_6655_4433_2211;
const B64: &[u8] = &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88];
/// A distinctive u32 and its bytes.
const V32: u32 = 0xD4C3_B2A1;
const B32: &[u8] = &[0xA1, 0xB2, 0xC3, 0xD4];
/// A distinctive u16 and its bytes.
const V16: u16 = 0xE2F1;
const B16: &[u8] = &[0xF1, 0xE2];

/// A block with every field zero, no channels, no events, a host barrier.
fn zero_config() -> NeffConfigs {
    NeffConfigs {
        trigger: 0,
        trigger_next: 0,
        complete: 0,
        complete_prev: 0,
        tpb_stop_sema: 0,
        ctrl_spad: 0,
        slot_spad_base: [0; 6],
        op_num: 0,
        function_n: 0,
        tpb_compl_addr_num: 0,
        channel_n: 0,
        topsp_index: 0,
        send_credits: 0,
        channel_ids: vec![],
        mesh_events: vec![],
        barrier: BarrierConfigs::Host { barrier_start: 0, barrier_done: 0 },
        basic_block: BasicBlockConfigs::default(),
        flags: NeffFlags::default(),
    }
}

/// `zero_config()` by hand from §8: all zero but `channel_ids[32]` at
/// 108..140, whose unused entries are 0xFF.
fn zero_block() -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    b[108..140].fill(0xFF);
    b
}

/// `zero_config()` with a device barrier of four zero steps.
fn device_config() -> NeffConfigs {
    NeffConfigs { barrier: BarrierConfigs::Device { steps: vec![BarrierStep::default(); 4] }, ..zero_config() }
}

/// `device_config()` by hand: step_n = 4 at +2200, execute_device_barrier = 1
/// at +2200+292 = 2492.
fn device_block() -> Vec<u8> {
    with(zero_block(), &[(2200, &[0x04, 0x00, 0x00, 0x00]), (2492, &[0x01, 0x00, 0x00, 0x00])])
}

/// `base` with `writes` (offset, bytes) applied.
fn with(mut base: Vec<u8>, writes: &[(usize, &[u8])]) -> Vec<u8> {
    for &(offset, bytes) in writes {
        base[offset..offset + bytes.len()].copy_from_slice(bytes);
    }
    base
}

/// Encodes `config`, compares with `expected`, and decodes `expected` back.
#[track_caller]
fn assert_block(what: &str, config: &NeffConfigs, expected: &[u8]) {
    let block = config.encode().unwrap();
    assert_bytes_eq(&block[..], expected, what);
    assert_eq!(NeffConfigs::decode(expected).as_ref(), Ok(config), "{what}: decode");
}

/// Bytes written at offsets: `(offset, bytes)` rows.
type Writes = &'static [(usize, &'static [u8])];
/// Sets one field of a config.
type Set = fn(&mut NeffConfigs);

#[test]
fn the_zero_block_is_3592_bytes() {
    assert_eq!(NEFF_CONFIGS_BYTES, 3592);
    let block = zero_config().encode().unwrap();
    assert_eq!(block.len(), 3592);
    assert_block("zero block", &zero_config(), &zero_block());
}

#[test]
fn each_header_field_at_its_offset() {
    #[rustfmt::skip]
    let rows: &[(&str, Set, Writes)] = &[
        // §8 row                          the one field set                                       writes (offset, bytes)
        ("+0 trigger",                     |c| c.trigger = V64,                                    &[(0, B64)]),
        ("+8 trigger_next",                |c| c.trigger_next = V64,                               &[(8, B64)]),
        ("+16 complete",                   |c| c.complete = V64,                                   &[(16, B64)]),
        ("+24 complete_prev",              |c| c.complete_prev = V64,                              &[(24, B64)]),
        ("+32 tpb_stop_sema",              |c| c.tpb_stop_sema = V64,                              &[(32, B64)]),
        ("+40 ctrl_spad",                  |c| c.ctrl_spad = V64,                                  &[(40, B64)]),
        ("+48 slot_spad_base[0]",          |c| c.slot_spad_base[0] = V64,                          &[(48, B64)]),
        ("+56 slot_spad_base[1]",          |c| c.slot_spad_base[1] = V64,                          &[(56, B64)]),
        ("+64 slot_spad_base[2]",          |c| c.slot_spad_base[2] = V64,                          &[(64, B64)]),
        ("+72 slot_spad_base[3]",          |c| c.slot_spad_base[3] = V64,                          &[(72, B64)]),
        ("+80 slot_spad_base[4]",          |c| c.slot_spad_base[4] = V64,                          &[(80, B64)]),
        ("+88 slot_spad_base[5]",          |c| c.slot_spad_base[5] = V64,                          &[(88, B64)]),
        ("+96 op_num u32",                 |c| c.op_num = V32,                                     &[(96, B32)]),
        ("+100 function_n u16",            |c| c.function_n = V16,                                 &[(100, B16)]),
        ("+102 tpb_compl_addr_num u8",     |c| c.tpb_compl_addr_num = 0xA5,                        &[(102, &[0xA5])]),
        ("+105 topsp_index u8",            |c| c.topsp_index = 0x5A,                               &[(105, &[0x5A])]),
        ("+106 send_credits u16",          |c| c.send_credits = 511,                               &[(106, &[0xFF, 0x01])]),
    ];
    for &(what, set, writes) in rows {
        let mut config = zero_config();
        set(&mut config);
        assert_block(what, &config, &with(zero_block(), writes));
    }
}

#[test]
fn channels_at_104_and_108_with_0xff_fill() {
    #[rustfmt::skip]
    let rows: &[(&str, Vec<u8>, Writes)] = &[
        // what               channel_ids          writes: channel_n @104, ids from @108 (the rest stay 0xFF)
        ("three channels",    vec![7, 0, 31],      &[(104, &[0x03]), (108, &[0x07, 0x00, 0x1F])]),
        ("one channel 0xFE",  vec![0xFE],          &[(104, &[0x01]), (108, &[0xFE])]),
        ("all 32",            (0..32).collect(),   &[(104, &[0x20]), (108, &[
            0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
            0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F,
        ])]),
    ];
    for (what, ids, writes) in rows {
        let config = NeffConfigs { channel_n: ids.len() as u8, channel_ids: ids.clone(), ..zero_config() };
        assert_block(what, &config, &with(zero_block(), writes));
    }
}

#[test]
fn mesh_events_at_144_sixteen_bytes_each() {
    let event = MeshEvent { peer: V32, sema_index: V16, target: 0x0302, bytes: V64 };
    #[rustfmt::skip]
    let entry: &[u8] = &[
        0xA1, 0xB2, 0xC3, 0xD4,                         // +0 peer u32
        0xF1, 0xE2,                                     // +4 semaphore index u16
        0x02, 0x03,                                     // +6 target u16
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // +8 bytes u64
    ];
    // One event: mesh_event_n = 1 at +103, entry 0 at +144.
    let config = NeffConfigs { mesh_events: vec![event], ..zero_config() };
    assert_block("one event", &config, &with(zero_block(), &[(103, &[0x01]), (144, entry)]));

    // Two events: entry 1 at +160.
    let second = MeshEvent { peer: 1, sema_index: 88, target: 2, bytes: 0x1_0000 };
    #[rustfmt::skip]
    let second_entry: &[u8] = &[
        0x01, 0x00, 0x00, 0x00,                         // +0 peer 1
        0x58, 0x00,                                     // +4 semaphore 88 (MESH_SEMA_BASE)
        0x02, 0x00,                                     // +6 target 2
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, // +8 64 KiB
    ];
    let config = NeffConfigs { mesh_events: vec![event, second], ..zero_config() };
    assert_block("two events", &config, &with(zero_block(), &[(103, &[0x02]), (144, entry), (160, second_entry)]));

    // The full table: 108 events, the last one at 144 + 107 * 16 = 1856,
    // ending at 1872 where the reserved area begins.
    let mut events = vec![MeshEvent::default(); 108];
    events[107] = event;
    let config = NeffConfigs { mesh_events: events, ..zero_config() };
    assert_block("108 events", &config, &with(zero_block(), &[(103, &[0x6C]), (1856, entry)]));
}

#[test]
fn host_barrier_at_2200() {
    #[rustfmt::skip]
    let rows: &[(&str, BarrierConfigs, Writes)] = &[
        // §8.2 row                          value                                                              writes
        ("+2200 barrier_start",              BarrierConfigs::Host { barrier_start: V64, barrier_done: 0 },      &[(2200, B64)]),
        ("+2208 barrier_done",               BarrierConfigs::Host { barrier_start: 0, barrier_done: V64 },      &[(2208, B64)]),
    ];
    for (what, barrier, writes) in rows {
        // execute_device_barrier stays 0 (host) at +2492.
        let config = NeffConfigs { barrier: barrier.clone(), ..zero_config() };
        assert_block(what, &config, &with(zero_block(), writes));
    }
}

#[test]
fn device_barrier_tag_and_step_count() {
    // One step: step_n = 1 at +2200, execute_device_barrier = 1 at +2492.
    let config =
        NeffConfigs { barrier: BarrierConfigs::Device { steps: vec![BarrierStep::default()] }, ..zero_config() };
    let expected = with(zero_block(), &[(2200, &[0x01, 0x00, 0x00, 0x00]), (2492, &[0x01, 0x00, 0x00, 0x00])]);
    assert_block("one device step", &config, &expected);
    // Four steps.
    assert_block("four device steps", &device_config(), &device_block());
}

#[test]
fn device_barrier_step_fields_at_2208_plus_52_per_step() {
    type SetStep = fn(&mut [BarrierStep]);
    #[rustfmt::skip]
    let rows: &[(&str, SetStep, Writes)] = &[
        // §8.2 barrier_step_config row               the one field set                        offset = 2208 + 52*s + field
        ("step 0 m2s_val @0",                          |s| s[0].m2s_val = V16,                  &[(2208, B16)]),
        ("step 0 s2m_val @2",                          |s| s[0].s2m_val = V16,                  &[(2210, B16)]),
        ("step 0 barrier_sema[0] @4",                  |s| s[0].barrier_sema[0] = V64,          &[(2212, B64)]),
        ("step 0 barrier_sema[1] @12",                 |s| s[0].barrier_sema[1] = V64,          &[(2220, B64)]),
        ("step 0 barrier_sema[2] @20",                 |s| s[0].barrier_sema[2] = V64,          &[(2228, B64)]),
        ("step 0 barrier_sema[3] @28",                 |s| s[0].barrier_sema[3] = V64,          &[(2236, B64)]),
        ("step 0 target_sema_val[0] @36",              |s| s[0].target_sema_val[0] = V32,       &[(2244, B32)]),
        ("step 0 target_sema_val[1] @40",              |s| s[0].target_sema_val[1] = V32,       &[(2248, B32)]),
        ("step 0 target_sema_val[2] @44",              |s| s[0].target_sema_val[2] = V32,       &[(2252, B32)]),
        ("step 0 target_sema_val[3] @48",              |s| s[0].target_sema_val[3] = V32,       &[(2256, B32)]),
        ("step 1 m2s_val",                             |s| s[1].m2s_val = V16,                  &[(2260, B16)]),
        ("step 1 barrier_sema[0]",                     |s| s[1].barrier_sema[0] = V64,          &[(2264, B64)]),
        ("step 2 m2s_val",                             |s| s[2].m2s_val = V16,                  &[(2312, B16)]),
        ("step 2 s2m_val",                             |s| s[2].s2m_val = V16,                  &[(2314, B16)]),
        ("step 3 m2s_val",                             |s| s[3].m2s_val = V16,                  &[(2364, B16)]),
        ("step 3 barrier_sema[3]",                     |s| s[3].barrier_sema[3] = V64,          &[(2392, B64)]),
        ("step 3 target_sema_val[3] (ends at 2416)",   |s| s[3].target_sema_val[3] = V32,       &[(2412, B32)]),
    ];
    for &(what, set, writes) in rows {
        let mut steps = vec![BarrierStep::default(); 4];
        set(&mut steps);
        let config = NeffConfigs { barrier: BarrierConfigs::Device { steps }, ..zero_config() };
        assert_block(what, &config, &with(device_block(), writes));
    }
}

#[test]
fn basic_block_configs_at_2496() {
    #[rustfmt::skip]
    let rows: &[(&str, BasicBlockConfigs, Writes)] = &[
        // §8.3 row                                   value                                                                  writes
        ("+2496+1024 switch_completed",               BasicBlockConfigs { switch_completed: V64, ..Default::default() },     &[(3520, B64)]),
        ("+2496+1032 pring_base_addr",                BasicBlockConfigs { pring_base_addr: V64, ..Default::default() },      &[(3528, B64)]),
        ("+2496+1040 pring_total_desc_num u64",       BasicBlockConfigs { pring_total_desc_num: V64, ..Default::default() }, &[(3536, B64)]),
    ];
    for &(what, basic_block, writes) in rows {
        let config = NeffConfigs { basic_block, ..zero_config() };
        assert_block(what, &config, &with(zero_block(), writes));
    }
}

#[test]
fn flag_byte_at_3591() {
    #[rustfmt::skip]
    let rows: &[(&str, NeffFlags, u8)] = &[
        // §8 flag row            value                                                           byte 3591
        ("bit 0 leader",          NeffFlags { leader: true, dbg_cc_nop: false, host_cc: false },  0x01),
        ("bit 1 dbg_cc_nop",      NeffFlags { leader: false, dbg_cc_nop: true, host_cc: false },  0x02),
        ("bit 2 host_cc",         NeffFlags { leader: false, dbg_cc_nop: false, host_cc: true },  0x04),
        ("all three",             NeffFlags { leader: true, dbg_cc_nop: true, host_cc: true },    0x07),
    ];
    for &(what, flags, byte) in rows {
        let config = NeffConfigs { flags, ..zero_config() };
        assert_block(what, &config, &with(zero_block(), &[(3591, &[byte])]));
    }
}

#[test]
fn a_cayman_topsp_0_block_field_by_field() {
    // What the lowering writes for TOP_SP 0 of a Cayman program (§6, §8):
    // READ-window handles at 0x82_8000_1000 + 4 * sema index.
    let config = NeffConfigs {
        trigger: 0x82_8000_1000,       // sema 0
        trigger_next: 0x82_8000_1008,  // sema 2
        complete: 0x82_8000_1004,      // sema 1
        complete_prev: 0x82_8000_100C, // sema 3
        tpb_stop_sema: 0x82_8000_1010, // sema 4
        ctrl_spad: 0x82_8002_0000,
        slot_spad_base: [0x82_8004_0000, 0, 0, 0, 0, 0],
        op_num: 3,
        function_n: 2,
        tpb_compl_addr_num: 2,
        channel_n: 2,
        topsp_index: 0,
        send_credits: 4,
        channel_ids: vec![0, 8],
        mesh_events: vec![],
        barrier: BarrierConfigs::Host { barrier_start: 0x82_8000_1014, barrier_done: 0x82_8000_1018 },
        basic_block: BasicBlockConfigs {
            switch_completed: 0x82_8000_101C,
            pring_base_addr: 0x82_8008_0000,
            pring_total_desc_num: 96,
        },
        flags: NeffFlags { leader: true, dbg_cc_nop: false, host_cc: false },
    };
    #[rustfmt::skip]
    let expected = with(zero_block(), &[
        (0,    &[0x00, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // trigger
        (8,    &[0x08, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // trigger_next
        (16,   &[0x04, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // complete
        (24,   &[0x0C, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // complete_prev
        (32,   &[0x10, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // tpb_stop_sema
        (40,   &[0x00, 0x00, 0x02, 0x80, 0x82, 0x00, 0x00, 0x00]), // ctrl_spad
        (48,   &[0x00, 0x00, 0x04, 0x80, 0x82, 0x00, 0x00, 0x00]), // slot_spad_base[0]
        (96,   &[0x03, 0x00, 0x00, 0x00]),                         // op_num
        (100,  &[0x02, 0x00]),                                     // function_n
        (102,  &[0x02]),                                           // tpb_compl_addr_num
        (103,  &[0x00]),                                           // mesh_event_n
        (104,  &[0x02]),                                           // channel_n
        (105,  &[0x00]),                                           // topsp_index
        (106,  &[0x04, 0x00]),                                     // send_credits
        (108,  &[0x00, 0x08]),                                     // channel_ids[0..2], rest 0xFF
        (2200, &[0x14, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_start (sema 5)
        (2208, &[0x18, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_done (sema 6)
        (2492, &[0x00, 0x00, 0x00, 0x00]),                         // execute_device_barrier = host
        (3520, &[0x1C, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // switch_completed (sema 7)
        (3528, &[0x00, 0x00, 0x08, 0x80, 0x82, 0x00, 0x00, 0x00]), // pring_base_addr
        (3536, &[0x60, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), // pring_total_desc_num
        (3591, &[0x01]),                                           // flags: leader
    ]);
    assert_block("Cayman TOP_SP 0", &config, &expected);
}

// ---------------------------------------------------------------------------
// Decode refusals.
// ---------------------------------------------------------------------------

#[test]
fn every_reserved_area_is_refused_at_its_offset() {
    let one_event = NeffConfigs { mesh_events: vec![MeshEvent::default()], ..zero_config() };
    let one_step =
        NeffConfigs { barrier: BarrierConfigs::Device { steps: vec![BarrierStep::default()] }, ..zero_config() };
    let host = zero_config().encode().unwrap().to_vec();
    let event = one_event.encode().unwrap().to_vec();
    let device = one_step.encode().unwrap().to_vec();
    #[rustfmt::skip]
    let rows: &[(&str, &Vec<u8>, usize)] = &[
        // §8 reserved area                                 valid base   offending byte
        ("+140 reserved, first byte",                        &host,       140),
        ("+140 reserved, last byte",                         &host,       143),
        ("mesh event 0 unused (mesh_event_n = 0)",           &host,       144),
        ("mesh event 0 bytes field, unused",                 &host,       159),
        ("mesh event 1 unused (mesh_event_n = 1)",           &event,      160),
        ("mesh event 107 unused, last byte",                 &host,       1871),
        ("+1872 reserved, first byte",                       &host,       1872),
        ("+1872 reserved, middle",                           &host,       2000),
        ("+1872 reserved, last byte",                        &host,       2199),
        ("host barrier: union byte 16, first unused",        &host,       2216),
        ("host barrier: union middle",                       &host,       2300),
        ("host barrier: union byte 291, last unused",        &host,       2491),
        ("device barrier: reserved +4",                      &device,     2204),
        ("device barrier: reserved +7",                      &device,     2207),
        ("device barrier: step 1 unused (step_n = 1)",       &device,     2260),
        ("device barrier: step 3 unused, last byte",         &device,     2415),
        ("device barrier: reserved +216",                    &device,     2416),
        ("device barrier: reserved +291",                    &device,     2491),
        ("basic_block_configs +0 reserved",                  &host,       2496),
        ("basic_block_configs +1023 reserved",               &host,       3519),
        ("+3544 reserved, first byte",                       &host,       3544),
        ("+3544 reserved, last byte",                        &host,       3590),
    ];
    for &(what, base, offset) in rows {
        assert!(NeffConfigs::decode(base).is_ok(), "{what}: the base block must decode");
        let mut bad = base.clone();
        bad[offset] = 0x40;
        assert_reserved_at(NeffConfigs::decode(&bad), offset as u64, what);
    }
}

#[test]
fn every_reserved_flag_bit_is_refused() {
    for bit in 3..8 {
        let bad = with(zero_block(), &[(3591, &[1u8 << bit])]);
        assert_reserved_at(NeffConfigs::decode(&bad), 3591, &format!("flag bit {bit}"));
    }
}

#[test]
fn impossible_counts_and_tags_are_refused() {
    #[rustfmt::skip]
    let rows: &[(&str, Vec<u8>, u64, &str)] = &[
        // what                                        block                                                           offset  field
        ("mesh_event_n = 109",                          with(zero_block(), &[(103, &[109])]),                           103,    "mesh_event_n"),
        ("channel_n = 33",                              with(zero_block(), &[(104, &[33])]),                            104,    "channel_n"),
        ("unused channel_ids[0] not 0xFF",              with(zero_block(), &[(108, &[0x00])]),                          108,    "channel_ids (unused entry)"),
        ("unused channel_ids[31] not 0xFF",             with(zero_block(), &[(139, &[0xFE])]),                          139,    "channel_ids (unused entry)"),
        ("execute_device_barrier = 2",                  with(zero_block(), &[(2492, &[0x02])]),                         2492,   "execute_device_barrier"),
        ("execute_device_barrier high byte",            with(zero_block(), &[(2495, &[0x01])]),                         2492,   "execute_device_barrier"),
        ("device step_n = 0",                           with(device_block(), &[(2200, &[0x00])]),                       2200,   "device barrier step_n"),
        ("device step_n = 5",                           with(device_block(), &[(2200, &[0x05])]),                       2200,   "device barrier step_n"),
    ];
    for (what, block, offset, field) in rows {
        assert_bad_value_at(NeffConfigs::decode(block), *offset, field, what);
    }
}

#[test]
fn wrong_lengths_are_refused() {
    for len in [0usize, 1, 3591, 3593, 2 * 3592] {
        assert_bad_length(NeffConfigs::decode(&vec![0u8; len]), len, &format!("{len} bytes"));
    }
    // At the end of the shorter: where the image and the block part.
    assert_eq!(
        NeffConfigs::decode(&[0u8; 8]),
        Err(DecodeError {
            offset: 8,
            kind: DecodeErrorKind::BadLength { len: 8, expected: "exactly 3592 bytes".into() }
        })
    );
    assert!(matches!(NeffConfigs::decode(&[0u8; 3600]), Err(DecodeError { offset: 3592, .. })));
}

// ---------------------------------------------------------------------------
// Encode refusals.
// ---------------------------------------------------------------------------

#[test]
fn tables_beyond_their_capacity_are_encode_errors() {
    let config = NeffConfigs { mesh_events: vec![MeshEvent::default(); 109], ..zero_config() };
    assert!(matches!(config.encode(), Err(EncodeError::FieldOverflow { value: 109, max: 108, .. })));
    let config = NeffConfigs { channel_n: 33, channel_ids: vec![0; 33], ..zero_config() };
    assert!(matches!(config.encode(), Err(EncodeError::FieldOverflow { value: 33, max: 32, .. })));
    let config = NeffConfigs { barrier: BarrierConfigs::Device { steps: vec![] }, ..zero_config() };
    assert!(matches!(config.encode(), Err(EncodeError::BadValue { .. })));
    let config =
        NeffConfigs { barrier: BarrierConfigs::Device { steps: vec![BarrierStep::default(); 5] }, ..zero_config() };
    assert!(matches!(config.encode(), Err(EncodeError::FieldOverflow { value: 5, max: 4, .. })));
}

#[test]
fn channel_n_must_count_the_channel_ids() {
    // channel_n (@104) and the used entries of channel_ids (@108) say the
    // same thing; a block where they disagree would not decode.
    for (channel_n, ids) in [(2u8, vec![1u8, 2, 3]), (3, vec![1, 2]), (1, vec![])] {
        let config = NeffConfigs { channel_n, channel_ids: ids.clone(), ..zero_config() };
        assert!(
            matches!(config.encode(), Err(EncodeError::BadValue { field: "channel_n", .. })),
            "channel_n {channel_n} with {} ids",
            ids.len()
        );
    }
}
