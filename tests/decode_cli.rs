#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `ccc decode` end to end: the built binary on hand-made images.
//!
//! Every image in `tests/fixtures/decode/` is written out byte by byte in
//! this file (one row per word or field, from `docs/wire-format.md`, never
//! from ccc's encoder); `fixtures_are_the_hand_written_bytes` checks that the
//! checked-in files are exactly these bytes (`CCC_WRITE_FIXTURES=1` rewrites
//! them). Each run is snapshotted into `snapshots/decode/`; the
//! interface.md examples are also asserted exactly, written by hand.

use crate::snapshot;
use std::path::Path;
use std::process::{Command, Output};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/decode");

// ---------------------------------------------------------------- images

/// The contract's check value: `algo_type=1` (MESH), `algo_sub_type=3`
/// (MESH_SWITCH), `trigger_next=1`, everything else 0.
const CANONICAL: [u8; 8] = [0x01, 0xB1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00];

/// Two 64-byte slots: one collective of eight records that spills over a
/// CONTINUE mark into slot 1, then its END mark and empty words.
#[rustfmt::skip]
fn ctrl_spad() -> Vec<u8> {
    [
        // slot 0
        CANONICAL,                                          // 0x00 op 0: mesh, sub 3, trigger_next
        [0x01, 0x80, 0x05, 0x00, 0x0F, 0x00, 0x00, 0x00],   // 0x08 op 1: ring, sub 0, trigger_next; reporter, send_complete; channels 0..=3
        [0x01, 0xA0, 0x07, 0x00, 0x0F, 0x00, 0x00, 0x00],   // 0x10 op 2: ring, sub 2, trigger_next; reporter, wait, send; channels 0..=3
        [0x01, 0x90, 0x06, 0x00, 0x00, 0x00, 0x00, 0x80],   // 0x18 op 3: ring, sub 1, trigger_next; wait, send; channel 31
        [0x01, 0xF1, 0x0E, 0x00, 0x05, 0x00, 0x7F, 0x00],   // 0x20 op 4: mesh, sub 7 (no name), trigger_next; wait, send, safe_mode; shift 5, mask 0x7f
        [0x01, 0x85, 0x16, 0x00, 0x03, 0x00, 0x00, 0x00],   // 0x28 op 5: algo_type 5 (no pattern), sub 0, trigger_next; wait, send, unique_tensors; union 3
        [0x01, 0x91, 0x12, 0x00, 0x58, 0x00, 0x7F, 0x00],   // 0x30 op 6: mesh, sub 1, trigger_next; wait, unique_tensors; shift 88, mask 0x7f
        [0x00, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFE, 0xFF],   // 0x38 CONTINUE (0xFFFEFFFE00000000)
        // slot 1
        [0x01, 0x21, 0x1A, 0x00, 0x10, 0x00, 0x7F, 0x00],   // 0x40 op 7: mesh, sub 2; wait, safe_mode, unique_tensors; shift 16, mask 0x7f
        [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00],   // 0x48 END 0x0000008280001804 | 0b10
        [0x00; 8],                                          // 0x50 empty
        [0x00; 8],                                          // 0x58 empty
        [0x00; 8],                                          // 0x60 empty
        [0x00; 8],                                          // 0x68 empty
        [0x00; 8],                                          // 0x70 empty
        [0x00; 8],                                          // 0x78 empty
    ]
    .concat()
}

/// The canonical word, then a ring op whose flag byte (byte 2 of the second
/// word, offset 0xa) has reserved bit 5 set.
#[rustfmt::skip]
fn ctrl_reserved_bit() -> Vec<u8> {
    [
        CANONICAL,
        [0x01, 0x80, 0x25, 0x00, 0x0F, 0x00, 0x00, 0x00],   // 0x08 flag byte 0x25: bit 5 is reserved
    ]
    .concat()
}

