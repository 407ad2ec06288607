//! The 3592-byte EXEC config block, `neff_configs` (wire-contract §5;
//! `docs/wire-format.md` §8).
//!
//! ```text
//!     0 +---------------------------------+
//!       | semaphore handles, spad addrs   |  \[project\] offsets
//!    96 | op_num, function_n, counts, ... |
//!   144 | mesh event table (108 x 16 B)   |  \[project\] layout
//!  1872 | reserved                        |
//!  2200 | barrier_configs (296 B)         |  \[seed\]
//!  2496 | basic_block_configs (1048 B)    |  \[seed\]
//!  3544 | reserved                        |
//!  3591 | flags                           |  \[seed\]
//!  3592 +---------------------------------+
//! ```
//!
//! Every field has a named offset; `const` assertions check at compile time
//! that the fields are in order, do not overlap and fit the block.
//! [`NeffConfigs::encode`] returns `[u8; NEFF_CONFIGS_BYTES]`, so the size is
//! in the type; [`NeffConfigs::decode`] refuses non-zero reserved bytes.

use super::bytes::{DecodeError, DecodeErrorKind, EncodeError, Reader, Writer};

/// The block's size \[seed\].
pub const NEFF_CONFIGS_BYTES: usize = 3592;

/// What a `neff_configs` block is, as a refusal's help says it.
pub const IMAGE_SHAPE: &str = "a neff_configs block is exactly 3592 bytes with every reserved byte zero";

/// `trigger` semaphore handle.
pub const TRIGGER: usize = 0;
/// `trigger_next` semaphore handle.
pub const TRIGGER_NEXT: usize = 8;
/// `complete` semaphore handle.
pub const COMPLETE: usize = 16;
/// `complete_prev` semaphore handle.
pub const COMPLETE_PREV: usize = 24;
/// `tpb_stop_sema` semaphore handle.
pub const TPB_STOP_SEMA: usize = 32;
/// `ctrl_spad` address.
pub const CTRL_SPAD: usize = 40;
/// `slot_spad_base[6]` addresses.
pub const SLOT_SPAD_BASE: usize = 48;
/// Number of slot bases \[seed\].
pub const SLOT_SPAD_BASE_N: usize = 6;
/// `op_num: u32`.
pub const OP_NUM: usize = 96;
/// `function_n: u16`.
pub const FUNCTION_N: usize = 100;
/// `tpb_compl_addr_num: u8`.
pub const TPB_COMPL_ADDR_NUM: usize = 102;
/// `mesh_event_n: u8` \[project\].
pub const MESH_EVENT_N: usize = 103;
/// `channel_n: u8` \[project\].
pub const CHANNEL_N: usize = 104;
/// `topsp_index: u8` \[project\].
pub const TOPSP_INDEX: usize = 105;
/// `send_credits: u16` \[project\].
pub const SEND_CREDITS: usize = 106;
/// `channel_ids[32]: u8` \[project\].
pub const CHANNEL_IDS: usize = 108;
/// Entries of `channel_ids`.
pub const CHANNEL_IDS_N: usize = 32;
/// `channel_ids` filler for an unused entry.
pub const CHANNEL_ID_UNUSED: u8 = 0xFF;
/// Reserved after `channel_ids`.
pub const RESERVED_A: usize = 140;
/// The mesh event table \[project\].
pub const MESH_EVENTS: usize = 144;
/// Capacity of the mesh event table (the largest arch limit \[seed\]).
pub const MESH_EVENTS_N: usize = 108;
/// Bytes per mesh event.
pub const MESH_EVENT_BYTES: usize = 16;
/// Reserved after the mesh event table.
pub const RESERVED_B: usize = MESH_EVENTS + MESH_EVENTS_N * MESH_EVENT_BYTES;
/// `barrier_configs` \[seed\].
pub const BARRIER_CONFIGS: usize = 2200;
/// `barrier_configs` size \[seed\].
pub const BARRIER_CONFIGS_BYTES: usize = 296;
/// `basic_block_configs` \[seed\].
pub const BASIC_BLOCK_CONFIGS: usize = 2496;
/// `basic_block_configs` size \[seed\].
pub const BASIC_BLOCK_CONFIGS_BYTES: usize = 1048;
/// Reserved after `basic_block_configs`.
pub const RESERVED_C: usize = BASIC_BLOCK_CONFIGS + BASIC_BLOCK_CONFIGS_BYTES;
/// The flag byte \[seed\].
pub const FLAGS: usize = 3591;

