//! Property tests for every wire format of `ir`:
//!
//! - `decode(encode(x)) == x` over the full range of every field;
//! - reserved bits and bytes are always 0 in encoder output (the reserved
//!   positions below are written from `docs/wire-format.md`, not read from
//!   the code's constants);
//! - every decoder returns (never panics) on arbitrary byte strings, and
//!   when it accepts one, encoding the result gives the same bytes back
//!   (decoders accept only canonical images).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_ir::wire::ctrl_spad::{self, Segment};
use ccc_ir::wire::ctrl_word::{CcOp, CtrlWord, decode_words};
use ccc_ir::wire::neff_configs::{BarrierConfigs, BarrierStep, BasicBlockConfigs, MeshEvent, NeffConfigs, NeffFlags};
use ccc_ir::wire::slot_spad::SlotSpad;
use ccc_ir::wire::tp::{Folder, TpIncStep, unfold};
use proptest::collection::vec;
use proptest::prelude::*;

const CTRL_SPAD_BYTES: u32 = 0x1000;
const SLOT_SPAD_BYTES: u32 = 0x8000;

// ---------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------

/// `0..=max`, with both ends drawn often: uniform draws over a wide range
/// almost never hit the edges, where packing bugs live.
fn edgy(max: u64) -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(0), 1 => Just(max), 1 => Just(max / 2 + 1), 6 => 0..=max]
}

fn cc_op() -> impl Strategy<Value = CcOp> {
    (0u8..=15, 0u8..=7, any::<[bool; 6]>(), edgy(u64::from(u32::MAX))).prop_map(
        |(algo_type, algo_sub_type, f, operand)| CcOp {
            algo_type,
            algo_sub_type,
            trigger_next: f[0],
            reporter: f[1],
            ring_wait_complete: f[2],
            ring_send_complete: f[3],
            safe_mode: f[4],
            unique_tensors: f[5],
            operand: u32::try_from(operand).unwrap(),
        },
    )
}

/// A completion address: 4-byte aligned, below 2^48.
fn compl_addr() -> impl Strategy<Value = u64> {
    edgy((1 << 46) - 1).prop_map(|a| a << 2)
}

fn ctrl_word() -> impl Strategy<Value = CtrlWord> {
    prop_oneof![
        cc_op().prop_map(CtrlWord::Op),
        compl_addr().prop_map(|compl_addr| CtrlWord::End { compl_addr }),
        Just(CtrlWord::Continue),
        Just(CtrlWord::Empty),
    ]
}

fn tp_step() -> impl Strategy<Value = TpIncStep> {
    (edgy(0xFF_FFFF), edgy(0xFF_FFFF), edgy(0xFFFF).prop_map(|r| r.max(1))).prop_map(|(m2s, s2m, repeat)| TpIncStep {
        m2s: u32::try_from(m2s).unwrap(),
        s2m: u32::try_from(s2m).unwrap(),
        repeat: u16::try_from(repeat).unwrap(),
    })
}

fn slot_spad() -> impl Strategy<Value = SlotSpad> {
    vec(vec(tp_step(), 0..8), 0..24).prop_map(|records| SlotSpad { records })
}

fn segments() -> impl Strategy<Value = Vec<Segment>> {
    vec((vec(cc_op(), 1..=20), compl_addr()).prop_map(|(records, compl_addr)| Segment { records, compl_addr }), 1..=5)
}

fn mesh_event() -> impl Strategy<Value = MeshEvent> {
    (any::<u32>(), any::<u16>(), any::<u16>(), any::<u64>()).prop_map(|(peer, sema_index, target, bytes)| MeshEvent {
        peer,
        sema_index,
        target,
        bytes,
    })
}

fn barrier_step() -> impl Strategy<Value = BarrierStep> {
    (any::<u16>(), any::<u16>(), any::<[u64; 4]>(), any::<[u32; 4]>()).prop_map(
        |(m2s_val, s2m_val, barrier_sema, target_sema_val)| BarrierStep {
            m2s_val,
            s2m_val,
            barrier_sema,
            target_sema_val,
        },
    )
}