/// 12 bytes: one word and half of another.
#[rustfmt::skip]
fn ctrl_bad_length() -> Vec<u8> {
    [&CANONICAL[..], &[0x01, 0x00, 0x00, 0x00]].concat()
}

/// Three records with 2, 1 and 1 `tp_inc_steps` entries.
#[rustfmt::skip]
fn slot_spad() -> Vec<u8> {
    [
        &[0x03, 0x00, 0x00, 0x00][..],                      // 0x00 record_n 3
        &[0x04, 0x00, 0x00, 0x00],                          // 0x04 entry_n 4
        &[0x00, 0x00, 0x02, 0x00],                          // 0x08 record 0: first 0, n 2
        &[0x02, 0x00, 0x01, 0x00],                          // 0x0c record 1: first 2, n 1
        &[0x03, 0x00, 0x01, 0x00],                          // 0x10 record 2: first 3, n 1
        &[0x00, 0x00, 0x00, 0x00],                          // 0x14 padding to 8
        &[0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x04, 0x00],  // 0x18 m2s 3, s2m 3, repeat 4
        &[0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00],  // 0x20 m2s 0, s2m 0, repeat 1
        &[0x11, 0x00, 0x00, 0x02, 0x01, 0x00, 0x01, 0x00],  // 0x28 m2s 17, s2m 258, repeat 1
        &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // 0x30 m2s 0xffffff, s2m 0xffffff, repeat 65535
    ]
    .concat()
}

/// One record whose index row says it starts at entry 1 (it must start at 0).
#[rustfmt::skip]
fn slot_spad_bad_index() -> Vec<u8> {
    [
        &[0x01, 0x00, 0x00, 0x00][..],                      // 0x00 record_n 1
        &[0x01, 0x00, 0x00, 0x00],                          // 0x04 entry_n 1
        &[0x01, 0x00, 0x01, 0x00],                          // 0x08 record 0: first 1 (wrong), n 1
        &[0x00, 0x00, 0x00, 0x00],                          // 0x0c padding
        &[0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00],  // 0x10 m2s 1, s2m 1, repeat 1
    ]
    .concat()
}

/// A 3592-byte block of zeros with the given fields written in.
fn block(fields: &[(usize, &[u8])]) -> Vec<u8> {
    let mut b = vec![0u8; 3592];
    for &(offset, bytes) in fields {
        b[offset..offset + bytes.len()].copy_from_slice(bytes);
    }
    b
}