/// Flag byte: `leader` (bit 0).
pub const FLAG_LEADER: u8 = 1 << 0;
/// Flag byte: `dbg_cc_nop` (bit 1).
pub const FLAG_DBG_CC_NOP: u8 = 1 << 1;
/// Flag byte: `host_cc` (bit 2).
pub const FLAG_HOST_CC: u8 = 1 << 2;
/// Flag byte: reserved bits 7:3.
pub const FLAG_RESERVED_MASK: u8 = 0xF8;

// Mesh event entry, relative to the entry [project].
/// Mesh event: `peer: u32`.
pub const EVENT_PEER: usize = 0;
/// Mesh event: `sema_index: u16`.
pub const EVENT_SEMA: usize = 4;
/// Mesh event: `target: u16`.
pub const EVENT_TARGET: usize = 6;
/// Mesh event: `bytes: u64`.
pub const EVENT_BYTES: usize = 8;

// barrier_configs, relative to BARRIER_CONFIGS.
/// Size of the host/device union [seed: device barrier 292 B].
pub const BARRIER_UNION_BYTES: usize = 292;
/// Host barrier: `barrier_start` \[seed\].
pub const HOST_BARRIER_START: usize = 0;
/// Host barrier: `barrier_done` \[seed\].
pub const HOST_BARRIER_DONE: usize = 8;
/// Host barrier size \[seed\].
pub const HOST_BARRIER_BYTES: usize = 16;
/// Device barrier: `step_n: u32` \[project\].
pub const DEVICE_STEP_N: usize = 0;
/// Device barrier: the steps [project place].
pub const DEVICE_STEPS: usize = 8;
/// Device barrier: steps \[seed\].
pub const DEVICE_STEPS_N: usize = 4;
/// `barrier_step_config` size \[seed\].
pub const BARRIER_STEP_BYTES: usize = 52;
/// `barrier_step_config.m2s_val: u16` \[seed\].
pub const STEP_M2S_VAL: usize = 0;
/// `barrier_step_config.s2m_val: u16` \[seed\].
pub const STEP_S2M_VAL: usize = 2;
/// `barrier_step_config.barrier_sema[4]` \[seed\].
pub const STEP_BARRIER_SEMA: usize = 4;
/// `barrier_step_config.target_sema_val[4]: u32` \[seed\].
pub const STEP_TARGET_SEMA_VAL: usize = 36;
/// Device barrier: reserved after the steps \[project\].
pub const DEVICE_RESERVED: usize = DEVICE_STEPS + DEVICE_STEPS_N * BARRIER_STEP_BYTES;
/// `execute_device_barrier: u32`, after the union [project place].
pub const EXECUTE_DEVICE_BARRIER: usize = BARRIER_UNION_BYTES;

// basic_block_configs, relative to BASIC_BLOCK_CONFIGS [seed].
/// `switch_completed` address.
pub const BB_SWITCH_COMPLETED: usize = 1024;
/// `pring_base_addr`.
pub const BB_PRING_BASE_ADDR: usize = 1032;
/// `pring_total_desc_num: u64` [project width].
pub const BB_PRING_TOTAL_DESC_NUM: usize = 1040;

// The layout plan, checked at compile time.
const _: () = {
    assert!(SLOT_SPAD_BASE + SLOT_SPAD_BASE_N * 8 == OP_NUM);
    assert!(OP_NUM + 4 == FUNCTION_N);
    assert!(FUNCTION_N + 2 == TPB_COMPL_ADDR_NUM);
    assert!(TPB_COMPL_ADDR_NUM + 1 == MESH_EVENT_N);
    assert!(MESH_EVENT_N + 1 == CHANNEL_N && CHANNEL_N + 1 == TOPSP_INDEX && TOPSP_INDEX + 1 == SEND_CREDITS);
    assert!(SEND_CREDITS + 2 == CHANNEL_IDS && CHANNEL_IDS + CHANNEL_IDS_N == RESERVED_A);
    assert!(RESERVED_A + 4 == MESH_EVENTS);
    assert!(RESERVED_B <= BARRIER_CONFIGS);
    assert!(BARRIER_CONFIGS + BARRIER_CONFIGS_BYTES == BASIC_BLOCK_CONFIGS);
    assert!(BARRIER_UNION_BYTES + 4 == BARRIER_CONFIGS_BYTES);
    assert!(DEVICE_RESERVED <= BARRIER_UNION_BYTES);
    assert!(STEP_TARGET_SEMA_VAL + 4 * 4 == BARRIER_STEP_BYTES);
    assert!(BB_PRING_TOTAL_DESC_NUM + 8 == BASIC_BLOCK_CONFIGS_BYTES);
    assert!(RESERVED_C <= FLAGS && FLAGS + 1 == NEFF_CONFIGS_BYTES);
};