fn barrier() -> impl Strategy<Value = BarrierConfigs> {
    prop_oneof![
        (any::<u64>(), any::<u64>())
            .prop_map(|(barrier_start, barrier_done)| BarrierConfigs::Host { barrier_start, barrier_done }),
        vec(barrier_step(), 1..=4).prop_map(|steps| BarrierConfigs::Device { steps }),
    ]
}

fn neff_configs() -> impl Strategy<Value = NeffConfigs> {
    (
        any::<[u64; 6]>(),
        any::<[u64; 6]>(),
        (any::<u32>(), any::<u16>(), any::<u8>(), any::<u8>(), any::<u16>()),
        vec(any::<u8>(), 0..=32),
        vec(mesh_event(), 0..=108),
        barrier(),
        any::<[u64; 3]>(),
        any::<[bool; 3]>(),
    )
        .prop_map(|(handles, slot_spad_base, counts, channel_ids, mesh_events, barrier, bb, flags)| {
            let [trigger, trigger_next, complete, complete_prev, tpb_stop_sema, ctrl_spad] = handles;
            let (op_num, function_n, tpb_compl_addr_num, topsp_index, send_credits) = counts;
            NeffConfigs {
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
                channel_n: u8::try_from(channel_ids.len()).unwrap(),
                topsp_index,
                send_credits,
                channel_ids,
                mesh_events,
                barrier,
                basic_block: BasicBlockConfigs {
                    switch_completed: bb[0],
                    pring_base_addr: bb[1],
                    pring_total_desc_num: bb[2],
                },
                flags: NeffFlags { leader: flags[0], dbg_cc_nop: flags[1], host_cc: flags[2] },
            }
        })
}

/// Up to four (position, byte) overwrites, applied modulo the image length.
fn mutations() -> impl Strategy<Value = Vec<(usize, u8)>> {
    vec((any::<usize>(), any::<u8>()), 1..=4)
}

fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8)]) -> Vec<u8> {
    if !bytes.is_empty() {
        let len = bytes.len();
        for &(at, b) in edits {
            bytes[at % len] = b;
        }
    }
    bytes
}

/// One slot of eight words: 0..=8 op entries (7 and 0 drawn often), then a
/// mark (END or CONTINUE drawn often), then empty words, and sometimes one
/// stray word anywhere.
fn near_valid_slot() -> impl Strategy<Value = Vec<CtrlWord>> {
    let ops = prop_oneof![Just(0usize), Just(7), 0usize..=8];
    let mark = prop_oneof![
        2 => compl_addr().prop_map(|compl_addr| CtrlWord::End { compl_addr }),
        2 => Just(CtrlWord::Continue),
        1 => Just(CtrlWord::Empty),
        1 => cc_op().prop_map(CtrlWord::Op),
    ];
    let stray = prop_oneof![3 => Just(None), 1 => (0usize..8, ctrl_word()).prop_map(Some)];
    (ops, vec(cc_op(), 8), mark, stray).prop_map(|(n, ops, mark, stray)| {
        let mut words: Vec<CtrlWord> = ops.into_iter().take(n).map(CtrlWord::Op).collect();
        if words.len() < 8 {
            words.push(mark);
        }
        words.resize(8, CtrlWord::Empty);
        if let Some((i, word)) = stray {
            words[i] = word;
        }
        words
    })
}

/// `image` without its all-zero slots: the one freedom the CTRL SPAD decoder
/// allows beyond the encoder's layout (a device dump of the whole region
/// ends in empty slots).
fn without_empty_slots(image: &[u8]) -> Vec<u8> {
    image.chunks(64).filter(|slot| slot.iter().any(|&b| b != 0)).flatten().copied().collect()
}