/// TOP_SP 0 of Cayman, hosting channels 0 and 4, one mesh event, a host barrier.
#[rustfmt::skip]
fn neff_configs() -> Vec<u8> {
    let mut channel_ids = [0xFF; 32];
    channel_ids[0] = 0;
    channel_ids[1] = 4;
    block(&[
        (0x000, &[0x00, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // trigger        READ sem 0
        (0x008, &[0x08, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // trigger_next   READ sem 2
        (0x010, &[0x04, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // complete       READ sem 1
        (0x018, &[0x0C, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // complete_prev  READ sem 3
        (0x020, &[0x10, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // tpb_stop_sema  READ sem 4
        (0x028, &[0x00, 0x00, 0x02, 0x80, 0x82, 0x00, 0x00, 0x00]), // ctrl_spad      base + 0x20000
        (0x030, &[0x00, 0x00, 0x04, 0x80, 0x82, 0x00, 0x00, 0x00]), // slot_spad_base[0] base + 0x40000
        (0x060, &[0x02, 0x00, 0x00, 0x00]),                         // op_num 2
        (0x064, &[0x01, 0x00]),                                     // function_n 1
        (0x066, &[0x01]),                                           // tpb_compl_addr_num 1
        (0x067, &[0x01]),                                           // mesh_event_n 1
        (0x068, &[0x02]),                                           // channel_n 2
        (0x069, &[0x00]),                                           // topsp_index 0
        (0x06A, &[0x04, 0x00]),                                     // send_credits 4
        (0x06C, &channel_ids),                                      // channel_ids 0, 4, then 0xff
        (0x090, &[0x03, 0x00, 0x00, 0x00, 0x58, 0x00, 0x02, 0x00]), // mesh_events[0]: peer 3, sema 88, target 2
        (0x098, &[0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]), // mesh_events[0].bytes 65536
        (0x898, &[0x14, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // host barrier_start READ sem 5
        (0x8A0, &[0x18, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // host barrier_done  READ sem 6
        (0x9BC, &[0x00, 0x00, 0x00, 0x00]),                         // execute_device_barrier 0
        (0xDC0, &[0x1C, 0x10, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]), // switch_completed READ sem 7
        (0xDC8, &[0x00, 0x00, 0x08, 0x80, 0x82, 0x00, 0x00, 0x00]), // pring_base_addr  base + 0x80000
        (0xDD0, &[0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), // pring_total_desc_num 40
        (0xE07, &[0x01]),                                           // flags: leader
    ])
}

/// TOP_SP 1 of Cayman, hosting channel 1, a two-step device barrier (7 ranks).
#[rustfmt::skip]
fn neff_configs_device_barrier() -> Vec<u8> {
    let mut channel_ids = [0xFF; 32];
    channel_ids[0] = 1;
    block(&[
        (0x000, &[0x00, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // trigger        TOP_SP 1 READ sem 0
        (0x008, &[0x08, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // trigger_next   READ sem 2
        (0x010, &[0x04, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // complete       READ sem 1
        (0x018, &[0x0C, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // complete_prev  READ sem 3
        (0x020, &[0x10, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // tpb_stop_sema  READ sem 4
        (0x028, &[0x00, 0x00, 0x12, 0x80, 0x82, 0x00, 0x00, 0x00]), // ctrl_spad
        (0x030, &[0x00, 0x00, 0x14, 0x80, 0x82, 0x00, 0x00, 0x00]), // slot_spad_base[0]
        (0x060, &[0x03, 0x00, 0x00, 0x00]),                         // op_num 3
        (0x064, &[0x02, 0x00]),                                     // function_n 2
        (0x066, &[0x02]),                                           // tpb_compl_addr_num 2
        (0x068, &[0x01]),                                           // channel_n 1
        (0x069, &[0x01]),                                           // topsp_index 1
        (0x06A, &[0x02, 0x00]),                                     // send_credits 2
        (0x06C, &channel_ids),                                      // channel_ids 1, then 0xff
        (0x898, &[0x02, 0x00, 0x00, 0x00]),                         // device barrier step_n 2
        // step 0 at 0x8a0: four peers, sems 8..=11
        (0x8A0, &[0x04, 0x00, 0x04, 0x00]),                         // m2s_val 4, s2m_val 4
        (0x8A4, &[0x20, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_sema[0] READ sem 8
        (0x8AC, &[0x24, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_sema[1] READ sem 9
        (0x8B4, &[0x28, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_sema[2] READ sem 10
        (0x8BC, &[0x2C, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_sema[3] READ sem 11
        (0x8C4, &[0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00]), // target_sema_val[0..2] 1, 1
        (0x8CC, &[0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00]), // target_sema_val[2..4] 1, 1
        // step 1 at 0x8d4: one peer, sem 12
        (0x8D4, &[0x01, 0x00, 0x01, 0x00]),                         // m2s_val 1, s2m_val 1
        (0x8D8, &[0x30, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // barrier_sema[0] READ sem 12
        (0x8F8, &[0x01, 0x00, 0x00, 0x00]),                         // target_sema_val[0] 1
        (0x9BC, &[0x01, 0x00, 0x00, 0x00]),                         // execute_device_barrier 1
        (0xDC0, &[0x1C, 0x10, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]), // switch_completed READ sem 7
        (0xDC8, &[0x00, 0x00, 0x18, 0x80, 0x82, 0x00, 0x00, 0x00]), // pring_base_addr
        (0xDD0, &[0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), // pring_total_desc_num 258
        (0xE07, &[0x00]),                                           // flags: none
    ])
}

/// The host-barrier block with reserved flag bit 3 set.
fn neff_configs_reserved_flag() -> Vec<u8> {
    let mut b = neff_configs();
    b[0xE07] = 0x09;
    b
}

/// Every fixture, by file name.
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("canonical.bin", CANONICAL.to_vec()),
        ("ctrl_spad.bin", ctrl_spad()),
        ("ctrl_reserved_bit.bin", ctrl_reserved_bit()),
        ("ctrl_bad_length.bin", ctrl_bad_length()),
        ("slot_spad.bin", slot_spad()),
        ("slot_spad_bad_index.bin", slot_spad_bad_index()),
        ("neff_configs.bin", neff_configs()),
        ("neff_configs_device_barrier.bin", neff_configs_device_barrier()),
        ("neff_configs_reserved_flag.bin", neff_configs_reserved_flag()),
    ]
}

#[test]
fn fixtures_are_the_hand_written_bytes() {
    let write = std::env::var_os("CCC_WRITE_FIXTURES").is_some();
    for (name, bytes) in fixtures() {
        let path = Path::new(FIXTURES).join(name);
        if write {
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            on_disk == bytes,
            "{name} is not the bytes written in tests/decode_cli.rs; CCC_WRITE_FIXTURES=1 rewrites it"
        );
    }
}

// ---------------------------------------------------------------- harness

/// Runs `ccc decode ARGS...` in the fixture folder, so that file names in
/// messages are relative and the snapshots do not depend on the checkout.
fn ccc_decode(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccc"))
        .arg("decode")
        .args(args)
        .current_dir(FIXTURES)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn snapshot(name: &str, args: &[&str], text: &str) {
    let mut settings = snapshot::settings("decode");
    settings.set_omit_expression(true);
    settings.set_description(format!("ccc decode {}", args.join(" ")));
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Decodes successfully: exit 0, nothing on stderr; snapshots stdout.
fn decodes(name: &str, args: &[&str]) -> String {
    let out = ccc_decode(args);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "ccc decode {args:?} failed:\n{stderr}");
    assert_eq!(stderr, "", "ccc decode {args:?} wrote to stderr");
    snapshot(name, args, &stdout);
    stdout
}

/// Refused: exit 2, nothing on stdout; snapshots stderr and returns it.
fn refuses(name: &str, args: &[&str]) -> String {
    let out = ccc_decode(args);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "ccc decode {args:?}:\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(stdout, "", "ccc decode {args:?} printed a partial result");
    snapshot(name, args, &stderr);
    stderr
}

/// The message without miette's line wrapping and box drawing.
fn unwrapped(stderr: &str) -> String {
    stderr.lines().map(|l| l.trim_start_matches([' ', '×', '│']).trim()).collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------- CTRL SPAD

#[test]
fn ctrl_spad_text() {
    let out = decodes("ctrl_spad.text", &["ctrl_spad.bin"]);
    // Text is the default format; one line per word plus a line per slot.
    assert_eq!(out.lines().count(), 16 + 2);
    let explicit = ccc_decode(&["ctrl_spad.bin", "--format", "text"]);
    assert_eq!(String::from_utf8(explicit.stdout).unwrap(), out);
}

#[test]
fn ctrl_spad_json() {
    let out = decodes("ctrl_spad.json", &["ctrl_spad.bin", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    let entries = value.as_array().unwrap();
    assert_eq!(entries.len(), ctrl_spad().len() / 8);
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(entry["offset"], serde_json::json!(8 * i));
    }
    assert_eq!(entries[7], serde_json::json!({"offset": 56, "mark": "continue"}));
    assert_eq!(
        entries[9],
        serde_json::json!({"offset": 72, "mark": "end", "compl_addr": {"soc_addr": "0x0000008280001804"}})
    );
    assert_eq!(entries[10], serde_json::json!({"offset": 80, "mark": "empty"}));
    assert_eq!(entries[1]["cc_op"]["ring"]["channel_list"], serde_json::json!(0x0f));
    assert_eq!(entries[1]["cc_op"]["reporter"], serde_json::json!(1));
}

#[test]
fn ctrl_spad_log() {
    let out = decodes("ctrl_spad.log", &["ctrl_spad.bin", "--format", "log"]);
    // One line per op entry and per mark; empty words print nothing. The
    // entry after the CONTINUE mark is the SLOT-CONTINUE line (seed 000 §5:
    // no reporter), and each mark its chaining line (seed 001 §2.7); the
    // values are the fixture's bytes at 0x40 and 0x48, decoded by hand.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8 + 2, "{out}");
    assert_eq!(
        lines[7..],
        [
            "Adding CONTINUE mark",
            "[nec_dev  0, TOPSP 0, op 7] SLOT CONTINUE mark -alg 1-subalg 2-trignext 0-chlist 8323088\
             -sema_shift_offset 16-sema_mask 127-safe_mode 1",
            "Adding END mark with compl address 0x8280001804",
        ]
    );
    let flagged =
        decodes("ctrl_spad.log-device-topsp", &["ctrl_spad.bin", "--format", "log", "--device", "3", "--topsp", "5"]);
    let marks = flagged.lines().filter(|l| l.starts_with("Adding ")).count();
    assert_eq!(marks, 2, "{flagged}");
    assert!(
        flagged.lines().filter(|l| !l.starts_with("Adding ")).all(|l| l.starts_with("[nec_dev  3, TOPSP 5, op ")),
        "{flagged}"
    );
}

/// The interface.md examples, written out by hand.
#[test]
fn canonical_word_is_the_interface_example() {
    let json = decodes("canonical.json", &["canonical.bin", "--format", "json"]);
    let expected: serde_json::Value = serde_json::from_str(
        r#"[{"offset": 0,
             "header": {"cc_op": 1},
             "cc_op": {"algo_type": 1, "algo_sub_type": 3, "trigger_next": 1,
                       "reporter": 0, "ring_wait_complete": 0, "ring_send_complete": 0,
                       "safe_mode": 0, "unique_tensors": 0,
                       "ring": {"channel_list": 0},
                       "mesh": {"sema_shift_offset": 0, "sema_mask": 0}}}]"#,
    )
    .unwrap();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), expected);

    // The vendor format string `[nec_dev %2u, ...` pads the device to two
    // columns, so this is interface.md's line with two spaces after nec_dev:
    // the runtime's own log reads that way, and the log is for diffing.
    let log = decodes("canonical.log", &["canonical.bin", "--format", "log"]);
    assert_eq!(
        log,
        "[nec_dev  0, TOPSP 0, op 0] CTRL mark -alg 1-subalg 3-trignext 1-chlist 0-reporter 0-sema_shift_offset 0-sema_mask 0-safe_mode 0\n"
    );

    let text = decodes("canonical.text", &["canonical.bin"]);
    assert_eq!(
        text,
        "-- slot 0 --\n0x0000 | 01 b1 00 00 00 00 00 00 | op 0: mesh, sub 3 (MESH_SWITCH), trigger_next, sema_shift_offset 0, sema_mask 0x0000\n"
    );
}

#[test]
fn a_reserved_bit_is_refused_at_its_offset() {
    let err = refuses("ctrl_reserved_bit.err", &["ctrl_reserved_bit.bin"]);
    let msg = unwrapped(&err);
    assert!(msg.contains("ctrl_reserved_bit.bin"), "{msg}");
    assert!(msg.contains("reserved bits set in flag byte bits 7:5"), "{msg}");
    assert!(msg.contains("(at offset 0xa)"), "{msg}");
    // The image is refused before any view is rendered, whatever the
    // format: JSON asked for gets the error as JSON, nothing else
    // (interface.md, "Errors under `--json`").
    for format in ["json", "log"] {
        let out = ccc_decode(&["ctrl_reserved_bit.bin", "--format", format]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(String::from_utf8(out.stderr).unwrap(), err);
        if format == "log" {
            assert!(out.stdout.is_empty());
            continue;
        }
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let message = json["error"]["message"].as_str().unwrap();
        assert!(message.contains("(at offset 0xa)"), "{json}");
        assert_eq!(json.as_object().map(|o| o.len()), Some(1), "the error alone: {json}");
    }
}

#[test]
fn a_partial_word_is_refused() {
    let msg = unwrapped(&refuses("ctrl_bad_length.err", &["ctrl_bad_length.bin"]));
    assert!(msg.contains("ctrl_bad_length.bin"), "{msg}");
    assert!(msg.contains("image is 12 bytes, not a multiple of 8 bytes (at offset 0x8)"), "{msg}");
}

/// A text file given to decode (a spec) is said to read as text, and
/// decode's input named; an image that fails is not (it said only that
/// 335 bytes are no multiple of 8).
#[test]
fn a_text_file_is_said_to_be_text() {
    let spec = format!("{}/examples/allreduce_ring.ron", env!("CARGO_MANIFEST_DIR"));
    let out = ccc_decode(&[&spec]);
    assert_eq!(out.status.code(), Some(2));
    let msg = unwrapped(&String::from_utf8(out.stderr).unwrap());
    assert!(msg.contains("this file reads as text (a spec, a manifest, a module?): decode takes an image"), "{msg}");
    let msg = unwrapped(&refuses("ctrl_bad_length.err", &["ctrl_bad_length.bin"]));
    assert!(!msg.contains("reads as text"), "{msg}");
}

#[test]
fn an_unreadable_file_is_refused_with_its_path() {
    let msg = unwrapped(&refuses("missing.err", &["missing.bin"]));
    assert!(msg.contains("cannot read missing.bin: No such file or directory"), "{msg}");
}

// ---------------------------------------------------------------- SLOT SPAD

#[test]
fn slot_spad_views() {
    decodes("slot_spad.text", &["slot_spad.bin"]);
    let json = decodes("slot_spad.json", &["slot_spad.bin", "--format", "json"]);
    let expected = serde_json::json!({"record_n": 3, "entry_n": 4, "records": [
        [{"m2s": 3, "s2m": 3, "repeat": 4}, {"m2s": 0, "s2m": 0, "repeat": 1}],
        [{"m2s": 17, "s2m": 258, "repeat": 1}],
        [{"m2s": 16_777_215, "s2m": 16_777_215, "repeat": 65_535}],
    ]});
    assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), expected);
    // The vendor's tp_inc_steps lines, each record's under a label with the
    // CTRL-mark prefix of its op (issue 10, item 9).
    let log = decodes("slot_spad.log", &["slot_spad.bin", "--format", "log"]);
    assert_eq!(
        log,
        "[nec_dev  0, TOPSP 0, op 0] tp_inc_steps: 2 entries\n\
         tp_inc_steps[0] = m2s 3, s2m 3, repeat 4\n\
         tp_inc_steps[1] = m2s 0, s2m 0, repeat 1\n\
         [nec_dev  0, TOPSP 0, op 1] tp_inc_steps: 1 entry\n\
         tp_inc_steps[0] = m2s 17, s2m 258, repeat 1\n\
         [nec_dev  0, TOPSP 0, op 2] tp_inc_steps: 1 entry\n\
         tp_inc_steps[0] = m2s 16777215, s2m 16777215, repeat 65535\n"
    );
    let flagged = ccc_decode(&["slot_spad.bin", "--format", "log", "--device", "3", "--topsp", "5"]);
    let flagged = String::from_utf8(flagged.stdout).unwrap();
    assert!(flagged.starts_with("[nec_dev  3, TOPSP 5, op 0] tp_inc_steps: 2 entries\n"), "{flagged}");
    // The runtime prints the TOP_SP with %d: past i32 it would read
    // `TOPSP -1`, so such a value is refused, saying what is accepted.
    let top = ccc_decode(&["slot_spad.bin", "--format", "log", "--topsp", "2147483647"]);
    assert!(String::from_utf8(top.stdout).unwrap().starts_with("[nec_dev  0, TOPSP 2147483647, op 0]"));
    let past = ccc_decode(&["slot_spad.bin", "--format", "log", "--topsp", "2147483648"]);
    assert_eq!(past.status.code(), Some(2));
    assert!(String::from_utf8(past.stderr).unwrap().contains("up to 2147483647 (the log prints it with %d)"));
}

#[test]
fn a_slot_spad_with_a_bad_index_is_refused() {
    let msg = unwrapped(&refuses("slot_spad_bad_index.err", &["slot_spad_bad_index.bin"]));
    assert!(msg.contains("slot_spad_bad_index.bin: not a valid SLOT SPAD image"), "{msg}");
    assert!(msg.contains("(at offset 0x8)"), "{msg}");
}

// ---------------------------------------------------------------- neff_configs

#[test]
fn neff_configs_views() {
    // (file, TOP_SP base): TOP_SP t's base is 0x82_8000_0000 + t * 0x10_0000.
    for (file, base) in [("neff_configs.bin", "00000082800"), ("neff_configs_device_barrier.bin", "00000082801")] {
        let stem = file.trim_end_matches(".bin");
        decodes(&format!("{stem}.text"), &[file]);
        let json = decodes(&format!("{stem}.json"), &[file, "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        // The vendor's `{"soc_addr":"0x%016lX"}` (seed 001 §2.1), filled in
        // by hand from wire-format.md §6: the CTRL SPAD load address is
        // base + 0x2_0000; `complete_prev` is READ(3) = base + 0x1000 + 12.
        assert_eq!(v["ctrl_spad"], serde_json::json!({"soc_addr": format!("0x{base}20000")}), "{stem}");
        assert_eq!(v["complete_prev"], serde_json::json!({"soc_addr": format!("0x{base}0100C")}), "{stem}");
    }
}

/// The runtime logs no field of a neff_configs block: `--format log` of one
/// is refused, pointing at the views that show it (issue 10, item 9).
#[test]
fn a_neff_configs_has_no_log() {
    let msg = unwrapped(&refuses("neff_configs.log.err", &["neff_configs.bin", "--format", "log"]));
    assert!(msg.contains("neff_configs.bin: a neff_configs block has no log"), "{msg}");
    assert!(msg.contains("--format text") && msg.contains("--format json"), "{msg}");
}

#[test]
fn a_neff_configs_with_a_reserved_flag_is_refused() {
    let msg = unwrapped(&refuses("neff_configs_reserved_flag.err", &["neff_configs_reserved_flag.bin"]));
    assert!(msg.contains("(at offset 0xe07)"), "{msg}");
}

#[test]
fn the_region_flag_overrides_the_file_name() {
    // 8 bytes are not a neff_configs block, whatever the name says.
    let msg = unwrapped(&refuses("canonical.region-neff.err", &["canonical.bin", "--region", "neff"]));
    assert!(
        msg.contains("canonical.bin: not a valid neff_configs image: image is 8 bytes, not exactly 3592 bytes"),
        "{msg}"
    );
    // And a CTRL image read as a SLOT SPAD image is refused as one.
    let out = ccc_decode(&["ctrl_spad.bin", "--region", "slot"]);
    assert_eq!(out.status.code(), Some(2));
    let msg = unwrapped(&String::from_utf8(out.stderr).unwrap());
    assert!(msg.contains("ctrl_spad.bin: not a valid SLOT SPAD image"), "{msg}");
}