/// One mesh event \[project\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct MeshEvent {
    /// The global rank whose transfers signal the event.
    pub peer: u32,
    /// The semaphore index the event counts on.
    pub sema_index: u16,
    /// Increments that complete the event.
    pub target: u16,
    /// Bytes received for the event.
    pub bytes: u64,
}

/// One step of the device barrier [seed element].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BarrierStep {
    /// Descriptors posted on the send queue.
    pub m2s_val: u16,
    /// Descriptors posted on the receive queue.
    pub s2m_val: u16,
    /// Up to four semaphores to wait on.
    pub barrier_sema: [u64; 4],
    /// The value each must reach.
    pub target_sema_val: [u32; 4],
}

/// `barrier_configs`: the union tagged by `execute_device_barrier`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BarrierConfigs {
    /// The host arms `barrier_start`; leaders increment `barrier_done`.
    /// (The default: a host barrier with both addresses 0, the all-zero union.)
    Host {
        /// `barrier_start` address.
        barrier_start: u64,
        /// `barrier_done` address.
        barrier_done: u64,
    },
    /// A counted barrier of 1..=4 steps.
    Device {
        /// The steps.
        steps: Vec<BarrierStep>,
    },
}

impl Default for BarrierConfigs {
    fn default() -> Self {
        BarrierConfigs::Host { barrier_start: 0, barrier_done: 0 }
    }
}

/// `basic_block_configs` [seed offsets].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BasicBlockConfigs {
    /// `switch_completed` address.
    pub switch_completed: u64,
    /// `pring_base_addr`.
    pub pring_base_addr: u64,
    /// `pring_total_desc_num`.
    pub pring_total_desc_num: u64,
}

/// The flag byte at +3591 \[seed\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NeffFlags {
    /// This TOP_SP hosts the leader channel.
    pub leader: bool,
    /// Debug: collectives as no-ops.
    pub dbg_cc_nop: bool,
    /// Host-CC mode.
    pub host_cc: bool,
}

/// The whole block, typed. `Default` is the all-zero block (with
/// `channel_ids` empty, which encodes as all 0xFF).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NeffConfigs {
    /// `trigger` semaphore (READ address).
    pub trigger: u64,
    /// `trigger_next` semaphore.
    pub trigger_next: u64,
    /// `complete` semaphore.
    pub complete: u64,
    /// `complete_prev` semaphore.
    pub complete_prev: u64,
    /// `tpb_stop_sema` semaphore.
    pub tpb_stop_sema: u64,
    /// CTRL SPAD load address.
    pub ctrl_spad: u64,
    /// Slot bases: `[0]` is the SLOT SPAD load address.
    pub slot_spad_base: [u64; SLOT_SPAD_BASE_N],
    /// Records in the TOP_SP's chain.
    pub op_num: u32,
    /// Collectives in the program.
    pub function_n: u16,
    /// END marks in the chain.
    pub tpb_compl_addr_num: u8,
    /// Channels hosted on this TOP_SP.
    pub channel_n: u8,
    /// This TOP_SP's index.
    pub topsp_index: u8,
    /// Initial send credits per channel.
    pub send_credits: u16,
    /// Absolute ids of the hosted channels (at most 32; the rest encode 0xFF).
    pub channel_ids: Vec<u8>,
    /// The mesh events (at most 108; `mesh_event_n` is their count).
    pub mesh_events: Vec<MeshEvent>,
    /// The barrier.
    pub barrier: BarrierConfigs,
    /// The basic-block configuration.
    pub basic_block: BasicBlockConfigs,
    /// The flag byte.
    pub flags: NeffFlags,
}