/// The CTRL SPAD decoder on `bytes` returns: an image it accepts is
/// exactly what the encoder lays out for what it read (but for empty
/// slots), and a refusal names an offset inside `bytes`.
fn ctrl_spad_decodes_canonically(bytes: &[u8]) -> Result<(), TestCaseError> {
    match ctrl_spad::decode(bytes) {
        Ok(segs) => {
            let img = ctrl_spad::encode(&segs, u32::MAX).unwrap();
            prop_assert_eq!(img, without_empty_slots(bytes));
        }
        Err(e) => prop_assert!(e.offset <= bytes.len() as u64),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// CTRL SPAD words.
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn ctrl_word_roundtrips(word in ctrl_word(), at in 0u64..0x1000) {
        let bytes = word.encode().unwrap();
        prop_assert_eq!(CtrlWord::decode(bytes, at * 8), Ok(word));
    }

    #[test]
    fn ctrl_word_reserved_bits_are_zero(word in ctrl_word()) {
        let b = word.encode().unwrap();
        match word {
            CtrlWord::Op(_) => {
                prop_assert_eq!(b[0], 0x01, "byte 0: cc_op set, bits 7:1 reserved");
                prop_assert_eq!(b[2] & 0xE0, 0, "byte 2 bits 7:5 reserved");
                prop_assert_eq!(b[3], 0, "byte 3 padding");
            }
            CtrlWord::End { compl_addr } => {
                prop_assert_eq!(b[0] & 0b11, 0b10, "END tag");
                prop_assert_eq!([b[6], b[7]], [0, 0], "END bits 63:48 reserved");
                prop_assert_eq!(u64::from_le_bytes(b) & !0b11, compl_addr);
            }
            CtrlWord::Continue => prop_assert_eq!(b, [0, 0, 0, 0, 0xFE, 0xFF, 0xFE, 0xFF]),
            CtrlWord::Empty => prop_assert_eq!(b, [0; 8]),
        }
    }

    #[test]
    fn ctrl_word_fields_keep_their_place(op in cc_op()) {
        // Each field is recoverable from its own bits of the packed word.
        let b = CtrlWord::Op(op).encode().unwrap();
        prop_assert_eq!(b[1] & 0x0F, op.algo_type);
        prop_assert_eq!((b[1] >> 4) & 0x07, op.algo_sub_type);
        prop_assert_eq!(b[1] >> 7 == 1, op.trigger_next);
        prop_assert_eq!(
            b[2],
            u8::from(op.reporter)
                | u8::from(op.ring_wait_complete) << 1
                | u8::from(op.ring_send_complete) << 2
                | u8::from(op.safe_mode) << 3
                | u8::from(op.unique_tensors) << 4
        );
        prop_assert_eq!(u32::from_le_bytes([b[4], b[5], b[6], b[7]]), op.operand);
        prop_assert_eq!(u16::from_le_bytes([b[4], b[5]]), op.sema_shift_offset());
        prop_assert_eq!(u16::from_le_bytes([b[6], b[7]]), op.sema_mask());
    }

    #[test]
    fn ctrl_word_decode_accepts_only_canonical_words(bytes in any::<[u8; 8]>(), at in 0u64..0x1000) {
        if let Ok(word) = CtrlWord::decode(bytes, at * 8) {
            prop_assert_eq!(word.encode(), Ok(bytes));
        }
    }

    #[test]
    fn ctrl_word_overflowing_fields_are_refused(
        algo_type in 16u8..,
        algo_sub_type in 8u8..,
        high in 1u64..=0xFFFF,
        addr in compl_addr(),
        low in 1u64..=3,
    ) {
        prop_assert!(CtrlWord::Op(CcOp { algo_type, ..CcOp::default() }).encode().is_err(), "algo_type {}", algo_type);
        prop_assert!(CtrlWord::Op(CcOp { algo_sub_type, ..CcOp::default() }).encode().is_err(), "algo_sub_type {}", algo_sub_type);
        prop_assert!(CtrlWord::End { compl_addr: addr | high << 48 }.encode().is_err(), "END above 48 bits");
        prop_assert!(CtrlWord::End { compl_addr: addr | low }.encode().is_err(), "unaligned END");
    }

    #[test]
    fn decode_words_never_panics(bytes in vec(any::<u8>(), 0..256)) {
        match decode_words(&bytes) {
            Ok(words) => {
                prop_assert_eq!(words.len() * 8, bytes.len());
                for (i, &(offset, word)) in words.iter().enumerate() {
                    prop_assert_eq!(offset, (i * 8) as u64);
                    prop_assert_eq!(word.encode().unwrap().to_vec(), bytes[i * 8..i * 8 + 8].to_vec());
                }
            }
            Err(e) => prop_assert!(e.offset <= bytes.len() as u64),
        }
    }
}

// ---------------------------------------------------------------------------
// tp_inc_steps.
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn tp_step_roundtrips(step in tp_step(), at in 0u64..0x1000) {
        let bytes = step.encode().unwrap();
        prop_assert_eq!(TpIncStep::decode(bytes, at * 8), Ok(step));
        // §5: m2s bits 23:0, s2m bits 47:24, repeat bits 63:48.
        let word = u64::from_le_bytes(bytes);
        prop_assert_eq!(word & 0xFF_FFFF, u64::from(step.m2s));
        prop_assert_eq!((word >> 24) & 0xFF_FFFF, u64::from(step.s2m));
        prop_assert_eq!(word >> 48, u64::from(step.repeat));
    }

    #[test]
    fn tp_step_out_of_range_is_refused(big in 0x100_0000u32.., ok in 0u32..=0xFF_FFFF, repeat in 1u16..) {
        prop_assert!(TpIncStep { m2s: big, s2m: ok, repeat }.encode().is_err(), "m2s {}", big);
        prop_assert!(TpIncStep { m2s: ok, s2m: big, repeat }.encode().is_err(), "s2m {}", big);
        prop_assert!(TpIncStep { m2s: ok, s2m: ok, repeat: 0 }.encode().is_err(), "repeat 0");
    }

    #[test]
    fn tp_step_decode_accepts_only_canonical_words(bytes in any::<[u8; 8]>()) {
        match TpIncStep::decode(bytes, 0) {
            Ok(step) => prop_assert_eq!(step.encode(), Ok(bytes)),
            Err(_) => prop_assert_eq!([bytes[6], bytes[7]], [0, 0]),
        }
    }

    #[test]
    fn folding_is_canonical_run_length_encoding(
        runs in vec((0u32..3, 0u32..3, prop_oneof![1u64..=5, 65_530u64..=65_540, 1u64..=200_000]), 0..12),
    ) {
        let mut folder = Folder::new();
        for &(m2s, s2m, n) in &runs {
            folder.push_n(m2s, s2m, n);
        }
        // Independently: merge adjacent runs of the same pair, then cut each
        // merged run into pieces of at most 65535.
        let mut merged: Vec<((u32, u32), u64)> = Vec::new();
        for &(m2s, s2m, n) in &runs {
            match merged.last_mut() {
                Some((pair, total)) if *pair == (m2s, s2m) => *total += n,
                _ => merged.push(((m2s, s2m), n)),
            }
        }
        let mut expected = Vec::new();
        for ((m2s, s2m), mut total) in merged {
            while total > 0 {
                let repeat = total.min(65_535);
                expected.push(TpIncStep { m2s, s2m, repeat: u16::try_from(repeat).unwrap() });
                total -= repeat;
            }
        }
        prop_assert_eq!(folder.finish(), expected);
    }

    #[test]
    fn unfold_inverts_folding(pairs in vec((0u32..3, 0u32..3), 0..200)) {
        let mut folder = Folder::new();
        for &(m2s, s2m) in &pairs {
            folder.push(m2s, s2m);
        }
        let entries = folder.finish();
        // Folded: no two neighbours carry the same pair (no entry is full here).
        for pair in entries.windows(2) {
            prop_assert!((pair[0].m2s, pair[0].s2m) != (pair[1].m2s, pair[1].s2m));
        }
        prop_assert_eq!(unfold(&entries).collect::<Vec<_>>(), pairs);
    }
}

