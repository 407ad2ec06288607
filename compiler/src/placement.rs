//! placement: where a schedule runs on one device (`docs/wire-format.md` §4,
//! §6, §8.2).
//!
//! Every pass that asks "which TOP_SP runs channel c", "which TOP_SPs does
//! this program (or this collective) use", "which semaphore is that" or
//! "how far does a device barrier reach" asks here, so lowering, the
//! protocol proof, certificates and validation cannot disagree:
//!
//! - Channel `c` runs on TOP_SP `c % topsp_n` as its hosted channel
//!   `j = c / topsp_n` ([`channel_home`], [`hosted_channels`]).
//! - A collective with `channels` channels has records on TOP_SPs
//!   `0..min(channels, topsp_n)` ([`topsps_for`]); a program uses TOP_SPs
//!   `0..min(max channels, topsp_n)` ([`topsps_used`]).
//! - The semaphore indices of every TOP_SP are the table of [`sema`].
//! - The device barrier is a radix-5 dissemination barrier of at most
//!   [`DEVICE_STEPS_N`] steps, so it reaches [`DEVICE_BARRIER_MAX_RANK_N`]
//!   ranks.

use crate::schedule::Schedule;
use ccc_ir::arch::ArchParams;
use ccc_ir::id::TopSp;
use ccc_ir::wire::neff_configs::DEVICE_STEPS_N;

/// Semaphore indices on every TOP_SP (`docs/wire-format.md` §6).
pub mod sema {
    /// `trigger`.
    pub const TRIGGER: u32 = 0;
    /// `complete`: END marks increment it.
    pub const COMPLETE: u32 = 1;
    /// `trigger_next`.
    pub const TRIGGER_NEXT: u32 = 2;
    /// `complete_prev`.
    pub const COMPLETE_PREV: u32 = 3;
    /// `tpb_stop_sema`.
    pub const TPB_STOP: u32 = 4;
    /// Host barrier `barrier_start`.
    pub const BARRIER_START: u32 = 5;
    /// Host barrier `barrier_done`.
    pub const BARRIER_DONE: u32 = 6;
    /// Basic block `switch_completed`.
    pub const SWITCH_COMPLETED: u32 = 7;
    /// Device barrier: step s, slot i is `DEVICE_BARRIER + 4 * s + i`.
    pub const DEVICE_BARRIER: u32 = 8;
    /// Hosted channel j: recv semaphore `CHANNEL + 2 * j`, send credit `+ 1`.
    pub const CHANNEL: u32 = 24;
    /// Mesh event e of a record: `MESH + ((shift + e) & MESH_MASK)`.
    pub const MESH: u32 = 88;
    /// The mesh event wrap mask (`sema_mask`).
    pub const MESH_MASK: u16 = 0x7F;
}

/// Fan-out per device-barrier step: a radix-5 dissemination barrier.
pub const DEVICE_BARRIER_FANOUT: u32 = 4;
/// The most ranks a device barrier reaches in its [`DEVICE_STEPS_N`] steps:
/// `(fan-out + 1)^steps` = 625.
pub const DEVICE_BARRIER_MAX_RANK_N: u32 = (DEVICE_BARRIER_FANOUT + 1).pow(DEVICE_STEPS_N as u32);

/// The TOP_SP running channel `channel`, and its hosted index there.
pub fn channel_home(params: &ArchParams, channel: u8) -> (TopSp, u8) {
    (TopSp(channel % params.topsp_n), channel / params.topsp_n)
}

/// The channels among `0..channels` that run on TOP_SP `t`, ascending.
pub fn hosted_channels(params: &ArchParams, channels: u8, t: u8) -> Vec<u8> {
    (0..channels).filter(|&c| channel_home(params, c).0.0 == t).collect()
}

/// The TOP_SPs a collective of `channels` channels has records on:
/// `0..min(channels, topsp_n)`.
pub fn topsps_for(params: &ArchParams, channels: u8) -> u8 {
    channels.min(params.topsp_n)
}

/// The TOP_SPs a program uses: `min(max channels, topsp_n)`.
pub fn topsps_used(schedule: &Schedule) -> u8 {
    let channels = schedule.collectives.iter().map(|c| c.channels).max().unwrap_or(1);
    topsps_for(schedule.arch.params(), channels)
}

/// The recv semaphore of hosted channel `j`; its send credit is the next.
pub fn channel_sema(j: u32) -> u32 {
    sema::CHANNEL + 2 * j
}

/// The semaphore of mesh event number `e` on a TOP_SP.
pub fn mesh_sema(e: u32) -> u16 {
    // MESH + (e & 0x7F) <= 88 + 127 < 256.
    (sema::MESH + (e & u32::from(sema::MESH_MASK))) as u16
}

/// The semaphore of device-barrier step `step`, peer slot `slot` (0..4).
pub fn device_barrier_sema(step: u32, slot: u32) -> u32 {
    sema::DEVICE_BARRIER + DEVICE_BARRIER_FANOUT * step + slot
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccc_ir::arch::Arch;

    // docs/wire-format.md §4: channel c on TOP_SP c % topsp_n, hosted index c / topsp_n.
    #[test]
    fn channels_run_on_c_mod_topsp_n() {
        let p = Arch::Cayman.params();
        assert_eq!(p.topsp_n, 8);
        assert_eq!(channel_home(p, 0), (TopSp(0), 0));
        assert_eq!(channel_home(p, 7), (TopSp(7), 0));
        assert_eq!(channel_home(p, 8), (TopSp(0), 1));
        assert_eq!(channel_home(p, 13), (TopSp(5), 1));
        assert_eq!(hosted_channels(p, 20, 3), vec![3, 11, 19]);
        assert_eq!(hosted_channels(p, 3, 5), Vec::<u8>::new());
        let sunda = Arch::Sunda.params();
        assert_eq!(hosted_channels(sunda, 8, 1), vec![1, 5]);
    }

    // §4: a collective uses TOP_SPs 0..min(channels, topsp_n).
    #[test]
    fn a_collective_uses_min_channels_topsp_n() {
        let p = Arch::Cayman.params();
        assert_eq!(topsps_for(p, 1), 1);
        assert_eq!(topsps_for(p, 5), 5);
        assert_eq!(topsps_for(p, 8), 8);
        assert_eq!(topsps_for(p, 32), 8);
        assert_eq!(topsps_for(Arch::Mariana.params(), 32), 16);
    }

    // §6: the semaphore table and its windows.
    #[test]
    fn semaphores_follow_the_table() {
        assert_eq!(
            [sema::TRIGGER, sema::COMPLETE, sema::TRIGGER_NEXT, sema::COMPLETE_PREV, sema::TPB_STOP],
            [0, 1, 2, 3, 4]
        );
        assert_eq!([sema::BARRIER_START, sema::BARRIER_DONE, sema::SWITCH_COMPLETED], [5, 6, 7]);
        assert_eq!(device_barrier_sema(0, 0), 8);
        assert_eq!(device_barrier_sema(3, 3), 23);
        assert_eq!(channel_sema(0), 24);
        assert_eq!(channel_sema(31) + 1, 87);
        assert_eq!(mesh_sema(0), 88);
        assert_eq!(mesh_sema(127), 215);
        assert_eq!(mesh_sema(128), 88, "mesh events wrap under sema_mask 0x7F");
    }

    // §8.2: four radix-5 steps cover at most 625 ranks.
    #[test]
    fn the_device_barrier_reaches_625_ranks() {
        assert_eq!(DEVICE_STEPS_N, 4);
        assert_eq!(DEVICE_BARRIER_MAX_RANK_N, 625);
    }
}