impl NeffConfigs {
    /// Packs the block.
    ///
    /// # Errors
    ///
    /// [`EncodeError::FieldOverflow`] for more than 108 mesh events, more
    /// than 32 channel ids, or a device barrier of more than 4 steps;
    /// [`EncodeError::BadValue`] for a device barrier with no step, or a
    /// `channel_n` that is not the number of `channel_ids`.
    pub fn encode(&self) -> Result<Box<[u8; NEFF_CONFIGS_BYTES]>, EncodeError> {
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
        } = self;
        let overflow = |field, value: usize, max: usize| EncodeError::FieldOverflow {
            field,
            value: value as u64,
            max: max as u64,
        };
        if mesh_events.len() > MESH_EVENTS_N {
            return Err(overflow("mesh_event_n", mesh_events.len(), MESH_EVENTS_N));
        }
        if channel_ids.len() > CHANNEL_IDS_N {
            return Err(overflow("channel_ids", channel_ids.len(), CHANNEL_IDS_N));
        }
        // The decoder reads exactly `channel_n` ids and wants 0xFF after them.
        if usize::from(*channel_n) != channel_ids.len() {
            return Err(EncodeError::BadValue {
                field: "channel_n",
                value: u64::from(*channel_n),
                expected: "the number of channel_ids",
            });
        }
        let mut block = Box::new([0u8; NEFF_CONFIGS_BYTES]);
        let mut w = Writer::new(&mut block[..]);
        w.u64(TRIGGER, *trigger)?;
        w.u64(TRIGGER_NEXT, *trigger_next)?;
        w.u64(COMPLETE, *complete)?;
        w.u64(COMPLETE_PREV, *complete_prev)?;
        w.u64(TPB_STOP_SEMA, *tpb_stop_sema)?;
        w.u64(CTRL_SPAD, *ctrl_spad)?;
        for (i, &base) in slot_spad_base.iter().enumerate() {
            w.u64(SLOT_SPAD_BASE + 8 * i, base)?;
        }
        w.u32(OP_NUM, *op_num)?;
        w.u16(FUNCTION_N, *function_n)?;
        w.u8(TPB_COMPL_ADDR_NUM, *tpb_compl_addr_num)?;
        // Checked above: at most 108.
        w.u8(MESH_EVENT_N, mesh_events.len() as u8)?;
        w.u8(CHANNEL_N, *channel_n)?;
        w.u8(TOPSP_INDEX, *topsp_index)?;
        w.u16(SEND_CREDITS, *send_credits)?;
        for i in 0..CHANNEL_IDS_N {
            w.u8(CHANNEL_IDS + i, channel_ids.get(i).copied().unwrap_or(CHANNEL_ID_UNUSED))?;
        }
        for (i, e) in mesh_events.iter().enumerate() {
            let at = MESH_EVENTS + i * MESH_EVENT_BYTES;
            w.u32(at + EVENT_PEER, e.peer)?;
            w.u16(at + EVENT_SEMA, e.sema_index)?;
            w.u16(at + EVENT_TARGET, e.target)?;
            w.u64(at + EVENT_BYTES, e.bytes)?;
        }
        match barrier {
            BarrierConfigs::Host { barrier_start, barrier_done } => {
                w.u64(BARRIER_CONFIGS + HOST_BARRIER_START, *barrier_start)?;
                w.u64(BARRIER_CONFIGS + HOST_BARRIER_DONE, *barrier_done)?;
                w.u32(BARRIER_CONFIGS + EXECUTE_DEVICE_BARRIER, 0)?;
            }
            BarrierConfigs::Device { steps } => {
                if steps.is_empty() {
                    return Err(EncodeError::BadValue {
                        field: "device barrier step_n",
                        value: 0,
                        expected: "1..=4 steps",
                    });
                }
                if steps.len() > DEVICE_STEPS_N {
                    return Err(overflow("device barrier step_n", steps.len(), DEVICE_STEPS_N));
                }
                // Checked above: 1..=4.
                w.u32(BARRIER_CONFIGS + DEVICE_STEP_N, steps.len() as u32)?;
                for (s, step) in steps.iter().enumerate() {
                    let at = BARRIER_CONFIGS + DEVICE_STEPS + s * BARRIER_STEP_BYTES;
                    w.u16(at + STEP_M2S_VAL, step.m2s_val)?;
                    w.u16(at + STEP_S2M_VAL, step.s2m_val)?;
                    for i in 0..4 {
                        w.u64(at + STEP_BARRIER_SEMA + 8 * i, step.barrier_sema[i])?;
                        w.u32(at + STEP_TARGET_SEMA_VAL + 4 * i, step.target_sema_val[i])?;
                    }
                }
                w.u32(BARRIER_CONFIGS + EXECUTE_DEVICE_BARRIER, 1)?;
            }
        }
        w.u64(BASIC_BLOCK_CONFIGS + BB_SWITCH_COMPLETED, basic_block.switch_completed)?;
        w.u64(BASIC_BLOCK_CONFIGS + BB_PRING_BASE_ADDR, basic_block.pring_base_addr)?;
        w.u64(BASIC_BLOCK_CONFIGS + BB_PRING_TOTAL_DESC_NUM, basic_block.pring_total_desc_num)?;
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        w.u8(
            FLAGS,
            bit(flags.leader, FLAG_LEADER) | bit(flags.dbg_cc_nop, FLAG_DBG_CC_NOP) | bit(flags.host_cc, FLAG_HOST_CC),
        )?;
        Ok(block)
    }

    /// Unpacks a block, refusing non-zero reserved bytes and bits.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::BadLength`] unless exactly 3592 bytes;
    /// [`DecodeErrorKind::ReservedBits`] naming the offset of a reserved
    /// byte that is not zero; [`DecodeErrorKind::BadValue`] for an
    /// impossible count or barrier tag.
    pub fn decode(bytes: &[u8]) -> Result<NeffConfigs, DecodeError> {
        if bytes.len() != NEFF_CONFIGS_BYTES {
            // Where the image and the block part: the end of the shorter.
            return Err(DecodeError {
                offset: bytes.len().min(NEFF_CONFIGS_BYTES) as u64,
                kind: DecodeErrorKind::BadLength { len: bytes.len() as u64, expected: "exactly 3592 bytes".into() },
            });
        }
        let r = Reader::new(bytes, 0);
        let bad = |offset: usize, field, value: u64, expected: &'static str| DecodeError {
            offset: offset as u64,
            kind: DecodeErrorKind::BadValue { field, value, expected: expected.into() },
        };
        let mesh_event_n = usize::from(r.u8(MESH_EVENT_N)?);
        if mesh_event_n > MESH_EVENTS_N {
            return Err(bad(MESH_EVENT_N, "mesh_event_n", mesh_event_n as u64, "at most 108"));
        }
        let channel_n = r.u8(CHANNEL_N)?;
        let mut channel_ids = Vec::new();
        for i in 0..CHANNEL_IDS_N {
            let id = r.u8(CHANNEL_IDS + i)?;
            if i < usize::from(channel_n) {
                channel_ids.push(id);
            } else if id != CHANNEL_ID_UNUSED {
                return Err(bad(CHANNEL_IDS + i, "channel_ids (unused entry)", u64::from(id), "0xff"));
            }
        }
        if usize::from(channel_n) > CHANNEL_IDS_N {
            return Err(bad(CHANNEL_N, "channel_n", u64::from(channel_n), "at most 32"));
        }
        r.zeros(RESERVED_A, MESH_EVENTS - RESERVED_A, "reserved +140")?;
        let mut mesh_events = Vec::with_capacity(mesh_event_n);
        for i in 0..mesh_event_n {
            let at = MESH_EVENTS + i * MESH_EVENT_BYTES;
            mesh_events.push(MeshEvent {
                peer: r.u32(at + EVENT_PEER)?,
                sema_index: r.u16(at + EVENT_SEMA)?,
                target: r.u16(at + EVENT_TARGET)?,
                bytes: r.u64(at + EVENT_BYTES)?,
            });
        }
        let unused_events = MESH_EVENTS + mesh_event_n * MESH_EVENT_BYTES;
        r.zeros(unused_events, RESERVED_B - unused_events, "unused mesh events")?;
        r.zeros(RESERVED_B, BARRIER_CONFIGS - RESERVED_B, "reserved +1872")?;
        let tag_at = BARRIER_CONFIGS + EXECUTE_DEVICE_BARRIER;
        let barrier = match r.u32(tag_at)? {
            0 => {
                let rest = BARRIER_CONFIGS + HOST_BARRIER_BYTES;
                r.zeros(rest, BARRIER_UNION_BYTES - HOST_BARRIER_BYTES, "host barrier (unused union bytes)")?;
                BarrierConfigs::Host {
                    barrier_start: r.u64(BARRIER_CONFIGS + HOST_BARRIER_START)?,
                    barrier_done: r.u64(BARRIER_CONFIGS + HOST_BARRIER_DONE)?,
                }
            }
            1 => {
                let step_n = r.u32(BARRIER_CONFIGS + DEVICE_STEP_N)? as usize;
                if step_n == 0 || step_n > DEVICE_STEPS_N {
                    return Err(bad(BARRIER_CONFIGS + DEVICE_STEP_N, "device barrier step_n", step_n as u64, "1..=4"));
                }
                r.zeros(BARRIER_CONFIGS + DEVICE_STEP_N + 4, DEVICE_STEPS - 4, "device barrier reserved +4")?;
                let mut steps = Vec::with_capacity(step_n);
                for s in 0..DEVICE_STEPS_N {
                    let at = BARRIER_CONFIGS + DEVICE_STEPS + s * BARRIER_STEP_BYTES;
                    if s >= step_n {
                        r.zeros(at, BARRIER_STEP_BYTES, "unused device barrier step")?;
                        continue;
                    }
                    let mut step = BarrierStep {
                        m2s_val: r.u16(at + STEP_M2S_VAL)?,
                        s2m_val: r.u16(at + STEP_S2M_VAL)?,
                        ..BarrierStep::default()
                    };
                    for i in 0..4 {
                        step.barrier_sema[i] = r.u64(at + STEP_BARRIER_SEMA + 8 * i)?;
                        step.target_sema_val[i] = r.u32(at + STEP_TARGET_SEMA_VAL + 4 * i)?;
                    }
                    steps.push(step);
                }
                let rest = BARRIER_CONFIGS + DEVICE_RESERVED;
                r.zeros(rest, BARRIER_UNION_BYTES - DEVICE_RESERVED, "device barrier reserved")?;
                BarrierConfigs::Device { steps }
            }
            other => return Err(bad(tag_at, "execute_device_barrier", u64::from(other), "0 (host) or 1 (device)")),
        };
        r.zeros(BASIC_BLOCK_CONFIGS, BB_SWITCH_COMPLETED, "basic_block_configs reserved")?;
        let basic_block = BasicBlockConfigs {
            switch_completed: r.u64(BASIC_BLOCK_CONFIGS + BB_SWITCH_COMPLETED)?,
            pring_base_addr: r.u64(BASIC_BLOCK_CONFIGS + BB_PRING_BASE_ADDR)?,
            pring_total_desc_num: r.u64(BASIC_BLOCK_CONFIGS + BB_PRING_TOTAL_DESC_NUM)?,
        };
        r.zeros(RESERVED_C, FLAGS - RESERVED_C, "reserved +3544")?;
        let flag = r.u8(FLAGS)?;
        if flag & FLAG_RESERVED_MASK != 0 {
            return Err(DecodeError {
                offset: FLAGS as u64,
                kind: DecodeErrorKind::ReservedBits {
                    field: "flags bits 7:3",
                    value: u64::from(flag),
                    mask: u64::from(FLAG_RESERVED_MASK),
                },
            });
        }
        let mut slot_spad_base = [0u64; SLOT_SPAD_BASE_N];
        for (i, base) in slot_spad_base.iter_mut().enumerate() {
            *base = r.u64(SLOT_SPAD_BASE + 8 * i)?;
        }
        Ok(NeffConfigs {
            trigger: r.u64(TRIGGER)?,
            trigger_next: r.u64(TRIGGER_NEXT)?,
            complete: r.u64(COMPLETE)?,
            complete_prev: r.u64(COMPLETE_PREV)?,
            tpb_stop_sema: r.u64(TPB_STOP_SEMA)?,
            ctrl_spad: r.u64(CTRL_SPAD)?,
            slot_spad_base,
            op_num: r.u32(OP_NUM)?,
            function_n: r.u16(FUNCTION_N)?,
            tpb_compl_addr_num: r.u8(TPB_COMPL_ADDR_NUM)?,
            channel_n,
            topsp_index: r.u8(TOPSP_INDEX)?,
            send_credits: r.u16(SEND_CREDITS)?,
            channel_ids,
            mesh_events,
            barrier,
            basic_block,
            flags: NeffFlags {
                leader: flag & FLAG_LEADER != 0,
                dbg_cc_nop: flag & FLAG_DBG_CC_NOP != 0,
                host_cc: flag & FLAG_HOST_CC != 0,
            },
        })
    }
}