// ---------------------------------------------------------------------------
// SLOT SPAD image.
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn slot_spad_roundtrips(spad in slot_spad()) {
        let img = spad.encode(SLOT_SPAD_BYTES).unwrap();
        prop_assert_eq!(SlotSpad::decode(&img), Ok(spad.clone()));
        // §7 header, index and padding.
        let record_n = spad.records.len();
        let entry_n: usize = spad.records.iter().map(Vec::len).sum();
        prop_assert_eq!(u32::from_le_bytes(img[0..4].try_into().unwrap()) as usize, record_n);
        prop_assert_eq!(u32::from_le_bytes(img[4..8].try_into().unwrap()) as usize, entry_n);
        let index_end = 8 + 4 * record_n;
        let start = index_end.div_ceil(8) * 8;
        prop_assert!(img[index_end..start].iter().all(|&b| b == 0), "index padding is zero");
        prop_assert_eq!(img.len(), start + 8 * entry_n);
    }

    #[test]
    fn slot_spad_decode_never_panics(bytes in vec(any::<u8>(), 0..256)) {
        match SlotSpad::decode(&bytes) {
            Ok(spad) => prop_assert_eq!(spad.encode(u32::MAX), Ok(bytes)),
            Err(e) => prop_assert!(e.offset <= bytes.len() as u64),
        }
    }

    #[test]
    fn slot_spad_decode_of_a_damaged_image(spad in slot_spad(), edits in mutations()) {
        let bytes = mutate(spad.encode(SLOT_SPAD_BYTES).unwrap(), &edits);
        match SlotSpad::decode(&bytes) {
            Ok(back) => prop_assert_eq!(back.encode(u32::MAX), Ok(bytes)),
            Err(e) => prop_assert!(e.offset <= bytes.len() as u64),
        }
    }
}

// ---------------------------------------------------------------------------
// CTRL SPAD chain.
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn ctrl_spad_roundtrips(segs in segments()) {
        let img = ctrl_spad::encode(&segs, CTRL_SPAD_BYTES).unwrap();
        let placements = ctrl_spad::placements(&segs).unwrap();
        prop_assert_eq!(ctrl_spad::decode(&img), Ok(segs.clone()));

        // §2: a slot holds 7 records and a CONTINUE, or up to 7 records and
        // the END, so a collective of n records takes ceil(n / 7) slots.
        let slots: usize = segs.iter().map(|s| s.records.len().div_ceil(7)).sum();
        prop_assert_eq!(img.len(), 64 * slots);

        // Every record is where its placement says, never in a slot's last
        // word, and each collective starts at a slot boundary.
        prop_assert_eq!(placements.len(), segs.iter().map(|s| s.records.len()).sum::<usize>());
        for p in &placements {
            let at = usize::try_from(p.offset).unwrap();
            prop_assert_ne!(at % 64, 56);
            if p.record == 0 {
                prop_assert_eq!(at % 64, 0);
            }
            let word: [u8; 8] = img[at..at + 8].try_into().unwrap();
            prop_assert_eq!(CtrlWord::decode(word, p.offset), Ok(CtrlWord::Op(segs[p.segment].records[p.record])));
        }

        // Reserved bits of every op entry are zero.
        for word in img.chunks(8) {
            if word[0] & 1 == 1 {
                prop_assert_eq!(word[0], 0x01);
                prop_assert_eq!(word[2] & 0xE0, 0);
                prop_assert_eq!(word[3], 0);
            }
        }
    }

    #[test]
    fn ctrl_spad_decode_never_panics(bytes in vec(any::<u8>(), 0..320)) {
        ctrl_spad_decodes_canonically(&bytes)?;
    }

    /// Images of whole slots, each a run of op entries, a mark and filler,
    /// often one stray word: most break a chain rule, and the ones accepted
    /// must be exactly what the encoder lays out.
    #[test]
    fn ctrl_spad_decode_of_near_valid_slots(slots in vec(near_valid_slot(), 1..=3)) {
        let bytes: Vec<u8> = slots.concat().iter().flat_map(|w| w.encode().unwrap()).collect();
        ctrl_spad_decodes_canonically(&bytes)?;
    }

    #[test]
    fn ctrl_spad_decode_of_a_damaged_image(segs in segments(), edits in mutations(), word_edits in vec((any::<usize>(), ctrl_word()), 1..=3)) {
        let img = ctrl_spad::encode(&segs, CTRL_SPAD_BYTES).unwrap();
        // Byte damage, and whole-word damage (a valid word in the wrong place).
        let mut by_word = img.clone();
        let words = by_word.len() / 8;
        for (at, word) in &word_edits {
            let i = at % words * 8;
            by_word[i..i + 8].copy_from_slice(&word.encode().unwrap());
        }
        for bytes in [mutate(img, &edits), by_word] {
            ctrl_spad_decodes_canonically(&bytes)?;
        }
    }
}

// ---------------------------------------------------------------------------
// neff_configs.
// ---------------------------------------------------------------------------

/// The reserved byte ranges of a block for `config`, from §8 by hand.
fn reserved_ranges(config: &NeffConfigs) -> Vec<std::ops::Range<usize>> {
    let mut ranges = vec![
        140..144,                                  // reserved after channel_ids
        144 + 16 * config.mesh_events.len()..1872, // unused mesh events
        1872..2200,                                // reserved before barrier_configs
        2493..2496,                                // execute_device_barrier is 0 or 1: high bytes 0
        2496..3520,                                // basic_block_configs +0..+1024
        3544..3591,                                // reserved before the flag byte
    ];
    match &config.barrier {
        BarrierConfigs::Host { .. } => ranges.push(2216..2492), // union past the 16-byte host barrier
        BarrierConfigs::Device { steps } => {
            ranges.push(2204..2208); // reserved after step_n
            ranges.push(2208 + 52 * steps.len()..2416); // unused steps
            ranges.push(2416..2492); // reserved after the steps
        }
    }
    ranges
}

proptest! {
    #[test]
    fn neff_configs_roundtrips(config in neff_configs()) {
        let block = config.encode().unwrap();
        prop_assert_eq!(block.len(), 3592);
        prop_assert_eq!(NeffConfigs::decode(&block[..]), Ok(config.clone()));
    }

    #[test]
    fn neff_configs_reserved_bytes_are_zero(config in neff_configs()) {
        let block = config.encode().unwrap();
        for range in reserved_ranges(&config) {
            let start = range.start;
            prop_assert!(block[range].iter().all(|&b| b == 0), "reserved range from {}", start);
        }
        prop_assert_eq!(block[3591] & 0xF8, 0, "flag bits 7:3");
        prop_assert!(block[108 + config.channel_ids.len()..140].iter().all(|&b| b == 0xFF), "unused channel ids");
        prop_assert_eq!(usize::from(block[103]), config.mesh_events.len());
        prop_assert_eq!(usize::from(block[104]), config.channel_ids.len());
        let tag = u32::from_le_bytes(block[2492..2496].try_into().unwrap());
        prop_assert_eq!(tag, u32::from(matches!(config.barrier, BarrierConfigs::Device { .. })));
    }

    #[test]
    fn neff_configs_decode_never_panics(bytes in prop_oneof![vec(any::<u8>(), 0..4000), vec(any::<u8>(), 3592)]) {
        match NeffConfigs::decode(&bytes) {
            Ok(config) => prop_assert_eq!(&config.encode().unwrap()[..], &bytes[..]),
            Err(e) => prop_assert!(e.offset <= bytes.len() as u64),
        }
    }

    #[test]
    fn neff_configs_decode_of_a_damaged_block(config in neff_configs(), edits in mutations()) {
        let bytes = mutate(config.encode().unwrap().to_vec(), &edits);
        match NeffConfigs::decode(&bytes) {
            Ok(back) => prop_assert_eq!(&back.encode().unwrap()[..], &bytes[..]),
            Err(e) => prop_assert!(e.offset < bytes.len() as u64),
        }
    }
}
